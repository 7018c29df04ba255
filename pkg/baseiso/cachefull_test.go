package baseiso

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
)

// fullDisk opens part files that fail with ENOSPC once room bytes were
// written to all of them together, as a cache on a full disk does.
type fullDisk struct{ room int64 }

func (d *fullDisk) create(name string, flag int, perm os.FileMode) (partFile, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &fullFile{File: f, d: d}, nil
}

type fullFile struct {
	*os.File
	d *fullDisk
}

func (f *fullFile) Write(b []byte) (int, error) {
	if int64(len(b)) > f.d.room {
		n, _ := f.File.Write(b[:f.d.room])
		f.d.room = 0
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	f.d.room -= int64(len(b))
	return f.File.Write(b)
}

// A full cache disk is not a network failure: no retry, no fallback to the
// release payload, and the error names the cache directory and the space
// still needed. The partial download is kept for a resume.
func TestCacheDiskFullFailsAtOnce(t *testing.T) {
	content, sum := isoContent(200_000, 21)
	srv := newISOServer(t, content)
	opts := baseOpts(t, testStream(t, srv.isoURL(), sum))
	opts.Retries = 3
	opts.createPart = (&fullDisk{room: 50_000}).create
	img := &fakeImage{content: content}
	opts.Registry = img.source(false)

	_, err := Resolve(context.Background(), opts)
	var cw *CacheWriteError
	require.ErrorAs(t, err, &cw)
	var ue *UnavailableError
	assert.False(t, errors.As(err, &ue), "a full disk is not 'the ISO could not be downloaded': %v", err)
	assert.ErrorIs(t, err, syscall.ENOSPC)
	assert.Len(t, srv.reqs(), 1, "a full disk is not retried")
	assert.Zero(t, img.calls, "the release payload would fill the same disk")
	msg := err.Error()
	assert.Contains(t, msg, "the base ISO cache directory "+opts.CacheDir+" is full")
	assert.Contains(t, msg, "after 48.8 KiB of 195.3 KiB")
	assert.Contains(t, msg, "146.5 KiB more is needed")
	assert.Contains(t, msg, "XDG_CACHE_HOME")
	assert.Contains(t, msg, "kept at "+filepath.Join(opts.CacheDir, testISOName+".part"))
	assert.NotContains(t, msg, "retr")
}

// When the server announces the size and the cache cannot hold it, the run
// fails before writing anything.
func TestCacheTooSmallFailsBeforeDownloading(t *testing.T) {
	content, sum := isoContent(200_000, 22)
	srv := newISOServer(t, content)
	opts := baseOpts(t, testStream(t, srv.isoURL(), sum))
	opts.freeSpace = func(dir string) (int64, bool) {
		assert.Equal(t, opts.CacheDir, dir)
		return 1000, true
	}
	_, err := Resolve(context.Background(), opts)
	var cw *CacheWriteError
	require.ErrorAs(t, err, &cw)
	assert.Contains(t, err.Error(), "the base ISO cache directory "+opts.CacheDir+" has 1000 B free, but the base ISO needs 195.3 KiB")
	noPartFiles(t, opts.CacheDir)
	assert.Len(t, srv.reqs(), 1)
}

// The registry path writes into the same cache: same error, no retry.
func TestCacheDiskFullFromRegistry(t *testing.T) {
	content, sum := isoContent(200_000, 23)
	opts := baseOpts(t, testStream(t, "https://rhcos.example/builds/x86_64/"+testISOName, sum))
	opts.HTTPClient = &http.Client{Transport: refuse{t}}
	opts.createPart = (&fullDisk{room: 10_000}).create
	img := &fakeImage{content: content}
	opts.Registry = img.source(true)
	opts.Mirror = ""
	_, err := Resolve(context.Background(), opts)
	var cw *CacheWriteError
	require.ErrorAs(t, err, &cw, "%v", err)
	assert.Contains(t, err.Error(), "is full")
	assert.Equal(t, 1, img.calls)
}

// Downloads are capped: a server announcing (or sending) more than the cap
// is refused without filling the disk, and nothing stays in the cache.
func TestDownloadSizeCap(t *testing.T) {
	content, sum := isoContent(70_000, 24)
	for _, announce := range []bool{true, false} {
		t.Run(fmt.Sprintf("content-length %v", announce), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if announce {
					w.Header().Set("Content-Length", fmt.Sprint(len(content)))
				}
				_, _ = w.Write(content[:30_000])
				if f, ok := w.(http.Flusher); ok {
					f.Flush()
				}
				_, _ = w.Write(content[30_000:])
			}))
			defer srv.Close()
			opts := baseOpts(t, testStream(t, srv.URL+"/x/"+testISOName, sum))
			opts.Retries = 3
			opts.maxSize = 50_000
			_, err := Resolve(context.Background(), opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "larger than the 48.8 KiB limit for a base ISO")
			assert.NotContains(t, err.Error(), "attempts")
			noPartFiles(t, opts.CacheDir)
			assert.NoFileExists(t, filepath.Join(opts.CacheDir, testISOName))
		})
	}
}

// An unverified download (no checksum known) that is not a CoreOS live ISO
// (an error page, a truncated file) does not stay in the cache.
func TestUnverifiedDownloadMustBeALiveISO(t *testing.T) {
	page := []byte("<html><body>Please log in to download this file</body></html>")
	serve := func(body []byte) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if filepath.Ext(r.URL.Path) == ".sha256" {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write(body)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	srv := serve(page)
	opts := baseOpts(t, nil)
	opts.BaseISO = srv.URL + "/isos/custom.iso"
	_, err := Resolve(context.Background(), opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not a CoreOS live ISO")
	assert.Contains(t, err.Error(), "not an ISO 9660 image")
	assert.Contains(t, err.Error(), "(removed from the cache; no checksum was known to check it)")
	assert.NoFileExists(t, filepath.Join(opts.CacheDir, "custom.iso"))
	noPartFiles(t, opts.CacheDir)

	// A real live ISO without a checksum is kept (and reported unverified).
	iso, _, err := testiso.Bytes(testiso.Options{Size: 4 << 20})
	require.NoError(t, err)
	opts.BaseISO = serve(iso).URL + "/isos/custom.iso"
	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.False(t, res.Verified)
	assert.FileExists(t, res.Path)
}
