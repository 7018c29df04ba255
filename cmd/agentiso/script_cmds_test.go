package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
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
//	listening dir       wait (up to a minute) until the simulator of dir
//	                    (`agentiso-dev init-dir --local`) accepts connections on
//	                    its REST address: a wait-for whose --timeout is
//	                    the expected end must not spend it on the
//	                    simulator's start on a loaded machine
//	ignfile path out    write the content of the file at path of the
//	                    Ignition config in stdout (iso ignition show) to out
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
		"ignfile": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 2 {
				ts.Fatalf("usage: ignfile path out")
			}
			var cfg struct {
				Storage struct {
					Files []struct {
						Path     string `json:"path"`
						Contents struct {
							Compression string `json:"compression"`
							Source      string `json:"source"`
						} `json:"contents"`
					} `json:"files"`
				} `json:"storage"`
			}
			ts.Check(json.Unmarshal([]byte(ts.ReadFile("stdout")), &cfg))
			for _, f := range cfg.Storage.Files {
				if f.Path != args[0] {
					continue
				}
				// data:[<media type>][;base64],<data>
				rest, ok := strings.CutPrefix(f.Contents.Source, "data:")
				head, data, ok2 := strings.Cut(rest, ",")
				if !ok || !ok2 {
					ts.Fatalf("%s: source is not a data URL", args[0])
				}
				var b []byte
				var err error
				if strings.HasSuffix(head, ";base64") {
					b, err = base64.StdEncoding.DecodeString(data)
				} else {
					var u string
					u, err = url.PathUnescape(data)
					b = []byte(u)
				}
				ts.Check(err)
				if f.Contents.Compression == "gzip" {
					zr, err := gzip.NewReader(bytes.NewReader(b))
					ts.Check(err)
					b, err = io.ReadAll(zr)
					ts.Check(err)
				}
				ts.Check(os.WriteFile(ts.MkAbs(args[1]), b, 0o644))
				return
			}
			ts.Fatalf("no file %s in the Ignition config", args[0])
		},
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
		"listening": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: listening dir")
			}
			ds, err := agent.ReadDevSim(ts.MkAbs(args[0]))
			ts.Check(err)
			if ds == nil {
				ts.Fatalf("%s: no simulator addresses (run agentiso-dev init-dir --local)", args[0])
			}
			deadline := time.Now().Add(time.Minute)
			for {
				c, err := net.DialTimeout("tcp", ds.RESTAddr, time.Second)
				if err == nil {
					_ = c.Close()
					return
				}
				if time.Now().After(deadline) {
					ts.Fatalf("the simulator does not listen on %s: %v", ds.RESTAddr, err)
				}
				time.Sleep(20 * time.Millisecond)
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
