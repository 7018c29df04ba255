package serve

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a log the server writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// serveOn runs s.Serve on a loopback listener and returns its address.
func serveOn(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, nil, time.Second) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return ln.Addr().String()
}

// stalledGet opens a connection from the loopback address from, asks for
// the ISO and never reads: a peer that stopped reading (its receive buffer
// kept small, so that the server's writes block early).
func stalledGet(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second, Control: smallReceiveBuffer}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		// Closed (reset) by the server before the dial returned.
		require.ErrorIs(t, err, syscall.ECONNRESET)
		return nil
	}
	t.Cleanup(func() { c.Close() })
	// A refused connection may be closed before the request is written.
	_, _ = io.WriteString(c, "GET /agent.x86_64.iso HTTP/1.1\r\nHost: x\r\n\r\n")
	return c
}

// smallReceiveBuffer sets a socket's receive buffer to 4 KiB before it
// connects (the window it advertises then stays small): the server's
// writes to a peer that does not read block after a few kilobytes instead
// of filling megabytes of kernel buffers.
func smallReceiveBuffer(_, _ string, rc syscall.RawConn) error {
	var serr error
	err := rc.Control(func(fd uintptr) { serr = setReceiveBuffer(fd, 4096) })
	if err != nil {
		return err
	}
	return serr
}

