package baseiso

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
)

// cacheSubdir is appended to the user cache directory.
const cacheSubdir = "agentiso/image_cache"

// DefaultCacheDir returns the directory in which base ISOs are cached.
//
// When XDG_CACHE_HOME is set to an absolute path it wins on every OS:
// $XDG_CACHE_HOME/agentiso/image_cache. Otherwise the user cache directory
// follows os.UserCacheDir: ~/.cache on Linux and the BSDs,
// ~/Library/Caches on macOS, %LocalAppData% on Windows, $home/lib/cache on
// Plan 9. getenv reads the environment; nil means os.Getenv.
func DefaultCacheDir(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	base, err := userCacheDir(runtime.GOOS, getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(base, filepath.FromSlash(cacheSubdir)), nil
}

// userCacheDir mirrors os.UserCacheDir for goos with an injectable
// environment, except that an absolute XDG_CACHE_HOME is honoured on every
// OS.
func userCacheDir(goos string, getenv func(string) string) (string, error) {
	if x := getenv("XDG_CACHE_HOME"); x != "" && filepath.IsAbs(x) {
		return x, nil
	}
	switch goos {
	case "windows":
		if d := getenv("LocalAppData"); d != "" {
			return d, nil
		}
		return "", errors.New("cannot find the user cache directory: %LocalAppData% is not set; pass a cache directory or set XDG_CACHE_HOME")
	case "darwin", "ios":
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, "Library", "Caches"), nil
		}
	case "plan9":
		if h := getenv("home"); h != "" {
			return filepath.Join(h, "lib", "cache"), nil
		}
	default:
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, ".cache"), nil
		}
	}
	return "", errors.New("cannot find the user cache directory: neither XDG_CACHE_HOME nor HOME is set; set one of them or pass a cache directory")
}
