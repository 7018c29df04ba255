package isoeditor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
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

// spannedFile is a base whose spans are ranges of a file and whose other
// bytes are in memory.
type spannedFile struct {
	f     *os.File
	spans []fileSpan
	data  []byte // the whole image, as the spans and the rest make it
	reads atomic.Int64
}

func (s *spannedFile) ReadAt(p []byte, off int64) (int, error) {
	s.reads.Add(int64(len(p)))
	return bytes.NewReader(s.data).ReadAt(p, off)
}

func (s *spannedFile) fileSpans() (*os.File, []fileSpan, io.ReaderAt) {
	return s.f, s.spans, bytes.NewReader(s.data)
}

// A spanned base is written span by span: congruent spans by the kernel,
// the others (and the bytes of no span) through user space, the overlays
// on top, in order; the hash reads the image once, behind the writes.
func TestWriteSpans(t *testing.T) {
	file := make([]byte, 4<<20)
	for i := range file {
		file[i] = byte(i*7 + i>>11)
	}
	fp := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(fp, file, 0o600))
	f, err := os.Open(fp)
	require.NoError(t, err)
	defer f.Close()

	const size = 3 << 20
	spans := []fileSpan{
		{off: 10240, fileOff: 2048 + 8192, n: 1 << 20},         // congruent, not block-aligned
		{off: 10240 + 1<<20, fileOff: 2 << 20, n: 300000},      // not congruent
		{off: 1605632, fileOff: 1605632 + 4096*5, n: 1 << 20},  // block-aligned both sides
		{off: 1605632 + 1<<20, fileOff: 100, n: 2048},          // small, not congruent
		{off: 1605632 + 1<<20 + 4096, fileOff: 3 << 20, n: 77}, // a tail of a block
	}
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(255 - i%251)
	}
	for _, s := range spans {
		copy(data[s.off:s.off+s.n], file[s.fileOff:s.fileOff+s.n])
	}
	ovs := []Overlay{
		{Region: "a", Offset: 5, Data: []byte("head")},
		{Region: "b", Offset: 10240 + 500000, Data: bytes.Repeat([]byte{'x'}, 70000)},
		{Region: "c", Offset: size - 3, Data: []byte("end")},
	}
	want := append([]byte(nil), data...)
	for _, o := range ovs {
		copy(want[o.Offset:], o.Data)
	}
	wantSum := sha256.Sum256(want)
	for _, opts := range []WriteOptions{{}, {NoReflink: true}, {NoKernelCopy: true}, {NoChecksum: true}} {
		base := &spannedFile{f: f, spans: spans, data: data}
		img, err := NewImage(base, size, ovs...)
		require.NoError(t, err)
		var hashed atomic.Int64
		opts.hashWrap = func(h hash.Hash) hash.Hash { return &countHash{Hash: h, n: &hashed} }
		var last int64
		opts.Progress = func(done, total int64) {
			assert.GreaterOrEqual(t, done, last, "progress only grows")
			assert.Equal(t, int64(size), total)
			last = done
		}
		out := filepath.Join(t.TempDir(), "out.iso")
		res, err := WriteFile(context.Background(), out, img, opts)
		require.NoError(t, err, "%+v", opts)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		require.True(t, bytes.Equal(want, got), "%+v: the written image differs", opts)
		assert.Equal(t, int64(size), last, "%+v: progress reaches the end", opts)
		if opts.NoChecksum {
			assert.Empty(t, res.SHA256)
			assert.Zero(t, base.reads.Load(), "nothing to hash: the image is not read")
			continue
		}
		assert.Equal(t, hex.EncodeToString(wantSum[:]), res.SHA256, "%+v", opts)
		assert.Equal(t, int64(size), hashed.Load(), "%+v: every byte hashed once", opts)
		assert.LessOrEqual(t, base.reads.Load(), int64(size), "%+v: the image is read once", opts)
		assert.GreaterOrEqual(t, base.reads.Load(), int64(size-70007), "%+v: all but the overlays", opts)
		switch {
		case opts.NoKernelCopy || runtime.GOOS != "linux":
			assert.Equal(t, MethodReadWrite, res.Method)
		case opts.NoReflink:
			assert.Equal(t, MethodCopyFileRange, res.Method)
		default:
			assert.Contains(t, []string{MethodCopyFileRange, MethodReflink}, res.Method)
		}
	}
}

type countHash struct {
	hash.Hash
	n *atomic.Int64
}

func (c *countHash) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return c.Hash.Write(p)
}
