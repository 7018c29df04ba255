package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/seed-a052040e/agentiso/internal/fake/redfishsim"
)

// serveScriptCmds are the testscript commands of the serve and boot
// scripts:
//
//	freeport VAR    set $VAR to a free TCP port on 127.0.0.1
//	waithttp URL    wait (30 s at most) until URL answers any HTTP status
//	redfishbmc [-under-system] [-powered-on] [-profile P] [-insert SLOT=URL] VAR USER PASSWORD SYSTEM
//	    start a Redfish BMC emulator (internal/fake/redfishsim) with one system
//	    on loopback, behaving as vendor profile P (default: the Redfish
//	    standard), with an earlier image in SLOT, stopped when the script
//	    ends; $VAR is its host:port
//	bmcstate VAR SYSTEM
//	    print the emulated system's state (power, media, boots) as JSON
func serveScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	var bmcs sync.Map // *testscript.TestScript + VAR -> *redfishsim.BMC
	type bmcKey struct {
		ts   *testscript.TestScript
		name string
	}
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"redfishbmc": func(ts *testscript.TestScript, neg bool, args []string) {
			fs := flag.NewFlagSet("redfishbmc", flag.ContinueOnError)
			under := fs.Bool("under-system", false, "virtual media under the System")
			on := fs.Bool("powered-on", false, "the system starts powered on")
			profile := fs.String("profile", "", "vendor profile")
			insert := fs.String("insert", "", "SLOT=URL inserted before")
			ts.Check(fs.Parse(args))
			if neg || fs.NArg() != 4 {
				ts.Fatalf("usage: redfishbmc [-under-system] [-powered-on] [-profile P] [-insert SLOT=URL] VAR USER PASSWORD SYSTEM")
			}
			if !redfishsim.Profile(*profile).Known() {
				ts.Fatalf("redfishbmc: unknown profile %q", *profile)
			}
			a := fs.Args()
			b := redfishsim.New(redfishsim.Options{Username: a[1], Password: a[2], Profile: redfishsim.Profile(*profile),
				Systems: []redfishsim.System{{ID: a[3], MediaUnderSystem: *under, PoweredOn: *on}}})
			if slot, url, ok := strings.Cut(*insert, "="); ok {
				ts.Check(b.Insert(a[3], slot, url))
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			ts.Check(err)
			hs := &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
			go func() { _ = hs.Serve(ln) }()
			ts.Defer(func() { _ = hs.Close() })
			bmcs.Store(bmcKey{ts, a[0]}, b)
			ts.Setenv(a[0], ln.Addr().String())
		},
		"bmcstate": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 2 {
				ts.Fatalf("usage: bmcstate VAR SYSTEM")
			}
			b, ok := bmcs.Load(bmcKey{ts, args[0]})
			if !ok {
				ts.Fatalf("bmcstate: no redfishbmc %s", args[0])
			}
			st := b.(*redfishsim.BMC).State(args[1])
			js, err := json.MarshalIndent(map[string]any{"PowerState": st.PowerState, "Inserted": st.Inserted, "Image": st.Image, "MediaUser": st.MediaUser, "Boots": st.Boots, "Slots": st.Slots, "Refused": st.Refused}, "", "  ")
			ts.Check(err)
			_, _ = fmt.Fprintf(ts.Stdout(), "%s\n", js)
		},
		"freeport": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: freeport VAR")
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			ts.Check(err)
			port := ln.Addr().(*net.TCPAddr).Port
			ts.Check(ln.Close())
			ts.Setenv(args[0], strconv.Itoa(port))
		},
		"waithttp": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 1 {
				ts.Fatalf("usage: waithttp URL")
			}
			cl := &http.Client{Timeout: 2 * time.Second}
			deadline := time.Now().Add(30 * time.Second)
			for {
				resp, err := cl.Head(args[0])
				if err == nil {
					resp.Body.Close()
					return
				}
				if time.Now().After(deadline) {
					ts.Fatalf("%s did not answer within 30s: %v", args[0], err)
				}
				time.Sleep(100 * time.Millisecond)
			}
		},
	}
}
