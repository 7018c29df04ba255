// Package ocmirror reads what oc-mirror v2 writes: the cluster resources (working-dir/cluster-resources: the mirror sets, catalogs, update service and release signatures), strictly and bounded, into mirror sources and extra manifests, so that nobody copies YAML by hand; and the image store of its archives (mirror_000001.tar, ...) or of an extracted docker/registry/v2 tree, served to the release client as a read-only registry.
package ocmirror

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/pkg/manifests"
)

// The layout oc-mirror v2 writes (openshift/oc-mirror internal/pkg/cli
// const.go workingDir and clusterResourcesDir; internal/pkg/clusterresources:
// idms-oc-mirror.yaml, itms-oc-mirror.yaml, cs-*.yaml, cc-*.yaml,
// updateService.yaml, signature-configmap.{yaml,json}).
const (
	WorkingDir          = "working-dir"
	ClusterResourcesDir = "cluster-resources"
	IDMSFile            = "idms-oc-mirror.yaml"
)

// MaxFileBytes bounds one cluster-resources file (a signature ConfigMap
// holds a few KiB per release; a mirror set a line per repository).
const MaxFileBytes = 8 << 20

// Manifest is one cluster resource to apply with the install (one
// document), named after its file and position.
type Manifest struct {
	FileName string
	Contents []byte
}

// Resources are what an oc-mirror run leaves for the cluster.
type Resources struct {
	// Dir is the cluster-resources directory read.
	Dir string
	// DigestSources are every ImageDigestMirrorSet's mirrors, in file
	// order: the install's imageDigestSources.
	DigestSources []manifests.ImageDigestSource
	// Manifests are the other resources (ImageTagMirrorSets,
	// CatalogSources, ClusterCatalogs, the UpdateService, the release
	// signature ConfigMap), one document each.
	Manifests []Manifest
}

// kinds are the resources oc-mirror v2 writes, by kind, with their API
// version; anything else in the directory is refused.
var kinds = map[string]string{
	"ImageDigestMirrorSet": "config.openshift.io/v1",
	"ImageTagMirrorSet":    "config.openshift.io/v1",
	"CatalogSource":        "operators.coreos.com/v1alpha1",
	"ClusterCatalog":       "olm.operatorframework.io/v1",
	"UpdateService":        "updateservice.operator.openshift.io/v1",
	"ConfigMap":            "v1",
}

// FindDir returns the cluster-resources directory of dir: dir itself, or
// its working-dir/cluster-resources (the workspace oc mirror --v2 was
// given), or its cluster-resources (the working directory).
func FindDir(dir string) (string, error) {
	for _, c := range []string{filepath.Join(dir, WorkingDir, ClusterResourcesDir), filepath.Join(dir, ClusterResourcesDir), dir} {
		st, err := os.Stat(c)
		if err == nil && st.IsDir() {
			if c != dir || filepath.Base(dir) == ClusterResourcesDir || hasYAML(c) {
				return c, nil
			}
		}
	}
	return "", fmt.Errorf("%s: no oc-mirror cluster resources: expected %s (oc mirror --v2 writes it in its workspace)", dir,
		filepath.Join(dir, WorkingDir, ClusterResourcesDir))
}

func hasYAML(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	return len(m) > 0
}

// Read reads the cluster resources of dir (FindDir). The .json twin of the
// signature ConfigMap is skipped; every other file must be YAML of the
// kinds oc-mirror writes.
func Read(dir string) (*Resources, error) {
	crDir, err := FindDir(dir)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(crDir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	r := &Resources{Dir: crDir}
	for _, n := range names {
		p := filepath.Join(crDir, n)
		if strings.HasSuffix(n, ".json") {
			continue // signature-configmap.json repeats signature-configmap.yaml
		}
		if !strings.HasSuffix(n, ".yaml") && !strings.HasSuffix(n, ".yml") {
			return nil, fmt.Errorf("%s: not a YAML file; oc-mirror writes only YAML (and the JSON twin of the signature ConfigMap) here", p)
		}
		data, err := readBounded(p)
		if err != nil {
			return nil, err
		}
		if err := r.add(p, n, data); err != nil {
			return nil, err
		}
	}
	if len(r.DigestSources) == 0 && len(r.Manifests) == 0 {
		return nil, fmt.Errorf("%s: no cluster resources in it", crDir)
	}
	return r, nil
}

func readBounded(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", p)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", p, MaxFileBytes)
	}
	return b, nil
}

