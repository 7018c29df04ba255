package baseiso

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
)

func TestResolveFreshDownload(t *testing.T) {
	content, sum := isoContent(300_000, 1)
	srv := newISOServer(t, content)
	opts := baseOpts(t, testStream(t, srv.isoURL(), sum))
	var prog bytes.Buffer
	opts.Progress = &prog

	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)

	want := filepath.Join(opts.CacheDir, testISOName)
	assert.Equal(t, want, res.Path)
	assert.Equal(t, SourceDownload, res.Source)
	assert.Equal(t, sum, res.SHA256)
	assert.True(t, res.Verified)
	assert.Equal(t, srv.isoURL(), res.URL)
	assert.Equal(t, testRelease, res.Release)
	assert.Equal(t, content, readFile(t, want))
	noPartFiles(t, opts.CacheDir)
	require.Len(t, srv.reqs(), 1)
	assert.Empty(t, srv.reqs()[0].Header.Get("Range"))
	assert.Contains(t, prog.String(), "Downloading "+testISOName)
	assert.Contains(t, prog.String(), "Downloaded "+testISOName+": 293.0 KiB")
}

func TestResolveResumesPartialDownload(t *testing.T) {
	content, sum := isoContent(300_000, 2)
	srv := newISOServer(t, content)
	opts := baseOpts(t, testStream(t, srv.isoURL(), sum))
	final := filepath.Join(opts.CacheDir, testISOName)
	const have = 120_000
	require.NoError(t, os.WriteFile(final+".part", content[:have], 0o644))
	require.NoError(t, writeMeta(final+".part.json", partMeta{URL: srv.isoURL(), ETag: srv.etag}))

	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, sum, res.SHA256)
	assert.Equal(t, content, readFile(t, final))
	noPartFiles(t, opts.CacheDir)

	reqs := srv.reqs()
	require.Len(t, reqs, 1)
	assert.Equal(t, fmt.Sprintf("bytes=%d-", have), reqs[0].Header.Get("Range"))
	assert.Equal(t, srv.etag, reqs[0].Header.Get("If-Range"))
	assert.Equal(t, int64(len(content)-have), srv.bytesServed(), "only the missing bytes are transferred")
}

func TestResolveResumesWithLastModifiedWhenNoETag(t *testing.T) {
	content, sum := isoContent(50_000, 3)
	srv := newISOServer(t, content)
	opts := baseOpts(t, testStream(t, srv.isoURL(), sum))
	final := filepath.Join(opts.CacheDir, testISOName)
	lm := "Fri, 31 May 2024 00:00:00 GMT"
	require.NoError(t, os.WriteFile(final+".part", content[:10_000], 0o644))
	require.NoError(t, writeMeta(final+".part.json", partMeta{URL: srv.isoURL(), LastModified: lm}))

	_, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	reqs := srv.reqs()
	require.Len(t, reqs, 1)
	assert.Equal(t, lm, reqs[0].Header.Get("If-Range"))
	assert.Equal(t, int64(40_000), srv.bytesServed())
	assert.Equal(t, content, readFile(t, final))
}

func TestResolveRetriesInterruptedTransferWithRange(t *testing.T) {
	content, sum := isoContent(200_000, 4)
	var mu sync.Mutex
	var ranges []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		ranges = append(ranges, req.Header.Get("Range"))
		first := len(ranges) == 1
		mu.Unlock()
		if first {
			// Promise the whole file, send half, then drop the connection.
			w.Header().Set("Content-Length", fmt.Sprint(len(content)))
			w.Header().Set("ETag", `"v1"`)
			_, _ = w.Write(content[:100_000])
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, req, "x.iso", time.Time{}, bytes.NewReader(content))
	}))
	defer srv.Close()
	url := srv.URL + "/" + testISOName
	opts := baseOpts(t, testStream(t, url, sum))
	opts.Retries = 2

	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, content, readFile(t, res.Path))
	require.Len(t, ranges, 2)
	assert.Equal(t, "", ranges[0])
	assert.Equal(t, "bytes=100000-", ranges[1])
}

