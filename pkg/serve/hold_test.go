package serve

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keptConns is a listener that keeps the connections it accepts.
type keptConns struct {
	net.Listener
	mu    sync.Mutex
	conns []*progressConn
}

func (k *keptConns) Accept() (net.Conn, error) {
	c, err := k.Listener.Accept()
	if pc, ok := c.(*progressConn); ok {
		k.mu.Lock()
		k.conns = append(k.conns, pc)
		k.mu.Unlock()
	}
	return c, err
}

// held is the number of held writes (holdNextWrite) on the connections.
func (k *keptConns) held() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for _, c := range k.conns {
		c.batchMu.Lock()
		n += c.held
		c.batchMu.Unlock()
	}
	return n
}

// TestHeaderHeldForBody: over HTTP on Linux, the header of a response
// whose body follows by sendfile is written held (MSG_MORE), to leave in
// the body's segments; a response without such a body (a small file, a
// HEAD, a 304, an error) is never held, and none waits: each is answered
// at once, not after TCP's 200 ms for held data.
func TestHeaderHeldForBody(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("MSG_MORE is Linux's")
	}
	dir, iso := assetDir(t)
	s, err := New(Options{Dir: dir, Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	kept := &keptConns{Listener: newConnLimiter(ln, s.lim, s.log)}
	hs := &http.Server{Handler: s, ConnContext: connContext}
	go func() { _ = hs.Serve(kept) }()
	t.Cleanup(func() { _ = hs.Shutdown(context.Background()) })
	base := "http://" + ln.Addr().String()
	cl := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	t.Cleanup(cl.CloseIdleConnections)
	do := func(method, path string, hdr map[string]string) (int, []byte, time.Duration) {
		req, err := http.NewRequest(method, base+path, nil)
		require.NoError(t, err)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		start := time.Now()
		resp, err := cl.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, b, time.Since(start)
	}
	const prompt = 150 * time.Millisecond

	code, body, took := do(http.MethodGet, "/agent.x86_64.iso", map[string]string{"Range": "bytes=4096-1052671"})
	assert.Equal(t, http.StatusPartialContent, code)
	assert.Equal(t, iso[4096:1052672], body)
	assert.Equal(t, 1, kept.held(), "a 1 MiB range's header held for its body")
	assert.Less(t, took, time.Second)

	// Bodies just over what net/http copies with the header: held, and
	// pushed by the few bytes sendfile sends.
	for _, n := range []int{sniffLen + 1, sniffLen + 100} {
		code, body, took = do(http.MethodGet, "/agent.x86_64.iso", map[string]string{"Range": fmt.Sprintf("bytes=0-%d", n-1)})
		assert.Equal(t, http.StatusPartialContent, code)
		assert.Equal(t, iso[:n], body)
		assert.Less(t, took, prompt, "a %d-byte body", n)
	}
	assert.Equal(t, 3, kept.held())

	etag := ETag(s.Files()[0].SHA256)
	for _, c := range []struct {
		method, path string
		hdr          map[string]string
		code         int
	}{
		{http.MethodGet, "/boot-artifacts/agent.x86_64.ipxe", nil, http.StatusOK},
		{http.MethodGet, "/agent.x86_64.iso", map[string]string{"Range": fmt.Sprintf("bytes=0-%d", sniffLen-1)}, http.StatusPartialContent},
		{http.MethodGet, "/agent.x86_64.iso", map[string]string{"Range": "bytes=0-0,100-101"}, http.StatusPartialContent},
		{http.MethodHead, "/agent.x86_64.iso", nil, http.StatusOK},
		{http.MethodGet, "/agent.x86_64.iso", map[string]string{"If-None-Match": etag}, http.StatusNotModified},
		{http.MethodGet, "/agent.x86_64.iso.sha256", nil, http.StatusOK},
		{http.MethodGet, "/nothing", nil, http.StatusNotFound},
	} {
		for range 3 {
			code, _, took = do(c.method, c.path, c.hdr)
			assert.Equal(t, c.code, code, "%s %s %v", c.method, c.path, c.hdr)
			assert.Less(t, took, prompt, "%s %s %v", c.method, c.path, c.hdr)
		}
	}
	assert.Equal(t, 3, kept.held(), "only a body that follows by the connection's ReadFrom holds the header")
}

// TestHeldWriteNotLeftWaiting: a held write that nothing follows (a body
// cut short: the file shrank under the request) is pushed when the
// response's copy ends, not left to TCP's timer; one that the body
// follows is sent with it.
func TestHeldWriteNotLeftWaiting(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("MSG_MORE is Linux's")
	}
	pc, cc := connPair(t, Limits{}, net.Dialer{})
	got := make(chan time.Time, 1)
	go func() {
		b := make([]byte, 16)
		_, _ = io.ReadFull(cc, b)
		got <- time.Now()
	}()
	pc.holdNextWrite()
	_, err := pc.Write([]byte("HTTP/1.1 200 OK\r"))
	require.NoError(t, err)
	assert.Equal(t, 1, pc.held)
	start := time.Now()
	pc.pushHeld()
	assert.Less(t, (<-got).Sub(start), 100*time.Millisecond, "pushed at once")

	// Followed by a file: sent with it.
	f := sourceFile(t, randomBytes(100))
	go func() {
		b := make([]byte, 16+100)
		_, _ = io.ReadFull(cc, b)
		got <- time.Now()
	}()
	pc.holdNextWrite()
	_, err = pc.Write([]byte("HTTP/1.1 200 OK\r"))
	require.NoError(t, err)
	start = time.Now()
	n, err := pc.ReadFrom(f)
	require.NoError(t, err)
	assert.EqualValues(t, 100, n)
	assert.Less(t, (<-got).Sub(start), 100*time.Millisecond, "sent with the body")
	pc.pushHeld()
}