// ParseFile reads one cluster-resources file's documents (path names it
// in errors).
func ParseFile(path string, data []byte) (*Resources, error) {
	r := &Resources{Dir: filepath.Dir(path)}
	if err := r.add(path, filepath.Base(path), data); err != nil {
		return nil, err
	}
	return r, nil
}

// add reads one file's documents into r.
func (r *Resources) add(path, name string, data []byte) error {
	docs, err := manifests.SplitManifests(path, data)
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(strings.TrimSuffix(name, ".yaml"), ".yml")
	for i, d := range docs {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(d, &head); err != nil {
			return fmt.Errorf("%s: document %d: %w", path, i+1, err)
		}
		want, ok := kinds[head.Kind]
		if !ok {
			return fmt.Errorf("%s: document %d: kind %q is not one oc-mirror writes (%s)", path, i+1, head.Kind, strings.Join(sortedKinds(), ", "))
		}
		if head.APIVersion != want {
			return fmt.Errorf("%s: document %d: %s has apiVersion %q, want %q", path, i+1, head.Kind, head.APIVersion, want)
		}
		if head.Kind == "ConfigMap" && head.Metadata.Namespace != "openshift-config-managed" {
			return fmt.Errorf("%s: document %d: a ConfigMap in namespace %q: oc-mirror writes only the release signatures, in openshift-config-managed", path, i+1, head.Metadata.Namespace)
		}
		if head.Kind == "ImageDigestMirrorSet" {
			srcs, err := parseIDMS(d)
			if err != nil {
				return fmt.Errorf("%s: document %d: %w", path, i+1, err)
			}
			r.DigestSources = append(r.DigestSources, srcs...)
			continue
		}
		r.Manifests = append(r.Manifests, Manifest{FileName: fmt.Sprintf("oc-mirror-%s-%d.yaml", base, i), Contents: d})
	}
	return nil
}

func sortedKinds() []string {
	out := make([]string, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// parseIDMS reads an ImageDigestMirrorSet's mirrors, strictly: an unknown
// field is a mistake, not something to drop.
func parseIDMS(doc []byte) ([]manifests.ImageDigestSource, error) {
	var idms struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Metadata   map[string]any `json:"metadata"`
		Spec       struct {
			ImageDigestMirrors []struct {
				Source             string   `json:"source"`
				Mirrors            []string `json:"mirrors"`
				MirrorSourcePolicy string   `json:"mirrorSourcePolicy"`
			} `json:"imageDigestMirrors"`
		} `json:"spec"`
		Status map[string]any `json:"status"`
	}
	if err := yaml.UnmarshalStrict(doc, &idms); err != nil {
		return nil, err
	}
	var out []manifests.ImageDigestSource
	for i, m := range idms.Spec.ImageDigestMirrors {
		if !repoLike(m.Source) {
			return nil, fmt.Errorf("spec.imageDigestMirrors[%d].source: %q is not a registry or repository", i, m.Source)
		}
		for k, mi := range m.Mirrors {
			if !repoLike(mi) {
				return nil, fmt.Errorf("spec.imageDigestMirrors[%d].mirrors[%d]: %q is not a registry or repository", i, k, mi)
			}
		}
		if len(m.Mirrors) == 0 {
			return nil, fmt.Errorf("spec.imageDigestMirrors[%d] (%s): no mirrors", i, m.Source)
		}
		switch m.MirrorSourcePolicy {
		case "", "AllowContactingSource", "NeverContactSource":
		default:
			return nil, fmt.Errorf("spec.imageDigestMirrors[%d].mirrorSourcePolicy: %q is not AllowContactingSource or NeverContactSource", i, m.MirrorSourcePolicy)
		}
		out = append(out, manifests.ImageDigestSource{Source: m.Source, Mirrors: m.Mirrors, SourcePolicy: m.MirrorSourcePolicy})
	}
	if len(out) == 0 {
		return nil, errors.New("spec.imageDigestMirrors: empty")
	}
	return out, nil
}

// repoLike accepts a registry host or a repository (no tag, no digest, no
// space): what a mirror set names.
func repoLike(s string) bool {
	if s == "" || len(s) > 512 || strings.ContainsAny(s, "@ \t\r\n\"'\\") || strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/") || strings.Contains(s, "//") {
		return false
	}
	for _, c := range s {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}
