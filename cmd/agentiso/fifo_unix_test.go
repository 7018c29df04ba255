//go:build linux || darwin

package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runWithin runs the CLI in-process and fails the test if it has not
// returned within d (a FIFO input used to hang forever).
func runWithin(t *testing.T, d time.Duration, args ...string) (int, string) {
	t.Helper()
	type result struct {
		code int
		err  string
	}
	done := make(chan result, 1)
	go func() {
		var out, errOut bytes.Buffer
		code := run(args, bytes.NewReader(nil), &out, &errOut)
		done <- result{code, errOut.String()}
	}()
	select {
	case r := <-done:
		return r.code, r.err
	case <-time.After(d):
		t.Fatalf("agentiso %v still running after %s", args, d)
		return 0, ""
	}
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, syscall.Mkfifo(p, 0o600))
	// Unblock a reader stuck on the old code when the test ends.
	t.Cleanup(func() {
		if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
}

// Every input that can name a FIFO, device or directory is refused up
// front with the file's name, instead of blocking forever on it.
func TestNonRegularInputsAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name, fifo string
		args       func(dir string) []string
	}{
		{"install-config", "install-config.yaml", func(d string) []string { return withTestRelease("create", "cluster-manifests", "--dir", d) }},
		{"agent-config", "agent-config.yaml", func(d string) []string { return withTestRelease("create", "cluster-manifests", "--dir", d) }},
		{"extra manifest", "openshift/extra.yaml", func(d string) []string { return withTestRelease("create", "ignition", "--dir", d) }},
		{"cluster manifest", "cluster-manifests/infraenv.yaml", func(d string) []string { return withTestRelease("create", "cluster-manifests", "--dir", d) }},
		{"iso info", "x.iso", func(d string) []string { return []string{"iso", "info", filepath.Join(d, "x.iso")} }},
		{"nmstate gc", "n.yaml", func(d string) []string { return []string{"nmstate", "gc", filepath.Join(d, "n.yaml")} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, "../../examples/ha", dir)
			p := filepath.Join(dir, tc.fifo)
			_ = os.Remove(p)
			mkfifo(t, p)
			code, stderr := runWithin(t, 10*time.Second, tc.args(dir)...)
			assert.Equal(t, 1, code, stderr)
			assert.Contains(t, stderr, "not a regular file", stderr)
			assert.Contains(t, stderr, filepath.Base(tc.fifo), stderr)
		})
	}
}

// SIGINT ends a run even while it blocks on a read that never finishes
// (here: NMState YAML on a standard input that stays open): exit 130. The
// signal is sent once the child says it reads its standard input
// (readyEnv): by then its handler is installed, and a signal sent earlier
// would kill it with the default action (exit -1), not test the handler.
func TestInterruptEndsABlockedRead(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "agentiso")
	self, err := os.Executable()
	require.NoError(t, err)
	require.NoError(t, os.Symlink(self, bin))
	cmd := exec.Command(bin, "nmstate", "gc", "-")
	cmd.Env = append(os.Environ(), readyEnv+"=1")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
		_, _ = io.Copy(io.Discard, stdout)
		done <- cmd.Wait()
	}()
	// stderr is read only once the child has exited (Wait copied it all).
	fail := func(format string, args ...any) {
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf(format+"; stderr: %s", append(args, stderr.String())...)
	}
	select {
	case line := <-ready:
		if line != readyLine+"\n" {
			fail("the child's first line is %q, not %q", line, readyLine)
		}
	case <-time.After(time.Minute):
		fail("the child never read its standard input")
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	select {
	case err := <-done:
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee), "exit: %v, stderr: %s", err, stderr.String())
		assert.Equal(t, 130, ee.ExitCode(), stderr.String())
		assert.Contains(t, stderr.String(), "interrupted")
	case <-time.After(15 * time.Second):
		fail("still running 15s after SIGINT")
	}
}
