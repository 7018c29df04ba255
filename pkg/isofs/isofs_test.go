package isofs_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/isofs"
)

func content(f isofs.File) []byte {
	b := make([]byte, f.Size)
	seed := f.Key
	if seed == "" {
		seed = f.Path
	}
	for i := range b {
		b[i] = seed[i%len(seed)] ^ byte(i/7)
	}
	return b
}

func fill(_ context.Context, f isofs.File, w io.Writer) error {
	_, err := w.Write(content(f))
	return err
}

var date = time.Date(2026, 11, 28, 1, 2, 3, 0, time.UTC)

func write(t *testing.T, files []isofs.File) (string, *isofs.Layout) {
	t.Helper()
	l, err := isofs.Plan("agentdata", date, files)
	require.NoError(t, err)
	var buf bytes.Buffer
	n, err := l.WriteTo(context.Background(), &buf, fill)
	require.NoError(t, err)
	require.Equal(t, l.Size(), n)
	require.Equal(t, l.Size(), int64(buf.Len()))
	p := filepath.Join(t.TempDir(), "data.iso")
	require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o600))
	return p, l
}

func xorriso(t *testing.T) string {
	t.Helper()
	x, err := exec.LookPath("osirrox")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("osirrox (xorriso) is required in CI: hack/install-deps.sh installs it")
		}
		t.Skip("osirrox (xorriso) not installed")
	}
	return x
}

// extract reads the image back with xorriso, which reads Rock Ridge.
func extract(t *testing.T, iso string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "x")
	cmd := exec.Command(xorriso(t), "-indev", iso, "-extract", "/", out)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	return out
}

func storeFiles() []isofs.File {
	blob := func(i int) string { return fmt.Sprintf("%064x", i) }
	var fs []isofs.File
	for i := 1; i <= 3; i++ {
		fs = append(fs, isofs.File{Path: "docker/registry/v2/repositories/openshift/release/_layers/sha256/" + blob(i) + "/link", Size: 71})
	}
	fs = append(fs,
		isofs.File{Path: "docker/registry/v2/repositories/openshift/release-images/_manifests/tags/4.21.3-x86_64/current/link", Size: 71},
		isofs.File{Path: "images/registry/version", Size: 33},
		isofs.File{Path: "docker/registry/v2/blobs/sha256/00/" + blob(1) + "/data", Size: 5000, Key: "b1"},
		isofs.File{Path: "images/registry/" + blob(1), Size: 5000, Key: "b1"},
		isofs.File{Path: "docker/registry/v2/blobs/sha256/00/" + blob(2) + "/data", Size: 0, Key: "b2"},
		isofs.File{Path: "docker/registry/v2/blobs/sha256/00/" + blob(3) + "/data", Size: 3 * isofs.Sector, Key: "b3"},
	)
	return fs
}

func TestImageReadsBackWithXorriso(t *testing.T) {
	files := storeFiles()
	iso, l := write(t, files)
	out := extract(t, iso)
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(f.Path)))
		require.NoError(t, err, f.Path)
		assert.Equal(t, content(firstOf(files, f)), got, f.Path)
	}
	// A shared key is one extent.
	assert.Equal(t, l.Offset(files[5].Path), l.Offset(files[6].Path))
	// xorriso's own report of the volume ID.
	b, err := exec.Command(xorriso(t), "-indev", iso, "-pvd_info").CombinedOutput()
	require.NoError(t, err, "%s", b)
	assert.Contains(t, string(b), "Volume Id    : agentdata")
}

func firstOf(files []isofs.File, f isofs.File) isofs.File {
	if f.Key == "" {
		return f
	}
	for _, g := range files {
		if g.Key == f.Key {
			return g
		}
	}
	return f
}

func TestManyEntriesSpanDirectorySectors(t *testing.T) {
	var files []isofs.File
	for i := 0; i < 300; i++ {
		files = append(files, isofs.File{Path: fmt.Sprintf("d/%064x", i), Size: int64(i % 5)})
	}
	iso, _ := write(t, files)
	out := extract(t, iso)
	entries, err := os.ReadDir(filepath.Join(out, "d"))
	require.NoError(t, err)
	assert.Len(t, entries, 300)
	for _, f := range files[:20] {
		got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(f.Path)))
		require.NoError(t, err)
		assert.Equal(t, content(f), got)
	}
}

func TestFileLargerThanOneExtentIsSeveral(t *testing.T) {
	defer isofs.SetMaxExtent(2 * isofs.Sector)()
	files := []isofs.File{{Path: "big/blob", Size: 5*isofs.Sector + 100}, {Path: "big/next", Size: 10}}
	iso, _ := write(t, files)
	out := extract(t, iso)
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(f.Path)))
		require.NoError(t, err)
		assert.Equal(t, content(f), got, f.Path)
	}
}

func TestBadInputIsRefused(t *testing.T) {
	for _, c := range []struct {
		files []isofs.File
		err   string
	}{
		{[]isofs.File{{Path: "/abs", Size: 1}}, "relative"},
		{[]isofs.File{{Path: "a/../b", Size: 1}}, "bad component"},
		{[]isofs.File{{Path: "a", Size: 1}, {Path: "a/b", Size: 1}}, "both a file and a directory"},
		{[]isofs.File{{Path: "a", Size: 1}, {Path: "a", Size: 1}}, "given twice"},
		{[]isofs.File{{Path: "a", Size: 1, Key: "k"}, {Path: "b", Size: 2, Key: "k"}}, "share"},
		{[]isofs.File{{Path: strings.Repeat("n", 161), Size: 1}}, "bad component"},
		{[]isofs.File{{Path: "a", Size: -1}}, "negative"},
	} {
		_, err := isofs.Plan("agentdata", date, c.files)
		assert.ErrorContains(t, err, c.err)
	}
	_, err := isofs.Plan("no spaces", date, nil)
	assert.ErrorContains(t, err, "volume ID")
}

func TestFillWritingTheWrongSizeFails(t *testing.T) {
	l, err := isofs.Plan("agentdata", date, []isofs.File{{Path: "a", Size: 10}})
	require.NoError(t, err)
	_, err = l.WriteTo(context.Background(), io.Discard, func(_ context.Context, f isofs.File, w io.Writer) error {
		_, err := w.Write(make([]byte, 9))
		return err
	})
	assert.ErrorContains(t, err, "9 bytes written, 10 planned")
	_, err = l.WriteTo(context.Background(), io.Discard, func(_ context.Context, f isofs.File, w io.Writer) error {
		_, err := w.Write(make([]byte, 11))
		return err
	})
	assert.ErrorContains(t, err, "more than its 10 bytes")
}
