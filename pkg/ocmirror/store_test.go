package ocmirror_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
	"github.com/seed-a052040e/agentiso/pkg/ocmirror"
	"github.com/seed-a052040e/agentiso/pkg/regstore"
	"github.com/seed-a052040e/agentiso/pkg/release"
)

const (
	version    = "4.21.3"
	releaseTag = version + "-x86_64"
	artDev     = "quay.io/openshift-release-dev/ocp-v4.0-art-dev"
	ocpRelease = "quay.io/openshift-release-dev/ocp-release"
)

func randomLayer(t testing.TB, name string, size int) v1.Layer {
	t.Helper()
	b := make([]byte, size)
	_, err := rand.Read(b)
	require.NoError(t, err)
	l, err := testrelease.Layer(map[string][]byte{name: b})
	require.NoError(t, err)
	return l
}

func imageOf(t testing.TB, ls ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, ls...)
	require.NoError(t, err)
	return img
}

func digest(t testing.TB, m interface{ Digest() (v1.Hash, error) }) v1.Hash {
	t.Helper()
	d, err := m.Digest()
	require.NoError(t, err)
	return d
}

// mirrored is a release as oc-mirror v2's mirror-to-disk stores it: the
// release image in openshift/release-images tagged <version>-<arch>, each
// component in openshift/release tagged <version>-<arch>-<name>
// (local_stored_collector.go preparePathComponents, prepareTag), plus one
// more image by digest in its own path tagged sha256-<hex>.
type mirrored struct {
	images     []testrelease.MirroredImage
	release    v1.Hash
	components map[string]v1.Image
	extra      v1.Image
}

func newMirrored(t testing.TB) *mirrored {
	t.Helper()
	base := randomLayer(t, "usr/lib/base.bin", 64<<10)
	m := &mirrored{components: map[string]v1.Image{
		"docker-registry":            imageOf(t, base, randomLayer(t, "usr/bin/distribution", 32<<10)),
		"agent-installer-api-server": imageOf(t, base, randomLayer(t, "usr/bin/assisted-service", 32<<10)),
		"cli":                        imageOf(t, base, randomLayer(t, "usr/bin/oc", 16<<10)),
	}}
	specs := map[string]string{}
	for n, img := range m.components {
		specs[n] = artDev + "@" + digest(t, img).String()
		m.images = append(m.images, testrelease.MirroredImage{Repo: "openshift/release", Tag: releaseTag + "-" + n, Image: img})
	}
	rel, err := testrelease.Payload{Version: version, Components: specs}.Image()
	require.NoError(t, err)
	m.release = digest(t, rel)
	m.images = append(m.images, testrelease.MirroredImage{Repo: ocmirror.ReleaseRepository, Tag: releaseTag, Image: rel})
	m.extra = imageOf(t, randomLayer(t, "opt/extra.bin", 8<<10))
	m.images = append(m.images, testrelease.MirroredImage{Repo: "ubi9/ubi", Tag: "sha256-" + digest(t, m.extra).Hex, Image: m.extra})
	return m
}

// archive writes the oc-mirror archives of m in a new directory, cut in
// chunks of chunk bytes.
func (m *mirrored) archive(t testing.TB, chunk int64) string {
	t.Helper()
	dir := t.TempDir()
	_, err := testrelease.OCMirrorArchive(context.Background(), dir, chunk, m.images, map[string][]byte{
		"release-images/" + releaseTag + "/index.json": []byte(`{}`),
	})
	require.NoError(t, err)
	return dir
}

func client(t testing.TB, s *ocmirror.Store) *release.Client {
	t.Helper()
	c, err := release.New(release.Options{Local: s, Arch: "x86_64"})
	require.NoError(t, err)
	return c
}