func TestResolveServerIgnoresRange(t *testing.T) {
	content, sum := isoContent(100_000, 5)
	srv := newISOServer(t, content)
	srv.ignoreRange = true
	opts := baseOpts(t, testStream(t, srv.isoURL(), sum))
	final := filepath.Join(opts.CacheDir, testISOName)
	// A stale part with wrong bytes: appending to it would corrupt the ISO.
	require.NoError(t, os.WriteFile(final+".part", bytes.Repeat([]byte{0xAA}, 40_000), 0o644))
	require.NoError(t, writeMeta(final+".part.json", partMeta{URL: srv.isoURL(), ETag: `"old"`}))

	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, sum, res.SHA256)
	assert.Equal(t, content, readFile(t, final))
	reqs := srv.reqs()
	require.Len(t, reqs, 1)
	assert.Equal(t, "bytes=40000-", reqs[0].Header.Get("Range"))
	assert.Equal(t, int64(len(content)), srv.bytesServed())
	noPartFiles(t, opts.CacheDir)
}

func TestResolveCompletePartIsInstalledWithoutTransfer(t *testing.T) {
	content, sum := isoContent(64_000, 6)
	srv := newISOServer(t, content)
	opts := baseOpts(t, testStream(t, srv.isoURL(), sum))
	final := filepath.Join(opts.CacheDir, testISOName)
	require.NoError(t, os.WriteFile(final+".part", content, 0o644))
	require.NoError(t, writeMeta(final+".part.json", partMeta{URL: srv.isoURL(), ETag: srv.etag}))

	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, sum, res.SHA256)
	assert.Equal(t, content, readFile(t, final))
	assert.Zero(t, srv.bytesServed(), "no ISO bytes transferred")
	require.Len(t, srv.reqs(), 1)
	assert.Equal(t, "bytes=64000-", srv.reqs()[0].Header.Get("Range"))
	noPartFiles(t, opts.CacheDir)
}

func TestResolvePartForOtherURLIsDiscarded(t *testing.T) {
	content, sum := isoContent(30_000, 7)
	srv := newISOServer(t, content)
	opts := baseOpts(t, testStream(t, srv.isoURL(), sum))
	final := filepath.Join(opts.CacheDir, testISOName)
	require.NoError(t, os.WriteFile(final+".part", content[:1000], 0o644))
	require.NoError(t, writeMeta(final+".part.json", partMeta{URL: "https://elsewhere.example/" + testISOName}))

	_, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	require.Len(t, srv.reqs(), 1)
	assert.Empty(t, srv.reqs()[0].Header.Get("Range"))
	assert.Equal(t, content, readFile(t, final))
}

func TestResolveChecksumMismatch(t *testing.T) {
	content, actual := isoContent(50_000, 8)
	_, expected := isoContent(50_000, 9)
	srv := newISOServer(t, content)
	opts := baseOpts(t, testStream(t, srv.isoURL(), expected))

	_, err := Resolve(context.Background(), opts)
	require.Error(t, err)
	var ce *ChecksumError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, expected, ce.Expected)
	assert.Equal(t, actual, ce.Actual)
	assert.Contains(t, err.Error(), "expected "+expected)
	assert.Contains(t, err.Error(), "got "+actual)
	assert.Contains(t, err.Error(), srv.isoURL())
	var ue *UnavailableError
	assert.False(t, errors.As(err, &ue), "a corrupt download is not reported as a network problem")
	assert.NoFileExists(t, filepath.Join(opts.CacheDir, testISOName))
	noPartFiles(t, opts.CacheDir)
}

func TestResolveCacheHitMakesNoRequest(t *testing.T) {
	content, sum := isoContent(40_000, 10)
	var calls int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		http.Error(w, "unexpected", http.StatusInternalServerError)
	}))
	defer srv.Close()
	opts := baseOpts(t, testStream(t, srv.URL+"/"+testISOName, sum))
	final := filepath.Join(opts.CacheDir, testISOName)
	require.NoError(t, os.WriteFile(final, content, 0o644))

	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, Result{Path: final, Source: SourceCache, SHA256: sum, Verified: true, Release: testRelease}, res)
	mu.Lock()
	defer mu.Unlock()
	assert.Zero(t, calls)
}

