// Package testrelease builds synthetic OpenShift release payloads and serves them from an in-process TLS registry, for tests.
//
// A payload is a real OCI image: a base layer of filler, then a layer with
// /release-manifests/{release-metadata,image-references,
// 0000_50_installer_coreos-bootimages.yaml}. MachineOSImage builds the
// machine-os-images component (/coreos/coreos-<arch>.iso, its .sha256 and
// coreos-stream.json). Registry (registry.go) serves them over TLS with a
// generated CA and optional basic or bearer auth.
package testrelease

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/coreos/stream-metadata-go/stream"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/pkg/arch"
)

// Payload describes a synthetic single-architecture release image. The
// zero value is a 4.19.3 x86_64 release with a few components and a boot
// image stream.
type Payload struct {
	Version string // default "4.19.3"
	Arch    string // RPM spelling; default "x86_64"
	// Multi marks the image as part of a multi-architecture payload
	// (release.openshift.io/architecture: multi in release-metadata).
	Multi bool
	// Components are image-references tags (name -> pull spec); nil gives
	// DefaultComponents().
	Components map[string]string
	// Stream is the CoreOS stream JSON of the boot-images config map; nil
	// gives Stream("rhcos-<major.minor>", ...) for Arch with example URLs.
	Stream []byte
	// Omit lists payload paths (e.g. "release-manifests/image-references")
	// to leave out.
	Omit []string
	// FillerLayers adds that many layers of FillerSize random bytes below
	// the manifests layer (the operating-system layers of a real payload).
	FillerLayers int
	FillerSize   int64
}

// DefaultComponents is a small component set: machine-os-images and two
// others, all under quay.io/openshift-release-dev/ocp-v4.0-art-dev.
func DefaultComponents() map[string]string {
	return map[string]string{
		"machine-os-images":          "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + hex.EncodeToString(sum("machine-os-images")),
		"agent-installer-api-server": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + hex.EncodeToString(sum("agent-installer-api-server")),
		"cli":                        "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + hex.EncodeToString(sum("cli")),
	}
}

func sum(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

// ISO names one live ISO in a stream.
type ISO struct {
	Location string
	SHA256   string
}

// Stream renders CoreOS stream metadata naming a live ISO (metal/iso/disk)
// of release rel for each architecture in isos (RPM spelling).
func Stream(name, rel string, isos map[string]ISO) []byte {
	st := stream.Stream{Stream: name, Metadata: stream.Metadata{LastModified: "2026-01-01T00:00:00Z", Generator: "testrelease"},
		Architectures: map[string]stream.Arch{}}
	for arch, iso := range isos {
		st.Architectures[arch] = stream.Arch{Artifacts: map[string]stream.PlatformArtifacts{"metal": {
			Release: rel,
			Formats: map[string]stream.ImageFormat{"iso": {Disk: &stream.Artifact{Location: iso.Location, Sha256: iso.SHA256}}},
		}}}
	}
	b, _ := json.MarshalIndent(st, "", "  ")
	return b
}

func (p *Payload) defaults() {
	if p.Version == "" {
		p.Version = "4.19.3"
	}
	if p.Arch == "" {
		p.Arch = arch.Default
	}
	if p.Components == nil {
		p.Components = DefaultComponents()
	}
	if p.Stream == nil {
		mm := p.Version
		if i := indexNth(mm, '.', 2); i > 0 {
			mm = mm[:i]
		}
		rel := "9.6.20260101-0"
		p.Stream = Stream("rhcos-"+mm, rel, map[string]ISO{p.Arch: {
			Location: "https://rhcos.example.com/" + rel + "/rhcos-" + rel + "-live-iso." + p.Arch + ".iso",
			SHA256:   hex.EncodeToString(sum("iso " + p.Arch)),
		}})
	}
}

func indexNth(s string, c byte, n int) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n--
			if n == 0 {
				return i
			}
		}
	}
	return -1
}

