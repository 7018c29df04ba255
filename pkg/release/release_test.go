package release_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
	"github.com/seed-a052040e/agentiso/pkg/release"
)

func ctx(t *testing.T) context.Context { return ctxTB(t) }

func ctxTB(tb testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	tb.Cleanup(cancel)
	return c
}

func push(t *testing.T, r *testrelease.Registry, repo, tag string, obj any) string {
	t.Helper()
	d, err := r.Push(repo, tag, obj)
	require.NoError(t, err)
	return d
}

func client(t *testing.T, r *testrelease.Registry, o release.Options) *release.Client {
	t.Helper()
	if o.TrustBundle == nil {
		o.TrustBundle = r.CAPEM
	}
	c, err := release.New(o)
	require.NoError(t, err)
	return c
}

func TestResolveTagToDigest(t *testing.T) {
	r := testrelease.StartRegistry(t, testrelease.RegistryOptions{})
	img, err := testrelease.Payload{Version: "4.19.3"}.Image()
	require.NoError(t, err)
	dg := push(t, r, "ocp/release", "4.19.3-x86_64", img)

	spec := r.Host + "/ocp/release:4.19.3-x86_64"
	rel, err := client(t, r, release.Options{}).Resolve(ctx(t), spec)
	require.NoError(t, err)
	assert.Equal(t, spec, rel.PullSpec)
	assert.Equal(t, dg, rel.Digest)
	assert.Equal(t, r.Host+"/ocp/release@"+dg, rel.Pinned)
	assert.Equal(t, "4.19.3", rel.Version)
	assert.Equal(t, "x86_64", rel.Arch)
	assert.Equal(t, []string{"x86_64"}, rel.Architectures)
	assert.Equal(t, testrelease.DefaultComponents(), rel.Components)
	require.NotNil(t, rel.Stream)
	assert.Equal(t, "rhcos-4.19", rel.Stream.Stream)
	assert.Contains(t, rel.Stream.Architectures, "x86_64")

	// By digest gives the same answer.
	rel2, err := client(t, r, release.Options{}).Resolve(ctx(t), rel.Pinned)
	require.NoError(t, err)
	assert.Equal(t, rel.Digest, rel2.Digest)
	assert.Equal(t, rel.Pinned, rel2.Pinned)
}

func TestResolveMultiArchIndex(t *testing.T) {
	r := testrelease.StartRegistry(t, testrelease.RegistryOptions{})
	idx, err := testrelease.Index(testrelease.Payload{Version: "4.20.1"}, "x86_64", "aarch64", "ppc64le", "s390x")
	require.NoError(t, err)
	dg := push(t, r, "ocp/release", "4.20.1-multi", idx)

	rel, err := client(t, r, release.Options{Arch: "aarch64"}).Resolve(ctx(t), r.Host+"/ocp/release:4.20.1-multi")
	require.NoError(t, err)
	assert.Equal(t, dg, rel.Digest, "the pinned digest is the manifest list's, not one image's")
	assert.Equal(t, "multi", rel.Arch)
	assert.Equal(t, []string{"aarch64", "ppc64le", "s390x", "x86_64"}, rel.Architectures)
	assert.Equal(t, "4.20.1", rel.Version)
	assert.Equal(t, "multi", rel.Metadata[release.MultiArchMetadataKey])

	// A list without the cluster's architecture is a mismatch.
	idx2, err := testrelease.Index(testrelease.Payload{Version: "4.20.1"}, "x86_64", "aarch64")
	require.NoError(t, err)
	push(t, r, "ocp/release", "two", idx2)
	_, err = client(t, r, release.Options{Arch: "s390x"}).Resolve(ctx(t), r.Host+"/ocp/release:two")
	var am *release.ArchMismatchError
	require.ErrorAs(t, err, &am)
	assert.Equal(t, []string{"aarch64", "x86_64"}, am.Available)
	assert.Contains(t, err.Error(), "s390x")
}

func TestResolveArchMismatchSingle(t *testing.T) {
	r := testrelease.StartRegistry(t, testrelease.RegistryOptions{})
	img, err := testrelease.Payload{Arch: "aarch64"}.Image()
	require.NoError(t, err)
	push(t, r, "ocp/release", "arm", img)
	_, err = client(t, r, release.Options{Arch: "amd64"}).Resolve(ctx(t), r.Host+"/ocp/release:arm")
	var am *release.ArchMismatchError
	require.ErrorAs(t, err, &am)
	assert.Equal(t, "x86_64", am.Want)
	assert.Equal(t, []string{"aarch64"}, am.Available)
}

