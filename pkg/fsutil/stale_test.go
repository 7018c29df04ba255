//go:build unix && !aix && !solaris && !illumos

package fsutil

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelperHoldTemp is not a test: run as a child process it creates a
// locked temporary file in $FSUTIL_HOLD_DIR, prints its name and blocks.
func TestHelperHoldTemp(t *testing.T) {
	dir := os.Getenv("FSUTIL_HOLD_DIR")
	if dir == "" {
		return
	}
	f, err := CreateTemp(dir, "agent.x86_64.iso")
	if err != nil {
		os.Exit(2)
	}
	_, _ = os.Stdout.WriteString(f.Name() + "\n")
	select {}
}

func holdTemp(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldTemp$")
	cmd.Env = append(os.Environ(), "FSUTIL_HOLD_DIR="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	name, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	return cmd, strings.TrimSpace(name)
}

// The temporary file of a run killed with SIGKILL is removed by the next
// run; the one of a run still alive is never touched.
func TestRemoveStaleTempsOnlyOfDeadRuns(t *testing.T) {
	dir := t.TempDir()
	dead, deadName := holdTemp(t, dir)
	_, liveName := holdTemp(t, dir)
	require.NoError(t, dead.Process.Signal(syscall.SIGKILL))
	_, _ = dead.Process.Wait()
	// A temporary file of a crashed older run, never locked at all.
	orphan := filepath.Join(dir, ".agent.x86_64.iso.tmp-123456")
	require.NoError(t, os.WriteFile(orphan, []byte("partial"), 0o600))
	// Files that are not agentiso temporaries stay.
	other := filepath.Join(dir, ".agent.x86_64.iso.bak")
	require.NoError(t, os.WriteFile(other, nil, 0o600))

	removed, err := RemoveStaleTemps(dir, "agent.x86_64.iso")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{deadName, orphan}, removed)
	assert.NoFileExists(t, deadName)
	assert.NoFileExists(t, orphan)
	assert.FileExists(t, liveName, "a live run's temporary file")
	assert.FileExists(t, other)
}