// Files returns the payload files by path (no leading slash), after
// defaults and Omit.
func (p Payload) Files() map[string][]byte {
	p.defaults()
	md := map[string]any{"kind": "cincinnati-metadata-v0", "version": p.Version, "previous": []string{}}
	meta := map[string]string{"url": "https://access.example.com/errata/" + p.Version}
	if p.Multi {
		meta["release.openshift.io/architecture"] = "multi"
	}
	md["metadata"] = meta
	mdJSON, _ := json.Marshal(md)
	names := make([]string, 0, len(p.Components))
	for n := range p.Components {
		names = append(names, n)
	}
	sort.Strings(names)
	var tags []map[string]any
	for _, n := range names {
		tags = append(tags, map[string]any{"name": n, "from": map[string]string{"kind": "DockerImage", "name": p.Components[n]}})
	}
	is := map[string]any{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1",
		"metadata": map[string]any{"name": p.Version, "creationTimestamp": nil}, "spec": map[string]any{"tags": tags}}
	isJSON, _ := json.MarshalIndent(is, "", "  ")
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "coreos-bootimages", "namespace": "openshift-machine-config-operator"},
		"data":     map[string]string{"releaseVersion": p.Version, "stream": string(p.Stream)}}
	cmYAML, _ := yaml.Marshal(cm)
	files := map[string][]byte{
		"release-manifests/release-metadata":                            mdJSON,
		"release-manifests/image-references":                            isJSON,
		"release-manifests/0000_50_installer_coreos-bootimages.yaml":    cmYAML,
		"release-manifests/0000_00_cluster-version-operator_00_ns.yaml": []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openshift-cluster-version\n"),
	}
	for _, o := range p.Omit {
		delete(files, o)
	}
	return files
}

// Image builds the payload image.
func (p Payload) Image() (v1.Image, error) {
	p.defaults()
	goArch, err := goArch(p.Arch)
	if err != nil {
		return nil, err
	}
	var layers []v1.Layer
	for i := 0; i < p.FillerLayers; i++ {
		filler := make([]byte, p.FillerSize)
		_, _ = rand.Read(filler)
		l, err := Layer(map[string][]byte{fmt.Sprintf("usr/share/filler-%d.bin", i): filler})
		if err != nil {
			return nil, err
		}
		layers = append(layers, l)
	}
	l, err := Layer(p.Files())
	if err != nil {
		return nil, err
	}
	layers = append(layers, l)
	return imageOf(goArch, map[string]string{"io.openshift.release": p.Version}, layers)
}

// Index builds a multi-architecture payload: one image per architecture
// (RPM spelling), each marked multi, in a manifest list.
func Index(p Payload, arches ...string) (v1.ImageIndex, error) {
	var idx v1.ImageIndex = empty.Index
	idx = mutate.IndexMediaType(idx, types.OCIImageIndex)
	for _, a := range arches {
		q := p
		q.Arch, q.Multi = a, true
		img, err := q.Image()
		if err != nil {
			return nil, err
		}
		ga, _ := goArch(a)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: "linux", Architecture: ga}}})
	}
	return idx, nil
}

// MachineOSImage builds a machine-os-images component holding the live ISO
// of arch at /coreos/coreos-<arch>.iso with its .sha256 and
// /coreos/coreos-stream.json (streamJSON).
func MachineOSImage(cpu string, iso []byte, streamJSON []byte) (v1.Image, error) {
	ga, err := goArch(cpu)
	if err != nil {
		return nil, err
	}
	h := sha256.Sum256(iso)
	l, err := Layer(map[string][]byte{
		"coreos/coreos-" + cpu + ".iso":        iso,
		"coreos/coreos-" + cpu + ".iso.sha256": []byte(hex.EncodeToString(h[:]) + "\n"),
		"coreos/coreos-stream.json":            streamJSON,
	})
	if err != nil {
		return nil, err
	}
	base, err := Layer(map[string][]byte{"etc/os-release": []byte("ID=rhel\n")})
	if err != nil {
		return nil, err
	}
	return imageOf(ga, nil, []v1.Layer{base, l})
}

func imageOf(goArch string, labels map[string]string, layers []v1.Layer) (v1.Image, error) {
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", goArch
	cf.Created = v1.Time{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cf.Config.Labels = labels
	return mutate.ConfigFile(img, cf)
}

// Layer builds a gzip layer holding files (paths without a leading slash),
// with their parent directories, in sorted order.
func Layer(files map[string][]byte) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	dirs := map[string]bool{}
	mt := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, n := range names {
		for i := 0; i < len(n); i++ {
			if n[i] == '/' && !dirs[n[:i]] {
				dirs[n[:i]] = true
				if err := tw.WriteHeader(&tar.Header{Name: n[:i] + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: mt}); err != nil {
					return nil, err
				}
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[n])), ModTime: mt}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[n]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
}

func goArch(a string) (string, error) {
	if g, ok := arch.Go(a); ok {
		return g, nil
	}
	return "", fmt.Errorf("testrelease: unknown architecture %q", a)
}
