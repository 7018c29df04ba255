package fsutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteFileAtomicCreatesWithModeAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "b", "secret")
	require.NoError(t, WriteFileAtomic(p, []byte("x"), 0o600))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	entries, err := os.ReadDir(filepath.Dir(p))
	require.NoError(t, err)
	assert.Len(t, entries, 1)
}

func TestWriteFileAtomicFailureKeepsOldContent(t *testing.T) {
	if os.Geteuid() == 0 {
		// root ignores directory permissions; use a path under a file instead.
		dir := t.TempDir()
		blocker := filepath.Join(dir, "file")
		require.NoError(t, os.WriteFile(blocker, []byte("old"), 0o644))
		err := WriteFileAtomic(filepath.Join(blocker, "child"), []byte("new"), 0o644)
		require.Error(t, err)
		b, _ := os.ReadFile(blocker)
		assert.Equal(t, "old", string(b))
		return
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
	require.NoError(t, os.Chmod(dir, 0o500))
	defer os.Chmod(dir, 0o700)
	require.Error(t, WriteFileAtomic(p, []byte("new"), 0o644))
	b, _ := os.ReadFile(p)
	assert.Equal(t, "old", string(b))
}
