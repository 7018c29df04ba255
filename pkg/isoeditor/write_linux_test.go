package isoeditor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
)

func TestAlignedSegments(t *testing.T) {
	const size = 10*copyAlign + 123
	base := make([]byte, size)
	for i := range base {
		base[i] = byte(i * 7)
	}
	for _, ovs := range [][]Overlay{
		nil,
		{{Region: "start", Offset: 0, Data: []byte{1, 2, 3}}},
		{{Region: "a", Offset: copyAlign + 5, Data: bytes.Repeat([]byte{9}, 100)},
			{Region: "b", Offset: 2*copyAlign - 10, Data: bytes.Repeat([]byte{8}, 20)},
			{Region: "c", Offset: 6*copyAlign + 1, Data: []byte{7}}},
		{{Region: "tail", Offset: size - 2, Data: []byte{5, 5}}},
	} {
		img, err := NewImage(bytes.NewReader(base), size, ovs...)
		require.NoError(t, err)
		var want bytes.Buffer
		_, err = img.WriteTo(&want)
		require.NoError(t, err)
		segs, err := alignedSegments(img)
		require.NoError(t, err)
		got := make([]byte, 0, size)
		pos := int64(0)
		for _, s := range segs {
			require.Equal(t, pos, s.off, "segments must be contiguous")
			if s.overlay == nil {
				assert.Zero(t, s.off%copyAlign, "gap start aligned")
				if s.off+s.n != size {
					assert.Zero(t, s.n%copyAlign, "gap length aligned")
				}
				got = append(got, base[s.off:s.off+s.n]...)
			} else {
				require.Len(t, s.overlay.Data, int(s.n))
				got = append(got, s.overlay.Data...)
			}
			pos += s.n
		}
		require.Equal(t, int64(size), pos)
		assert.True(t, bytes.Equal(want.Bytes(), got), "segments must reproduce the image")
	}
}

// TestWriteFileReflink exercises the FICLONE path where the temp dir's
// filesystem supports reflinks (btrfs, XFS); elsewhere it checks that the
// copy_file_range path was taken instead.
func TestWriteFileReflink(t *testing.T) {
	p, _ := makeISO(t, testiso.Options{})
	iso, f := openFile(t, p)
	img, err := iso.Edit(Edit{Ignition: []byte(testConfig), AppendKargs: []string{"x=1"}})
	require.NoError(t, err)
	dir := t.TempDir()
	probe, err := os.Create(filepath.Join(dir, "probe"))
	require.NoError(t, err)
	cloneErr := unix.IoctlFileClone(int(probe.Fd()), int(f.Fd()))
	probe.Close()
	os.Remove(probe.Name())

	out := filepath.Join(dir, "a.iso")
	res, err := WriteFile(context.Background(), out, img, WriteOptions{})
	require.NoError(t, err)
	t.Logf("method %s (FICLONE probe: %v)", res.Method, cloneErr)
	if cloneErr != nil {
		assert.Equal(t, MethodCopyFileRange, res.Method, "FICLONE unsupported here (%v)", cloneErr)
	} else {
		assert.Equal(t, MethodReflink, res.Method)
	}
	var want bytes.Buffer
	_, err = img.WriteTo(&want)
	require.NoError(t, err)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want.Bytes(), got))
	assert.Equal(t, fileSHA(t, out), res.SHA256)
}

// TestWriteFileRangeReflink clones a file of the base whose offset is
// block-aligned where the temp dir's file system shares extents (XFS,
// btrfs) and copies it otherwise, or when the offset is not aligned (an
// ISO file starts on a 2048-byte sector); the bytes and the sum are the
// same either way.
func TestWriteFileRangeReflink(t *testing.T) {
	dir := t.TempDir()
	src := make([]byte, 3<<20)
	for i := range src {
		src[i] = byte(i*13 + i>>12)
	}
	p := filepath.Join(dir, "base")
	require.NoError(t, os.WriteFile(p, src, 0o600))
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	probe, err := os.Create(filepath.Join(dir, "probe"))
	require.NoError(t, err)
	cloneErr := unix.IoctlFileClone(int(probe.Fd()), int(f.Fd()))
	probe.Close()
	os.Remove(probe.Name())

	for _, tc := range []struct {
		off, n int64
		opts   WriteOptions
		want   string
	}{
		{8192, 1 << 20, WriteOptions{}, MethodReflink},
		{8192, 1<<20 + 2048, WriteOptions{}, MethodReflink}, // the last half block copied
		{2048, 1 << 20, WriteOptions{}, MethodCopyFileRange},
		{8192, 1 << 20, WriteOptions{NoReflink: true}, MethodCopyFileRange},
		{8192, 1 << 20, WriteOptions{NoKernelCopy: true}, MethodReadWrite},
	} {
		want := tc.want
		if cloneErr != nil && want == MethodReflink {
			want = MethodCopyFileRange
		}
		out := filepath.Join(dir, "out")
		st, err := WriteFileRangeStaged(context.Background(), out, f, tc.off, tc.n, tc.opts)
		require.NoError(t, err)
		require.NoError(t, st.Commit())
		assert.Equal(t, want, st.Result.Method, "%d+%d %+v (FICLONE probe: %v)", tc.off, tc.n, tc.opts, cloneErr)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		require.True(t, bytes.Equal(src[tc.off:tc.off+tc.n], got), "%d+%d %+v", tc.off, tc.n, tc.opts)
		assert.Equal(t, fileSHA(t, out), st.Result.SHA256)
	}
}