func TestMirrorRewriting(t *testing.T) {
	mirror := testrelease.StartRegistry(t, testrelease.RegistryOptions{})
	img, err := testrelease.Payload{}.Image()
	require.NoError(t, err)
	dg := push(t, mirror, "mirror/ocp-release", "4.19.3-x86_64", img)
	// A second, empty mirror listed first: it is tried, misses, and the
	// next one serves.
	empty := testrelease.StartRegistry(t, testrelease.RegistryOptions{})
	bundle := append(append([]byte{}, mirror.CAPEM...), empty.CAPEM...)
	src := "quay.io/openshift-release-dev/ocp-release"
	mirrors := []release.Mirror{
		{Source: "quay.io/openshift-release-dev", Mirrors: []string{"unused.invalid/x"}, DigestOnly: true, Blocked: true},
		{Source: src, Mirrors: []string{empty.Host + "/nothing", mirror.Host + "/mirror/ocp-release"}, DigestOnly: true, Blocked: true},
	}
	c := client(t, mirror, release.Options{Mirrors: mirrors, TrustBundle: bundle})

	rel, err := c.Resolve(ctx(t), src+"@"+dg)
	require.NoError(t, err)
	assert.Equal(t, src+"@"+dg, rel.Pinned, "pinned to the source repository, so hosts use their own mirror config")
	assert.Equal(t, mirror.Host+"/mirror/ocp-release@"+dg, rel.From)
	require.Len(t, rel.Attempts, 2, "the locations after the one that served it are not listed")
	assert.Error(t, rel.Attempts[0].Err)
	assert.NoError(t, rel.Attempts[1].Err)

	// A tag is never looked up on a digest-only mirror, and the blocked
	// source is not contacted: a clear miss naming every location.
	seen := len(mirror.Requests()) + len(empty.Requests())
	_, err = c.Resolve(ctx(t), src+":4.19.3-x86_64")
	var miss *release.MirrorMissError
	require.ErrorAs(t, err, &miss)
	require.Len(t, miss.Attempts, 3)
	for _, a := range miss.Attempts {
		assert.NotEmpty(t, a.Skipped, a.String())
	}
	assert.Contains(t, err.Error(), "mirror-by-digest-only")
	assert.Contains(t, err.Error(), "1. mirror "+empty.Host+"/nothing:4.19.3-x86_64")
	assert.Equal(t, seen, len(mirror.Requests())+len(empty.Requests()), "a tag reached a digest-only mirror")

	// Without digest-only, the same tag resolves through the mirror.
	mirrors[1].DigestOnly = false
	rel, err = client(t, mirror, release.Options{Mirrors: mirrors, TrustBundle: bundle}).Resolve(ctx(t), src+":4.19.3-x86_64")
	require.NoError(t, err)
	assert.Equal(t, dg, rel.Digest)
	assert.Equal(t, src+"@"+dg, rel.Pinned)
}

func TestMirrorMissListsEveryLocation(t *testing.T) {
	r := testrelease.StartRegistry(t, testrelease.RegistryOptions{})
	src := r.Host + "/ocp/release"
	dg := "sha256:" + strings.Repeat("ab", 32)
	c := client(t, r, release.Options{Mirrors: []release.Mirror{{Source: src, Mirrors: []string{r.Host + "/m1", r.Host + "/m2"}, DigestOnly: true}}})
	_, err := c.Resolve(ctx(t), src+"@"+dg)
	var miss *release.MirrorMissError
	require.ErrorAs(t, err, &miss)
	require.Len(t, miss.Attempts, 3)
	assert.Equal(t, r.Host+"/m1@"+dg, miss.Attempts[0].Location)
	assert.Equal(t, r.Host+"/m2@"+dg, miss.Attempts[1].Location)
	assert.Equal(t, src+"@"+dg, miss.Attempts[2].Location)
	for _, a := range miss.Attempts {
		assert.Error(t, a.Err)
	}
}

func TestTLSUnknownCA(t *testing.T) {
	r := testrelease.StartRegistry(t, testrelease.RegistryOptions{})
	other := testrelease.StartRegistry(t, testrelease.RegistryOptions{})
	img, err := testrelease.Payload{}.Image()
	require.NoError(t, err)
	push(t, r, "ocp/release", "x", img)
	c := client(t, r, release.Options{TrustBundle: other.CAPEM})
	_, err = c.Resolve(ctx(t), r.Host+"/ocp/release:x")
	var ca *release.UnknownCAError
	require.ErrorAs(t, err, &ca)
	assert.Equal(t, r.Host, ca.Registry)
	assert.Equal(t, "CN=testrelease registry", ca.Subject)
	assert.Equal(t, "CN=testrelease CA", ca.Issuer)
	assert.Contains(t, err.Error(), `additionalTrustBundle ("CN=testrelease CA")`)
	assert.Contains(t, err.Error(), "add the CA that issued it")

	_, err = release.New(release.Options{TrustBundle: []byte("not pem")})
	assert.ErrorContains(t, err, "additionalTrustBundle holds no PEM certificate")
}

