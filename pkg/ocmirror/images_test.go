package ocmirror_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
	"github.com/seed-a052040e/agentiso/pkg/ocmirror"
	"github.com/seed-a052040e/agentiso/pkg/regstore"
)

func indexOf(t testing.TB, imgs map[string]v1.Image) v1.ImageIndex {
	t.Helper()
	var adds []mutate.IndexAddendum
	for a, img := range imgs {
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: a}}})
	}
	return mutate.AppendManifests(empty.Index, adds...)
}

// withOperators adds to m what an ImageSetConfiguration's operators and
// additional images leave in the store: a multi-architecture image (amd64
// and arm64, sharing the release's base layer), an arm64-only one, and
// the extra image under a second tag.
func withOperators(t testing.TB, m *mirrored) (op v1.ImageIndex, amd, arm v1.Image) {
	t.Helper()
	base, err := m.components["cli"].Layers()
	require.NoError(t, err)
	amd = imageOf(t, base[0], randomLayer(t, "bin/operator-amd64", 16<<10))
	arm = imageOf(t, base[0], randomLayer(t, "bin/operator-arm64", 16<<10))
	op = indexOf(t, map[string]v1.Image{"amd64": amd, "arm64": arm})
	armOnly := indexOf(t, map[string]v1.Image{"arm64": imageOf(t, randomLayer(t, "bin/arm", 4<<10))})
	m.images = append(m.images,
		testrelease.MirroredImage{Repo: "redhat/example-operator", Tag: "v1.2", Index: op},
		testrelease.MirroredImage{Repo: "redhat/arm-only", Tag: "v1", Index: armOnly},
		testrelease.MirroredImage{Repo: "ubi9/ubi", Tag: "latest", Image: m.extra})
	return op, amd, arm
}

func isRelease(repo string) bool {
	return repo == ocmirror.ReleaseRepository || repo == "openshift/release"
}

// Every image of an archive is embedded (issue 36 item 4): listed from the
// store's repositories with its tags, planned beside the release (each
// blob once, the release's own repositories left to the release's plan),
// a manifest list with only the cluster's architecture, a list with none
// of it left out; the tree written from the plan is served by the real
// distribution registry: every image by digest and by each tag.
func TestStoreImagesAreEmbedded(t *testing.T) {
	logrus.SetOutput(io.Discard)
	m := newMirrored(t)
	op, amd, arm := withOperators(t, m)
	s, err := ocmirror.OpenStore(m.archive(t, 96<<10))
	require.NoError(t, err)

	ims, err := s.Images()
	require.NoError(t, err)
	byName := map[string][]string{}
	for _, im := range ims {
		byName[im.String()] = im.Tags
	}
	assert.Equal(t, []string{"latest", "sha256-" + digest(t, m.extra).Hex}, byName["ubi9/ubi@"+digest(t, m.extra).String()])
	assert.Equal(t, []string{"v1.2"}, byName["redhat/example-operator@"+digest(t, op).String()])
	assert.Contains(t, byName, "redhat/example-operator@"+digest(t, arm).String(), "an index's children are manifests of its repository")
	assert.Equal(t, []string{releaseTag}, byName[ocmirror.ReleaseRepository+"@"+m.release.String()])

	p := regstore.NewPlan()
	p.SourceChecks = true // go-containerregistry's remote layers check every digest
	added, skipped, err := s.Add(context.Background(), p, "amd64", isRelease)
	require.NoError(t, err)
	var got []string
	for _, im := range added {
		got = append(got, im.String())
	}
	assert.ElementsMatch(t, []string{"redhat/example-operator@" + digest(t, op).String(), "ubi9/ubi@" + digest(t, m.extra).String()}, got)
	require.Len(t, skipped, 1)
	assert.Equal(t, "redhat/arm-only", skipped[0].Repo)
	seen := map[v1.Hash]bool{}
	for _, b := range p.Blobs() {
		assert.False(t, seen[b.Digest], "blob %s planned twice", b.Digest)
		seen[b.Digest] = true
	}
	armLayers, err := arm.Layers()
	require.NoError(t, err)
	assert.False(t, seen[digest(t, armLayers[1])], "the arm64 image's own layer is not embedded")

	root := filepath.Join(t.TempDir(), "store")
	require.NoError(t, regstore.WriteDir(context.Background(), root, p, nil))
	cfg := &configuration.Configuration{Storage: configuration.Storage{
		"filesystem":  configuration.Parameters{"rootdirectory": root},
		"maintenance": configuration.Parameters{"readonly": map[any]any{"enabled": true}},
	}}
	cfg.HTTP.Secret = "ocmirror-test"
	srv := httptest.NewServer(handlers.NewApp(context.Background(), cfg))
	t.Cleanup(srv.Close)
	get := func(path string) int {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, path := range []string{
		"/v2/ubi9/ubi/manifests/latest", "/v2/ubi9/ubi/manifests/sha256-" + digest(t, m.extra).Hex, "/v2/ubi9/ubi/manifests/" + digest(t, m.extra).String(),
		"/v2/redhat/example-operator/manifests/v1.2", "/v2/redhat/example-operator/manifests/" + digest(t, amd).String(),
	} {
		assert.Equal(t, http.StatusOK, get(path), path)
	}
	amdLayers, err := amd.Layers()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, get("/v2/redhat/example-operator/blobs/"+digest(t, amdLayers[1]).String()))
	assert.Equal(t, http.StatusNotFound, get("/v2/redhat/example-operator/manifests/"+digest(t, arm).String()), "another architecture's image is not served")
	assert.Equal(t, http.StatusNotFound, get("/v2/redhat/arm-only/manifests/v1"))
}