func TestResolveCorruptCacheIsReplaced(t *testing.T) {
	content, sum := isoContent(40_000, 11)
	srv := newISOServer(t, content)
	opts := baseOpts(t, testStream(t, srv.isoURL(), sum))
	var logs bytes.Buffer
	opts.Logger = newTestLogger(&logs)
	final := filepath.Join(opts.CacheDir, testISOName)
	// agentiso's own cached copy, corrupted since.
	_, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(final, []byte("truncated"), 0o644))

	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, SourceDownload, res.Source)
	assert.Equal(t, content, readFile(t, final))
	assert.Contains(t, logs.String(), "Cached base ISO has the wrong sha256")
}

// Rule: a file agentiso did not write is never removed from the cache, even
// when a release's stream names it (the name comes from the payload): the
// run fails, naming the file, and the file stays as it was.
func TestResolveNeverEvictsAFileItDidNotWrite(t *testing.T) {
	content, sum := isoContent(40_000, 11)
	srv := newISOServer(t, content)
	for _, offline := range []bool{true, false} {
		opts := baseOpts(t, testStream(t, srv.isoURL(), sum))
		opts.Offline = offline
		final := filepath.Join(opts.CacheDir, testISOName)
		require.NoError(t, os.WriteFile(final, []byte("someone else's file"), 0o644))

		_, err := Resolve(context.Background(), opts)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "agentiso did not write")
		assert.Contains(t, err.Error(), final)
		assert.Equal(t, "someone else's file", string(readFile(t, final)))
	}

	// A copy that matches is agentiso's to manage from then on.
	opts := baseOpts(t, testStream(t, srv.isoURL(), sum))
	final := filepath.Join(opts.CacheDir, testISOName)
	require.NoError(t, os.WriteFile(final, content, 0o644))
	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, SourceCache, res.Source)
	require.NoError(t, os.WriteFile(final, []byte("truncated"), 0o644))
	res, err = Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, SourceDownload, res.Source)
}

func TestResolveExplicitPath(t *testing.T) {
	content, sum := isoContent(10_000, 12)
	dir := t.TempDir()
	p := filepath.Join(dir, "my.iso")
	require.NoError(t, os.WriteFile(p, content, 0o644))
	// The stream must not matter for an explicit path: make it unusable.
	opts := baseOpts(t, []byte("not json"))

	t.Run("plain", func(t *testing.T) {
		o := opts
		o.BaseISO = p
		var logs bytes.Buffer
		o.Logger = newTestLogger(&logs)
		res, err := Resolve(context.Background(), o)
		require.NoError(t, err)
		// Without a checksum to verify, a local ISO is not read at all.
		assert.Equal(t, Result{Path: p, Source: SourcePath}, res)
		// Said in words, not "verified=false".
		assert.Contains(t, logs.String(), `msg="Using base ISO `+p+` as it is (no sha256 given to verify it by)"`)
	})
	t.Run("file URL with checksum", func(t *testing.T) {
		o := opts
		o.BaseISO = "file://" + filepath.ToSlash(p)
		o.BaseISOSHA256 = strings.ToUpper(sum)
		var logs bytes.Buffer
		o.Logger = newTestLogger(&logs)
		res, err := Resolve(context.Background(), o)
		require.NoError(t, err)
		assert.True(t, res.Verified)
		assert.Equal(t, p, res.Path)
		assert.Contains(t, logs.String(), `msg="Using base ISO `+p+`: its sha256 is the one given"`)
	})
	t.Run("checksum mismatch", func(t *testing.T) {
		o := opts
		o.BaseISO = p
		_, other := isoContent(1, 99)
		o.BaseISOSHA256 = other
		_, err := Resolve(context.Background(), o)
		var ce *ChecksumError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, other, ce.Expected)
		assert.Equal(t, sum, ce.Actual)
		assert.FileExists(t, p, "a user's file is never removed")
	})
	t.Run("missing", func(t *testing.T) {
		o := opts
		o.BaseISO = filepath.Join(dir, "nope.iso")
		_, err := Resolve(context.Background(), o)
		require.Error(t, err)
		assert.Contains(t, err.Error(), filepath.Join(dir, "nope.iso")+" does not exist")
		assert.Contains(t, err.Error(), "--base-iso")
	})
	t.Run("directory", func(t *testing.T) {
		o := opts
		o.BaseISO = dir
		_, err := Resolve(context.Background(), o)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not a regular file")
	})
	t.Run("unreadable", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root can read files without read permission")
		}
		q := filepath.Join(dir, "secret.iso")
		require.NoError(t, os.WriteFile(q, content, 0o000))
		o := opts
		o.BaseISO = q
		_, err := Resolve(context.Background(), o)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not readable")
	})
	t.Run("unsupported scheme", func(t *testing.T) {
		o := opts
		o.BaseISO = "ftp://example.com/x.iso"
		_, err := Resolve(context.Background(), o)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `unsupported URL scheme "ftp"`)
	})
	t.Run("bad checksum syntax", func(t *testing.T) {
		o := opts
		o.BaseISO = p
		o.BaseISOSHA256 = "abc"
		_, err := Resolve(context.Background(), o)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "64 hex digits")
	})
}