func TestAuthFromPullSecret(t *testing.T) {
	for _, mode := range []testrelease.Auth{testrelease.AuthBasic, testrelease.AuthBearer} {
		t.Run(map[testrelease.Auth]string{testrelease.AuthBasic: "basic", testrelease.AuthBearer: "bearer"}[mode], func(t *testing.T) {
			r := testrelease.StartRegistry(t, testrelease.RegistryOptions{Auth: mode, Username: "u1", Password: "p1"})
			img, err := testrelease.Payload{}.Image()
			require.NoError(t, err)
			dg := push(t, r, "ocp/release", "x", img)
			spec := r.Host + "/ocp/release:x"

			rel, err := client(t, r, release.Options{PullSecret: r.PullSecret()}).Resolve(ctx(t), spec)
			require.NoError(t, err)
			assert.Equal(t, dg, rel.Digest)

			// A namespace-scoped entry wins over the host entry.
			scoped := []byte(`{"auths":{"` + r.Host + `":{"auth":"d3Jvbmc6d3Jvbmc="},"` + r.Host + `/ocp":{"username":"u1","password":"p1"}}}`)
			_, err = client(t, r, release.Options{PullSecret: scoped}).Resolve(ctx(t), spec)
			require.NoError(t, err)

			// Wrong credentials: which registry, which entry.
			bad := []byte(`{"auths":{"https://` + r.Host + `/v1/":{"auth":"d3Jvbmc6d3Jvbmc="}}}`)
			_, err = client(t, r, release.Options{PullSecret: bad}).Resolve(ctx(t), spec)
			var ua *release.UnauthorizedError
			require.ErrorAs(t, err, &ua)
			assert.Equal(t, r.Host, ua.Registry)
			assert.Equal(t, r.Host, ua.AuthEntry)
			assert.Contains(t, err.Error(), `the pull secret entry "`+r.Host+`" was used`)

			// No entry: anonymous, and the message says so.
			_, err = client(t, r, release.Options{PullSecret: []byte(`{"auths":{"quay.io":{"auth":"dTpw"}}}`)}).Resolve(ctx(t), spec)
			require.ErrorAs(t, err, &ua)
			assert.Empty(t, ua.AuthEntry)
			assert.Contains(t, err.Error(), "no entry of the pull secret matches")
		})
	}
}

func TestNotAReleaseImage(t *testing.T) {
	r := testrelease.StartRegistry(t, testrelease.RegistryOptions{})
	img, err := testrelease.Payload{Omit: []string{"release-manifests/image-references"}}.Image()
	require.NoError(t, err)
	push(t, r, "ocp/release", "broken", img)
	_, err = client(t, r, release.Options{}).Resolve(ctx(t), r.Host+"/ocp/release:broken")
	var nr *release.NotReleaseError
	require.ErrorAs(t, err, &nr)
	assert.Contains(t, err.Error(), "release-manifests/image-references")

	mos, err := testrelease.MachineOSImage("x86_64", []byte("iso"), []byte("{}"))
	require.NoError(t, err)
	push(t, r, "some/image", "latest", mos)
	_, err = client(t, r, release.Options{}).Resolve(ctx(t), r.Host+"/some/image:latest")
	require.ErrorAs(t, err, &nr)
}

func TestMissingBootImagesIsNotFatal(t *testing.T) {
	r := testrelease.StartRegistry(t, testrelease.RegistryOptions{})
	img, err := testrelease.Payload{Omit: []string{"release-manifests/0000_50_installer_coreos-bootimages.yaml"}}.Image()
	require.NoError(t, err)
	push(t, r, "ocp/release", "old", img)
	rel, err := client(t, r, release.Options{}).Resolve(ctx(t), r.Host+"/ocp/release:old")
	require.NoError(t, err)
	assert.Nil(t, rel.Stream)
}

func TestCorruptedLayer(t *testing.T) {
	img, err := testrelease.Payload{}.Image()
	require.NoError(t, err)
	layers, err := img.Layers()
	require.NoError(t, err)
	top, err := layers[len(layers)-1].Digest()
	require.NoError(t, err)
	r := testrelease.StartRegistry(t, testrelease.RegistryOptions{Tamper: func(p string, b []byte) []byte {
		if strings.HasSuffix(p, top.String()) {
			b[len(b)-3] ^= 0xff
		}
		return b
	}})
	push(t, r, "ocp/release", "x", img)
	_, err = client(t, r, release.Options{LayerRetries: -1}).Resolve(ctx(t), r.Host+"/ocp/release:x")
	require.Error(t, err)
	assert.Contains(t, err.Error(), top.String())
}

