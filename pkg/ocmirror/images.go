package ocmirror

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/seed-a052040e/agentiso/pkg/manifests"
	"github.com/seed-a052040e/agentiso/pkg/regstore"
)

// StoredImage is one manifest the store's repository holds
// (_manifests/revisions/sha256/<hex>/link), with the tags whose current
// link names it.
type StoredImage struct {
	Repo   string
	Digest v1.Hash
	Tags   []string
}

func (i StoredImage) String() string { return i.Repo + "@" + i.Digest.String() }

// MaxStoredImages bounds the manifests Images lists.
const MaxStoredImages = 1 << 20

// names lists the store's files under regstore.Root/repositories (paths
// relative to the store, slash-separated).
func (s *Store) names() ([]string, error) {
	prefix := regstore.Root + "/repositories/"
	var out []string
	if s.entries != nil {
		for n := range s.entries {
			if strings.HasPrefix(n, prefix) {
				out = append(out, n)
			}
		}
		return out, nil
	}
	root := filepath.Join(s.Dir, filepath.FromSlash(prefix))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			if len(out) >= MaxArchiveEntries {
				return fmt.Errorf("%s: more than %d files: refusing to list it", root, MaxArchiveEntries)
			}
			rel, err := filepath.Rel(s.Dir, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	return out, nil
}

// Images lists every manifest of every repository of the store, sorted by
// repository and digest. A link file that does not hold the digest its
// path names is an error naming it.
func (s *Store) Images() ([]StoredImage, error) {
	ns, err := s.names()
	if err != nil {
		return nil, err
	}
	byKey := map[string]*StoredImage{}
	var tags [][3]string // repo, tag, link path
	for _, n := range ns {
		rest := strings.TrimPrefix(n, regstore.Root+"/repositories/")
		repo, tail, ok := strings.Cut(rest, "/_manifests/")
		if !ok || regstore.ValidateRepository(repo) != nil {
			continue // _layers, _uploads, or a name no registry serves
		}
		parts := strings.Split(tail, "/")
		switch {
		case len(parts) == 4 && parts[0] == "revisions" && parts[1] == "sha256" && parts[3] == "link":
			d, err := v1.NewHash("sha256:" + parts[2])
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", s, n, err)
			}
			b, err := s.readSmall(n, maxLinkBytes)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s, err)
			}
			if strings.TrimSpace(string(b)) != d.String() {
				return nil, fmt.Errorf("%s: %s holds %q, not %s", s, n, b, d)
			}
			if len(byKey) >= MaxStoredImages {
				return nil, fmt.Errorf("%s: more than %d manifests", s, MaxStoredImages)
			}
			byKey[repo+"@"+d.String()] = &StoredImage{Repo: repo, Digest: d}
		case len(parts) == 4 && parts[0] == "tags" && parts[2] == "current" && parts[3] == "link":
			if regstore.ValidateTag(parts[1]) == nil {
				tags = append(tags, [3]string{repo, parts[1], n})
			}
		}
	}
	for _, t := range tags {
		d, err := s.Tag(t[0], t[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s, err)
		}
		im, ok := byKey[t[0]+"@"+d.String()]
		if !ok {
			return nil, fmt.Errorf("%s: tag %s:%s names %s, which the repository does not hold", s, t[0], t[1], d)
		}
		im.Tags = append(im.Tags, t[1])
	}
	out := make([]StoredImage, 0, len(byKey))
	for _, im := range byKey {
		sort.Strings(im.Tags)
		out = append(out, *im)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Repo != out[j].Repo {
			return out[i].Repo < out[j].Repo
		}
		return out[i].Digest.Hex < out[j].Digest.Hex
	})
	return out, nil
}

// storeHost names the store in references read through its RoundTrip.
const storeHost = "oc-mirror.store.invalid"