func TestResolveExplicitURL(t *testing.T) {
	content, sum := isoContent(70_000, 13)

	t.Run("sha256 sidecar, then cached", func(t *testing.T) {
		var isoGets, sideGets int
		var mu sync.Mutex
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			switch req.URL.Path {
			case "/isos/custom.iso":
				isoGets++
				http.ServeContent(w, req, "custom.iso", time.Time{}, bytes.NewReader(content))
			case "/isos/custom.iso.sha256":
				sideGets++
				fmt.Fprintf(w, "%s  custom.iso\n", sum)
			default:
				http.NotFound(w, req)
			}
		}))
		defer srv.Close()
		opts := baseOpts(t, nil)
		opts.BaseISO = srv.URL + "/isos/custom.iso"

		res, err := Resolve(context.Background(), opts)
		require.NoError(t, err)
		assert.Equal(t, Result{Path: filepath.Join(opts.CacheDir, "custom.iso"), Source: SourceURL, SHA256: sum, Verified: true, URL: opts.BaseISO}, res)
		assert.Equal(t, content, readFile(t, res.Path))

		res2, err := Resolve(context.Background(), opts)
		require.NoError(t, err)
		assert.Equal(t, res, res2)
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, 1, isoGets, "second run reuses the cached copy")
		assert.Equal(t, 2, sideGets)
	})

	t.Run("no checksum known", func(t *testing.T) {
		// Unverified, so it must at least be a live ISO to be kept.
		content, _, err := testiso.Bytes(testiso.Options{Size: 4 << 20})
		require.NoError(t, err)
		s := sha256.Sum256(content)
		sum := hex.EncodeToString(s[:])
		srv := newISOServer(t, content)
		// The embedded stream names rhcos-...-live.aarch64.iso for aarch64, not
		// the x86_64 name in the URL, so no checksum applies.
		opts := baseOpts(t, nil)
		opts.Arch = "aarch64"
		opts.BaseISO = srv.isoURL()
		var logs bytes.Buffer
		opts.Logger = newTestLogger(&logs)
		res, err := Resolve(context.Background(), opts)
		require.NoError(t, err)
		assert.False(t, res.Verified)
		assert.Equal(t, sum, res.SHA256)
		assert.Contains(t, logs.String(), "No checksum known")
		// not reusable without a checksum: downloaded again
		_, err = Resolve(context.Background(), opts)
		require.NoError(t, err)
		assert.Equal(t, int64(2*len(content)), srv.bytesServed())
		// so, handed to a caller that holds it while it builds, it is
		// removed from the cache once released (not 2 GiB left for ever)
		var release func()
		opts.KeepLock = func(r func()) { release = r }
		res, err = Resolve(context.Background(), opts)
		require.NoError(t, err)
		assert.FileExists(t, res.Path, "kept while in use")
		require.NotNil(t, release)
		release()
		assert.NoFileExists(t, res.Path)
		// a verified download stays cached
		opts.BaseISOSHA256, release = sum, nil
		res, err = Resolve(context.Background(), opts)
		require.NoError(t, err)
		assert.True(t, res.Verified)
		require.NotNil(t, release)
		release()
		assert.FileExists(t, res.Path)
	})

	t.Run("stream checksum for the stream's file name", func(t *testing.T) {
		srv := newISOServer(t, content)
		opts := baseOpts(t, testStream(t, "https://upstream.invalid/"+testISOName, sum))
		opts.BaseISO = srv.isoURL()
		res, err := Resolve(context.Background(), opts)
		require.NoError(t, err)
		assert.True(t, res.Verified)
		assert.Equal(t, testRelease, res.Release)
	})

	t.Run("given checksum mismatch", func(t *testing.T) {
		srv := newISOServer(t, content)
		opts := baseOpts(t, nil)
		opts.BaseISO = srv.isoURL()
		_, other := isoContent(5, 77)
		opts.BaseISOSHA256 = other
		_, err := Resolve(context.Background(), opts)
		var ce *ChecksumError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, other, ce.Expected)
		assert.Equal(t, sum, ce.Actual)
		assert.NoFileExists(t, filepath.Join(opts.CacheDir, testISOName))
		noPartFiles(t, opts.CacheDir)
	})

	t.Run("bad sidecar", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			fmt.Fprintln(w, "<html>login</html>")
		}))
		defer srv.Close()
		opts := baseOpts(t, nil)
		opts.BaseISO = srv.URL + "/x.iso"
		_, err := Resolve(context.Background(), opts)
		require.Error(t, err)
		assert.Contains(t, err.Error(), srv.URL+"/x.iso.sha256")
		assert.Contains(t, err.Error(), "64 hex digits")
	})
}

