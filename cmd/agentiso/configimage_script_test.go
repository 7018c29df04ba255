package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/seed-a052040e/agentiso/pkg/configimage"
)

// configImageScriptCmds are the testscript commands of the generic ISO and
// config image scripts:
//
//	perm MODE file...   fail unless every file has permission bits MODE (octal)
//	configimage-ls ISO  read ISO as the host checks it (configimage.Read) and
//	                    print "<mode> <path>" per member, then "info KEY=VALUE"
func configImageScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"perm": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) < 2 {
				ts.Fatalf("usage: perm MODE file...")
			}
			want, err := strconv.ParseUint(args[0], 8, 32)
			ts.Check(err)
			for _, a := range args[1:] {
				fi, err := os.Stat(ts.MkAbs(a))
				ts.Check(err)
				if got := fi.Mode().Perm(); uint64(got) != want {
					ts.Fatalf("%s has mode %#o, want %#o", a, got, want)
				}
			}
		},
		"configimage-ls": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) != 1 {
				ts.Fatalf("usage: configimage-ls ISO")
			}
			f, err := os.Open(ts.MkAbs(args[0]))
			ts.Check(err)
			defer f.Close()
			img, err := configimage.Read(f)
			if neg {
				if err == nil {
					ts.Fatalf("%s is a valid config image", args[0])
				}
				fmt.Fprintln(ts.Stdout(), err)
				return
			}
			ts.Check(err)
			for _, m := range img.Members {
				fmt.Fprintf(ts.Stdout(), "%04o %s\n", m.Mode, m.Path)
			}
			for _, k := range []string{"RELEASE_IMAGE", "RELEASE_VERSION", "CPU_ARCH", "CLUSTER", "RENDEZVOUS_IP", "CREATED_BY"} {
				fmt.Fprintf(ts.Stdout(), "info %s=%s\n", k, img.Info[k])
			}
		},
	}
}
