package mirror

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/compression"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
)

// StandinPath is where every image carries the stand-in binary; the
// component paths are symbolic links to it.
const StandinPath = "/usr/libexec/agentiso-standin/standin"

// entry is one file of a layer: a regular file (Data) or a symlink (Link).
type entry struct {
	Path string
	Mode int64
	Data []byte
	Link string
	Dir  bool
}

// epoch is the fixed time of every file and config, so that images are
// reproducible and their digests stable for the same inputs.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// layer builds a gzip layer from entries, adding parent directories.
func layer(entries []entry, opts ...tarball.LayerOption) (v1.Layer, error) {
	data, err := tarOf(entries)
	if err != nil {
		return nil, err
	}
	opts = append(opts, tarball.WithCompressedCaching)
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, opts...)
}

// zstdLayer builds a zstd OCI layer from entries (see image).
func zstdLayer(entries []entry) (v1.Layer, error) {
	return layer(entries, zstdOpts...)
}

// zstdOpts make an OCI zstd layer.
var zstdOpts = []tarball.LayerOption{tarball.WithCompression(compression.ZStd), tarball.WithMediaType(types.OCILayerZStd)}

// toZstd returns l as a zstd OCI layer.
func toZstd(l v1.Layer) (v1.Layer, error) {
	if mt, err := l.MediaType(); err == nil && mt == types.OCILayerZStd {
		return l, nil
	}
	return tarball.LayerFromOpener(l.Uncompressed, append(zstdOpts, tarball.WithCompressedCaching)...)
}

// tarOf writes entries as a tar stream, adding parent directories.
func tarOf(entries []entry) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	var dirList []string
	for _, e := range entries {
		for d := path.Dir(strings.TrimPrefix(e.Path, "/")); d != "." && d != "/"; d = path.Dir(d) {
			if !dirs[d] {
				dirs[d] = true
				dirList = append(dirList, d)
			}
		}
	}
	sort.Strings(dirList)
	for _, d := range dirList {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
	}
	for _, e := range entries {
		name := strings.TrimPrefix(e.Path, "/")
		h := &tar.Header{Name: name, Mode: e.Mode, ModTime: epoch, Format: tar.FormatPAX}
		if e.Dir {
			h.Typeflag, h.Name = tar.TypeDir, name+"/"
		} else if e.Link != "" {
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, e.Link, 0o777
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if e.Link == "" && !e.Dir {
			if _, err := tw.Write(e.Data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// spec describes one stand-in image.
type spec struct {
	// Component is the release payload name (empty for the release image).
	Component  string
	Entrypoint []string
	Cmd        []string
	WorkingDir string
	Env        []string
	Labels     map[string]string
	// Links are symlinks to the stand-in binary.
	Links []string
	Files []entry
	// Under are layers below the stand-in's (the real images' Debian base
	// and upstream binaries). An image with Under and no Links, Files or
	// Env-selected role carries no stand-in at all.
	Under []v1.Layer
	// NoStandin leaves the stand-in's layer out of an image without Under
	// (the docker-registry image: a real program and its configuration).
	NoStandin bool
}

// image assembles an image: the shared stand-in layer plus its own.
func image(base v1.Layer, s spec, arch string) (v1.Image, error) {
	var own []entry
	for _, l := range s.Links {
		own = append(own, entry{Path: l, Link: StandinPath})
	}
	own = append(own, s.Files...)
	layers := append([]v1.Layer{}, s.Under...)
	if (len(s.Under) == 0 && !s.NoStandin) || len(s.Links) > 0 {
		layers = append(layers, base)
	}
	if len(own) > 0 {
		l, err := layer(own)
		if err != nil {
			return nil, err
		}
		layers = append(layers, l)
	}
	// The real components' images (Under) are OCI images of zstd layers:
	// the guests pull them (~700 MB unpacked) under TCG, where gunzip took
	// most of the pull (docs/e2e.md "Cost"). Not uncompressed: podman keeps
	// each blob in a temporary file until the layer is committed, and the
	// guests' storage is RAM. The payload's own images stay gzip layers in
	// Docker manifests, as the real payload's are.
	from := empty.Image
	if len(s.Under) > 0 {
		from = mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
		for i, l := range layers {
			p, err := toZstd(l)
			if err != nil {
				return nil, err
			}
			layers[i] = p
		}
	}
	img, err := mutate.AppendLayers(from, layers...)
	if err != nil {
		return nil, err
	}
	env := append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, s.Env...)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS, cf.Created = arch, "linux", v1.Time{Time: epoch}
	cf.Config = v1.Config{Entrypoint: s.Entrypoint, Cmd: s.Cmd, WorkingDir: s.WorkingDir, Env: env, Labels: s.Labels}
	return mutate.ConfigFile(img, cf)
}

// componentSpecs are the release components the agent units use. The
// agent-installer-api-server and agent-installer-node-agent images are the
// real upstream programs (upstreamSpecs, Options.Upstream); without them
// (the mirror's own tests) they are placeholders that only say what they
// stand for, like the components the lab only mirrors.
func componentSpecs() []spec {
	placeholder := func(c string) spec {
		return spec{Component: c, Entrypoint: []string{"/usr/bin/component"}, Links: []string{"/usr/bin/component"}}
	}
	return []spec{
		placeholder("agent-installer-api-server"),
		placeholder("agent-installer-node-agent"),
		{Component: "agent-installer-orchestrator", Entrypoint: []string{"/usr/bin/assisted-installer"}, Links: []string{"/usr/bin/assisted-installer"}},
		placeholder("agent-installer-csr-approver"),
		placeholder("agent-installer-utils"),
		placeholder("installer"),
	}
}

// releaseSpec is the release image: the payload files, as the project's
// synthetic payload builder (internal/fake/testrelease) lays them out, and the
// CVO entrypoint.
func releaseSpec(version, arch string, components map[string]string) spec {
	files := testrelease.Payload{Version: version, Arch: arch, Components: components}.Files()
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var entries []entry
	for _, p := range paths {
		entries = append(entries, entry{Path: "/" + p, Mode: 0o644, Data: files[p]})
	}
	return spec{
		Entrypoint: []string{"/usr/bin/cluster-version-operator"},
		Labels:     map[string]string{"io.openshift.release": version},
		Links:      []string{"/usr/bin/cluster-version-operator"},
		Files:      entries,
	}
}

// withEnv adds the component name for the component entrypoint.
func withEnv(s spec) spec {
	if len(s.Entrypoint) == 1 && s.Entrypoint[0] == "/usr/bin/component" {
		s.Env = append(s.Env, "STANDIN_COMPONENT="+s.Component)
	}
	return s
}

func imageSize(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	n := m.Config.Size
	for _, l := range m.Layers {
		n += l.Size
	}
	return n, nil
}

func describe(err error, what string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
