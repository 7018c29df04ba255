package regstore

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chunked returns at most n bytes per read, and err with the last bytes
// (as a TLS body and a digest check do).
type chunked struct {
	data []byte
	n    int
	err  error
}

func (c *chunked) Read(p []byte) (int, error) {
	k := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[k:]
	if len(c.data) == 0 {
		return k, c.err
	}
	return k, nil
}

type sizes struct {
	bytes.Buffer
	writes []int
}

func (s *sizes) Write(p []byte) (int, error) {
	s.writes = append(s.writes, len(p))
	return s.Buffer.Write(p)
}

func TestCopyFullWritesWholeBuffers(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 5000) // 80000 bytes
	w := &sizes{}
	n, err := copyFull(w, &chunked{data: data, n: 1000, err: io.EOF}, make([]byte, 32768))
	require.NoError(t, err)
	assert.Equal(t, int64(len(data)), n)
	assert.Equal(t, data, w.Bytes())
	assert.Equal(t, []int{32768, 32768, 80000 - 65536}, w.writes)
}

func TestCopyFullKeepsTheErrorOfTheReadThatFillsTheBuffer(t *testing.T) {
	bad := errors.New("digest mismatch")
	data := bytes.Repeat([]byte{7}, 4096)
	w := &sizes{}
	n, err := copyFull(w, &chunked{data: data, n: 1024, err: bad}, make([]byte, 4096))
	require.ErrorIs(t, err, bad)
	assert.Equal(t, int64(4096), n)
	assert.Equal(t, []int{4096}, w.writes)
}

func TestCopyFullStopsOnAWriteError(t *testing.T) {
	_, err := copyFull(failWriter{}, &chunked{data: make([]byte, 10), n: 4, err: io.EOF}, make([]byte, 8))
	require.ErrorIs(t, err, io.ErrClosedPipe)
}

type failWriter struct{}

func (failWriter) Write(p []byte) (int, error) { return 0, io.ErrClosedPipe }
