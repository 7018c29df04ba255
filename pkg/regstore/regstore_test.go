package regstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
	"github.com/seed-a052040e/agentiso/pkg/regstore"
)

func TestMain(m *testing.M) {
	// The distribution registry logs every request through logrus.
	logrus.SetOutput(io.Discard)
	os.Exit(m.Run())
}

func randomLayer(t testing.TB, name string, size int) v1.Layer {
	t.Helper()
	b := make([]byte, size)
	_, err := rand.Read(b)
	require.NoError(t, err)
	l, err := testrelease.Layer(map[string][]byte{name: b})
	require.NoError(t, err)
	return l
}

func imageWith(t testing.TB, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	require.NoError(t, err)
	return img
}

// fixture is a small release-like set: the payload image, two components
// sharing a base layer, and the registry image.
type fixture struct {
	release, compA, compB, registry v1.Image
	shared                          v1.Layer
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	rel, err := testrelease.Payload{Version: "4.21.3"}.Image()
	require.NoError(t, err)
	shared := randomLayer(t, "usr/lib/base.bin", 64<<10)
	return fixture{
		release:  rel,
		shared:   shared,
		compA:    imageWith(t, shared, randomLayer(t, "usr/bin/a", 8<<10)),
		compB:    imageWith(t, shared, randomLayer(t, "usr/bin/b", 8<<10)),
		registry: imageWith(t, shared, randomLayer(t, "usr/bin/distribution", 16<<10)),
	}
}

func (f fixture) plan(t testing.TB) *regstore.Plan {
	t.Helper()
	ctx := context.Background()
	p := regstore.NewPlan()
	require.NoError(t, p.Add(ctx, "openshift/release-images", "4.21.3-x86_64", f.release))
	require.NoError(t, p.Add(ctx, "openshift/release", "4.21.3-x86_64-comp-a", f.compA))
	require.NoError(t, p.Add(ctx, "openshift/release", "4.21.3-x86_64-docker-registry", f.registry))
	require.NoError(t, p.Add(ctx, "openshift/release", "", f.compB))
	require.NoError(t, p.AddDirImage(ctx, "images/registry", f.registry))
	return p
}

func digestOf(t testing.TB, m interface{ Digest() (v1.Hash, error) }) v1.Hash {
	t.Helper()
	d, err := m.Digest()
	require.NoError(t, err)
	return d
}

func TestPlanLayoutAndSharedBlobsOnce(t *testing.T) {
	f := newFixture(t)
	p := f.plan(t)

	files := map[string]regstore.File{}
	for _, fl := range p.Files() {
		files[fl.Path] = fl
	}
	sharedD := digestOf(t, f.shared)
	// The shared layer is one blob to stream, named by the store and by
	// the dir: image.
	n := 0
	for _, b := range p.Blobs() {
		if b.Digest == sharedD {
			n++
		}
	}
	assert.Equal(t, 1, n, "a blob listed by four images is streamed once")
	assert.Equal(t, sharedD, files[regstore.BlobPath(sharedD)].Blob)
	assert.Equal(t, sharedD, files["images/registry/"+sharedD.Hex].Blob)

	rel := digestOf(t, f.release)
	root := regstore.Root + "/repositories/openshift/release-images/_manifests/"
	for _, pth := range []string{
		root + "tags/4.21.3-x86_64/current/link",
		root + "tags/4.21.3-x86_64/index/sha256/" + rel.Hex + "/link",
		root + "revisions/sha256/" + rel.Hex + "/link",
	} {
		require.Contains(t, files, pth)
		assert.Equal(t, "sha256:"+rel.Hex, string(files[pth].Data), pth)
	}
	raw, err := f.release.RawManifest()
	require.NoError(t, err)
	assert.Equal(t, raw, files[regstore.BlobPath(rel)].Data, "the manifest is a blob of the store")
	assert.Contains(t, files, regstore.Root+"/repositories/openshift/release/_layers/sha256/"+sharedD.Hex+"/link")
	assert.Equal(t, regstore.DirVersion, string(files["images/registry/version"].Data))
	regRaw, err := f.registry.RawManifest()
	require.NoError(t, err)
	assert.Equal(t, regRaw, files["images/registry/manifest.json"].Data)
	assert.Equal(t, 4, p.Images())

	// Bytes counts every file once and a doubly named blob once.
	var want int64
	seen := map[v1.Hash]bool{}
	for _, fl := range p.Files() {
		if fl.Data != nil {
			want += fl.Size
		} else if !seen[fl.Blob] {
			seen[fl.Blob] = true
			want += fl.Size
		}
	}
	assert.Equal(t, want, p.Bytes())
}

