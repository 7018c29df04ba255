package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain keeps the tests out of the developer's cache: a test that does
// not name a cache directory gets an empty one (baseiso.DefaultCacheDir,
// where the hash records of the images written go).
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentiso-agent-test-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
