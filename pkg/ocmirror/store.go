package ocmirror

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/seed-a052040e/agentiso/pkg/regstore"
)

// What oc-mirror v2's mirror-to-disk leaves (openshift/oc-mirror
// internal/pkg/archive const.go and archive.go BuildArchive): archives
// mirror_000001.tar, mirror_000002.tar, ... each holding part of
// docker/registry/v2 (the repositories of its cache registry, and the blobs
// new since the previous run) and of working-dir; unarchive.go extracts
// them in order, a later archive's file replacing an earlier one's.
const (
	// ReleaseRepository is where oc-mirror v2 keeps every release image,
	// tagged with the release's tag (internal/pkg/release const.go
	// releaseImagePathComponents, local_stored_collector.go prepareTag).
	ReleaseRepository = "openshift/release-images"
)

var archiveName = regexp.MustCompile(`^mirror_[0-9]{6}\.tar$`)

// Bounds on an archive's index: the entries kept, and the size of a link
// file read from the store.
const (
	MaxArchiveEntries = 4 << 20
	maxLinkBytes      = 1 << 10
)

// Store is the image store of an oc-mirror v2 disk output: the
// docker/registry/v2 tree inside its archives (mirror_000001.tar, ...), or
// under a directory (an extracted archive, or oc-mirror's cache directory).
// It answers the registry API's reads (Store.RoundTrip), so the release
// client reads images from it as from a registry, every digest checked the
// same way; nothing goes to the network.
type Store struct {
	// Dir is the directory given; Archives the archives indexed, in order
	// (none for a directory store).
	Dir      string
	Archives []string
	// entries maps a path under regstore.Root to where its bytes are in an
	// archive; nil for a directory store.
	entries map[string]entry
}

type entry struct {
	archive   string
	off, size int64
}

// String says what the store is, for messages.
func (s *Store) String() string {
	if s.entries != nil {
		return fmt.Sprintf("oc-mirror archive %s (%d file(s): %s)", s.Dir, len(s.Archives), strings.Join(baseNames(s.Archives), ", "))
	}
	return "oc-mirror store " + filepath.Join(s.Dir, regstore.Root)
}

func baseNames(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = filepath.Base(p)
	}
	return out
}

// NoStoreError is a directory holding neither archives nor a store.
type NoStoreError struct{ Dir string }

func (e *NoStoreError) Error() string {
	return fmt.Sprintf("%s holds no oc-mirror images: expected its archives mirror_000001.tar, ... (oc mirror --v2 to file://) or an extracted %s tree", e.Dir, regstore.Root)
}

// OpenStore opens the image store of dir: its archives when it holds
// mirror_NNNNNN.tar files, else its docker/registry/v2 directory. A dir with
// neither is a *NoStoreError.
func OpenStore(dir string) (*Store, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--mirror-from %s: %w", dir, err)
	}
	var archives []string
	for _, e := range ents {
		if archiveName.MatchString(e.Name()) {
			archives = append(archives, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(archives)
	if len(archives) > 0 {
		s := &Store{Dir: dir, Archives: archives, entries: map[string]entry{}}
		for _, a := range archives {
			if err := s.index(a); err != nil {
				return nil, err
			}
		}
		if len(s.entries) == 0 {
			return nil, fmt.Errorf("%s: the archives hold nothing under %s: not oc-mirror v2 archives", dir, regstore.Root)
		}
		return s, nil
	}
	st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(regstore.Root)))
	if err != nil || !st.IsDir() {
		return nil, &NoStoreError{Dir: dir}
	}
	return &Store{Dir: dir}, nil
}

// index records where each file of an archive's docker/registry/v2 tree
// is, reading only the tar headers (the data is skipped by seeking).
func (s *Store) index(archive string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	return indexTar(f, archive, s.entries)
}