// A changed blob of an embedded image stops the write naming it.
func TestStoreImageBlobChecked(t *testing.T) {
	m := newMirrored(t)
	_, amd, _ := withOperators(t, m)
	ls, err := amd.Layers()
	require.NoError(t, err)
	victim := digest(t, ls[1])
	dir := m.archive(t, 0)
	rewrite(t, dir, regstore.BlobPath(victim), func(b []byte) []byte {
		c := bytes.Clone(b)
		c[len(c)/2] ^= 1
		return c
	})
	s, err := ocmirror.OpenStore(dir)
	require.NoError(t, err)
	p := regstore.NewPlan()
	p.SourceChecks = true
	_, _, err = s.Add(context.Background(), p, "amd64", isRelease)
	require.NoError(t, err, "planning reads manifests only")
	err = regstore.WriteDir(context.Background(), filepath.Join(t.TempDir(), "store"), p, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), victim.Hex)
}

func TestEmbeddedSources(t *testing.T) {
	ds := []manifests.ImageDigestSource{
		// oc-mirror v2: one mirror per repository, under the destination's namespace
		{Source: "registry.redhat.io/ubi9/ubi", Mirrors: []string{"mirror.example.com:5000/disconnected/ubi9/ubi"}},
		// a namespace-wide mirror set
		{Source: "registry.redhat.io/redhat", Mirrors: []string{"mirror.example.com:5000/redhat"}},
		// a mirror the store does not hold
		{Source: "quay.io/other/thing", Mirrors: []string{"mirror.example.com:5000/other/thing"}},
	}
	got, unnamed := ocmirror.EmbeddedSources(ds, []string{"ubi9/ubi", "redhat/example-operator", "redhat/arm-only", "loose/image"}, "localhost:22625")
	assert.Equal(t, []manifests.ImageDigestSource{
		{Source: "registry.redhat.io/ubi9/ubi", Mirrors: []string{"localhost:22625/ubi9/ubi"}},
		{Source: "registry.redhat.io/redhat", Mirrors: []string{"localhost:22625/redhat"}},
	}, got)
	assert.Equal(t, []string{"loose/image"}, unnamed)
}

// A directory store (an extracted archive, oc-mirror's cache) lists and
// embeds the same images as the archives.
func TestDirectoryStoreImagesAreTheArchives(t *testing.T) {
	m := newMirrored(t)
	withOperators(t, m)
	a, err := ocmirror.OpenStore(m.archive(t, 0))
	require.NoError(t, err)
	p := regstore.NewPlan()
	for _, im := range m.images {
		if im.Index != nil {
			require.NoError(t, p.AddIndex(context.Background(), im.Repo, im.Tag, im.Index, nil))
		} else {
			require.NoError(t, p.Add(context.Background(), im.Repo, im.Tag, im.Image))
		}
	}
	dir := filepath.Join(t.TempDir(), "cache")
	require.NoError(t, regstore.WriteDir(context.Background(), dir, p, nil))
	d, err := ocmirror.OpenStore(dir)
	require.NoError(t, err)
	fromArchive, err := a.Images()
	require.NoError(t, err)
	fromDir, err := d.Images()
	require.NoError(t, err)
	assert.Equal(t, fromArchive, fromDir)
	pa, pd := regstore.NewPlan(), regstore.NewPlan()
	addedA, _, err := a.Add(context.Background(), pa, "amd64", isRelease)
	require.NoError(t, err)
	addedD, _, err := d.Add(context.Background(), pd, "amd64", isRelease)
	require.NoError(t, err)
	assert.Equal(t, addedA, addedD)
	assert.Equal(t, pa.Files(), pd.Files())
}