// serve runs the real distribution registry (its HTTP handlers and
// filesystem driver, read-only as MCO runs it) on the tree under root.
func serve(t *testing.T, root string) string {
	t.Helper()
	cfg := &configuration.Configuration{
		Storage: configuration.Storage{
			"filesystem":  configuration.Parameters{"rootdirectory": root},
			"maintenance": configuration.Parameters{"readonly": map[any]any{"enabled": true}},
		},
	}
	cfg.HTTP.Secret = "regstore-test"
	cfg.Log.Level = "error"
	app := handlers.NewApp(context.Background(), cfg)
	srv := httptest.NewServer(app)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func pull(t *testing.T, ref string) v1.Image {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	require.NoError(t, err)
	img, err := remote.Image(r)
	require.NoError(t, err, ref)
	return img
}

// readAll reads every layer of img through the registry; go-containerregistry
// checks each against its digest.
func readAll(t *testing.T, img v1.Image) {
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
	_, err = img.RawConfigFile()
	require.NoError(t, err)
}

func TestWriteDirIsServedByDistribution(t *testing.T) {
	f := newFixture(t)
	p := f.plan(t)
	dir := filepath.Join(t.TempDir(), "data")
	var last regstore.Progress
	calls := 0
	require.NoError(t, regstore.WriteDir(context.Background(), dir, p, func(pr regstore.Progress) { last = pr; calls++ }))
	assert.Equal(t, len(p.Blobs()), calls)
	assert.Equal(t, p.Bytes(), last.Bytes)
	assert.Equal(t, p.Bytes(), last.Total)
	assert.Equal(t, last.Of, last.Blobs)

	host := serve(t, dir)
	for _, c := range []struct {
		ref string
		img v1.Image
	}{
		{"openshift/release-images:4.21.3-x86_64", f.release},
		{"openshift/release:4.21.3-x86_64-comp-a", f.compA},
		{"openshift/release:4.21.3-x86_64-docker-registry", f.registry},
		{"openshift/release@" + digestOf(t, f.compB).String(), f.compB},
		{"openshift/release-images@" + digestOf(t, f.release).String(), f.release},
	} {
		got := pull(t, host+"/"+c.ref)
		assert.Equal(t, digestOf(t, c.img), digestOf(t, got), c.ref)
		readAll(t, got)
	}
	// MCO lists the tags of openshift/release-images: exactly the release's.
	repo, err := name.NewRepository(host+"/openshift/release-images", name.Insecure)
	require.NoError(t, err)
	tags, err := remote.List(repo)
	require.NoError(t, err)
	assert.Equal(t, []string{"4.21.3-x86_64"}, tags)
	// A layer is served only by the repositories whose images list it.
	r, err := name.ParseReference(host+"/openshift/release-images@"+digestOf(t, f.shared).String(), name.Insecure)
	require.NoError(t, err)
	l, err := remote.Layer(r.Context().Digest(digestOf(t, f.shared).String()))
	require.NoError(t, err)
	_, err = l.Compressed()
	assert.Error(t, err, "openshift/release-images does not list the components' layers")

	// The dir: image shares the store's bytes: a hard link, not a copy.
	sharedD := digestOf(t, f.shared)
	a, err := os.Stat(filepath.Join(dir, filepath.FromSlash(regstore.BlobPath(sharedD))))
	require.NoError(t, err)
	b, err := os.Stat(filepath.Join(dir, "images", "registry", sharedD.Hex))
	require.NoError(t, err)
	assert.True(t, os.SameFile(a, b))
}

func TestIndexKeepsOneArchitecture(t *testing.T) {
	idx, err := testrelease.Index(testrelease.Payload{Version: "4.21.3"}, "x86_64", "aarch64")
	require.NoError(t, err)
	p := regstore.NewPlan()
	require.NoError(t, p.AddIndex(context.Background(), "openshift/release-images", "4.21.3-multi", idx, func(d v1.Descriptor) bool {
		return d.Platform != nil && d.Platform.Architecture == "amd64"
	}))
	assert.Equal(t, 1, p.Images())
	dir := filepath.Join(t.TempDir(), "data")
	require.NoError(t, regstore.WriteDir(context.Background(), dir, p, nil))
	host := serve(t, dir)

	r, err := name.ParseReference(host+"/openshift/release-images@"+digestOf(t, idx).String(), name.Insecure)
	require.NoError(t, err)
	gotIdx, err := remote.Index(r)
	require.NoError(t, err)
	assert.Equal(t, digestOf(t, idx), digestOf(t, gotIdx))
	im, err := idx.IndexManifest()
	require.NoError(t, err)
	// Serves answers as the registry does
	assert.Equal(t, []string{"openshift/release-images"}, p.Repositories())
	assert.True(t, p.Serves("openshift/release-images", "4.21.3-multi"))
	assert.True(t, p.Serves("openshift/release-images", digestOf(t, idx).String()))
	assert.False(t, p.Serves("openshift/release-images", "4.21.4-multi"))
	assert.False(t, p.Serves("openshift/release", "4.21.3-multi"))
	assert.False(t, p.Serves("../openshift/release-images", "4.21.3-multi"))
	for _, m := range im.Manifests {
		ref := host + "/openshift/release-images@" + m.Digest.String()
		assert.Equal(t, m.Platform.Architecture == "amd64", p.Serves("openshift/release-images", m.Digest.String()), m.Platform.Architecture)
		if m.Platform.Architecture == "amd64" {
			readAll(t, pull(t, ref))
			continue
		}
		rr, err := name.ParseReference(ref, name.Insecure)
		require.NoError(t, err)
		_, err = remote.Image(rr)
		assert.Error(t, err, "the other architecture is not stored")
	}

	q := regstore.NewPlan()
	err = q.AddIndex(context.Background(), "openshift/release-images", "", idx, func(v1.Descriptor) bool { return false })
	assert.ErrorContains(t, err, "no image of the index is kept")
}

// tampered is an image whose one layer reads other bytes than its digest
// says (a corrupted mirror, a damaged archive).
type tampered struct {
	v1.Image
	victim v1.Hash
	bytes  func([]byte) []byte
}

type tamperedLayer struct {
	v1.Layer
	bytes func([]byte) []byte
}

func (l tamperedLayer) Compressed() (io.ReadCloser, error) {
	rc, err := l.Layer.Compressed()
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(l.bytes(b))), nil
}

