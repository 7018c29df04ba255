package baseiso

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeImage serves content as the ISO of a container image; failAfter > 0
// makes the next call break after that many bytes.
type fakeImage struct {
	content   []byte
	failAfter int
	calls     int
}

func (f *fakeImage) source(preferred bool) *RegistrySource {
	return &RegistrySource{Image: "mirror.example/ocp@sha256:abc", Preferred: preferred,
		Stream: func(ctx context.Context, fn func(io.Reader, int64) error) error {
			f.calls++
			var r io.Reader = bytes.NewReader(f.content)
			if f.failAfter > 0 {
				n := f.failAfter
				f.failAfter = 0
				r = io.MultiReader(io.LimitReader(bytes.NewReader(f.content), int64(n)), errReader{})
			}
			return fn(r, int64(len(f.content)))
		}}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset by peer") }

// refuse is an HTTP client whose every request fails: nothing listens.
type refuse struct{ t *testing.T }

func (r refuse) RoundTrip(req *http.Request) (*http.Response, error) {
	return nil, errors.New("dial tcp: connection refused")
}

func TestRegistrySourceFallbackAndResume(t *testing.T) {
	content, sum := isoContent(1<<20, 7)
	opts := baseOpts(t, testStream(t, "https://rhcos.example/builds/x86_64/"+testISOName, sum))
	opts.HTTPClient = &http.Client{Transport: refuse{t}}
	img := &fakeImage{content: content, failAfter: 300 << 10}
	opts.Registry = img.source(false)

	// The HTTP source is unreachable; the image breaks mid-way: the partial
	// copy is kept, named for the next run.
	_, err := Resolve(context.Background(), opts)
	var ue *UnavailableError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), "the release payload's mirror.example/ocp@sha256:abc did not serve it either")
	part := filepath.Join(opts.CacheDir, testISOName+".registry.part")
	fi, err := os.Stat(part)
	require.NoError(t, err)
	assert.Equal(t, int64(300<<10), fi.Size())

	// The re-run continues after the kept bytes and verifies the whole file.
	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, SourceRegistry, res.Source)
	assert.True(t, res.Verified)
	assert.Equal(t, sum, res.SHA256)
	assert.Equal(t, content, readFile(t, res.Path))
	noPartFiles(t, opts.CacheDir)

	// Cached now: the image is not read again.
	calls := img.calls
	res, err = Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, SourceCache, res.Source)
	assert.Equal(t, calls, img.calls)
}

func TestRegistrySourcePreferredSkipsHTTP(t *testing.T) {
	content, sum := isoContent(64<<10, 8)
	srv := newISOServer(t, content)
	opts := baseOpts(t, testStream(t, srv.isoURL(), sum))
	img := &fakeImage{content: content}
	opts.Registry = img.source(true)
	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, SourceRegistry, res.Source)
	assert.Empty(t, srv.reqs(), "an air gap never tries the internet URL first")

	// --offline never contacts the registry either.
	opts2 := baseOpts(t, testStream(t, srv.isoURL(), sum))
	opts2.Offline, opts2.Registry = true, img.source(true)
	calls := img.calls
	_, err = Resolve(context.Background(), opts2)
	var ue *UnavailableError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, calls, img.calls)
}

func TestRegistrySourceChecksumMismatch(t *testing.T) {
	content, _ := isoContent(64<<10, 9)
	_, otherSum := isoContent(64<<10, 10)
	opts := baseOpts(t, testStream(t, "https://rhcos.example/builds/x86_64/"+testISOName, otherSum))
	opts.HTTPClient = &http.Client{Transport: refuse{t}}
	opts.Registry = (&fakeImage{content: content}).source(true)
	_, err := Resolve(context.Background(), opts)
	var ce *ChecksumError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, otherSum, ce.Expected)
	noPartFiles(t, opts.CacheDir)
	_, err = os.Stat(filepath.Join(opts.CacheDir, testISOName))
	assert.True(t, os.IsNotExist(err), "a corrupt ISO never reaches the cache")
}
