package baseiso

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordedSum rewrites every record in the cache's hash records to say
// sum: the only way a later run can then accept sum is by taking the
// record instead of reading the file.
func recordedSum(t *testing.T, cache, sum string) {
	t.Helper()
	dir := filepath.Join(cache, hashRecordsDir)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, entries, "a verified base ISO leaves a record")
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		var rec map[string]string
		require.NoError(t, json.Unmarshal(b, &rec))
		require.Regexp(t, `^[0-9a-f]{64}$`, rec["sha256"])
		rec["sha256"] = sum
		b, err = json.Marshal(rec)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
}

func TestVerifiedBaseISOIsNotHashedAgain(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("file identity is read on Linux only")
	}
	content, sum := isoContent(40_000, 11)
	_, other := isoContent(1, 98)
	opts := baseOpts(t, []byte("not json"))
	p := filepath.Join(t.TempDir(), "my.iso")
	require.NoError(t, os.WriteFile(p, content, 0o644))
	opts.BaseISO, opts.BaseISOSHA256 = p, sum
	_, err := Resolve(context.Background(), opts)
	require.NoError(t, err)

	// The record, not the file, answers for the unchanged file.
	recordedSum(t, opts.CacheDir, other)
	opts.BaseISOSHA256 = other
	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err, "the recorded sum of the unchanged file is taken")
	assert.True(t, res.Verified)

	// Any write to the file (its times change) makes it be read again.
	require.NoError(t, os.WriteFile(p, content, 0o644))
	_, err = Resolve(context.Background(), opts)
	var ce *ChecksumError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, sum, ce.Actual)
}

func TestCachedBaseISORecordedWhenVerified(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("file identity is read on Linux only")
	}
	content, sum := isoContent(40_000, 12)
	_, other := isoContent(1, 97)
	opts := baseOpts(t, testStream(t, "http://127.0.0.1:1/"+testISOName, sum))
	final := filepath.Join(opts.CacheDir, testISOName)
	require.NoError(t, os.WriteFile(final, content, 0o644))
	_, err := Resolve(context.Background(), opts)
	require.NoError(t, err)

	// With the record saying otherwise, the cached file is taken as the
	// record says: proof that it was not read again.
	recordedSum(t, opts.CacheDir, other)
	opts.Stream = testStream(t, "http://127.0.0.1:1/"+testISOName, other)
	res, err := Resolve(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, SourceCache, res.Source)
	assert.Equal(t, other, res.SHA256)
}
