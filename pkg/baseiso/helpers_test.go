package baseiso

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/coreos/stream-metadata-go/stream"
	"github.com/stretchr/testify/require"
)

const (
	testRelease = "416.94.202405291527-0"
	testISOName = "rhcos-416.94.202405291527-0-live.x86_64.iso"
)

// isoContent returns n deterministic pseudo-random bytes and their sha256.
func isoContent(n int, seed uint64) ([]byte, string) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	s := sha256.Sum256(b)
	return b, hex.EncodeToString(s[:])
}

// testStream returns stream metadata naming location/sum as the x86_64 ISO.
func testStream(t testing.TB, location, sum string) []byte {
	t.Helper()
	st := stream.Stream{
		Stream:   "rhcos-test",
		Metadata: stream.Metadata{LastModified: "2024-05-31T14:21:46Z"},
		Architectures: map[string]stream.Arch{
			"x86_64": {Artifacts: map[string]stream.PlatformArtifacts{
				"metal": {Release: testRelease, Formats: map[string]stream.ImageFormat{
					"iso": {Disk: &stream.Artifact{Location: location, Sha256: sum}},
				}},
			}},
		},
	}
	b, err := json.Marshal(st)
	require.NoError(t, err)
	return b
}

// isoServer serves content at every path ending in the ISO name, honouring
// Range/If-Range (via http.ServeContent) unless ignoreRange is set, and
// records the requests it gets.
type isoServer struct {
	*httptest.Server
	content     []byte
	etag        string
	ignoreRange bool

	mu       sync.Mutex
	requests []*http.Request
	served   int64 // body bytes written
}

func newISOServer(t *testing.T, content []byte) *isoServer {
	t.Helper()
	s := &isoServer{content: content, etag: `"iso-v1"`}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *isoServer) serve(w http.ResponseWriter, req *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, req.Clone(req.Context()))
	s.mu.Unlock()
	if filepath.Base(req.URL.Path) != testISOName {
		http.NotFound(w, req)
		return
	}
	cw := &countingWriter{ResponseWriter: w}
	if s.ignoreRange {
		cw.Header().Set("Content-Type", "application/octet-stream")
		_, _ = cw.Write(s.content)
	} else {
		cw.Header().Set("ETag", s.etag)
		http.ServeContent(cw, req, testISOName, time.Date(2024, 5, 31, 0, 0, 0, 0, time.UTC), bytes.NewReader(s.content))
	}
	s.mu.Lock()
	s.served += cw.n
	s.mu.Unlock()
}

func (s *isoServer) isoURL() string { return s.URL + "/builds/x86_64/" + testISOName }

func (s *isoServer) reqs() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.requests...)
}

func (s *isoServer) bytesServed() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served
}

// countingWriter counts body bytes of successful (200/206) responses, that
// is ISO bytes, not error pages.
type countingWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (c *countingWriter) WriteHeader(code int) {
	c.status = code
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	n, err := c.ResponseWriter.Write(b)
	if c.status == http.StatusOK || c.status == http.StatusPartialContent {
		c.n += int64(n)
	}
	return n, err
}

// baseOpts returns options for tests: temp cache, the given stream, no
// retries, no progress.
func baseOpts(t *testing.T, streamJSON []byte) Options {
	t.Helper()
	return Options{
		Arch:        "x86_64",
		CacheDir:    t.TempDir(),
		Stream:      streamJSON,
		Retries:     -1,
		RetryDelay:  time.Millisecond,
		LockTimeout: 10 * time.Second,
	}
}

// noPartFiles asserts that no .part or .part.json is left in dir.
func noPartFiles(t *testing.T, dir string) {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.part*"))
	require.NoError(t, err)
	require.Empty(t, m)
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}