func TestResolveMirror(t *testing.T) {
	content, sum := isoContent(80_000, 14)
	srv := newISOServer(t, content)
	// Upstream is unreachable; only the mirror may be used.
	opts := baseOpts(t, testStream(t, "https://upstream.invalid/art/"+testISOName, sum))
	opts.Mirror = srv.URL + "/pub/rhcos/"

	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, SourceMirror, res.Source)
	assert.Equal(t, srv.URL+"/pub/rhcos/"+testISOName, res.URL)
	assert.Equal(t, content, readFile(t, res.Path))
	reqs := srv.reqs()
	require.Len(t, reqs, 1)
	assert.Equal(t, "/pub/rhcos/"+testISOName, reqs[0].URL.Path)

	o := opts
	o.Mirror = "ftp://mirror/"
	o.CacheDir = t.TempDir()
	_, err = Resolve(context.Background(), o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--os-image-mirror")
}

func TestResolveMirrorMissingFileNamesIt(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	_, sum := isoContent(10, 15)
	opts := baseOpts(t, testStream(t, "https://upstream.invalid/"+testISOName, sum))
	opts.Mirror = srv.URL

	_, err := Resolve(context.Background(), opts)
	var ue *UnavailableError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), "404")
	assert.Contains(t, err.Error(), "The mirror in use expects it at "+srv.URL+"/"+testISOName)
}

// closedURL returns an http URL on loopback where nothing listens.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr
}

func TestResolveOfflineErrorSaysWhatToFetch(t *testing.T) {
	_, sum := isoContent(10, 16)
	up := closedURL(t) + "/art/" + testISOName
	opts := baseOpts(t, testStream(t, up, sum))
	opts.Retries = 3 // connection failures must not be retried
	opts.RetryDelay = time.Hour

	_, err := Resolve(context.Background(), opts)
	var ue *UnavailableError
	require.ErrorAs(t, err, &ue)
	cachePath := filepath.Join(opts.CacheDir, testISOName)
	msg := err.Error()
	for _, want := range []string{
		"base ISO " + testISOName + " is not in the cache and could not be downloaded from " + up,
		"URL:     " + up,
		"SHA256:  " + sum,
		"copy it to the cache:    " + cachePath,
		"--base-iso PATH",
		"AGENTISO_BASE_ISO=PATH",
		"--os-image-mirror URL",
	} {
		assert.Contains(t, msg, want)
	}
	assert.Equal(t, cachePath, ue.Info.CachePath)
	assert.Equal(t, up, ue.From)
	assert.NoFileExists(t, cachePath)
}

