package extiso_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
	"github.com/seed-a052040e/agentiso/pkg/extiso"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
	"github.com/seed-a052040e/agentiso/pkg/release"
)

func TestMain(m *testing.M) {
	logrus.SetOutput(io.Discard) // the distribution registry logs every request
	code := m.Run()
	closeScaledFixtures()
	os.Exit(code)
}

func layer(t *testing.T, path string, size int) v1.Layer {
	t.Helper()
	b := make([]byte, size)
	_, err := rand.Read(b)
	require.NoError(t, err)
	l, err := testrelease.Layer(map[string][]byte{path: b})
	require.NoError(t, err)
	return l
}

func image(t *testing.T, ls ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, ls...)
	require.NoError(t, err)
	return img
}

type lab struct {
	reg        *testrelease.Registry
	client     *release.Client
	rel        *release.Release
	components map[string]v1.Image
	victim     v1.Hash // the api-server's own layer
}

// newLab pushes a release of version with three components (sharing a
// base layer) to a registry and resolves it.
func newLab(t *testing.T, version string, opts testrelease.RegistryOptions, tamper bool) *lab {
	t.Helper()
	base := layer(t, "usr/lib/base.bin", 32<<10)
	own := layer(t, "usr/bin/assisted-service", 16<<10)
	victim, err := own.Digest()
	require.NoError(t, err)
	l := &lab{victim: victim, components: map[string]v1.Image{
		"docker-registry":            image(t, base, layer(t, "usr/bin/distribution", 16<<10)),
		"agent-installer-api-server": image(t, base, own),
		"cli":                        image(t, base, layer(t, "usr/bin/oc", 8<<10)),
	}}
	if tamper {
		opts.Tamper = func(path string, body []byte) []byte {
			if strings.HasSuffix(path, "/blobs/"+victim.String()) {
				c := bytes.Clone(body)
				c[len(c)/2] ^= 1
				return c
			}
			return body
		}
	}
	l.reg = testrelease.StartRegistry(t, opts)
	comps := map[string]string{}
	for n, img := range l.components {
		d, err := l.reg.Push("ocp/release", "", img)
		require.NoError(t, err)
		comps[n] = l.reg.Host + "/ocp/release@" + d
	}
	payload, err := testrelease.Payload{Version: version, Components: comps}.Image()
	require.NoError(t, err)
	d, err := l.reg.Push("ocp/release", "", payload)
	require.NoError(t, err)
	l.client, err = release.New(release.Options{TrustBundle: l.reg.CAPEM, Arch: "x86_64"})
	require.NoError(t, err)
	l.rel, err = l.client.Resolve(context.Background(), l.reg.Host+"/ocp/release@"+d)
	require.NoError(t, err)
	return l
}

func baseEdit(t *testing.T) (*isoeditor.ISO, *isoeditor.Image) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "base.iso")
	_, err := testiso.WriteFile(p, testiso.Options{})
	require.NoError(t, err)
	f, err := os.Open(p)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	require.NoError(t, err)
	iso, err := isoeditor.Open(f, st.Size())
	require.NoError(t, err)
	img, err := iso.Edit(isoeditor.Edit{Ignition: []byte(`{"ignition":{"version":"3.2.0"}}`)})
	require.NoError(t, err)
	return iso, img
}

func osirrox(t *testing.T) string {
	t.Helper()
	x, err := exec.LookPath("osirrox")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("osirrox (xorriso) is required in CI")
		}
		t.Skip("osirrox (xorriso) not installed")
	}
	return x
}

func extract(t *testing.T, iso string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "x")
	b, err := exec.Command(osirrox(t), "-indev", iso, "-extract", "/", out).CombinedOutput()
	require.NoError(t, err, "%s", b)
	return out
}

