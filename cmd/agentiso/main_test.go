package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/seed-a052040e/agentiso/internal/config"
)

func TestMain(m *testing.M) {
	testscript.Main(isolated{m}, map[string]func(){
		"agentiso": func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// isolated runs the tests (not the agentiso command the scripts exec, which
// gets the script's environment) without the developer's own settings: no
// AGENTISO_<FLAG> variable reaches the tests that call run in-process.
type isolated struct{ m *testing.M }

func (i isolated) Run() int {
	for _, k := range configKeys(newRootCmd(&globals{})) {
		os.Unsetenv(config.EnvVar(k))
	}
	return i.m.Run()
}

// TestScripts runs every cmd/agentiso/testdata/script/*.txtar against the real binary.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Cmds:                scriptCmds(),
	})
}