// closedByServer reads what c still holds: true when the server closed it
// (end of file or reset after the bytes already sent), false when it is
// still open after 3 s (the server is still sending or waiting).
func closedByServer(c net.Conn) bool {
	if c == nil {
		return true
	}
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// eventually waits up to d for cond.
func eventually(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestStalledConnectionsAreBounded: 300 downloads that never read, from
// six loopback addresses. The server holds no more than its per-peer and
// total limits (the others are closed as they come) and drops the held
// ones once they stop taking bytes; then it still serves.
func TestStalledConnectionsAreBounded(t *testing.T) {
	dir, iso := assetDir(t)
	// Stalled for 3 s: long enough to count them held first.
	s, err := New(Options{Dir: dir, Limits: Limits{MaxConns: 40, MaxConnsPerPeer: 10, StallTimeout: 3 * time.Second, Progress: 16 << 10, SendBuffer: 32 << 10}})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	addr := serveOn(t, s)

	var conns []net.Conn
	// One peer: 60 connections, 10 held.
	for range 60 {
		conns = append(conns, stalledGet(t, "127.0.0.1", addr))
	}
	assert.True(t, eventually(5*time.Second, func() bool { o, r := s.Conns(); return o == 10 && r == 50 }), "open, refused: %v", fmt.Sprint(s.Conns()))
	// Five more peers, 48 each: 40 held in all.
	for p := 2; p <= 6; p++ {
		for range 48 {
			conns = append(conns, stalledGet(t, fmt.Sprintf("127.0.0.%d", p), addr))
		}
	}
	maxOpen := 0
	assert.True(t, eventually(5*time.Second, func() bool {
		o, r := s.Conns()
		maxOpen = max(maxOpen, o)
		return r >= 300-40
	}), "open, refused: %v", fmt.Sprint(s.Conns()))
	assert.LessOrEqual(t, maxOpen, 40)
	// Every stalled download is dropped: none is held once it stalled.
	assert.True(t, eventually(30*time.Second, func() bool { o, _ := s.Conns(); return o == 0 }), "open, refused: %v", fmt.Sprint(s.Conns()))
	var wg sync.WaitGroup
	closed := make([]bool, len(conns))
	for i, c := range conns {
		wg.Add(1)
		go func() { defer wg.Done(); closed[i] = closedByServer(c) }()
	}
	wg.Wait()
	n := 0
	for _, c := range closed {
		if c {
			n++
		}
	}
	assert.Equal(t, len(conns), n, "connections the server closed")
	// And it still serves.
	resp, body := get(t, http.MethodGet, "http://"+addr+"/agent.x86_64.iso", nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, len(iso), len(body))
}

// TestSlowReaderPasses: a peer that reads slowly but steadily gets the
// whole file (the bound is on progress, not on the transfer's time); one
// that stops reading is dropped.
func TestSlowReaderPasses(t *testing.T) {
	dir, iso := assetDir(t)
	var logs syncBuffer
	s, err := New(Options{Dir: dir, Log: slog.New(slog.NewTextHandler(&logs, nil)), Limits: Limits{StallTimeout: time.Second, Progress: 16 << 10, SendBuffer: 32 << 10}})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	addr := serveOn(t, s)
	// read reads 1 MiB of the ISO 8 KiB at a time, sleeping steady
	// between reads, and once pause after stop bytes.
	read := func(steady time.Duration, stop int, pause time.Duration) ([]byte, error) {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.(*net.TCPConn).SetReadBuffer(64<<10))
		_, err = io.WriteString(c, "GET /agent.x86_64.iso HTTP/1.1\r\nHost: x\r\nRange: bytes=0-1048575\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReaderSize(c, 8<<10), nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusPartialContent, resp.StatusCode)
		var got bytes.Buffer
		buf := make([]byte, 8<<10)
		_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
		paused := false
		for got.Len() < 1<<20 {
			n, err := resp.Body.Read(buf)
			got.Write(buf[:n])
			if err == io.EOF && got.Len() == 1<<20 {
				break
			}
			if err != nil {
				return got.Bytes(), err
			}
			time.Sleep(steady)
			if !paused && got.Len() >= stop {
				paused = true
				time.Sleep(pause)
			}
		}
		return got.Bytes(), nil
	}
	// 8 KiB at most every 5 ms: at most 1.6 MiB/s, taking seconds in all.
	body, err := read(5*time.Millisecond, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, iso[:1<<20], body)
	// A reader that stops for 3 s after 64 KiB (the rest cannot all wait
	// in the kernel's buffers): dropped, and the request's line says so.
	body, err = read(0, 64<<10, 3*time.Second)
	require.Error(t, err)
	assert.Less(t, len(body), 1<<20)
	assert.True(t, eventually(5*time.Second, func() bool {
		return strings.Contains(logs.String(), `level=WARN msg="GET /agent.x86_64.iso" status=206`) &&
			strings.Contains(logs.String(), `incomplete="the peer stopped reading (less than 16 KiB taken in 1s): connection closed"`)
	}), logs.String())
}

// TestWrongPasswordsThrottled: past the allowance, a peer's guesses are
// answered 429 without being checked (the right password too), until the
// allowance comes back; each 401 or 429 closes its connection.
func TestWrongPasswordsThrottled(t *testing.T) {
	dir, _ := assetDir(t)
	var logs syncBuffer
	_, hs := newTestServer(t, Options{Dir: dir, User: "media", Password: "s3cret-pw", Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Limits: Limits{GuessBurst: 5, GuessEvery: 300 * time.Millisecond}})
	try := func(pw string) *http.Response {
		req, err := http.NewRequest(http.MethodGet, hs.URL+"/agent.x86_64.iso.sha256", nil)
		require.NoError(t, err)
		req.SetBasicAuth("media", pw)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	start := time.Now()
	codes := map[int]int{}
	for i := range 40 {
		resp := try(fmt.Sprintf("guess-%d", i))
		codes[resp.StatusCode]++
		assert.True(t, resp.Close, "the connection is closed after a %d", resp.StatusCode)
	}
	resp := try("s3cret-pw")
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "throttled: the right password is not checked either")
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	refills := int(time.Since(start) / (300 * time.Millisecond))
	assert.LessOrEqual(t, codes[http.StatusUnauthorized], 5+refills+1, "codes %v", codes)
	assert.GreaterOrEqual(t, codes[http.StatusTooManyRequests], 40-5-refills-1, "codes %v", codes)
	// The allowance comes back.
	time.Sleep(400 * time.Millisecond)
	assert.Equal(t, http.StatusOK, try("s3cret-pw").StatusCode)
	// A request without credentials is a challenge, not a guess: 401.
	resp, _ = get(t, http.MethodGet, hs.URL+"/agent.x86_64.iso.sha256", nil)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.LessOrEqual(t, strings.Count(logs.String(), "status=429"), 3, "429s are logged in summary")
	assert.NotContains(t, logs.String(), "s3cret-pw")
}

// The peers remembered for their wrong guesses are bounded: a guesser with
// many addresses shares one allowance past the bound.
func TestGuessesBoundedMemory(t *testing.T) {
	g := newGuesses(Limits{GuessBurst: 3, GuessEvery: time.Hour, MaxGuessPeers: 100}.withDefaults())
	now := time.Now()
	for i := range 10000 {
		p := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		if ok, _ := g.allowed(p, now); ok {
			g.wrong(p, now)
		}
	}
	assert.LessOrEqual(t, len(g.peers), 100)
	ok, wait := g.allowed(netip.MustParseAddr("192.0.2.1"), now)
	assert.False(t, ok, "a new peer past the bound shares the spent allowance")
	assert.Greater(t, wait, time.Duration(0))
	// One remembered peer is throttled on its own.
	p := netip.AddrFrom4([4]byte{10, 0, 0, 0})
	for range 3 {
		g.wrong(p, now)
	}
	ok, _ = g.allowed(p, now)
	assert.False(t, ok)
	// An hour later every allowance is back, and the full ones are
	// forgotten when room is needed.
	later := now.Add(4 * time.Hour)
	ok, _ = g.allowed(netip.MustParseAddr("192.0.2.1"), later)
	assert.True(t, ok)
	g.wrong(netip.MustParseAddr("192.0.2.1"), later)
	assert.LessOrEqual(t, len(g.peers), 100)
	assert.Contains(t, g.peers, netip.MustParseAddr("192.0.2.1"))
}

// TestChangedFileHashedOnce: an ISO changed in place that no longer
// matches its .sha256 is hashed once, not on every request (each answered
// 503); once it changes again it is hashed again and served if it matches.
func TestChangedFileHashedOnce(t *testing.T) {
	dir, iso := assetDir(t)
	var logs syncBuffer
	_, hs := newTestServer(t, Options{Dir: dir, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	p := filepath.Join(dir, "agent.x86_64.iso")
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("tampered"), 40000)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	for range 20 {
		resp, _ := get(t, http.MethodGet, hs.URL+"/agent.x86_64.iso", map[string]string{"Range": "bytes=0-0"})
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "cannot serve agent.x86_64.iso"), "hashed and logged once:\n%s", logs.String())
	// Put back as it was (a new mtime): hashed again, served.
	require.NoError(t, os.WriteFile(p, iso, 0o600))
	future := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(p, future, future))
	resp, body := get(t, http.MethodGet, hs.URL+"/agent.x86_64.iso", nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, iso, body)
	assert.Equal(t, 1, strings.Count(logs.String(), "verified again after it changed on disk"))
}

// TestSecretsToEveryNetwork: by default (every interface, no
// authentication) a directory whose ISO holds the pull secret is not
// served: --listen must name where. Named every interface, or another
// address than loopback, it is served with a plain warning; loopback and
// authentication need none.
func TestSecretsToEveryNetwork(t *testing.T) {
	dir, _ := assetDir(t)
	run := func(o RunOptions) (string, error) {
		var logs syncBuffer
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		o.Dir, o.Log = dir, slog.New(slog.NewTextHandler(&logs, nil))
		o.Ready = func(net.Addr, string) { cancel() }
		err := Run(ctx, o)
		return logs.String(), err
	}
	_, err := run(RunOptions{Listen: ":0"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not serving agent.x86_64.iso to every network by default without authentication: it holds the pull secret")
	assert.Contains(t, err.Error(), "--listen <this machine's address on the BMC network>:8080")
	assert.Contains(t, err.Error(), "or --listen :8080 to serve every interface knowingly")

	logs, err := run(RunOptions{Listen: ":0", ListenGiven: true})
	require.NoError(t, err)
	assert.Contains(t, logs, `level=WARN msg="serving agent.x86_64.iso without authentication on every interface: it holds the pull secret`)

	pw := filepath.Join(t.TempDir(), "pw")
	require.NoError(t, os.WriteFile(pw, []byte("s3cret\n"), 0o600))
	for _, o := range []RunOptions{{Listen: "127.0.0.1:0"}, {Listen: ":0", User: "media", PasswordFile: pw}} {
		logs, err := run(o)
		require.NoError(t, err)
		assert.NotContains(t, logs, "without authentication")
	}
}
