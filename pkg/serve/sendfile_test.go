package serve

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// connPair returns the two ends of a loopback TCP connection: the
// server's, wrapped as serve wraps an accepted connection, and the
// client's, dialled with dial's options.
func connPair(t *testing.T, lim Limits, dial net.Dialer) (*progressConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	cc, err := dial.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { cc.Close() })
	sc, ok := <-accepted
	require.True(t, ok)
	t.Cleanup(func() { sc.Close() })
	return &progressConn{Conn: sc, lim: lim.withDefaults(), pools: newBufPools(), release: func() {}}, cc
}

// sourceFile writes data to a file and returns it opened.
func sourceFile(t *testing.T, data []byte) *os.File {
	t.Helper()
	p := filepath.Join(t.TempDir(), "src")
	require.NoError(t, os.WriteFile(p, data, 0o600))
	f, err := os.Open(p)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// TestReadFromSendsRangeAtOnce: a 1 MiB range of a file, to a peer whose
// buffers take it all, goes to the kernel in a few sendfile calls, not
// one per Progress bytes (64 KiB: 16 calls, each with its deadline,
// which cost serve a third of its CPU on 1 MiB range GETs against nginx's
// one call); the bytes are the range's, the LimitedReader and the file's
// offset account for them.
func TestReadFromSendsRangeAtOnce(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("sendfile(2) as agentiso uses it is Linux's")
	}
	data := randomBytes(4 << 20)
	f := sourceFile(t, data)
	bigReceive := func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = setReceiveBuffer(fd, 8<<20) })
	}
	pc, cc := connPair(t, Limits{}, net.Dialer{Control: bigReceive})
	require.NoError(t, pc.Conn.(*net.TCPConn).SetWriteBuffer(4<<20))

	const off, n = 1<<20 + 2048, 1 << 20
	_, err := f.Seek(off, io.SeekStart)
	require.NoError(t, err)
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, n)
		_, _ = io.ReadFull(cc, b)
		got <- b
	}()
	lr := &io.LimitedReader{R: f, N: n}
	sent, err := pc.ReadFrom(lr)
	require.NoError(t, err)
	assert.EqualValues(t, n, sent)
	assert.Zero(t, lr.N, "the LimitedReader's remainder")
	pos, err := f.Seek(0, io.SeekCurrent)
	require.NoError(t, err)
	assert.EqualValues(t, off+n, pos, "the file's offset after the range")
	assert.True(t, bytes.Equal(data[off:off+n], <-got), "the bytes received are the range's")
	assert.Positive(t, pc.sendfiles)
	assert.LessOrEqual(t, pc.sendfiles, 4, "sendfile calls for 1 MiB the socket takes at once")
	assert.False(t, pc.stalled.Load())
}

// TestReadFromWholeFile: a file not wrapped in a LimitedReader is sent to
// its end.
func TestReadFromWholeFile(t *testing.T) {
	data := randomBytes(3<<20 + 5)
	f := sourceFile(t, data)
	pc, cc := connPair(t, Limits{}, net.Dialer{})
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(cc)
		got <- b
	}()
	sent, err := pc.ReadFrom(f)
	require.NoError(t, err)
	assert.EqualValues(t, len(data), sent)
	require.NoError(t, pc.Conn.Close())
	assert.True(t, bytes.Equal(data, <-got))
}

// TestReadFromStallDetectedAfterLastProgress: a peer that reads 256 KiB
// and stops is dropped StallTimeout after the kernel last took Progress
// bytes, not a whole StallTimeout later (as it would be if the deadline
// were renewed only when a long sendfile call returns); one that reads
// slowly but steadily is not (TestSlowReaderPasses).
func TestReadFromStallDetectedAfterLastProgress(t *testing.T) {
	const stall = 600 * time.Millisecond
	f := sourceFile(t, randomBytes(8<<20))
	lim := Limits{StallTimeout: stall, Progress: 16 << 10}
	pc, cc := connPair(t, lim, net.Dialer{Control: smallReceiveBuffer})
	require.NoError(t, pc.Conn.(*net.TCPConn).SetWriteBuffer(32<<10))
	stopped := make(chan time.Time, 1)
	go func() {
		// 256 KiB, 4 KiB every 2 ms: progress for about 130 ms.
		buf := make([]byte, 4<<10)
		for read := 0; read < 256<<10; {
			n, err := cc.Read(buf)
			if err != nil {
				break
			}
			read += n
			time.Sleep(2 * time.Millisecond)
		}
		stopped <- time.Now()
	}()
	sent, err := pc.ReadFrom(&io.LimitedReader{R: f, N: 8 << 20})
	end := time.Now()
	require.Error(t, err)
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout(), "%v", err)
	assert.True(t, pc.stalled.Load(), "a missed deadline marks the connection stalled (reset at close)")
	assert.Less(t, sent, int64(8<<20))
	stop := <-stopped
	// The kernel takes what the buffers hold right after the reader
	// stops; from then on nothing: dropped about one StallTimeout later.
	assert.GreaterOrEqual(t, end.Sub(stop), stall-100*time.Millisecond, "dropped before the peer had StallTimeout to read")
	assert.Less(t, end.Sub(stop), stall+stall/2, "dropped more than 1.5 StallTimeout after the reader stopped")
}

// TestReadFromSection: a section of a file (what the requests sharing a
// kept descriptor read, Server.acquire) is sent with sendfile from the
// section's offset: the bytes are the range's, the section and the
// LimitedReader account for them, and the descriptor's own offset, shared
// by the other requests, does not move. A section not wrapped in a
// LimitedReader is sent to its end, not to the file's.
func TestReadFromSection(t *testing.T) {
	data := randomBytes(4 << 20)
	f := sourceFile(t, data)
	pc, cc := connPair(t, Limits{}, net.Dialer{})
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(cc)
		got <- b
	}()
	sec := io.NewSectionReader(f, 4096, 3<<20)
	const off, n = 1<<20 + 2048, 1 << 20
	_, err := sec.Seek(off, io.SeekStart)
	require.NoError(t, err)
	lr := &io.LimitedReader{R: sec, N: n}
	sent, err := pc.ReadFrom(lr)
	require.NoError(t, err)
	assert.EqualValues(t, n, sent)
	assert.Zero(t, lr.N, "the LimitedReader's remainder")
	pos, err := sec.Seek(0, io.SeekCurrent)
	require.NoError(t, err)
	assert.EqualValues(t, off+n, pos, "the section's offset after the range")
	// The rest of the section, without a LimitedReader.
	sent, err = pc.ReadFrom(sec)
	require.NoError(t, err)
	assert.EqualValues(t, 3<<20-off-n, sent)
	fpos, err := f.Seek(0, io.SeekCurrent)
	require.NoError(t, err)
	assert.Zero(t, fpos, "the descriptor's offset")
	require.NoError(t, pc.Conn.Close())
	want := append(append([]byte{}, data[4096+off:4096+off+n]...), data[4096+off+n:4096+3<<20]...)
	assert.True(t, bytes.Equal(want, <-got), "the bytes received are the section's")
	if runtime.GOOS == "linux" {
		assert.Positive(t, pc.sendfiles, "sent by sendfile")
	}
}
