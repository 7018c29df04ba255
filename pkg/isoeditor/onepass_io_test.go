//go:build linux

package isoeditor_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

// procIO is this process's I/O accounting (/proc/self/io): rchar counts
// the bytes read through read, pread, copy_file_range and the like (page
// cache or not), read_bytes those the process made the storage layer read.
type procIO struct{ rchar, readBytes int64 }

func readProcIO(tb testing.TB) (procIO, bool) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return procIO{}, false
	}
	var io procIO
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte(": "))
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(string(v), 10, 64)
		require.NoError(tb, err)
		switch string(k) {
		case "rchar":
			io.rchar, found = n, found+1
		case "read_bytes":
			io.readBytes, found = n, found+1
		}
	}
	return io, found == 2
}

// evictFile writes f back and drops it from the page cache.
func evictFile(tb testing.TB, p string) {
	f, err := os.Open(p)
	require.NoError(tb, err)
	defer f.Close()
	require.NoError(tb, f.Sync())
	require.NoError(tb, unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED))
}

// TestEveryArtifactReadsTheBaseOnce is the load-independent proof of "one
// pass per artifact" (issue 27): from a cold base, create image, create
// pxe-files and the minimal ISO with its root file system each make the
// storage read the base at most once (read_bytes), read it through the
// page cache at most twice (the copy, then the hash behind it, rchar), and
// hash every byte they write exactly once.
func TestEveryArtifactReadsTheBaseOnce(t *testing.T) {
	if _, ok := readProcIO(t); !ok {
		t.Skip("no I/O accounting in /proc/self/io")
	}
	const size = 96 << 20
	o := testiso.Options{Size: size, InitrdSize: 16 << 20, Dense: true}
	for _, tc := range []struct {
		name    string
		minimal bool
		write   func(tb testing.TB, base, out string, opts isoeditor.WriteOptions) []*isoeditor.WriteResult
	}{
		{"create image", false, func(tb testing.TB, base, out string, opts isoeditor.WriteOptions) []*isoeditor.WriteResult {
			return []*isoeditor.WriteResult{editAndWrite(tb, base, filepath.Join(out, "agent.iso"), opts)}
		}},
		{"create pxe-files", false, writePXEFiles},
		{"minimal ISO and root file system", true, writeMinimal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			base := writeBaseOf(t, dir, tc.minimal, o)
			out := filepath.Join(dir, "out")
			require.NoError(t, os.Mkdir(out, 0o755))
			evictFile(t, base)
			var hashed atomic.Int64
			before, _ := readProcIO(t)
			res := tc.write(t, base, out, isoeditor.CountHashed(isoeditor.WriteOptions{}, &hashed))
			after, _ := readProcIO(t)
			disk, logical := after.readBytes-before.readBytes, after.rchar-before.rchar
			var written int64
			methods := ""
			for _, r := range res {
				written += r.Size
				methods += " " + filepath.Base(r.Path) + ":" + r.Method
			}
			t.Logf("base %d bytes, written %d: read from storage %d (%.2fx the base), through the page cache %d (%.2fx what was written), hashed %d;%s",
				int64(size), written, disk, float64(disk)/size, logical, float64(logical)/float64(written), hashed.Load(), methods)
			assert.Equal(t, written, hashed.Load(), "every byte written is hashed exactly once")
			// The reads of the ISO's directories and small files, and the
			// readahead past what is copied, stay within the base; 1 MiB
			// is left for the file system's own metadata.
			assert.LessOrEqual(t, disk, int64(size+1<<20), "the base is read from storage at most once")
			assert.LessOrEqual(t, logical, 2*written+(1<<20), "the base is read at most twice through the page cache: the copy and the hash behind it")
			if disk < written/2 {
				t.Logf("the storage read only %d bytes of a cold %d-byte base (tmpfs, or the cache could not be dropped): the storage bound proves nothing here", disk, int64(size))
			}
		})
	}
}