// readLayers reads every layer of img, each checked against its digest.
func readLayers(t testing.TB, img v1.Image) {
	t.Helper()
	ls, err := img.Layers()
	require.NoError(t, err)
	for _, l := range ls {
		rc, err := l.Compressed()
		require.NoError(t, err)
		_, err = io.Copy(io.Discard, rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
	}
}

// The release and its components are read from the archives as from a
// registry: the release by its tag (in openshift/release-images, where
// oc-mirror keeps it, whatever repository the user names) and by digest,
// every component by digest, every blob checked; nothing is contacted.
func TestArchiveServesTheRelease(t *testing.T) {
	m := newMirrored(t)
	dir := m.archive(t, 96<<10)
	s, err := ocmirror.OpenStore(dir)
	require.NoError(t, err)
	require.Greater(t, len(s.Archives), 1, "the fixture is cut in several archives")
	assert.Contains(t, s.String(), "mirror_000001.tar")
	c := client(t, s)
	ctx := context.Background()

	rel, err := c.Resolve(ctx, ocpRelease+":"+releaseTag)
	require.NoError(t, err)
	assert.Equal(t, version, rel.Version)
	assert.Equal(t, m.release.String(), rel.Digest)
	assert.Equal(t, ocpRelease+"@"+m.release.String(), rel.Pinned)
	rel2, err := c.Resolve(ctx, ocpRelease+"@"+m.release.String())
	require.NoError(t, err)
	assert.Equal(t, rel.Components, rel2.Components)

	for n, want := range m.components {
		img, _, err := c.Image(ctx, rel.Components[n])
		require.NoError(t, err, n)
		assert.Equal(t, digest(t, want), digest(t, img), n)
		readLayers(t, img)
	}
	img, _, err := c.Image(ctx, "registry.access.redhat.com/ubi9/ubi@"+digest(t, m.extra).String())
	require.NoError(t, err)
	readLayers(t, img)
}

// An extracted archive (or oc-mirror's cache directory) serves the same.
func TestDirectoryStoreServesTheRelease(t *testing.T) {
	m := newMirrored(t)
	p := regstore.NewPlan()
	for _, im := range m.images {
		require.NoError(t, p.Add(context.Background(), im.Repo, im.Tag, im.Image))
	}
	dir := filepath.Join(t.TempDir(), "cache")
	require.NoError(t, regstore.WriteDir(context.Background(), dir, p, nil))
	s, err := ocmirror.OpenStore(dir)
	require.NoError(t, err)
	assert.Empty(t, s.Archives)
	rel, err := client(t, s).Resolve(context.Background(), ocpRelease+":"+releaseTag)
	require.NoError(t, err)
	assert.Equal(t, m.release.String(), rel.Digest)
}

func TestNoStore(t *testing.T) {
	_, err := ocmirror.OpenStore(t.TempDir())
	var ns *ocmirror.NoStoreError
	require.ErrorAs(t, err, &ns)
	assert.Contains(t, err.Error(), "mirror_000001.tar")
	_, err = ocmirror.OpenStore(filepath.Join(t.TempDir(), "absent"))
	require.Error(t, err)
}

// rewrite replaces the bytes of the store file name inside dir's archives
// with what edit returns (same length: the tar stays valid), or drops the
// file (edit nil): an incremental archive, which lacks the blobs of earlier
// runs.
func rewrite(t *testing.T, dir, name string, edit func([]byte) []byte) {
	t.Helper()
	archives, _ := filepath.Glob(filepath.Join(dir, "mirror_*.tar"))
	for _, a := range archives {
		b, err := os.ReadFile(a)
		require.NoError(t, err)
		out, found := testrelease.RewriteTar(t, b, name, edit)
		if found {
			require.NoError(t, os.WriteFile(a, out, 0o644))
			return
		}
	}
	t.Fatalf("%s not in the archives", name)
}

// A blob changed in the archive fails the read naming its digest; a blob
// absent (an incremental archive) names the blob and says why.
func TestArchiveBlobCheckedAndMissingNamed(t *testing.T) {
	m := newMirrored(t)
	ls, err := m.components["cli"].Layers()
	require.NoError(t, err)
	victim := digest(t, ls[1])
	ctx := context.Background()

	dir := m.archive(t, 0)
	rewrite(t, dir, regstore.BlobPath(victim), func(b []byte) []byte {
		c := bytes.Clone(b)
		c[len(c)/2] ^= 1
		return c
	})
	s, err := ocmirror.OpenStore(dir)
	require.NoError(t, err)
	c := client(t, s)
	img, _, err := c.Image(ctx, artDev+"@"+digest(t, m.components["cli"]).String())
	require.NoError(t, err)
	l, err := img.LayerByDigest(victim)
	require.NoError(t, err)
	rc, err := l.Compressed()
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, rc)
	require.Error(t, err)
	assert.Contains(t, err.Error(), victim.Hex)

	dir = m.archive(t, 0)
	rewrite(t, dir, regstore.BlobPath(victim), nil)
	s, err = ocmirror.OpenStore(dir)
	require.NoError(t, err)
	img, _, err = client(t, s).Image(ctx, artDev+"@"+digest(t, m.components["cli"]).String())
	require.NoError(t, err)
	l, err = img.LayerByDigest(victim)
	require.NoError(t, err)
	_, err = l.Compressed()
	require.Error(t, err)
	assert.Contains(t, err.Error(), victim.String())
	assert.Contains(t, err.Error(), "holds only the blobs new since the run before it")

	// a manifest that is not there
	_, _, err = client(t, s).Image(ctx, artDev+"@sha256:"+victim.Hex[:60]+"0000")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not in the oc-mirror archive")
}

