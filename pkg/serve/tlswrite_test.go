package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveTLSOn runs s.Serve over TLS on a loopback listener and returns its
// address and a client configuration that trusts its certificate.
func serveTLSOn(t *testing.T, s *Server) (string, *tls.Config) {
	t.Helper()
	ss, err := GenerateCert([]string{"127.0.0.1"}, time.Hour)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, TLSConfig(ss.Cert), time.Second) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ss.PEM)
	return ln.Addr().String(), &tls.Config{RootCAs: pool}
}

// headerWriter is a ResponseWriter that writes its body straight to a
// connection: what net/http's does under ServeContent, without its own
// copy.
type headerWriter struct {
	w io.Writer
	h http.Header
}

func (h *headerWriter) Header() http.Header         { return h.h }
func (h *headerWriter) WriteHeader(int)             {}
func (h *headerWriter) Write(b []byte) (int, error) { return h.w.Write(b) }

// TestTLSRecordsGatheredPerWrite: a file copied to a TLS connection goes
// to the kernel a few records per write, not one write per 16 KiB record
// (crypto/tls writes each record on its own: 64 writes for 1 MiB, each a
// TCP push; nginx's OpenSSL does the same); the peer gets the bytes.
func TestTLSRecordsGatheredPerWrite(t *testing.T) {
	data := randomBytes(2 << 20)
	f := sourceFile(t, data)
	pc, cc := connPair(t, Limits{}, net.Dialer{})
	ss, err := GenerateCert([]string{"127.0.0.1"}, time.Hour)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ss.PEM)
	srv := tls.Server(pc, TLSConfig(ss.Cert))
	cl := tls.Client(cc, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, 256<<10)
		_, _ = io.ReadFull(cl, b)
		got <- b
	}()
	require.NoError(t, srv.Handshake())
	// Past crypto/tls's small first records (its first 128 KiB).
	warm := bytes.Repeat([]byte{'w'}, 256<<10)
	warmed := make(chan struct{})
	go func() {
		_, _ = srv.Write(warm)
		close(warmed)
	}()
	<-got
	<-warmed // its writes counted before pc.writes is read
	go func() {
		b := make([]byte, 1<<20)
		_, _ = io.ReadFull(cl, b)
		got <- b
	}()
	before := pc.writes
	rec := &recorder{ResponseWriter: &headerWriter{w: srv, h: http.Header{}}, tls: pc}
	n, err := rec.ReadFrom(&io.LimitedReader{R: f, N: 1 << 20})
	require.NoError(t, err)
	assert.EqualValues(t, 1<<20, n)
	assert.True(t, bytes.Equal(data[:1<<20], <-got), "the bytes received are the file's")
	writes := pc.writes - before
	assert.Positive(t, writes)
	assert.LessOrEqual(t, writes, 24, "writes to the connection for 1 MiB (64 records)")
}

// TestTLSConcurrentRangesAndStall: over HTTPS, concurrent whole and
// random-range downloads each get their bytes; a peer that stops reading
// mid-response is still dropped after the stall bound, and the request's
// line says so.
func TestTLSConcurrentRangesAndStall(t *testing.T) {
	dir, iso := assetDir(t)
	var logs syncBuffer
	s, err := New(Options{Dir: dir, Log: slog.New(slog.NewTextHandler(&logs, nil)), Limits: Limits{StallTimeout: time.Second, Progress: 16 << 10, SendBuffer: 32 << 10}})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	addr, conf := serveTLSOn(t, s)
	cl := &http.Client{Transport: &http.Transport{TLSClientConfig: conf}}
	t.Cleanup(cl.CloseIdleConnections)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 9))
			for range 6 {
				req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/agent.x86_64.iso", nil)
				if !assert.NoError(t, err) {
					return
				}
				start, end := 0, len(iso)-1
				if i%2 == 1 {
					start = r.IntN(len(iso) - 1)
					end = min(len(iso)-1, start+r.IntN(1<<20))
					req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", start, end))
				}
				resp, err := cl.Do(req)
				if !assert.NoError(t, err) {
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				assert.NoError(t, err)
				assert.True(t, bytes.Equal(iso[start:end+1], b), "bytes %d-%d", start, end)
			}
		})
	}
	wg.Wait()

	// A TLS peer that reads 64 KiB of the ISO and stops.
	c, err := (&net.Dialer{Control: smallReceiveBuffer}).Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	tcc := tls.Client(c, &tls.Config{RootCAs: conf.RootCAs, ServerName: "127.0.0.1"})
	_, err = io.WriteString(tcc, "GET /agent.x86_64.iso HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(tcc), nil)
	require.NoError(t, err)
	_, err = io.CopyN(io.Discard, resp.Body, 64<<10)
	require.NoError(t, err)
	assert.True(t, eventually(10*time.Second, func() bool {
		return strings.Contains(logs.String(), `level=WARN msg="GET /agent.x86_64.iso" status=200`) &&
			strings.Contains(logs.String(), `incomplete="the peer stopped reading (less than 16 KiB taken in 1s): connection closed"`)
	}), logs.String())
}