// Add plans every image of the store into p (regstore: each blob once,
// every digest and size checked as it is read), under its own repository
// and tags, except the repositories skip names (the release's, planned
// from the release itself) and the manifests that another stored index
// lists (planned with it). An index keeps the images of arch (GOARCH
// spelling; images with no platform too) that the store holds; an index
// with none of them is left out and returned in skipped. It returns the
// images added.
func (s *Store) Add(ctx context.Context, p *regstore.Plan, arch string, skip func(repo string) bool) (added, skipped []StoredImage, err error) {
	ims, err := s.Images()
	if err != nil {
		return nil, nil, err
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithTransport(s)}
	children := map[string]bool{}
	type got struct {
		im   StoredImage
		desc *remote.Descriptor
	}
	var all []got
	for _, im := range ims {
		if skip != nil && skip(im.Repo) {
			continue
		}
		ref, err := name.NewDigest(storeHost + "/" + im.String())
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w", s, im, err)
		}
		desc, err := remote.Get(ref, opts...)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w", s, im, err)
		}
		if desc.MediaType.IsIndex() {
			idx, err := desc.ImageIndex()
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %s: %w", s, im, err)
			}
			m, err := idx.IndexManifest()
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %s: %w", s, im, err)
			}
			for _, c := range m.Manifests {
				children[im.Repo+"@"+c.Digest.String()] = true
			}
		}
		all = append(all, got{im, desc})
	}
	keep := func(c v1.Descriptor) bool {
		if c.Platform != nil && c.Platform.Architecture != arch && c.Platform.Architecture != "" {
			return false
		}
		rc, _, err := s.open(regstore.BlobPath(c.Digest))
		if err != nil {
			return false
		}
		rc.Close()
		return true
	}
	for _, g := range all {
		if children[g.im.String()] && len(g.im.Tags) == 0 {
			continue // planned with its index, if kept
		}
		what := fmt.Sprintf("%s (%s)", g.im, s)
		tag := ""
		if len(g.im.Tags) > 0 {
			tag = g.im.Tags[0]
		}
		switch {
		case g.desc.MediaType.IsIndex():
			idx, err := g.desc.ImageIndex()
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", what, err)
			}
			m, err := idx.IndexManifest()
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", what, err)
			}
			kept := false
			for _, c := range m.Manifests {
				kept = kept || keep(c)
			}
			if !kept {
				skipped = append(skipped, g.im)
				continue
			}
			if err := p.AddIndex(ctx, g.im.Repo, tag, idx, keep); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", what, err)
			}
		case g.desc.MediaType.IsImage():
			img, err := g.desc.Image()
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", what, err)
			}
			if err := p.Add(ctx, g.im.Repo, tag, img); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", what, err)
			}
		default:
			skipped = append(skipped, g.im)
			continue
		}
		for _, t := range g.im.Tags[min(1, len(g.im.Tags)):] {
			if err := p.Tag(g.im.Repo, t, g.im.Digest); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", what, err)
			}
		}
		added = append(added, g.im)
	}
	return added, skipped, nil
}

// EmbeddedSources maps mirror sets (the cluster resources'
// ImageDigestMirrorSets, whose mirrors are <registry>[/<namespace>]/<path>,
// the path being oc-mirror's path in its cache and so in the store: a
// repository, or a namespace holding some) onto the embedded registry
// local: each source gets local/<path> as its mirror, <path> the longest
// tail of one of its mirrors that is a repository of repos or a namespace
// of some. repos that no mirror names are returned in unnamed.
func EmbeddedSources(ds []manifests.ImageDigestSource, repos []string, local string) (out []manifests.ImageDigestSource, unnamed []string) {
	named := map[string]bool{}
	for _, d := range ds {
		best := ""
		for _, m := range d.Mirrors {
			if t := embeddedTail(m, 1, repos, true); len(t) > len(best) {
				best = t
			}
		}
		if best == "" {
			continue
		}
		for _, r := range repos {
			if under(r, best) {
				named[r] = true
			}
		}
		out = append(out, manifests.ImageDigestSource{Source: d.Source, Mirrors: []string{local + "/" + best}})
	}
	for _, r := range repos {
		if !named[r] {
			unnamed = append(unnamed, r)
		}
	}
	sort.Strings(unnamed)
	return out, unnamed
}