func (i tampered) LayerByDigest(h v1.Hash) (v1.Layer, error) {
	l, err := i.Image.LayerByDigest(h)
	if err != nil || h != i.victim {
		return l, err
	}
	return tamperedLayer{Layer: l, bytes: i.bytes}, nil
}

func TestCorruptBlobFailsNamedAndLeavesNothing(t *testing.T) {
	f := newFixture(t)
	victim := randomLayer(t, "usr/bin/victim", 32<<10)
	vd := digestOf(t, victim)
	for name, change := range map[string]func([]byte) []byte{
		"one byte flipped": func(b []byte) []byte { c := bytes.Clone(b); c[len(c)/2] ^= 1; return c },
		"truncated":        func(b []byte) []byte { return b[:len(b)-1] },
		"longer":           func(b []byte) []byte { return append(bytes.Clone(b), 0) },
	} {
		t.Run(name, func(t *testing.T) {
			img := tampered{Image: imageWith(t, f.shared, victim), victim: vd, bytes: change}
			p := regstore.NewPlan()
			require.NoError(t, p.Add(context.Background(), "openshift/release", "4.21.3-x86_64-victim", img))
			parent := t.TempDir()
			dir := filepath.Join(parent, "data")
			err := regstore.WriteDir(context.Background(), dir, p, nil)
			var de *regstore.DigestError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, vd, de.Want)
			assert.Contains(t, err.Error(), vd.String())
			assert.Contains(t, err.Error(), "openshift/release@"+digestOf(t, img).String())
			entries, rerr := os.ReadDir(parent)
			require.NoError(t, rerr)
			assert.Empty(t, entries, "no tree and no temporary directory is left")
		})
	}
}

type cancelOnRead struct {
	v1.Layer
	cancel func()
}

func (c cancelOnRead) Compressed() (io.ReadCloser, error) { c.cancel(); return c.Layer.Compressed() }

type cancelling struct {
	v1.Image
	cancel func()
}

func (c cancelling) LayerByDigest(h v1.Hash) (v1.Layer, error) {
	l, err := c.Image.LayerByDigest(h)
	return cancelOnRead{l, c.cancel}, err
}

func TestCancelledWriteLeavesNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	img := cancelling{Image: imageWith(t, randomLayer(t, "a", 4<<20)), cancel: cancel}
	p := regstore.NewPlan()
	require.NoError(t, p.Add(context.Background(), "openshift/release", "t", img))
	parent := t.TempDir()
	err := regstore.WriteDir(ctx, filepath.Join(parent, "data"), p, nil)
	require.ErrorIs(t, err, context.Canceled)
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestWriteDirRefusesAnExistingDirectory(t *testing.T) {
	dir := t.TempDir()
	err := regstore.WriteDir(context.Background(), dir, regstore.NewPlan(), nil)
	assert.ErrorContains(t, err, "already exists")
}

func TestNamesAreChecked(t *testing.T) {
	img := imageWith(t, randomLayer(t, "a", 16))
	ctx := context.Background()
	p := regstore.NewPlan()
	for _, repo := range []string{"", "../etc", "openshift//release", "OpenShift/release", "/abs", "a/", "a/../b", strings.Repeat("a", 256)} {
		assert.Error(t, p.Add(ctx, repo, "", img), repo)
	}
	for _, tag := range []string{".hidden", "-x", "a/b", "..", strings.Repeat("t", 129), "tag with space"} {
		assert.Error(t, p.Add(ctx, "openshift/release", tag, img), tag)
	}
	for _, dir := range []string{"", "/images", "images/../..", "docker/registry", "images//registry", "."} {
		assert.Error(t, p.AddDirImage(ctx, dir, img), dir)
	}
	assert.NoError(t, p.Add(ctx, "openshift/release-images", "4.21.3-x86_64", img))
	assert.NoError(t, p.Add(ctx, "ocp4/openshift4__x-y.z", "sha256-abc", img))
}

func TestSameBlobWithTwoSizesIsRefused(t *testing.T) {
	l := randomLayer(t, "a", 1024)
	img := imageWith(t, l)
	m, err := img.Manifest()
	require.NoError(t, err)
	m = m.DeepCopy()
	m.Layers[0].Size++
	liar := lyingManifest{Image: img, m: m}
	p := regstore.NewPlan()
	require.NoError(t, p.Add(context.Background(), "a/b", "", img))
	err = p.Add(context.Background(), "a/c", "", liar)
	assert.ErrorContains(t, err, "has size")
}

// lyingManifest serves another manifest than its digest names.
type lyingManifest struct {
	v1.Image
	m *v1.Manifest
}

func (l lyingManifest) Manifest() (*v1.Manifest, error) { return l.m, nil }

func (l lyingManifest) RawManifest() ([]byte, error) {
	raw, err := l.Image.RawManifest()
	if err != nil {
		return nil, err
	}
	return raw, nil
}

func (l lyingManifest) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }

func TestManifestNotMatchingItsDigestIsRefused(t *testing.T) {
	img := imageWith(t, randomLayer(t, "a", 16))
	bad := badDigest{img}
	err := regstore.NewPlan().Add(context.Background(), "a/b", "", bad)
	var de *regstore.DigestError
	require.True(t, errors.As(err, &de), "%v", err)
}

type badDigest struct{ v1.Image }

func (b badDigest) Digest() (v1.Hash, error) {
	return v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("0", 64)}, nil
}

// An image counts as written once every blob it lists is: a shared blob
// early in the stream serves several images.
func TestImagesDone(t *testing.T) {
	x, y, z := randomLayer(t, "x", 64), randomLayer(t, "y", 64), randomLayer(t, "z", 64)
	p := regstore.NewPlan()
	ctx := context.Background()
	require.NoError(t, p.Add(ctx, "a", "a", imageWith(t, x, y)))
	require.NoError(t, p.Add(ctx, "b", "b", imageWith(t, x)))
	require.NoError(t, p.Add(ctx, "c", "c", imageWith(t, y, z)))
	require.Len(t, p.Blobs(), 3)
	for blobs, want := range []int{0, 1, 2, 3} {
		assert.Equal(t, want, p.ImagesDone(blobs), "after %d blobs", blobs)
	}
	var last regstore.Progress
	require.NoError(t, regstore.WriteDir(ctx, filepath.Join(t.TempDir(), "s"), p, func(pr regstore.Progress) {
		assert.GreaterOrEqual(t, pr.Images, last.Images)
		last = pr
	}))
	assert.Equal(t, regstore.Progress{Bytes: last.Total, Total: last.Total, Blobs: 3, Of: 3, Images: 3, ImagesOf: 3, Elapsed: last.Elapsed}, last)
}