func serve(t *testing.T, root string) string {
	t.Helper()
	cfg := &configuration.Configuration{Storage: configuration.Storage{
		"filesystem":  configuration.Parameters{"rootdirectory": root},
		"maintenance": configuration.Parameters{"readonly": map[any]any{"enabled": true}},
	}}
	cfg.HTTP.Secret = "extiso-test"
	srv := httptest.NewServer(handlers.NewApp(context.Background(), cfg))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func pullAll(t *testing.T, ref string) v1.Image {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	require.NoError(t, err)
	img, err := remote.Image(r)
	require.NoError(t, err, ref)
	ls, err := img.Layers()
	require.NoError(t, err)
	for _, l := range ls {
		rc, err := l.Compressed()
		require.NoError(t, err)
		_, err = io.Copy(io.Discard, rc)
		require.NoError(t, err, ref)
		rc.Close()
	}
	return img
}

// The whole chain: a release in a registry, planned, streamed into the
// extended ISO after the agent ISO; the ISO's /registry pieces joined are
// the data image, whose tree the real distribution registry serves: the
// release and every component pull by digest, as the hosts pull them.
func TestExtendedISOServesTheRelease(t *testing.T) {
	l := newLab(t, "4.21.3", testrelease.RegistryOptions{}, false)
	plan, err := extiso.PlanRelease(context.Background(), l.client, l.rel, nil)
	require.NoError(t, err)
	assert.Equal(t, 5, plan.Images(), "the release, three components, the bundle")

	iso, img := baseEdit(t)
	var last extiso.Progress
	x, err := extiso.Extend(iso, img, plan, time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC), func(p extiso.Progress) { last = p })
	require.NoError(t, err)
	dst := filepath.Join(t.TempDir(), "agent.x86_64.iso")
	before := l.reg.BlobBytes()
	st, err := x.WriteStaged(context.Background(), dst, isoeditor.WriteOptions{})
	require.NoError(t, err)
	require.NoError(t, st.Commit())
	assert.Equal(t, plan.Bytes(), last.Total)
	assert.Equal(t, last.Of, last.Blobs)
	// Each layer is read once from the registry (the configs were read
	// while planning): the shared base layer is not read three times.
	var layers int64
	for _, b := range plan.Blobs() {
		layers += b.Size
	}
	assert.Equal(t, layers, l.reg.BlobBytes()-before)

	outer := extract(t, dst)
	piece := filepath.Join(outer, "registry", "data.iso.aa")
	tree := extract(t, piece)
	host := serve(t, tree)

	relD, err := v1.NewHash(l.rel.Digest)
	require.NoError(t, err)
	got := pullAll(t, host+"/"+extiso.ReleaseRepository+"@"+l.rel.Digest)
	d, err := got.Digest()
	require.NoError(t, err)
	assert.Equal(t, relD, d)
	repo, err := name.NewRepository(host+"/"+extiso.ReleaseRepository, name.Insecure)
	require.NoError(t, err)
	tags, err := remote.List(repo)
	require.NoError(t, err)
	assert.Equal(t, []string{relD.Hex}, tags, "one release tag, the digest, as MCO reads it")
	bundles, err := name.NewRepository(host+"/"+extiso.BundleRepository, name.Insecure)
	require.NoError(t, err)
	tags, err = remote.List(bundles)
	require.NoError(t, err)
	assert.Equal(t, []string{"ocp-release-bundle-4.21.3-x86_64"}, tags, "the bundle the InternalReleaseImage names")
	pullAll(t, host+"/"+extiso.BundleRepository+":ocp-release-bundle-4.21.3-x86_64")
	for n, spec := range l.rel.Components {
		at := spec[strings.Index(spec, "@"):]
		pullAll(t, host+"/"+extiso.ComponentRepository+at)
		pullAll(t, host+"/"+extiso.ComponentRepository+":"+relD.Hex+"-"+n)
	}
	m, err := os.ReadFile(filepath.Join(tree, "images", "registry", "manifest.json"))
	require.NoError(t, err)
	want, err := l.components["docker-registry"].RawManifest()
	require.NoError(t, err)
	assert.Equal(t, want, m)
}

func TestReleaseBefore421IsRefused(t *testing.T) {
	l := newLab(t, "4.20.8", testrelease.RegistryOptions{}, false)
	_, err := extiso.PlanRelease(context.Background(), l.client, l.rel, nil)
	var old *extiso.TooOldError
	require.ErrorAs(t, err, &old)
	assert.Contains(t, err.Error(), "4.20.8")
	assert.Contains(t, err.Error(), "first comes with OpenShift 4.21")
}

