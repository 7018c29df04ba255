package isoeditor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/testiso"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
)

// behindReader fails a read of bytes the copy has not marked yet.
type behindReader struct {
	data   []byte
	marked atomic.Int64
	ahead  atomic.Bool
}

func (r *behindReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > r.marked.Load() {
		r.ahead.Store(true)
	}
	return bytes.NewReader(r.data).ReadAt(p, off)
}

func TestFollowerHashesOnlyWhatTheCopyMarked(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 3<<16) // 3 MiB
	r := &behindReader{data: data}
	h := sha256.New()
	fw := startFollower(context.Background(), r, int64(len(data)), h)
	for end := int64(0); end < int64(len(data)); {
		end = min(end+100_003, int64(len(data)))
		r.marked.Store(end)
		fw.mark(end)
	}
	require.NoError(t, fw.finish())
	assert.False(t, r.ahead.Load(), "the hash read bytes the copy had not written yet")
	want := sha256.Sum256(data)
	assert.Equal(t, hex.EncodeToString(want[:]), hex.EncodeToString(h.Sum(nil)))

	// A copy that stops short is an error, never a sum of a prefix.
	fw = startFollower(context.Background(), r, int64(len(data)), sha256.New())
	fw.mark(10)
	assert.ErrorContains(t, fw.finish(), "hashed 10 of")
	fw = startFollower(context.Background(), r, int64(len(data)), sha256.New())
	fw.mark(10)
	fw.abort()
}

func TestWriteReusesTheRecordedSumOfTheSameEdit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("file identity is read on Linux only")
	}
	p, _ := makeISO(t, testiso.Options{Dense: true})
	iso, _ := openFile(t, p)
	recs := fsutil.HashRecords{Dir: filepath.Join(t.TempDir(), "records")}
	dir := t.TempDir()
	write := func(name string, ign string, opts WriteOptions) *WriteResult {
		t.Helper()
		img, err := iso.Edit(Edit{Ignition: []byte(ign), AppendKargs: []string{"x=1"}})
		require.NoError(t, err)
		opts.HashRecords = recs
		res, err := WriteFile(context.Background(), filepath.Join(dir, name), img, opts)
		require.NoError(t, err)
		assert.Equal(t, fileSHA(t, res.Path), res.SHA256, "%s: the sum is the output's", name)
		return res
	}
	for _, opts := range []WriteOptions{{}, {NoReflink: true}, {NoKernelCopy: true}} {
		os.RemoveAll(recs.Dir)
		first := write("a.iso", testConfig, opts)
		assert.False(t, first.HashReused, "nothing recorded yet (%+v)", opts)
		again := write("b.iso", testConfig, opts)
		assert.True(t, again.HashReused, "same base, same edit (%+v)", opts)
		assert.Equal(t, first.SHA256, again.SHA256)
		other := write("c.iso", `{"ignition":{"version":"3.2.0"},"storage":{}}`, opts)
		assert.False(t, other.HashReused, "another edit is hashed (%+v)", opts)
		assert.NotEqual(t, first.SHA256, other.SHA256)
	}

	// The base rewritten in place (its times change) is hashed again.
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	b[len(b)-1] ^= 0xff
	require.NoError(t, os.WriteFile(p, b, 0o644))
	res := write("d.iso", testConfig, WriteOptions{})
	assert.False(t, res.HashReused)
}

func TestWriteFileRangeReusesTheRecordedSum(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("file identity is read on Linux only")
	}
	p, lay := makeISO(t, testiso.Options{Dense: true})
	_, f := openFile(t, p)
	ext := lay.Files[RootfsPath]
	recs := fsutil.HashRecords{Dir: t.TempDir()}
	dir := t.TempDir()
	var sums []string
	for i, want := range []bool{false, true} {
		st, err := WriteFileRangeStaged(context.Background(), filepath.Join(dir, "rootfs"+string(rune('a'+i))), f, ext.Offset, ext.Size, WriteOptions{HashRecords: recs})
		require.NoError(t, err)
		require.NoError(t, st.Commit())
		assert.Equal(t, want, st.Result.HashReused)
		assert.Equal(t, fileSHA(t, st.Result.Path), st.Result.SHA256)
		sums = append(sums, st.Result.SHA256)
	}
	assert.Equal(t, sums[0], sums[1])
}
