package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replaceOutput writes rel anew as a create run does: the new file and
// its .sha256 written under temporary names and renamed into place (a
// new inode at the path).
func replaceOutput(t *testing.T, dir, rel string, data []byte, sumOf []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	require.NoError(t, os.WriteFile(p+".new", data, 0o600))
	sum := sha256.Sum256(sumOf)
	require.NoError(t, os.WriteFile(p+".sha256.new", []byte(hex.EncodeToString(sum[:])+"  "+filepath.Base(p)+"\n"), 0o644))
	require.NoError(t, os.Rename(p+".new", p))
	require.NoError(t, os.Rename(p+".sha256.new", p+".sha256"))
}

// handleOf is the server's current handle of a file, nil when none.
func handleOf(s *Server, rel string) *handle {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handles[rel]
}

// closed reports whether f's descriptor was closed.
func closed(f *os.File) bool {
	_, err := f.Stat()
	return errors.Is(err, os.ErrClosed)
}

// TestVerifiedFileKeptOpen: the requests of a file share one descriptor,
// opened and verified once, and hold it only while they run.
func TestVerifiedFileKeptOpen(t *testing.T) {
	dir, iso := assetDir(t)
	s, hs := newTestServer(t, Options{Dir: dir})
	u := hs.URL + "/agent.x86_64.iso"
	_, body := get(t, http.MethodGet, u, nil)
	assert.Equal(t, iso, body)
	h := handleOf(s, "agent.x86_64.iso")
	require.NotNil(t, h)
	for range 3 {
		resp, body := get(t, http.MethodGet, u, map[string]string{"Range": "bytes=4096-8191"})
		assert.Equal(t, http.StatusPartialContent, resp.StatusCode)
		assert.Equal(t, iso[4096:8192], body)
	}
	assert.Same(t, h, handleOf(s, "agent.x86_64.iso"), "the same descriptor for every request")
	assert.True(t, eventually(2*time.Second, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return h.refs == 0
	}), "held by no request once they are done")
	assert.False(t, closed(h.fh))
	require.NoError(t, s.Close())
	assert.True(t, closed(h.fh), "closed with the server")
}

// TestKeptFileVerifiedAgainAfterReplacement: a file replaced on disk
// (renamed into place) after its descriptor was kept is verified again:
// a new run's file and .sha256 are served, with the new ETag; a file whose
// content does not match its .sha256 is refused, and so is one changed in
// place with the same size.
func TestKeptFileVerifiedAgainAfterReplacement(t *testing.T) {
	dir, iso := assetDir(t)
	s, hs := newTestServer(t, Options{Dir: dir})
	u := hs.URL + "/agent.x86_64.iso"
	resp, _ := get(t, http.MethodGet, u, map[string]string{"Range": "bytes=0-9"})
	require.Equal(t, http.StatusPartialContent, resp.StatusCode)
	old := handleOf(s, "agent.x86_64.iso")
	require.NotNil(t, old)

	// A new run's output.
	next := randomBytes(1<<20 + 3)
	next[0] ^= 0xff
	replaceOutput(t, dir, "agent.x86_64.iso", next, next)
	resp, body := get(t, http.MethodGet, u, nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, next, body)
	sum := sha256.Sum256(next)
	assert.Equal(t, ETag(hex.EncodeToString(sum[:])), resp.Header.Get("ETag"))
	assert.True(t, eventually(2*time.Second, func() bool { return closed(old.fh) }), "the replaced file's descriptor is closed")

	// Replaced by a file its .sha256 does not describe.
	bad := append([]byte{}, next...)
	bad[100] ^= 1
	replaceOutput(t, dir, "agent.x86_64.iso", bad, iso)
	resp, body = get(t, http.MethodGet, u, map[string]string{"Range": "bytes=0-199"})
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.NotContains(t, string(body), string(bad[:200]))

	// Back to a verified file, then changed in place: same inode, same
	// size, another mtime.
	replaceOutput(t, dir, "agent.x86_64.iso", next, next)
	resp, _ = get(t, http.MethodGet, u, map[string]string{"Range": "bytes=0-9"})
	require.Equal(t, http.StatusPartialContent, resp.StatusCode)
	p := filepath.Join(dir, "agent.x86_64.iso")
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{next[5] ^ 0xff}, 5)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	later := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(p, later, later))
	resp, body = get(t, http.MethodGet, u, map[string]string{"Range": "bytes=0-9"})
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.NotEqual(t, next[:10], body)
}

// TestKeptFileDeleted: a served file deleted from the asset directory is
// answered 503 like any file that no longer matches its .sha256, and its
// kept descriptor (a deleted ISO's blocks) is let go; written again, it is
// served again.
func TestKeptFileDeleted(t *testing.T) {
	dir, iso := assetDir(t)
	s, hs := newTestServer(t, Options{Dir: dir})
	u := hs.URL + "/agent.x86_64.iso"
	_, body := get(t, http.MethodGet, u, map[string]string{"Range": "bytes=0-9"})
	require.Equal(t, iso[:10], body)
	h := handleOf(s, "agent.x86_64.iso")
	require.NotNil(t, h)
	require.NoError(t, os.Remove(filepath.Join(dir, "agent.x86_64.iso")))
	resp, body := get(t, http.MethodGet, u, map[string]string{"Range": "bytes=0-9"})
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.NotEqual(t, iso[:10], body)
	assert.Nil(t, handleOf(s, "agent.x86_64.iso"))
	assert.True(t, eventually(2*time.Second, func() bool { return closed(h.fh) }), "the deleted file's descriptor is closed")
	writeOutput(t, dir, "agent.x86_64.iso", iso)
	resp, body = get(t, http.MethodGet, u, map[string]string{"Range": "bytes=0-9"})
	assert.Equal(t, http.StatusPartialContent, resp.StatusCode)
	assert.Equal(t, iso[:10], body)
}

// TestDownloadSurvivesReplacement: a download running when its file is
// replaced finishes with the file it started with (its descriptor stays
// open until it is done), while new requests get the new file.
func TestDownloadSurvivesReplacement(t *testing.T) {
	dir, iso := assetDir(t)
	s, hs := newTestServer(t, Options{Dir: dir})
	u := hs.URL + "/agent.x86_64.iso"
	// A small receive window: the server cannot hand the whole file to
	// the kernel at once and is still sending while the file is
	// replaced.
	d := &net.Dialer{Control: smallReceiveBuffer}
	cl := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	defer cl.CloseIdleConnections()
	resp, err := cl.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	first := make([]byte, 64<<10)
	_, err = io.ReadFull(resp.Body, first)
	require.NoError(t, err)
	old := handleOf(s, "agent.x86_64.iso")
	require.NotNil(t, old)

	next := randomBytes(2 << 20)
	next[0] ^= 0xff
	replaceOutput(t, dir, "agent.x86_64.iso", next, next)
	resp2, body := get(t, http.MethodGet, u, nil)
	assert.Equal(t, http.StatusOK, resp2.StatusCode)
	assert.Equal(t, next, body)
	assert.False(t, closed(old.fh), "kept open for the running download")

	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, iso, append(first, rest...), "the running download gets the file it started with, whole")
	assert.True(t, eventually(2*time.Second, func() bool { return closed(old.fh) }), "closed once that download is done")
}
