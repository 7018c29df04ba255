package ocmirror

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/yaml"
)

// Served is what the node-local registry of an extended ISO serves
// (regstore.Plan): the repositories it holds a manifest in, and whether
// one of them serves a manifest by a tag or a digest.
type Served interface {
	Repositories() []string
	Serves(repo, ref string) bool
}

// Unserved is a cluster resource, or one mirror entry of it, that names an
// image or repository the embedded registry does not serve: left out.
type Unserved struct {
	FileName, Kind, Name string
	// Ref is the image or source it names.
	Ref string
}

func (u Unserved) String() string {
	return fmt.Sprintf("%s %s (%s): %s", u.Kind, u.Name, u.FileName, u.Ref)
}

// under reports whether repository r is p or inside namespace p.
func under(r, p string) bool { return r == p || strings.HasPrefix(r, p+"/") }

// embeddedTail is the longest tail of path (slash-separated, from its
// component from on) that is one of repos or, with namespaces, a
// namespace holding some: oc-mirror's path in its cache is its path in
// the registry a disk-to-mirror run pushes to (prepareD2MCopyBatch:
// <destination>/<path>), so the tail names the same images in the store.
// "" when none is.
func embeddedTail(path string, from int, repos []string, namespaces bool) string {
	segs := strings.Split(path, "/")
	for i := from; i < len(segs); i++ {
		cand := strings.Join(segs[i:], "/")
		for _, r := range repos {
			if r == cand || namespaces && under(r, cand) {
				return cand
			}
		}
	}
	return ""
}

// EmbeddedManifests returns the cluster resources other than the digest
// mirror sets (Manifests) for an install whose images are served by the
// node-local registry local (e.g. localhost:22625) of an extended ISO,
// which serves s: as the appliance rewrites oc-mirror's cluster resources
// to its own registry's name (openshift/appliance pkg/release/release.go
// copyOutputYamls), each ImageTagMirrorSet mirror, CatalogSource and
// ClusterCatalog image, and UpdateService graph image and release
// repository names local/<path> instead of the registry oc-mirror pushed
// to, <path> being the embedded repository its path ends in. The release's
// assisted-service then adds the api-int.<cluster>:22625 mirrors and moves
// the catalogs' images there when it sees the InternalReleaseImage
// (internal/ignition/internalreleaseimage_patcher.go, which keeps the
// path). A resource naming an image the registry does not serve is left
// out, and an ImageTagMirrorSet entry whose mirrors name no embedded
// repository is dropped (the set too when none is left): both are
// returned in unserved. The release signature ConfigMap is kept as it is.
func (r *Resources) EmbeddedManifests(s Served, local string) (out []Manifest, unserved []Unserved, err error) {
	repos := s.Repositories()
	for _, m := range r.Manifests {
		var obj map[string]any
		if err := yaml.Unmarshal(m.Contents, &obj); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", m.FileName, err)
		}
		kind, _ := obj["kind"].(string)
		meta, _ := obj["metadata"].(map[string]any)
		objName, _ := meta["name"].(string)
		miss := func(ref string) {
			unserved = append(unserved, Unserved{FileName: m.FileName, Kind: kind, Name: objName, Ref: ref})
		}
		keep := true
		switch kind {
		case "ImageTagMirrorSet":
			keep, err = embedITMS(obj, repos, local, miss)
		case "CatalogSource":
			keep, err = embedImageField(obj, s, repos, local, miss, "spec", "image")
		case "ClusterCatalog":
			keep, err = embedImageField(obj, s, repos, local, miss, "spec", "source", "image", "ref")
		case "UpdateService":
			keep, err = embedImageField(obj, s, repos, local, miss, "spec", "graphDataImage")
			if err == nil && keep {
				keep, err = embedRepoField(obj, repos, local, miss, "spec", "releases")
			}
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s (%s %s): %w", m.FileName, kind, objName, err)
		}
		if !keep {
			continue
		}
		if kind == "ConfigMap" {
			out = append(out, m) // the release signatures: no image named
			continue
		}
		b, err := yaml.Marshal(obj)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", m.FileName, err)
		}
		out = append(out, Manifest{FileName: m.FileName, Contents: b})
	}
	return out, unserved, nil
}