func TestResolveOfflineModeMakesNoRequest(t *testing.T) {
	content, sum := isoContent(1000, 17)
	srv := newISOServer(t, content)
	opts := baseOpts(t, testStream(t, srv.isoURL(), sum))
	opts.Offline = true

	_, err := Resolve(context.Background(), opts)
	var ue *UnavailableError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), "offline mode forbids downloading it")
	assert.Contains(t, err.Error(), "SHA256:  "+sum)
	assert.Empty(t, srv.reqs())

	// Once the file is in the cache, offline mode succeeds.
	require.NoError(t, os.WriteFile(filepath.Join(opts.CacheDir, testISOName), content, 0o644))
	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, SourceCache, res.Source)
}

func TestResolveConcurrentRunsDownloadOnce(t *testing.T) {
	content, sum := isoContent(500_000, 18)
	srv := newISOServer(t, content)
	streamJSON := testStream(t, srv.isoURL(), sum)
	cache := t.TempDir()
	var logs bytes.Buffer
	logger := newTestLogger(&syncWriter{w: &logs})

	const n = 4
	results := make([]Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := Options{Arch: "amd64", CacheDir: cache, Stream: streamJSON, Retries: -1, LockTimeout: 20 * time.Second, Logger: logger}
			results[i], errs[i] = Resolve(context.Background(), o)
		}()
	}
	wg.Wait()
	downloads := 0
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, filepath.Join(cache, testISOName), results[i].Path)
		assert.Equal(t, sum, results[i].SHA256)
		if results[i].Source == SourceDownload {
			downloads++
		} else {
			assert.Equal(t, SourceCache, results[i].Source)
		}
	}
	assert.Equal(t, 1, downloads)
	assert.Len(t, srv.reqs(), 1)
	assert.Equal(t, int64(len(content)), srv.bytesServed())
}

func TestResolveLockTimeout(t *testing.T) {
	_, sum := isoContent(10, 19)
	opts := baseOpts(t, testStream(t, "https://upstream.invalid/"+testISOName, sum))
	opts.LockTimeout = 300 * time.Millisecond
	lock := filepath.Join(opts.CacheDir, testISOName+".lock")
	held, ok, err := tryLock(lock, false)
	require.NoError(t, err)
	require.True(t, ok)
	defer held.release()
	var logs bytes.Buffer
	opts.Logger = newTestLogger(&logs)

	_, err = Resolve(context.Background(), opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "timed out after 300ms waiting for lock "+lock)
	assert.Contains(t, logs.String(), "Another agentiso run is fetching the base ISO; waiting for it")
}

func TestResolveCancelKeepsPartAndNoFinalFile(t *testing.T) {
	content, sum := isoContent(200_000, 20)
	const half = 80_000
	sent := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Range") != "" {
			w.Header().Set("ETag", `"c1"`)
			http.ServeContent(w, req, "x", time.Time{}, bytes.NewReader(content))
			return
		}
		w.Header().Set("ETag", `"c1"`)
		w.Header().Set("Content-Length", fmt.Sprint(len(content)))
		_, _ = w.Write(content[:half])
		w.(http.Flusher).Flush()
		close(sent)
		<-req.Context().Done()
	}))
	defer srv.Close()
	opts := baseOpts(t, testStream(t, srv.URL+"/"+testISOName, sum))
	final := filepath.Join(opts.CacheDir, testISOName)

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-sent
		// Wait until the client has written what it received.
		for {
			if fi, err := os.Stat(final + ".part"); err == nil && fi.Size() == half {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_, err := Resolve(ctx, opts)
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "partial file kept for resume at "+final+".part")
	// A typed error: the CLI says the .part is kept on purpose (issue 22).
	var ie *InterruptedError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, final+".part", ie.Part)
	assert.NoFileExists(t, final)
	fi, err := os.Stat(final + ".part")
	require.NoError(t, err)
	assert.Equal(t, int64(half), fi.Size())
	assert.FileExists(t, final+".part.json")

	// The next run resumes.
	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, content, readFile(t, res.Path))
	noPartFiles(t, opts.CacheDir)
}

