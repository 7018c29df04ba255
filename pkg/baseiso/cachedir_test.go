package baseiso

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUserCacheDir(t *testing.T) {
	for name, tc := range map[string]struct {
		goos string
		env  map[string]string
		want string
	}{
		"linux xdg":          {"linux", map[string]string{"XDG_CACHE_HOME": "/xdg", "HOME": "/home/u"}, "/xdg"},
		"linux home":         {"linux", map[string]string{"HOME": "/home/u"}, "/home/u/.cache"},
		"linux relative xdg": {"linux", map[string]string{"XDG_CACHE_HOME": "rel", "HOME": "/home/u"}, "/home/u/.cache"},
		"darwin home":        {"darwin", map[string]string{"HOME": "/Users/u"}, "/Users/u/Library/Caches"},
		"darwin xdg":         {"darwin", map[string]string{"XDG_CACHE_HOME": "/xdg", "HOME": "/Users/u"}, "/xdg"},
		"freebsd":            {"freebsd", map[string]string{"HOME": "/usr/home/u"}, "/usr/home/u/.cache"},
		"windows":            {"windows", map[string]string{"LocalAppData": "/appdata"}, "/appdata"},
		"plan9":              {"plan9", map[string]string{"home": "/usr/u"}, "/usr/u/lib/cache"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := userCacheDir(tc.goos, func(k string) string { return tc.env[k] })
			require.NoError(t, err)
			assert.Equal(t, filepath.FromSlash(tc.want), got)
		})
	}
	_, err := userCacheDir("linux", func(string) string { return "" })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "neither XDG_CACHE_HOME nor HOME is set")
	_, err = userCacheDir("windows", func(string) string { return "" })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "LocalAppData")
}

func TestDefaultCacheDir(t *testing.T) {
	env := map[string]string{"XDG_CACHE_HOME": "/tmp/xdg", "HOME": "/home/u"}
	got, err := DefaultCacheDir(func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, filepath.FromSlash("/tmp/xdg/agentiso/image_cache"), got)
}
