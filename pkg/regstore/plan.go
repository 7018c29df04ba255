// Package regstore lays out container images as the distribution registry's filesystem storage (docker/registry/v2, docs/airgap.md), planned from their manifests and then streamed blob by blob, each blob once and its digest checked as it passes.
package regstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Root is the directory of the store inside the tree, as distribution's
// filesystem driver names it (registry/storage/paths.go: storagePathRoot +
// storagePathVersion).
const Root = "docker/registry/v2"

// DirVersion is the content of the version file of a containers-image
// "dir:" layout (directory transport 1.1).
const DirVersion = "Directory Transport Version: 1.1\n"

// Bounds on what the plan keeps in memory: a manifest (as pkg/release reads
// them) and an image config.
const (
	MaxManifestBytes = 4 << 20
	MaxConfigBytes   = 16 << 20
)

// File is one file of the planned tree. Either Data holds its bytes (links,
// manifests, configs: small, read while planning) or Blob names the blob
// whose bytes it is, streamed when the tree is written. Two files may name
// the same blob (a layer of a "dir:" image is also in the store): a writer
// may store those bytes once under both names.
type File struct {
	Path string
	Size int64
	Data []byte
	Blob v1.Hash
}

// Blob is a blob to stream: its digest and size (from the manifest that
// names it), where it is first needed (for errors), and how to read it.
type Blob struct {
	Digest v1.Hash
	Size   int64
	// Image names the first image (repository@digest) that lists it.
	Image string
	open  func() (io.ReadCloser, error)
	// checked: the reader open returns checks the digest itself
	// (Plan.SourceChecks).
	checked bool
	// idx is the blob's place in the stream order.
	idx int
}

// Plan is the whole tree: every file with its size, and the blobs to stream
// in the order they are first needed. Build it with Add, AddIndex and
// AddDirImage, then read Files.
type Plan struct {
	// SourceChecks says the images' layers are read through readers that
	// check each blob's size and digest themselves and fail at its end
	// when they differ (go-containerregistry's remote images: verify.
	// ReadCloser). Blob.Open then counts the bytes but does not hash them a
	// second time. Set it before Add.
	SourceChecks bool
	files        map[string]File
	blobs        []*Blob
	byDig        map[v1.Hash]*Blob
	// images counts the image manifests added (for progress); imageEnds
	// holds, per image, how many blobs of the stream order are written
	// once all of its are.
	images    int
	imageEnds []int
}

// NewPlan returns an empty plan.
func NewPlan() *Plan {
	return &Plan{files: map[string]File{}, byDig: map[v1.Hash]*Blob{}}
}

// Images is the number of image manifests in the plan.
func (p *Plan) Images() int { return p.images }

// ImagesDone returns, for the progress of a write, how many images have
// every blob written once the first blobs of Blobs are.
func (p *Plan) ImagesDone(blobs int) int {
	n := 0
	for _, e := range p.imageEnds {
		if e <= blobs {
			n++
		}
	}
	return n
}

