package isoeditor

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
