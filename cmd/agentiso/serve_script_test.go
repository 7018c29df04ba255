package main

import (
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// serveScriptCmds are the testscript commands of the serve and boot
// scripts:
//
//	freeport VAR    set $VAR to a free TCP port on 127.0.0.1
//	waithttp URL    wait (30 s at most) until URL answers any HTTP status
func serveScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
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