// indexTar adds the store files of the tar r (named archive) to entries.
func indexTar(r io.ReadSeeker, archive string, entries map[string]entry) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: not a readable tar archive: %w", archive, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue // directories; oc-mirror writes no links
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if !strings.HasPrefix(name, regstore.Root+"/") {
			continue // working-dir, the image set configuration
		}
		if h.Size < 0 {
			return fmt.Errorf("%s: %s: negative size", archive, h.Name)
		}
		off, err := r.Seek(0, io.SeekCurrent)
		if err != nil {
			return fmt.Errorf("%s: %w", archive, err)
		}
		if _, ok := entries[name]; !ok && len(entries) >= MaxArchiveEntries {
			return fmt.Errorf("%s: more than %d files under %s: refusing to index it", archive, MaxArchiveEntries, regstore.Root)
		}
		entries[name] = entry{archive: archive, off: off, size: h.Size}
	}
}

// open reads the store file at name (a path under regstore.Root, built
// from checked digests, repository names and tags).
func (s *Store) open(name string) (io.ReadCloser, int64, error) {
	if s.entries == nil {
		p := filepath.Join(s.Dir, filepath.FromSlash(name))
		st, err := os.Lstat(p)
		if err != nil {
			return nil, 0, err
		}
		if !st.Mode().IsRegular() {
			return nil, 0, fmt.Errorf("%s: not a regular file", p)
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, 0, err
		}
		return f, st.Size(), nil
	}
	e, ok := s.entries[name]
	if !ok {
		return nil, 0, fs.ErrNotExist
	}
	f, err := os.Open(e.archive)
	if err != nil {
		return nil, 0, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(f, e.off, e.size), f}, e.size, nil
}

// readSmall reads a store file of at most limit bytes.
func (s *Store) readSmall(name string, limit int64) ([]byte, error) {
	rc, size, err := s.open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if size > limit {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d allowed", name, size, limit)
	}
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is more than %d bytes", name, limit)
	}
	return b, nil
}

// Tag returns the digest repo's tag names in the store
// (_manifests/tags/<tag>/current/link).
func (s *Store) Tag(repo, tag string) (v1.Hash, error) {
	if err := regstore.ValidateRepository(repo); err != nil {
		return v1.Hash{}, err
	}
	if err := regstore.ValidateTag(tag); err != nil {
		return v1.Hash{}, err
	}
	b, err := s.readSmall(path.Join(regstore.Root, "repositories", repo, "_manifests", "tags", tag, "current", "link"), maxLinkBytes)
	if err != nil {
		return v1.Hash{}, err
	}
	h, err := v1.NewHash(strings.TrimSpace(string(b)))
	if err != nil {
		return v1.Hash{}, fmt.Errorf("%s:%s: its tag link holds %q: %w", repo, tag, b, err)
	}
	return h, nil
}

// Host is the registry host that requests for images of the store name.
// Any host is answered (the store stands in for every registry), this one
// is only what messages show.
const Host = "oc-mirror.invalid"

// RoundTrip answers the registry API's reads from the store: the API
// check (/v2/), manifests by digest (any repository: the store keeps
// blobs by digest) or by tag (the repository's tag, else the release's
// tag in ReleaseRepository, where oc-mirror keeps every release), and
// blobs by digest. Everything else is 404 or 405, as a registry answers.
func (s *Store) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return s.answer(r, http.StatusMethodNotAllowed, "UNSUPPORTED", "the oc-mirror store is read-only"), nil
	}
	p := r.URL.Path
	if p == "/v2/" || p == "/v2" {
		return s.reply(r, http.StatusOK, http.Header{"Content-Type": {"application/json"}}, io.NopCloser(strings.NewReader("{}")), 2), nil
	}
	rest, ok := strings.CutPrefix(p, "/v2/")
	if !ok {
		return s.answer(r, http.StatusNotFound, "NOT_FOUND", "not a registry API path"), nil
	}
	if i := strings.LastIndex(rest, "/manifests/"); i > 0 {
		return s.manifest(r, rest[:i], rest[i+len("/manifests/"):])
	}
	if i := strings.LastIndex(rest, "/blobs/"); i > 0 {
		d, err := v1.NewHash(rest[i+len("/blobs/"):])
		if err != nil {
			return s.answer(r, http.StatusBadRequest, "DIGEST_INVALID", err.Error()), nil
		}
		return s.blob(r, d, false)
	}
	return s.answer(r, http.StatusNotFound, "NOT_FOUND", "not a registry API path"), nil
}