// The store answers only reads, and only registry paths.
func TestStoreIsReadOnly(t *testing.T) {
	m := newMirrored(t)
	s, err := ocmirror.OpenStore(m.archive(t, 0))
	require.NoError(t, err)
	for _, c := range []struct {
		method, path string
		code         int
	}{
		{http.MethodGet, "/v2/", 200},
		{http.MethodPut, "/v2/openshift/release/manifests/x", 405},
		{http.MethodGet, "/v1/x", 404},
		{http.MethodGet, "/v2/openshift/release/tags/list", 404},
		{http.MethodGet, "/v2/openshift/release/blobs/sha256:zz", 400},
		{http.MethodGet, "/v2/../../etc/manifests/latest", 400},
		{http.MethodGet, "/v2/openshift/release-images/manifests/" + releaseTag, 200},
		{http.MethodHead, "/v2/openshift/release-images/manifests/" + releaseTag, 200},
		{http.MethodGet, "/v2/openshift/release-images/manifests/..%2f..", 400},
	} {
		req, err := http.NewRequest(c.method, "https://"+ocmirror.Host+c.path, nil)
		require.NoError(t, err)
		resp, err := s.RoundTrip(req)
		require.NoError(t, err, c.path)
		resp.Body.Close()
		assert.Equal(t, c.code, resp.StatusCode, "%s %s", c.method, c.path)
	}
}

// An archive is outside input: whatever its bytes, opening it and asking
// for its release, tags and blobs fails cleanly or serves bytes that are
// then checked; it never panics, and a manifest answer is bounded.
func FuzzOpenArchive(f *testing.F) {
	m := newMirrored(f)
	dir := m.archive(f, 0)
	b, err := os.ReadFile(filepath.Join(dir, "mirror_000001.tar"))
	require.NoError(f, err)
	f.Add(b[:min(len(b), 8<<10)])
	small := newTinyArchive(f)
	f.Add(small)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		d := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(d, "mirror_000001.tar"), data, 0o644))
		s, err := ocmirror.OpenStore(d)
		if err != nil {
			return
		}
		for _, p := range []string{
			"/v2/openshift/release-images/manifests/" + releaseTag,
			"/v2/x/manifests/latest",
			"/v2/x/manifests/sha256:" + m.release.Hex,
			"/v2/x/blobs/sha256:" + m.release.Hex,
		} {
			req, err := http.NewRequest(http.MethodGet, "https://"+ocmirror.Host+p, nil)
			require.NoError(t, err)
			resp, err := s.RoundTrip(req)
			if err != nil {
				continue
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && bytes.Contains([]byte(p), []byte("/manifests/")) {
				assert.LessOrEqual(t, n, int64(regstore.MaxManifestBytes))
			}
		}
	})
}

// newTinyArchive is an archive of one small image, for the fuzz corpus.
func newTinyArchive(t testing.TB) []byte {
	dir := t.TempDir()
	img := imageOf(t, randomLayer(t, "a", 16))
	_, err := testrelease.OCMirrorArchive(context.Background(), dir, 0,
		[]testrelease.MirroredImage{{Repo: ocmirror.ReleaseRepository, Tag: releaseTag, Image: img}}, nil)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "mirror_000001.tar"))
	require.NoError(t, err)
	return b
}