// A blob the registry serves corrupted stops the build with its digest
// named, and no ISO is left.
func TestCorruptedBlobLeavesNoISO(t *testing.T) {
	l := newLab(t, "4.21.3", testrelease.RegistryOptions{}, true)
	plan, err := extiso.PlanRelease(context.Background(), l.client, l.rel, nil)
	require.NoError(t, err)
	assert.True(t, plan.SourceChecks, "release.Client checks every blob's digest: it is not hashed twice")
	iso, img := baseEdit(t)
	x, err := extiso.Extend(iso, img, plan, time.Now(), nil)
	require.NoError(t, err)
	dir := t.TempDir()
	_, err = x.WriteStaged(context.Background(), filepath.Join(dir, "agent.x86_64.iso"), isoeditor.WriteOptions{})
	require.Error(t, err)
	t.Log(err)
	assert.Contains(t, err.Error(), l.victim.String())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// The negative control of the served side: one byte of one blob changed in
// the ISO after it was written. The registry serves the tree as it is (it
// does not check blobs), so the pull of that blob, and only of it, fails
// on the client's digest check naming it, as the hosts' podman does in the
// live lab (docs/e2e.md, negative/no-registry-corrupted-blob).
func TestCorruptedBlobInTheISOFailsItsPull(t *testing.T) {
	l := newLab(t, "4.21.3", testrelease.RegistryOptions{}, false)
	plan, err := extiso.PlanRelease(context.Background(), l.client, l.rel, nil)
	require.NoError(t, err)
	iso, img := baseEdit(t)
	x, err := extiso.Extend(iso, img, plan, time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC), nil)
	require.NoError(t, err)
	dst := filepath.Join(t.TempDir(), "agent.x86_64.iso")
	st, err := x.WriteStaged(context.Background(), dst, isoeditor.WriteOptions{})
	require.NoError(t, err)
	require.NoError(t, st.Commit())

	// the api-server's own layer, found in the written ISO by its bytes
	victim, err := l.components["agent-installer-api-server"].LayerByDigest(l.victim)
	require.NoError(t, err)
	rc, err := victim.Compressed()
	require.NoError(t, err)
	blob, err := io.ReadAll(rc)
	require.NoError(t, err)
	rc.Close()
	data, err := os.ReadFile(dst)
	require.NoError(t, err)
	at := bytes.Index(data, blob)
	require.GreaterOrEqual(t, at, 0, "the blob is in the ISO as it came")
	require.Equal(t, -1, bytes.Index(data[at+1:], blob), "the blob is written once")
	data[at+len(blob)/2] ^= 1
	require.NoError(t, os.WriteFile(dst, data, 0o600))

	tree := extract(t, filepath.Join(extract(t, dst), "registry", "data.iso.aa"))
	host := serve(t, tree)
	r, err := name.ParseReference(host+"/"+extiso.ComponentRepository+"@"+l.rel.Components["agent-installer-api-server"][strings.Index(l.rel.Components["agent-installer-api-server"], "@")+1:], name.Insecure)
	require.NoError(t, err)
	api, err := remote.Image(r)
	require.NoError(t, err, "the manifest and config are intact")
	pulled, err := api.LayerByDigest(l.victim)
	require.NoError(t, err)
	rc, err = pulled.Compressed()
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, rc)
	rc.Close()
	require.Error(t, err, "a changed blob was served and read without error")
	assert.Contains(t, err.Error(), "error verifying sha256 checksum")
	assert.Contains(t, err.Error(), l.victim.String(), "the error names the blob")
	// every other image still pulls
	for n, spec := range l.rel.Components {
		if n != "agent-installer-api-server" {
			pullAll(t, host+"/"+extiso.ComponentRepository+spec[strings.Index(spec, "@"):])
		}
	}
}

func TestExtraImagesByDigestOnly(t *testing.T) {
	l := newLab(t, "4.21.3", testrelease.RegistryOptions{}, false)
	extra := image(t, layer(t, "bundle", 1024))
	d, err := l.reg.Push("redhat/operator-bundle", "", extra)
	require.NoError(t, err)
	plan, err := extiso.PlanRelease(context.Background(), l.client, l.rel, []string{l.reg.Host + "/redhat/operator-bundle@" + d})
	require.NoError(t, err)
	assert.Equal(t, 6, plan.Images())
	_, err = extiso.PlanRelease(context.Background(), l.client, l.rel, []string{l.reg.Host + "/redhat/operator-bundle:v1"})
	assert.ErrorContains(t, err, "only images by digest")
}

// The write says how far it is (images and blobs written of all, bytes,
// the time left), and one cancelled half-way (Ctrl-C) leaves no ISO.
func TestProgressAndCancel(t *testing.T) {
	ctx := context.Background()
	l := newLab(t, "4.21.3", testrelease.RegistryOptions{}, false)
	plan, err := extiso.PlanRelease(ctx, l.client, l.rel, nil)
	require.NoError(t, err)
	iso, img := baseEdit(t)
	var seen []extiso.Progress
	x, err := extiso.Extend(iso, img, plan, time.Now(), func(p extiso.Progress) { seen = append(seen, p) })
	require.NoError(t, err)
	s, err := x.WriteStaged(ctx, filepath.Join(t.TempDir(), "agent.x86_64.iso"), isoeditor.WriteOptions{})
	require.NoError(t, err)
	require.NoError(t, s.Commit())
	require.Len(t, seen, len(plan.Blobs()))
	for i := 1; i < len(seen); i++ {
		assert.GreaterOrEqual(t, seen[i].Images, seen[i-1].Images)
		assert.Greater(t, seen[i].Bytes, seen[i-1].Bytes)
	}
	last := seen[len(seen)-1]
	assert.Equal(t, plan.Images(), last.ImagesOf)
	assert.Equal(t, last.ImagesOf, last.Images)
	assert.Equal(t, last.Of, last.Blobs)
	assert.Equal(t, last.Total, last.Bytes)
	assert.Less(t, seen[0].Images, last.Images)

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	x, err = extiso.Extend(iso, img, plan, time.Now(), func(p extiso.Progress) {
		if p.Blobs == 1 {
			cancel()
		}
	})
	require.NoError(t, err)
	dir := t.TempDir()
	_, err = x.WriteStaged(cctx, filepath.Join(dir, "agent.x86_64.iso"), isoeditor.WriteOptions{})
	require.ErrorIs(t, err, context.Canceled)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing half-written")
}
