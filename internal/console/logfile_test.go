package console

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fixedNow() time.Time { return time.Date(2026, 11, 25, 19, 0, 0, 0, time.UTC) }

func TestLogFileTimestampsAndMode(t *testing.T) {
	dir := t.TempDir()
	l := NewLogFile(dir, fixedNow)
	_, _ = l.Write([]byte("DEBUG one\nINFO tw"))
	_, _ = l.Write([]byte("o\n"))
	_, _ = l.Write([]byte("INFO unterminated"))
	require.NoError(t, l.Close())
	b, err := os.ReadFile(filepath.Join(dir, LogFileName))
	require.NoError(t, err)
	assert.Equal(t, "2026-11-25T19:00:00Z DEBUG one\n2026-11-25T19:00:00Z INFO two\n2026-11-25T19:00:00Z INFO unterminated\n", string(b))
	fi, err := os.Stat(filepath.Join(dir, LogFileName))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	// Appended to by the next run.
	l = NewLogFile(dir, fixedNow)
	_, _ = l.Write([]byte("INFO again\n"))
	require.NoError(t, l.Close())
	b, _ = os.ReadFile(filepath.Join(dir, LogFileName))
	assert.Equal(t, 4, strings.Count(string(b), "\n"))
}

// The log creates no directory: lines wait until the command made it.
func TestLogFileWaitsForTheDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mycluster")
	l := NewLogFile(dir, fixedNow)
	_, _ = l.Write([]byte("INFO before\n"))
	_, err := os.Stat(dir)
	require.True(t, os.IsNotExist(err))
	require.NoError(t, os.Mkdir(dir, 0o755))
	_, _ = l.Write([]byte("INFO after\n"))
	require.NoError(t, l.Close())
	b, err := os.ReadFile(filepath.Join(dir, LogFileName))
	require.NoError(t, err)
	assert.Equal(t, "2026-11-25T19:00:00Z INFO before\n2026-11-25T19:00:00Z INFO after\n", string(b))

	// A directory that never appears: nothing is created.
	gone := filepath.Join(t.TempDir(), "typo")
	l = NewLogFile(gone, fixedNow)
	_, _ = l.Write([]byte("INFO x\n"))
	require.NoError(t, l.Close())
	_, err = os.Stat(gone)
	assert.True(t, os.IsNotExist(err))
}

func TestLogFileNeverFollowsASymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.WriteFile(target, nil, 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, LogFileName)))
	l := NewLogFile(dir, fixedNow)
	_, _ = l.Write([]byte("INFO x\n"))
	require.NoError(t, l.Close())
	b, _ := os.ReadFile(target)
	assert.Empty(t, b)
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		`{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz","email":"a@b"}}}`:        `{"auths":{"quay.io":{"auth":"<redacted>","email":"a@b"}}}`,
		`token=abc.def password: hunter2`:                                    `token=<redacted> password: <redacted>`,
		`Authorization: Bearer abcdef123`:                                    `Authorization: Bearer <redacted>`,
		`agent token eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl`:      `agent token <redacted JWT>`,
		`proxy http://user:s3cret@proxy.example.com:3128`:                    `proxy http://user:<redacted>@proxy.example.com:3128`,
		`-----BEGIN EC PRIVATE KEY-----MHcCAQEE-----END EC PRIVATE KEY-----`: `<redacted private key>`,
		`INFO Generated ISO at agent.x86_64.iso`:                             `INFO Generated ISO at agent.x86_64.iso`,
	} {
		assert.Equal(t, want, Redact(in), in)
	}
}

// A directory with only the log goes; one with anything else stays whole.
func TestRemoveLogOnlyDir(t *testing.T) {
	only := filepath.Join(t.TempDir(), "typo")
	require.NoError(t, os.Mkdir(only, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(only, LogFileName), []byte("x"), 0o600))
	RemoveLogOnlyDir(only)
	assert.NoDirExists(t, only)

	kept := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(kept, LogFileName), []byte("x"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(kept, "install-config.yaml"), []byte("x"), 0o600))
	RemoveLogOnlyDir(kept)
	assert.FileExists(t, filepath.Join(kept, LogFileName))
}