func TestResolveHTTPErrorStatusNotRetried(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		http.Error(w, "nope", http.StatusForbidden)
	}))
	defer srv.Close()
	_, sum := isoContent(10, 21)
	opts := baseOpts(t, testStream(t, srv.URL+"/"+testISOName, sum))
	opts.Retries = 3
	_, err := Resolve(context.Background(), opts)
	var se *HTTPStatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusForbidden, se.StatusCode)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, calls)
}

func TestResolveServerErrorRetried(t *testing.T) {
	content, sum := isoContent(1000, 22)
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		calls++
		c := calls
		mu.Unlock()
		if c < 3 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		http.ServeContent(w, req, "x", time.Time{}, bytes.NewReader(content))
	}))
	defer srv.Close()
	opts := baseOpts(t, testStream(t, srv.URL+"/"+testISOName, sum))
	opts.Retries = 2
	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, sum, res.SHA256)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 3, calls)
}

func TestResolveUnknownArch(t *testing.T) {
	opts := baseOpts(t, nil)
	opts.Arch = "riscv64"
	_, err := Resolve(context.Background(), opts)
	require.Error(t, err)
	assert.Equal(t, `unsupported CPU architecture "riscv64": use one of x86_64 (amd64), aarch64 (arm64), ppc64le, s390x`, err.Error())
}

func TestResolveStalledTransferIsRetriedAndResumed(t *testing.T) {
	content, sum := isoContent(100_000, 23)
	var mu sync.Mutex
	var ranges []string
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		ranges = append(ranges, req.Header.Get("Range"))
		first := len(ranges) == 1
		mu.Unlock()
		w.Header().Set("ETag", `"s1"`)
		if first {
			w.Header().Set("Content-Length", fmt.Sprint(len(content)))
			_, _ = w.Write(content[:30_000])
			w.(http.Flusher).Flush()
			select { // stall
			case <-release:
			case <-req.Context().Done():
			}
			return
		}
		http.ServeContent(w, req, "x", time.Time{}, bytes.NewReader(content))
	}))
	defer srv.Close()
	opts := baseOpts(t, testStream(t, srv.URL+"/"+testISOName, sum))
	opts.Retries = 1
	opts.StallTimeout = 300 * time.Millisecond
	var logs bytes.Buffer
	opts.Logger = newTestLogger(&logs)

	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, content, readFile(t, res.Path))
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"", "bytes=30000-"}, ranges)
	assert.Contains(t, logs.String(), "no data received within the stall timeout")
}

func TestResolveStalePartWithSameETagIsRedownloaded(t *testing.T) {
	content, sum := isoContent(90_000, 24)
	srv := newISOServer(t, content)
	opts := baseOpts(t, testStream(t, srv.isoURL(), sum))
	final := filepath.Join(opts.CacheDir, testISOName)
	// The server honours the range, but the part holds wrong bytes.
	require.NoError(t, os.WriteFile(final+".part", bytes.Repeat([]byte{1}, 50_000), 0o644))
	require.NoError(t, writeMeta(final+".part.json", partMeta{URL: srv.isoURL(), ETag: srv.etag}))
	var logs bytes.Buffer
	opts.Logger = newTestLogger(&logs)

	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, content, readFile(t, res.Path))
	reqs := srv.reqs()
	require.Len(t, reqs, 2)
	assert.Equal(t, "bytes=50000-", reqs[0].Header.Get("Range"))
	assert.Empty(t, reqs[1].Header.Get("Range"))
	assert.Contains(t, logs.String(), "Resumed download has the wrong sha256")
	noPartFiles(t, opts.CacheDir)
}

