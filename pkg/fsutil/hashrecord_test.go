package fsutil

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sumA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

func TestHashRecordsRemembersTheFileAsItIs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("file identity is read on Linux only")
	}
	dir := t.TempDir()
	r := HashRecords{Dir: filepath.Join(dir, "records")}
	p := filepath.Join(dir, "base.iso")
	require.NoError(t, os.WriteFile(p, []byte("base"), 0o644))
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()

	_, ok := r.Lookup(f, "")
	assert.False(t, ok, "nothing recorded yet")
	require.NoError(t, r.Record(f, "", sumA))
	got, ok := r.Lookup(f, "")
	require.True(t, ok)
	assert.Equal(t, sumA, got)
	_, ok = r.Lookup(f, "edit 1")
	assert.False(t, ok, "another salt is another record")

	// A write changes the file's times: the record no longer holds, even
	// with the modification time put back.
	fi, err := os.Stat(p)
	require.NoError(t, err)
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, os.WriteFile(p, []byte("BASE"), 0o644))
	require.NoError(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
	_, ok = r.Lookup(f, "")
	assert.False(t, ok, "a rewritten file must be hashed again")

	// A replacement (same name, new inode) does not inherit the record.
	require.NoError(t, r.Record(f, "", sumA))
	require.NoError(t, os.Remove(p))
	require.NoError(t, os.WriteFile(p, []byte("BASE"), 0o644))
	g, err := os.Open(p)
	require.NoError(t, err)
	defer g.Close()
	_, ok = r.Lookup(g, "")
	assert.False(t, ok)
}

func TestHashRecordsIgnoresBadRecords(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("file identity is read on Linux only")
	}
	dir := t.TempDir()
	r := HashRecords{Dir: dir}
	p := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	assert.Error(t, r.Record(f, "", "not-a-sum"))
	key, ok := r.key(f, "")
	require.True(t, ok)
	for _, bad := range []string{"", "{", `{"key":"other","sha256":"` + sumA + `"}`, `{"key":` + strconv.Quote(key) + `,"sha256":"ABC"}`} {
		require.NoError(t, os.WriteFile(r.path(key), []byte(bad), 0o644))
		_, ok := r.Lookup(f, "")
		assert.False(t, ok, "record %q", bad)
	}
	assert.NoError(t, HashRecords{}.Record(f, "", sumA), "the zero value records nothing")
	_, ok = HashRecords{}.Lookup(f, "")
	assert.False(t, ok)
}
