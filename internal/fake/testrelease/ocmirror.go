package testrelease

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/seed-a052040e/agentiso/pkg/regstore"
)

// MirroredImage is one image of an oc-mirror v2 disk output: its
// repository and tag in oc-mirror's cache registry.
type MirroredImage struct {
	Repo, Tag string
	Image     v1.Image
	// Index, when set instead of Image, is a manifest list stored whole
	// (every child), as oc-mirror copies a multi-architecture image.
	Index v1.ImageIndex
}

// OCMirrorArchive writes images as oc-mirror v2's mirror-to-disk leaves
// them in dir (openshift/oc-mirror internal/pkg/archive): tar archives
// mirror_000001.tar, mirror_000002.tar, ... holding docker/registry/v2 (the
// cache registry's repositories, then the blobs) and working-dir/ (files,
// path -> content), a new archive begun when the next file would take the
// current one over chunk bytes (oc-mirror's maxArchiveSize; a file is
// never split). It returns the archives written.
func OCMirrorArchive(ctx context.Context, dir string, chunk int64, images []MirroredImage, workingDir map[string][]byte) ([]string, error) {
	p := regstore.NewPlan()
	for _, im := range images {
		var err error
		if im.Index != nil {
			err = p.AddIndex(ctx, im.Repo, im.Tag, im.Index, nil)
		} else {
			err = p.Add(ctx, im.Repo, im.Tag, im.Image)
		}
		if err != nil {
			return nil, err
		}
	}
	tmp, err := os.MkdirTemp("", "ocmirror-cache-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	cache := filepath.Join(tmp, "cache")
	if err := regstore.WriteDir(ctx, cache, p, nil); err != nil {
		return nil, err
	}
	for n, b := range workingDir {
		f := filepath.Join(tmp, "working-dir", filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			return nil, err
		}
	}
	// oc-mirror adds the repositories first, then the blobs, then
	// working-dir (BuildArchive).
	var files [][2]string // path in tar, path on disk
	for _, sub := range []string{"repositories", "blobs"} {
		root := filepath.Join(cache, filepath.FromSlash(regstore.Root), sub)
		var names []string
		err := filepath.WalkDir(root, func(pth string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			names = append(names, pth)
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(names)
		for _, n := range names {
			rel, _ := filepath.Rel(cache, n)
			files = append(files, [2]string{filepath.ToSlash(rel), n})
		}
	}
	var wd []string
	for n := range workingDir {
		wd = append(wd, n)
	}
	sort.Strings(wd)
	for _, n := range wd {
		files = append(files, [2]string{"working-dir/" + n, filepath.Join(tmp, "working-dir", filepath.FromSlash(n))})
	}
	w := &chunkWriter{dir: dir, max: chunk}
	for _, f := range files {
		if err := w.add(f[0], f[1]); err != nil {
			w.close()
			return nil, err
		}
	}
	return w.written, w.close()
}

type chunkWriter struct {
	dir     string
	max     int64
	n       int64
	f       *os.File
	tw      *tar.Writer
	written []string
}

func (c *chunkWriter) add(name, src string) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if c.tw == nil || (c.max > 0 && c.n+st.Size() > c.max && c.n > 0) {
		if err := c.close(); err != nil {
			return err
		}
		p := filepath.Join(c.dir, fmt.Sprintf("mirror_%06d.tar", len(c.written)+1))
		if c.f, err = os.Create(p); err != nil {
			return err
		}
		c.tw, c.n = tar.NewWriter(c.f), 0
		c.written = append(c.written, p)
	}
	h, err := tar.FileInfoHeader(st, "")
	if err != nil {
		return err
	}
	h.Name = name
	if err := c.tw.WriteHeader(h); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if _, err := io.Copy(c.tw, in); err != nil {
		return err
	}
	c.n += st.Size()
	return nil
}

func (c *chunkWriter) close() error {
	if c.tw == nil {
		return nil
	}
	err := c.tw.Close()
	if e := c.f.Close(); err == nil {
		err = e
	}
	c.tw, c.f = nil, nil
	return err
}

// RewriteTar returns the tar archive b with the regular file name replaced
// by edit(its bytes), or dropped when edit is nil; found says whether b
// held it.
func RewriteTar(t testing.TB, b []byte, name string, edit func([]byte) []byte) (out []byte, found bool) {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(b))
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == name {
			found = true
			if edit == nil {
				continue
			}
			data = edit(data)
			h.Size = int64(len(data))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), found
}
