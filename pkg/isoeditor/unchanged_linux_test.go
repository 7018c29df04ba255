package isoeditor

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
)

// The same edit of the same base written again over the ISO it wrote
// before, untouched since, is not rewritten: the file (its inode and
// times) stays, the result says unchanged. Any change to the ISO there, to
// its .sha256 or to the edit writes it again.
func TestWriteLeavesAnUnchangedOutputInPlace(t *testing.T) {
	p, _ := makeISO(t, testiso.Options{Dense: true})
	iso, _ := openFile(t, p)
	recs := fsutil.HashRecords{Dir: filepath.Join(t.TempDir(), "records")}
	dst := filepath.Join(t.TempDir(), "agent.x86_64.iso")
	write := func(ign string) *WriteResult {
		t.Helper()
		img, err := iso.Edit(Edit{Ignition: []byte(ign), AppendKargs: []string{"x=1"}})
		require.NoError(t, err)
		res, err := WriteFile(context.Background(), dst, img, WriteOptions{HashRecords: recs})
		require.NoError(t, err)
		assert.Equal(t, fileSHA(t, dst), res.SHA256)
		sum, err := os.ReadFile(dst + ".sha256")
		require.NoError(t, err)
		assert.Equal(t, res.SHA256+"  agent.x86_64.iso\n", string(sum))
		return res
	}
	ident := func() (uint64, time.Time) {
		fi, err := os.Stat(dst)
		require.NoError(t, err)
		return fi.Sys().(*syscall.Stat_t).Ino, fi.ModTime()
	}
	first := write(testConfig)
	assert.NotEqual(t, MethodUnchanged, first.Method)
	ino, mt := ident()
	again := write(testConfig)
	assert.Equal(t, MethodUnchanged, again.Method, "same base, same edit, the ISO there untouched")
	assert.Equal(t, first.SHA256, again.SHA256)
	ino2, mt2 := ident()
	assert.Equal(t, ino, ino2, "not replaced")
	assert.Equal(t, mt, mt2, "not rewritten")

	// the ISO there changed in place: written again
	f, err := os.OpenFile(dst, os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{0x42}, 1)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.NotEqual(t, MethodUnchanged, write(testConfig).Method)
	assert.Equal(t, MethodUnchanged, write(testConfig).Method)
	// its .sha256 gone: written again
	require.NoError(t, os.Remove(dst+".sha256"))
	assert.NotEqual(t, MethodUnchanged, write(testConfig).Method)
	// another edit: written
	other := write(`{"ignition":{"version":"3.2.0"},"storage":{}}`)
	assert.NotEqual(t, MethodUnchanged, other.Method)
	assert.NotEqual(t, first.SHA256, other.SHA256)
	// without records, always written
	img, err := iso.Edit(Edit{Ignition: []byte(`{"ignition":{"version":"3.2.0"},"storage":{}}`), AppendKargs: []string{"x=1"}})
	require.NoError(t, err)
	res, err := WriteFile(context.Background(), dst, img, WriteOptions{})
	require.NoError(t, err)
	assert.NotEqual(t, MethodUnchanged, res.Method)
}
