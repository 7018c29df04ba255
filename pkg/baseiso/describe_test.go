package baseiso

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(p, got, 0o644))
	}
	want, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

func TestDescribeEmbeddedStream(t *testing.T) {
	cache := filepath.FromSlash("/var/cache/agentiso")
	fi, err := Describe(Options{Arch: "arm64", CacheDir: cache, Mirror: "http://mirror.lan:8080/rhcos/4.16"})
	require.NoError(t, err)
	assert.Equal(t, FetchInfo{
		Stream:    "rhcos-4.16",
		Release:   "416.94.202405291527-0",
		Arch:      "aarch64",
		FileName:  "rhcos-416.94.202405291527-0-live.aarch64.iso",
		URL:       "https://rhcos.mirror.openshift.com/art/storage/prod/streams/4.16-9.4/builds/416.94.202405291527-0/aarch64/rhcos-416.94.202405291527-0-live.aarch64.iso",
		MirrorURL: "http://mirror.lan:8080/rhcos/4.16/rhcos-416.94.202405291527-0-live.aarch64.iso",
		SHA256:    "f771ca54401e00e79ee17decf20fe0ae1f281b141a1ffc901ce4d6e7e5e5d898",
		CachePath: filepath.Join(cache, "rhcos-416.94.202405291527-0-live.aarch64.iso"),
	}, fi)

	var b bytes.Buffer
	require.NoError(t, fi.WriteInstructions(&b))
	golden(t, "instructions-aarch64-mirror.golden", b.Bytes())
}

func TestDescribeErrors(t *testing.T) {
	_, err := Describe(Options{Arch: "sparc", CacheDir: "/c"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unsupported CPU architecture "sparc"`)

	_, err = Describe(Options{CacheDir: "/c", Mirror: "mirror.lan/rhcos"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--os-image-mirror")

	_, err = Describe(Options{CacheDir: "/c", Stream: []byte("{")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "parse CoreOS stream metadata")
}

func TestDescribeDefaultCacheDirUsesXDG(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", xdg)
	fi, err := Describe(Options{Arch: "x86_64"})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(xdg, "agentiso", "image_cache", "rhcos-416.94.202405291527-0-live.x86_64.iso"), fi.CachePath)
	assert.Empty(t, fi.MirrorURL)
}
