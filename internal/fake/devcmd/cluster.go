package devcmd

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/fake/testcluster"
)

// newClusterCmd serves an installed cluster's API for node-image and plays
// its new hosts joining (internal/fake/testcluster).
func newClusterCmd(e *env) *cobra.Command {
	var step time.Duration
	c := &cobra.Command{
		Use:   "cluster",
		Short: "Serve an installed cluster for node-image (day 2) and play its new hosts joining",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return testcluster.ServeDir(cmd.Context(), e.dir, step, e.log)
		},
	}
	c.Flags().DurationVar(&step, "step", 2*time.Second, "time between two states of a joining host")
	return c
}
