package ignition

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cavaliercoder/go-cpio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/configimage"
)

// rewriteSums returns a copy of the config archive at p whose sha256sums
// member is edit's result: a crafted config image, the other members as
// agentiso made them.
func rewriteSums(t *testing.T, p string, edit func(string) string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	zr, err := gzip.NewReader(bytes.NewReader(b))
	require.NoError(t, err)
	cr := cpio.NewReader(zr)
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	cw := cpio.NewWriter(zw)
	for {
		h, err := cr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		data, err := io.ReadAll(cr)
		require.NoError(t, err)
		if h.Name == configimage.SumsPath {
			data = []byte(edit(string(data)))
		}
		h.Size = int64(len(data))
		require.NoError(t, cw.WriteHeader(h))
		_, err = cw.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, cw.Close())
	require.NoError(t, zw.Close())
	q := filepath.Join(t.TempDir(), "config.gz")
	require.NoError(t, os.WriteFile(q, out.Bytes(), 0o600))
	return q
}

// TestLoadConfigImageChecksSumsListFirst: a crafted sha256sums is refused
// before anything is hashed: a line naming a device (/dev/zero, which
// hashed for ever), a file of the host (by an absolute path or by '..'; a
// FIFO here, whose open blocks for ever: had the loader opened it, the
// test would time out), a line that is not "<sha256>  <member>", a member
// listed twice. The loader reads the image's members only.
func TestLoadConfigImageChecksSumsListFirst(t *testing.T) {
	full := snoInput()
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	up := strings.Repeat("../", 40)
	for _, tc := range []struct {
		name string
		edit func(string) string
		want string
	}{
		{"dev-zero", func(s string) string { return s + sum("") + "  /dev/zero\n" }, "its sha256sums names /dev/zero, which is not one of its files"},
		{"host-fifo", func(s string) string { return s + sum("") + "  " + fifo + "\n" }, "its sha256sums names " + fifo + ", which is not one of its files"},
		{"dot-dot", func(s string) string { return sum("") + "  " + up + strings.TrimPrefix(fifo, "/") + "\n" + s }, "which is not one of its files"},
		{"dot-dot-member", func(s string) string {
			return strings.Replace(s, "  etc/assisted/rendezvous-host.env", "  etc/assisted/../assisted/rendezvous-host.env", 1)
		}, "its sha256sums names etc/assisted/../assisted/rendezvous-host.env, which is not one of its files"},
		{"escaped-name", func(s string) string { return s + `\` + sum("") + "  " + `/dev/zero\n` + "\n" }, `its sha256sums has a line that is not "<sha256>  <member>"`},
		{"binary-mode", func(s string) string { return s + sum("") + " */dev/zero\n" }, `its sha256sums has a line that is not "<sha256>  <member>"`},
		{"listed-twice", func(s string) string { return s + strings.SplitAfter(s, "\n")[0] }, "its sha256sums lists etc/assisted"},
		{"unlisted", func(s string) string { return strings.Join(strings.SplitAfter(s, "\n")[1:], "") }, "its sha256sums does not list /etc/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := configHost(t, full)
			archive := rewriteSums(t, configArchive(t, full, infoOf(full)), tc.edit)
			start := time.Now()
			out, err := h.run("/usr/local/bin/agent-config-image-wait.sh", "--archive", archive)
			require.Error(t, err, out)
			assert.Contains(t, out, "agent-check-config-image: refused the config image on ")
			assert.Contains(t, out, tc.want)
			assert.Less(t, time.Since(start), 2*time.Minute)
			assert.NoFileExists(t, h.file("/etc/assisted/config-image-loaded"))
		})
	}
}