// Files returns every file of the tree, sorted by path.
func (p *Plan) Files() []File {
	out := make([]File, 0, len(p.files))
	for _, f := range p.files {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Blobs returns the blobs to stream, each once, in the order they were
// first needed.
func (p *Plan) Blobs() []*Blob { return p.blobs }

// Bytes is the size of the tree: every file's bytes, a blob named twice
// counted once.
func (p *Plan) Bytes() int64 {
	var n int64
	for _, f := range p.files {
		if f.Data != nil {
			n += f.Size
		}
	}
	for _, b := range p.blobs {
		n += b.Size
	}
	return n
}

// Repositories lists the repositories the planned registry serves a
// manifest from, sorted.
func (p *Plan) Repositories() []string {
	seen := map[string]bool{}
	prefix := Root + "/repositories/"
	for pth := range p.files {
		rest, ok := strings.CutPrefix(pth, prefix)
		if !ok {
			continue
		}
		if repo, tail, ok := strings.Cut(rest, "/_manifests/revisions/"); ok && strings.HasSuffix(tail, "/link") {
			seen[repo] = true
		}
	}
	out := make([]string, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// Serves reports whether the planned registry serves repo's manifest ref:
// a tag ("v4.21") or a digest ("sha256:<hex>").
func (p *Plan) Serves(repo, ref string) bool {
	if ValidateRepository(repo) != nil {
		return false
	}
	var pth string
	if d, err := v1.NewHash(ref); err == nil {
		pth = repoPath(repo, "_manifests", "revisions", d.Algorithm, d.Hex, "link")
	} else if ValidateTag(ref) == nil {
		pth = repoPath(repo, "_manifests", "tags", ref, "current", "link")
	} else {
		return false
	}
	_, ok := p.files[pth]
	return ok
}

// BlobPath is where distribution keeps a blob's bytes
// (blobDataPathSpec: blobs/<algorithm>/<first two hex digits>/<hex>/data).
func BlobPath(d v1.Hash) string {
	return path.Join(Root, "blobs", d.Algorithm, d.Hex[:2], d.Hex, "data")
}

func repoPath(repo string, parts ...string) string {
	return path.Join(append([]string{Root, "repositories", repo}, parts...)...)
}

// link is the content of a link file: the digest string, nothing else
// (registry/storage/blobstore.go link).
func link(d v1.Hash) []byte { return []byte(d.String()) }

func (p *Plan) put(f File) error {
	if old, ok := p.files[f.Path]; ok {
		if old.Size != f.Size || old.Blob != f.Blob || string(old.Data) != string(f.Data) {
			return fmt.Errorf("regstore: %s planned twice with different content", f.Path)
		}
		return nil
	}
	p.files[f.Path] = f
	return nil
}

func (p *Plan) putData(pth string, data []byte) error {
	return p.put(File{Path: pth, Size: int64(len(data)), Data: data})
}

// putBlobData stores a small blob read while planning (a manifest or a
// config) in the blob store.
func (p *Plan) putBlobData(d v1.Hash, data []byte) error {
	return p.putData(BlobPath(d), data)
}

func (p *Plan) addBlob(d v1.Hash, size int64, image string, open func() (io.ReadCloser, error)) error {
	if b, ok := p.byDig[d]; ok {
		if b.Size != size {
			return fmt.Errorf("regstore: blob %s has size %d in %s but %d in %s", d, size, image, b.Size, b.Image)
		}
		return nil
	}
	if size < 0 {
		return fmt.Errorf("regstore: %s: blob %s has a negative size", image, d)
	}
	b := &Blob{Digest: d, Size: size, Image: image, open: open, checked: p.SourceChecks, idx: len(p.blobs)}
	p.byDig[d] = b
	p.blobs = append(p.blobs, b)
	return p.put(File{Path: BlobPath(d), Size: size, Blob: d})
}

// Manifest is what Add needs of an image or an index: its raw manifest,
// digest and media type (go-containerregistry's v1.Image and v1.ImageIndex
// both are).
type Manifest interface {
	RawManifest() ([]byte, error)
	Digest() (v1.Hash, error)
	MediaType() (types.MediaType, error)
}

// rawManifest reads a manifest, bounded, and checks it against its digest.
func rawManifest(m Manifest, what string) ([]byte, v1.Hash, error) {
	d, err := m.Digest()
	if err != nil {
		return nil, v1.Hash{}, fmt.Errorf("%s: digest: %w", what, err)
	}
	raw, err := m.RawManifest()
	if err != nil {
		return nil, d, fmt.Errorf("%s: manifest: %w", what, err)
	}
	if len(raw) > MaxManifestBytes {
		return nil, d, fmt.Errorf("%s: manifest of %d bytes is larger than %d", what, len(raw), MaxManifestBytes)
	}
	got, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return nil, d, err
	}
	if got != d {
		return nil, d, &DigestError{Image: what, Want: d, Got: got, Size: int64(len(raw))}
	}
	return raw, d, nil
}

// Add plans one image in repo: its manifest (by digest, and under tag
// when tag is not empty), its config and its layers. The layers are only
// listed: their bytes are read when the tree is written.
func (p *Plan) Add(ctx context.Context, repo, tag string, img v1.Image) error {
	if err := ValidateRepository(repo); err != nil {
		return err
	}
	if tag != "" {
		if err := ValidateTag(tag); err != nil {
			return err
		}
	}
	d, err := p.addImage(ctx, repo, img)
	if err != nil {
		return err
	}
	return p.tag(repo, tag, d)
}

// Tag adds a tag to a manifest already planned in repo.
func (p *Plan) Tag(repo, tag string, d v1.Hash) error {
	if err := ValidateTag(tag); err != nil {
		return err
	}
	if _, ok := p.files[repoPath(repo, "_manifests", "revisions", d.Algorithm, d.Hex, "link")]; !ok {
		return fmt.Errorf("regstore: %s@%s is not planned: cannot tag it %s", repo, d, tag)
	}
	return p.tag(repo, tag, d)
}

func (p *Plan) tag(repo, tag string, d v1.Hash) error {
	if tag == "" {
		return nil
	}
	// manifestTagCurrentPathSpec and manifestTagIndexEntryLinkPathSpec.
	if err := p.putData(repoPath(repo, "_manifests", "tags", tag, "current", "link"), link(d)); err != nil {
		return err
	}
	return p.putData(repoPath(repo, "_manifests", "tags", tag, "index", d.Algorithm, d.Hex, "link"), link(d))
}

func (p *Plan) revision(repo string, d v1.Hash, raw []byte) error {
	if err := p.putBlobData(d, raw); err != nil {
		return err
	}
	// manifestRevisionLinkPathSpec.
	return p.putData(repoPath(repo, "_manifests", "revisions", d.Algorithm, d.Hex, "link"), link(d))
}

func (p *Plan) layerLink(repo string, d v1.Hash) error {
	// layerLinkPathSpec: the repository may serve this blob.
	return p.putData(repoPath(repo, "_layers", d.Algorithm, d.Hex, "link"), link(d))
}

func (p *Plan) addImage(ctx context.Context, repo string, img v1.Image) (v1.Hash, error) {
	if err := ctx.Err(); err != nil {
		return v1.Hash{}, err
	}
	what := repo
	raw, d, err := rawManifest(img, what)
	if err != nil {
		return d, err
	}
	what = repo + "@" + d.String()
	m, err := img.Manifest()
	if err != nil {
		return d, fmt.Errorf("%s: %w", what, err)
	}
	if err := p.revision(repo, d, raw); err != nil {
		return d, err
	}
	if err := p.addConfig(repo, what, img, m.Config); err != nil {
		return d, err
	}
	end := 0
	for i, l := range m.Layers {
		if l.Digest.Algorithm != "sha256" || len(l.Digest.Hex) != 64 {
			return d, fmt.Errorf("%s: layer %d has digest %q: only sha256 is stored", what, i, l.Digest)
		}
		layer, err := img.LayerByDigest(l.Digest)
		if err != nil {
			return d, fmt.Errorf("%s: layer %s: %w", what, l.Digest, err)
		}
		if err := p.addBlob(l.Digest, l.Size, what, layer.Compressed); err != nil {
			return d, err
		}
		if err := p.layerLink(repo, l.Digest); err != nil {
			return d, err
		}
		end = max(end, p.byDig[l.Digest].idx+1)
	}
	p.images++
	p.imageEnds = append(p.imageEnds, end)
	return d, nil
}

func (p *Plan) addConfig(repo, what string, img v1.Image, desc v1.Descriptor) error {
	if desc.Digest.Algorithm != "sha256" {
		return fmt.Errorf("%s: config digest %q: only sha256 is stored", what, desc.Digest)
	}
	if desc.Size > MaxConfigBytes {
		return fmt.Errorf("%s: config of %d bytes is larger than %d", what, desc.Size, MaxConfigBytes)
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		return fmt.Errorf("%s: config %s: %w", what, desc.Digest, err)
	}
	got, _, err := v1.SHA256(bytes.NewReader(cfg))
	if err != nil {
		return err
	}
	if got != desc.Digest || int64(len(cfg)) != desc.Size {
		return &DigestError{Image: what, Want: desc.Digest, Got: got, Size: int64(len(cfg)), WantSize: desc.Size}
	}
	if err := p.putBlobData(desc.Digest, cfg); err != nil {
		return err
	}
	return p.layerLink(repo, desc.Digest)
}

// AddIndex plans an index (a manifest list) in repo, with the images of
// it that keep says to keep (nil keeps all; a platform filter keeps only
// the cluster's architecture). The index is stored whole, so that a pull
// by its digest works; a child left out is simply not served.
func (p *Plan) AddIndex(ctx context.Context, repo, tag string, idx v1.ImageIndex, keep func(v1.Descriptor) bool) error {
	if err := ValidateRepository(repo); err != nil {
		return err
	}
	if tag != "" {
		if err := ValidateTag(tag); err != nil {
			return err
		}
	}
	raw, d, err := rawManifest(idx, repo)
	if err != nil {
		return err
	}
	what := repo + "@" + d.String()
	im, err := idx.IndexManifest()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	kept := 0
	for _, c := range im.Manifests {
		if keep != nil && !keep(c) {
			continue
		}
		switch {
		case c.MediaType.IsImage():
			img, err := idx.Image(c.Digest)
			if err != nil {
				return fmt.Errorf("%s: image %s: %w", what, c.Digest, err)
			}
			if _, err := p.addImage(ctx, repo, img); err != nil {
				return err
			}
		case c.MediaType.IsIndex():
			child, err := idx.ImageIndex(c.Digest)
			if err != nil {
				return fmt.Errorf("%s: index %s: %w", what, c.Digest, err)
			}
			if err := p.AddIndex(ctx, repo, "", child, keep); err != nil {
				return err
			}
		default:
			continue
		}
		kept++
	}
	if kept == 0 {
		return fmt.Errorf("%s: no image of the index is kept (wrong architecture?)", what)
	}
	if err := p.revision(repo, d, raw); err != nil {
		return err
	}
	return p.tag(repo, tag, d)
}

// AddDirImage plans img in the containers-image "dir:" layout under dir
// (version, manifest.json, and one file per config and layer named by its
// hex digest), the layout podman pull dir: reads (docs/airgap.md, the
// registry image at images/registry). Its layers name the same blobs as
// the store, so they are streamed once.
func (p *Plan) AddDirImage(ctx context.Context, dir string, img v1.Image) error {
	if err := validDir(dir); err != nil {
		return err
	}
	raw, d, err := rawManifest(img, dir)
	if err != nil {
		return err
	}
	what := dir + " (" + d.String() + ")"
	m, err := img.Manifest()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := p.putData(path.Join(dir, "version"), []byte(DirVersion)); err != nil {
		return err
	}
	if err := p.putData(path.Join(dir, "manifest.json"), raw); err != nil {
		return err
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		return fmt.Errorf("%s: config: %w", what, err)
	}
	got, _, err := v1.SHA256(bytes.NewReader(cfg))
	if err != nil {
		return err
	}
	if got != m.Config.Digest {
		return &DigestError{Image: what, Want: m.Config.Digest, Got: got, Size: int64(len(cfg)), WantSize: m.Config.Size}
	}
	if err := p.putData(path.Join(dir, m.Config.Digest.Hex), cfg); err != nil {
		return err
	}
	for _, l := range m.Layers {
		if l.Digest.Algorithm != "sha256" || len(l.Digest.Hex) != 64 {
			return fmt.Errorf("%s: layer digest %q: only sha256 is stored", what, l.Digest)
		}
		layer, err := img.LayerByDigest(l.Digest)
		if err != nil {
			return fmt.Errorf("%s: layer %s: %w", what, l.Digest, err)
		}
		if err := p.addBlob(l.Digest, l.Size, what, layer.Compressed); err != nil {
			return err
		}
		if err := p.put(File{Path: path.Join(dir, l.Digest.Hex), Size: l.Size, Blob: l.Digest}); err != nil {
			return err
		}
	}
	return ctx.Err()
}
