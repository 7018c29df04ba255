package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the agentiso version",
		Long:    "Print the agentiso version, the Go version it was built with and the VCS revision when known.",
		Example: `  agentiso version`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rev := "unknown"
			goVer := "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				goVer = bi.GoVersion
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" {
						rev = s.Value
					}
				}
			}
			fmt.Fprintf(g.out, "agentiso %s\nbuilt with %s from commit %s\n", version, goVer, rev)
			return nil
		},
	}
}
