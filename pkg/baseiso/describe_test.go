package baseiso

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/data"
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
	fi, err := Describe(Options{Arch: "arm64", CacheDir: cache, Mirror: "http://mirror.lan:8080/rhcos/4.16", Stream: data.RHCOSStream()})
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

	_, err = Describe(Options{CacheDir: "/c", Mirror: "mirror.lan/rhcos", Stream: data.RHCOSStream()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--os-image-mirror")

	_, err = Describe(Options{CacheDir: "/c", Stream: []byte("{")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "parse CoreOS stream metadata")

	// No stream (the release's payload was not read): no ISO is named,
	// never the stream embedded in the binary.
	_, err = Describe(Options{CacheDir: "/c"})
	assert.ErrorIs(t, err, ErrStreamUnknown)
	_, err = Resolve(context.Background(), Options{CacheDir: t.TempDir(), Offline: true})
	assert.ErrorIs(t, err, ErrStreamUnknown)
}

func TestSameStream(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"418.94.202501221327-0", "418.94.202503101200-0", true},
		{"416.94.202405291527-0", "416.94.202406251923-0", true},
		{"9.6.20251021-0", "9.6.20260101-0", true},
		{"9.6.20251021-0", "9.6.20251021-0", true},
		{"418.94.202501221327-0", "416.94.202405291527-0", false},
		{"9.6.20251021-0", "9.8.20260428-0", false},
		{"9.6.20251021-0", "418.94.202501221327-0", false},
		{"9.6", "9.6", false},
		{"", "", false},
		{"9.6.2025-0", "9.6.2025-0", false},
		{"9.6.20251021-x", "9.6.20251021-x", false},
	} {
		assert.Equal(t, tc.same, SameStream(tc.a, tc.b), "%s %s", tc.a, tc.b)
	}
}

func TestDescribeDefaultCacheDirUsesXDG(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", xdg)
	fi, err := Describe(Options{Arch: "x86_64", Stream: data.RHCOSStream()})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(xdg, "agentiso", "image_cache", "rhcos-416.94.202405291527-0-live.x86_64.iso"), fi.CachePath)
	assert.Empty(t, fi.MirrorURL)
}
