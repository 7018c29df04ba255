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

	"github.com/seed-a052040e/agentiso/internal/testiso"
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
