package main

import (
	"os"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// oldTime is the mtime `backdate` gives files, so `backdated` can tell
// whether a later command rewrote them (content checks alone cannot see a
// rewrite with identical bytes).
func oldTime() time.Time { return time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC) }

// scriptCmds are the custom testscript commands (and those of
// releaseScriptCmds):
//
//	backdate file...    set the files' mtime to a fixed old time
//	backdated file...   fail unless every file still has that mtime
//	                    (with !: fail unless every file was rewritten)
func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	cmds := releaseScriptCmds()
	for k, v := range baseScriptCmds() {
		cmds[k] = v
	}
	for k, v := range serveScriptCmds() {
		cmds[k] = v
	}
	for k, v := range clusterScriptCmds() {
		cmds[k] = v
	}
	for k, v := range configImageScriptCmds() {
		cmds[k] = v
	}
	return cmds
}

func baseScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"backdate": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg {
				ts.Fatalf("unsupported: ! backdate")
			}
			if len(args) == 0 {
				ts.Fatalf("usage: backdate file...")
			}
			for _, a := range args {
				ts.Check(os.Chtimes(ts.MkAbs(a), oldTime(), oldTime()))
			}
		},
		"backdated": func(ts *testscript.TestScript, neg bool, args []string) {
			if len(args) == 0 {
				ts.Fatalf("usage: backdated file...")
			}
			for _, a := range args {
				fi, err := os.Stat(ts.MkAbs(a))
				ts.Check(err)
				old := fi.ModTime().Equal(oldTime())
				if old == neg {
					if neg {
						ts.Fatalf("%s was not rewritten (mtime still %v)", a, oldTime())
					}
					ts.Fatalf("%s was rewritten (mtime %v, want %v)", a, fi.ModTime(), oldTime())
				}
			}
		},
	}
}