func TestWrongDigest(t *testing.T) {
	img, err := testrelease.Payload{}.Image()
	require.NoError(t, err)
	r := testrelease.StartRegistry(t, testrelease.RegistryOptions{Tamper: func(p string, b []byte) []byte {
		if strings.Contains(p, "/manifests/") {
			return bytes.Replace(b, []byte(`"schemaVersion":2`), []byte(`"schemaVersion": 2`), 1)
		}
		return b
	}})
	dg := push(t, r, "ocp/release", "", img)
	_, err = client(t, r, release.Options{}).Resolve(ctx(t), r.Host+"/ocp/release@"+dg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "digest")
}

func TestRegistryDropsConnections(t *testing.T) {
	img, err := testrelease.Payload{}.Image()
	require.NoError(t, err)
	cfg, err := img.ConfigName()
	require.NoError(t, err)
	layers, err := img.Layers()
	require.NoError(t, err)
	top, err := layers[len(layers)-1].Digest()
	require.NoError(t, err)
	// The config blob breaks twice, or the manifests layer breaks twice:
	// each is read again, and resolving succeeds.
	for _, match := range []string{cfg.String(), top.String()} {
		r := testrelease.StartRegistry(t, testrelease.RegistryOptions{DropBlobs: 2, DropMatch: match})
		push(t, r, "ocp/release", "x", img)
		rel, err := client(t, r, release.Options{}).Resolve(ctx(t), r.Host+"/ocp/release:x")
		require.NoError(t, err, match)
		assert.Equal(t, "4.19.3", rel.Version)
	}

	// Always broken: a clear error naming the layer, no hang.
	r2 := testrelease.StartRegistry(t, testrelease.RegistryOptions{DropBlobs: 1000, DropMatch: top.String()})
	push(t, r2, "ocp/release", "x", img)
	_, err = client(t, r2, release.Options{}).Resolve(ctx(t), r2.Host+"/ocp/release:x")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "layer "+top.String())
}

func TestStreamFileFromMachineOSImages(t *testing.T) {
	r := testrelease.StartRegistry(t, testrelease.RegistryOptions{Auth: testrelease.AuthBasic})
	iso := bytes.Repeat([]byte("ISO!"), 1<<16)
	st := testrelease.Stream("rhcos-4.19", "9.6.1", map[string]testrelease.ISO{"x86_64": {Location: "https://x/y.iso", SHA256: "00"}})
	mos, err := testrelease.MachineOSImage("x86_64", iso, st)
	require.NoError(t, err)
	dg := push(t, r, "ocp/art", "", mos)
	c := client(t, r, release.Options{PullSecret: r.PullSecret(),
		Mirrors: []release.Mirror{{Source: "quay.io/openshift-release-dev/ocp-v4.0-art-dev", Mirrors: []string{r.Host + "/ocp/art"}, DigestOnly: true, Blocked: true}}})
	spec := "quay.io/openshift-release-dev/ocp-v4.0-art-dev@" + dg
	var got bytes.Buffer
	from, err := c.StreamFile(ctx(t), spec, "/coreos/coreos-x86_64.iso", func(rd io.Reader, size int64) error {
		assert.Equal(t, int64(len(iso)), size)
		_, err := io.Copy(&got, rd)
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, r.Host+"/ocp/art@"+dg, from)
	assert.Equal(t, iso, got.Bytes())

	files, _, err := c.ReadFiles(ctx(t), spec, []string{"coreos/coreos-stream.json", "coreos/coreos-x86_64.iso.sha256", "coreos/absent"}, 1<<20)
	require.NoError(t, err)
	assert.Equal(t, st, files["coreos/coreos-stream.json"])
	assert.Len(t, files, 2)

	_, err = c.StreamFile(ctx(t), spec, "coreos/coreos-s390x.iso", func(io.Reader, int64) error { return nil })
	assert.ErrorContains(t, err, "has no /coreos/coreos-s390x.iso")

	errBoom := errors.New("boom")
	_, err = c.StreamFile(ctx(t), spec, "coreos/coreos-x86_64.iso", func(io.Reader, int64) error { return errBoom })
	assert.ErrorIs(t, err, errBoom)
}

func TestRefusesPlainHTTPAndBadInput(t *testing.T) {
	_, err := release.New(release.Options{PullSecret: []byte("{")})
	assert.ErrorContains(t, err, "pull secret is not valid JSON")
	_, err = release.New(release.Options{Arch: "mips"})
	assert.ErrorContains(t, err, "unknown architecture")
	c, err := release.New(release.Options{})
	require.NoError(t, err)
	_, err = c.Resolve(ctx(t), "not a ref")
	assert.ErrorContains(t, err, "is not an image pull spec")
}