// The <url>.sha256 request is bounded like the ISO download: a server that
// accepts it and never answers fails the run after the stall timeout
// instead of hanging it.
func TestResolveSidecarRequestTimesOut(t *testing.T) {
	content, _ := isoContent(10_000, 29)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, ".sha256") {
			select {
			case <-release:
			case <-req.Context().Done():
			}
			return
		}
		http.ServeContent(w, req, "x", time.Time{}, bytes.NewReader(content))
	}))
	defer srv.Close()
	defer close(release)
	opts := baseOpts(t, nil)
	opts.BaseISO = srv.URL + "/isos/custom.iso"
	opts.StallTimeout = 300 * time.Millisecond
	done := make(chan error, 1)
	go func() {
		_, err := Resolve(context.Background(), opts)
		done <- err
	}()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.ErrorContains(t, err, "custom.iso.sha256")
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(10 * time.Second):
		t.Fatal("the checksum request is still running after 10s")
	}
}

// Rule: files in the cache directory are created exclusively and never
// through a symbolic link another user planted by a predictable name.
func TestCacheNeverWritesThroughPlantedSymlinks(t *testing.T) {
	content, sum := isoContent(40_000, 11)
	srv := newISOServer(t, content)
	for _, planted := range []string{testISOName + ".part.json.tmp", testISOName + ".part", testISOName + ".part.json"} {
		opts := baseOpts(t, testStream(t, srv.isoURL(), sum))
		victim := filepath.Join(t.TempDir(), "victim")
		require.NoError(t, os.WriteFile(victim, []byte("precious"), 0o600))
		require.NoError(t, os.Symlink(victim, filepath.Join(opts.CacheDir, planted)))
		_, _ = Resolve(context.Background(), opts)
		assert.Equal(t, "precious", string(readFile(t, victim)), planted)
	}
}

// Rule: a cache directory every user may write to is refused: another user
// could plant links or files there by the names agentiso uses.
func TestCacheDirWritableByOthersIsRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permission bits")
	}
	opts := baseOpts(t, testStream(t, "https://127.0.0.1:1/x/"+testISOName, strings.Repeat("a", 64)))
	opts.Offline = true
	require.NoError(t, os.Chmod(opts.CacheDir, 0o1777))
	_, err := Resolve(context.Background(), opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "writable by every user")
	assert.Contains(t, err.Error(), opts.CacheDir)
}

// Rule: while the caller still reads the base ISO Resolve verified
// (KeepLock), no other run can remove or replace it in the cache; other
// runs that only read the same verified ISO are not held up.
func TestVerifiedISOCannotBeSwappedWhileInUse(t *testing.T) {
	contentA, sumA := isoContent(40_000, 11)
	contentB, sumB := isoContent(40_000, 12)
	srvA, srvB := newISOServer(t, contentA), newISOServer(t, contentB)
	cache := t.TempDir()
	optsA := baseOpts(t, testStream(t, srvA.isoURL(), sumA))
	optsA.CacheDir = cache
	var release func()
	optsA.KeepLock = func(r func()) { release = r }
	resA, err := Resolve(context.Background(), optsA)
	require.NoError(t, err)
	require.NotNil(t, release, "the lock is handed over")

	// Another run of the same stream reads the same ISO meanwhile.
	same := baseOpts(t, testStream(t, srvA.isoURL(), sumA))
	same.CacheDir = cache
	var releaseSame func()
	same.KeepLock = func(r func()) { releaseSame = r }
	res, err := Resolve(context.Background(), same)
	require.NoError(t, err)
	assert.Equal(t, SourceCache, res.Source)
	releaseSame()

	// A run whose stream names the same file with another sha256 must wait:
	// here it gives up (a short lock wait) and the verified ISO stays.
	optsB := baseOpts(t, testStream(t, srvB.isoURL(), sumB))
	optsB.CacheDir = cache
	optsB.LockTimeout = 300 * time.Millisecond
	_, err = Resolve(context.Background(), optsB)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "waiting for lock")
	assert.Equal(t, contentA, readFile(t, resA.Path))

	// Once released, it goes ahead.
	release()
	optsB.LockTimeout = 0
	res, err = Resolve(context.Background(), optsB)
	require.NoError(t, err)
	assert.Equal(t, contentB, readFile(t, res.Path))
}
