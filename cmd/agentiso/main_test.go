package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/seed-a052040e/agentiso/internal/config"
	"github.com/seed-a052040e/agentiso/internal/fake/devcmd"
)

func TestMain(m *testing.M) {
	testscript.Main(isolated{m}, map[string]func(){
		"agentiso": func() { os.Exit(run(os.Args[1:], stdinOf(os.Stdin, os.Stdout), os.Stdout, os.Stderr)) },
		// The developer aids the scripts use (cmd/agentiso-dev).
		"agentiso-dev": func() { os.Exit(devcmd.Run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// readyEnv makes the agentiso command that TestMain runs print readyLine
// on its standard output when it first reads its standard input: by then
// run has installed its signal handler (before the command runs), so a
// test can send a signal at a blocked read without guessing with a sleep.
const (
	readyEnv  = "AGENTISO_TEST_ANNOUNCE_STDIN_READ"
	readyLine = "reading standard input"
)

// stdinOf is in, announcing its first read on out when readyEnv is set.
func stdinOf(in io.Reader, out io.Writer) io.Reader {
	if os.Getenv(readyEnv) == "" {
		return in
	}
	return &announcedReader{r: in, w: out}
}

type announcedReader struct {
	r    io.Reader
	w    io.Writer
	done bool
}

func (a *announcedReader) Read(p []byte) (int, error) {
	if !a.done {
		a.done = true
		_, _ = fmt.Fprintln(a.w, readyLine)
	}
	return a.r.Read(p)
}

// isolated runs the tests (not the agentiso command the scripts exec, which
// gets the script's environment) without the developer's own settings: no
// AGENTISO_<FLAG> variable and no config file reach the tests that call
// run in-process, and they never write the developer's cache.
type isolated struct{ m *testing.M }

func (i isolated) Run() int {
	for _, k := range append(configPolicy().Keys(newRootCmd(&globals{})), configFlag) {
		os.Unsetenv(config.EnvVar(k))
	}
	dir, err := os.MkdirTemp("", "agentiso-config-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	os.Setenv("XDG_CONFIG_HOME", dir)
	// The base ISO cache (and its hash records) of in-process runs.
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	return i.m.Run()
}

// TestScripts runs every cmd/agentiso/testdata/script/*.txtar against the real binary.
// XDG_CONFIG_HOME is $WORK/.config: the default config file is
// $WORK/.config/agentiso/config.yaml, never the developer's.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Cmds:                scriptCmds(),
		Setup: func(env *testscript.Env) error {
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
			return nil
		},
	})
}