// field is the string at path in obj (found false when absent).
func field(obj map[string]any, path ...string) (string, bool, error) {
	cur := obj
	for i, k := range path {
		v, ok := cur[k]
		if !ok {
			return "", false, nil
		}
		if i == len(path)-1 {
			s, ok := v.(string)
			if !ok {
				return "", false, fmt.Errorf("%s is not a string", strings.Join(path, "."))
			}
			return s, true, nil
		}
		if cur, ok = v.(map[string]any); !ok {
			return "", false, fmt.Errorf("%s is not a map", strings.Join(path[:i+1], "."))
		}
	}
	return "", false, nil
}

// setField sets the string at path in obj, which field found.
func setField(obj map[string]any, v string, path ...string) {
	cur := obj
	for _, k := range path[:len(path)-1] {
		cur = cur[k].(map[string]any)
	}
	cur[path[len(path)-1]] = v
}

// embedImageField rewrites the image reference at path to the embedded
// registry; false (and miss) when the registry does not serve it.
func embedImageField(obj map[string]any, s Served, repos []string, local string, miss func(string), path ...string) (bool, error) {
	img, ok, err := field(obj, path...)
	if err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("no %s", strings.Join(path, "."))
		}
		return false, err
	}
	ref, err := name.ParseReference(img)
	if err != nil {
		return false, fmt.Errorf("%s: %q is not an image reference: %w", strings.Join(path, "."), img, err)
	}
	id, sep := ref.Identifier(), ":"
	if _, isDigest := ref.(name.Digest); isDigest {
		sep = "@"
	}
	tail := embeddedTail(ref.Context().RepositoryStr(), 0, repos, false)
	if tail == "" || !s.Serves(tail, id) {
		miss(img)
		return false, nil
	}
	setField(obj, local+"/"+tail+sep+id, path...)
	return true, nil
}

// embedRepoField rewrites the repository at path (an UpdateService's
// releases) to the embedded registry; false (and miss) when the registry
// holds no such repository.
func embedRepoField(obj map[string]any, repos []string, local string, miss func(string), path ...string) (bool, error) {
	repo, ok, err := field(obj, path...)
	if err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("no %s", strings.Join(path, "."))
		}
		return false, err
	}
	tail := embeddedTail(repo, 1, repos, false)
	if tail == "" {
		miss(repo)
		return false, nil
	}
	setField(obj, local+"/"+tail, path...)
	return true, nil
}

// embedITMS points each entry of an ImageTagMirrorSet at the embedded
// registry (one mirror, local/<path>, as EmbeddedSources does for the
// digest mirror sets), dropping the entries no mirror of which names an
// embedded repository or namespace; false when none is left.
func embedITMS(obj map[string]any, repos []string, local string, miss func(string)) (bool, error) {
	spec, _ := obj["spec"].(map[string]any)
	entries, ok := spec["imageTagMirrors"].([]any)
	if !ok || len(entries) == 0 {
		return false, fmt.Errorf("spec.imageTagMirrors: none")
	}
	var kept []any
	for i, e := range entries {
		em, ok := e.(map[string]any)
		if !ok {
			return false, fmt.Errorf("spec.imageTagMirrors[%d] is not a map", i)
		}
		src, _ := em["source"].(string)
		mirrors, _ := em["mirrors"].([]any)
		if !repoLike(src) || len(mirrors) == 0 {
			return false, fmt.Errorf("spec.imageTagMirrors[%d]: a source and mirrors are needed", i)
		}
		best := ""
		for k, mv := range mirrors {
			mi, _ := mv.(string)
			if !repoLike(mi) {
				return false, fmt.Errorf("spec.imageTagMirrors[%d].mirrors[%d]: %q is not a registry or repository", i, k, mi)
			}
			if t := embeddedTail(mi, 1, repos, true); len(t) > len(best) {
				best = t
			}
		}
		if best == "" {
			miss(src)
			continue
		}
		em["mirrors"] = []any{local + "/" + best}
		kept = append(kept, em)
	}
	if len(kept) == 0 {
		return false, nil
	}
	spec["imageTagMirrors"] = kept
	return true, nil
}