func (s *Store) manifest(r *http.Request, repo, ref string) (*http.Response, error) {
	if err := regstore.ValidateRepository(repo); err != nil {
		return s.answer(r, http.StatusBadRequest, "NAME_INVALID", err.Error()), nil
	}
	d, err := v1.NewHash(ref)
	if err != nil {
		d, err = s.Tag(repo, ref)
		if errors.Is(err, fs.ErrNotExist) && repo != ReleaseRepository {
			d, err = s.Tag(ReleaseRepository, ref)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return s.answer(r, http.StatusNotFound, "MANIFEST_UNKNOWN",
				fmt.Sprintf("tag %s is neither in %s nor in %s of the %s", ref, repo, ReleaseRepository, s)), nil
		}
		if err != nil {
			return s.answer(r, http.StatusBadRequest, "TAG_INVALID", err.Error()), nil
		}
	}
	return s.blob(r, d, true)
}

// blob serves the blob d; as a manifest, with its media type and bounded.
func (s *Store) blob(r *http.Request, d v1.Hash, manifest bool) (*http.Response, error) {
	what := "blob"
	if manifest {
		what = "manifest"
	}
	rc, size, err := s.open(regstore.BlobPath(d))
	if errors.Is(err, fs.ErrNotExist) {
		code := "BLOB_UNKNOWN"
		if manifest {
			code = "MANIFEST_UNKNOWN"
		}
		return s.answer(r, http.StatusNotFound, code, fmt.Sprintf("%s %s is not in the %s%s", what, d, s, s.missingHint())), nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %s %s: %w", s, what, d, err)
	}
	h := http.Header{"Docker-Content-Digest": {d.String()}, "Content-Type": {"application/octet-stream"}}
	if manifest {
		b, err := readAllClose(rc, size, regstore.MaxManifestBytes)
		if err != nil {
			return nil, fmt.Errorf("%s: manifest %s: %w", s, d, err)
		}
		h.Set("Content-Type", string(ManifestMediaType(b)))
		rc = io.NopCloser(bytes.NewReader(b))
	}
	return s.reply(r, http.StatusOK, h, rc, size), nil
}

func (s *Store) missingHint() string {
	if s.entries != nil {
		return ": an archive of a later oc-mirror run holds only the blobs new since the run before it; give every archive since the first run in one directory"
	}
	return ""
}

func readAllClose(rc io.ReadCloser, size, limit int64) ([]byte, error) {
	defer rc.Close()
	if size > limit {
		return nil, fmt.Errorf("%d bytes, more than the %d allowed", size, limit)
	}
	return io.ReadAll(io.LimitReader(rc, limit))
}

// ManifestMediaType is the media type of a manifest's bytes: its
// mediaType field, else (OCI, where it is optional) an index when it
// lists manifests, else an OCI image manifest.
func ManifestMediaType(b []byte) types.MediaType {
	var m struct {
		MediaType string            `json:"mediaType"`
		Manifests []json.RawMessage `json:"manifests"`
	}
	if err := json.Unmarshal(b, &m); err == nil {
		if m.MediaType != "" {
			return types.MediaType(m.MediaType)
		}
		if m.Manifests != nil {
			return types.OCIImageIndex
		}
	}
	return types.OCIManifestSchema1
}

func (s *Store) reply(r *http.Request, code int, h http.Header, body io.ReadCloser, size int64) *http.Response {
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	if r.Method == http.MethodHead {
		body.Close()
		body = http.NoBody
	}
	return &http.Response{StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: body, ContentLength: size, Request: r}
}

// answer is a registry error reply (distribution's error JSON).
func (s *Store) answer(r *http.Request, code int, errCode, msg string) *http.Response {
	b, _ := json.Marshal(map[string]any{"errors": []map[string]string{{"code": errCode, "message": msg}}})
	return s.reply(r, code, http.Header{"Content-Type": {"application/json"}}, io.NopCloser(bytes.NewReader(b)), int64(len(b)))
}
