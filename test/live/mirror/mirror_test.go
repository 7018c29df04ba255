package mirror_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	agentrelease "github.com/seed-a052040e/agentiso/pkg/release"
	"github.com/seed-a052040e/agentiso/test/live/mirror"
)

// extract writes the image's filesystem under dir (regular files and
// symlinks) and returns the file contents by path.
func extract(t *testing.T, img v1.Image, dir string) map[string]*tar.Header {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	hdrs := map[string]*tar.Header{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		hdrs["/"+strings.TrimSuffix(h.Name, "/")] = h
		p := filepath.Join(dir, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			require.NoError(t, os.MkdirAll(p, 0o755))
		case tar.TypeReg:
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			b, err := io.ReadAll(tr)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, b, os.FileMode(h.Mode)))
		case tar.TypeSymlink:
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.Symlink(h.Linkname, p))
		}
	}
	return hdrs
}

func TestMirror(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	m, err := mirror.Start(ctx, mirror.Options{Listen: "127.0.0.1:0", Arch: runtime.GOARCH, Version: "4.20.3"})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, m.Close()) })

	tr, err := m.Transport()
	require.NoError(t, err)
	pull := func(ref string) (v1.Image, error) {
		r, err := name.ParseReference(ref)
		require.NoError(t, err)
		return remote.Image(r, remote.WithContext(ctx), remote.WithTransport(tr))
	}

	require.True(t, strings.HasPrefix(m.ReleaseImage, mirror.SourceReleaseRepo+"@sha256:"), m.ReleaseImage)
	assert.Equal(t, mirror.SourceReleaseRepo+":4.20.3-"+map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH], m.ReleaseTag)
	assert.Equal(t, []mirror.Source{
		{Source: mirror.SourceReleaseRepo, Mirrors: []string{m.Addr + "/" + mirror.MirrorReleaseRepo}},
		{Source: mirror.SourceComponentRepo, Mirrors: []string{m.Addr + "/" + mirror.MirrorComponentRepo}},
	}, m.ImageDigestSources)
	assert.Empty(t, m.Pulls(), "pushes at Start are not recorded")

	// The release resolves through the digest-only mirror and pulls with the CA.
	relMirror, err := m.Resolve(m.ReleaseImage)
	require.NoError(t, err)
	assert.Equal(t, m.Images[0].Mirror, relMirror)
	rel, err := pull(relMirror)
	require.NoError(t, err)
	d, err := rel.Digest()
	require.NoError(t, err)
	assert.Equal(t, strings.TrimPrefix(m.ReleaseImage, mirror.SourceReleaseRepo+"@"), d.String())
	cf, err := rel.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, []string{"/usr/bin/cluster-version-operator"}, cf.Config.Entrypoint)
	assert.Equal(t, "4.20.3", cf.Config.Labels["io.openshift.release"])

	root := t.TempDir()
	hdrs := extract(t, rel, root)
	assert.Equal(t, mirror.StandinPath, hdrs["/usr/bin/cluster-version-operator"].Linkname)
	refs, err := os.ReadFile(filepath.Join(root, agentrelease.ImageReferencesPath))
	require.NoError(t, err)
	var stream agentrelease.ImageReferences
	require.NoError(t, json.Unmarshal(refs, &stream))
	assert.Equal(t, "ImageStream", stream.Kind)
	assert.Equal(t, "4.20.3", stream.Metadata.Name)
	var names []string
	for _, tag := range stream.Spec.Tags {
		names = append(names, tag.Name)
		assert.Equal(t, "DockerImage", tag.From.Kind)
		assert.True(t, strings.HasPrefix(tag.From.Name, mirror.SourceComponentRepo+"@sha256:"), "%s: %s is not a by-digest source pull spec", tag.Name, tag.From.Name)
		img, ok := m.Component(tag.Name)
		require.True(t, ok, tag.Name)
		assert.Equal(t, img.Source, tag.From.Name)
		// Each component pulls from the mirror by digest.
		mref, err := m.Resolve(tag.From.Name)
		require.NoError(t, err)
		ci, err := pull(mref)
		require.NoError(t, err, tag.Name)
		cd, err := ci.Digest()
		require.NoError(t, err)
		assert.Equal(t, img.Digest, cd.String())
		_, err = ci.Layers()
		require.NoError(t, err)
	}
	assert.ElementsMatch(t, []string{"agent-installer-api-server", "agent-installer-node-agent", "agent-installer-orchestrator",
		"agent-installer-csr-approver", "agent-installer-utils", "installer"}, names)
	meta, err := os.ReadFile(filepath.Join(root, agentrelease.MetadataPath))
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"cincinnati-metadata-v0","version":"4.20.3","previous":[],"metadata":{"url":"https://access.example.com/errata/4.20.3"}}`, string(meta))
	_, err = os.Stat(filepath.Join(root, agentrelease.BootImagesPath))
	require.NoError(t, err, "the payload carries the CoreOS boot-image stream")

	// The CVO stand-in answers "image NAME" from the payload, like the real one.
	cvo := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, filepath.Join(root, mirror.StandinPath), args...)
		cmd.Args[0] = "cluster-version-operator"
		cmd.Env = append(os.Environ(), "STANDIN_RELEASE_MANIFESTS="+filepath.Join(root, "release-manifests"))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if err != nil {
			return errb.String(), err
		}
		return out.String(), nil
	}
	api, _ := m.Component("agent-installer-api-server")
	out, err := cvo("image", "agent-installer-api-server")
	require.NoError(t, err, out)
	assert.Equal(t, api.Source, out, "printed without a newline, like the real CVO")
	out, err = cvo("image", "no-such-component")
	require.Error(t, err)
	assert.Contains(t, out, `component "no-such-component": no such component in the release payload`)

	// Only digests were asked for so far, and all were served.
	pulls := m.Pulls()
	require.NotEmpty(t, pulls)
	for _, p := range pulls {
		assert.True(t, p.ByDigest(), p.String())
		assert.Equal(t, http.StatusOK, p.Status, p.String())
	}
	relDigest := strings.TrimPrefix(m.ReleaseImage, mirror.SourceReleaseRepo+"@")
	assert.Contains(t, pulls, mirror.Pull{Method: "GET", Repository: mirror.MirrorReleaseRepo, Kind: "manifests", Reference: relDigest, Status: 200})

	// A tag reference is never mapped to the digest-only mirror, and the
	// mirror holds no tags: asking it for the release tag is a 404.
	_, err = m.Resolve(m.ReleaseTag)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a tag reference is not mirrored")
	tag := m.ReleaseTag[strings.LastIndex(m.ReleaseTag, ":")+1:]
	_, err = pull(m.Addr + "/" + mirror.MirrorReleaseRepo + ":" + tag)
	var terr *transport.Error
	require.ErrorAs(t, err, &terr)
	assert.Equal(t, http.StatusNotFound, terr.StatusCode)
	last := m.Pulls()[len(m.Pulls())-1]
	assert.Equal(t, mirror.Pull{Method: "GET", Repository: mirror.MirrorReleaseRepo, Kind: "manifests", Reference: tag, Status: 404}, last)
	assert.False(t, last.ByDigest())

	// A source outside the mirror's imageDigestSources is refused too.
	_, err = m.Resolve("registry.example.com/other/image@" + relDigest)
	require.ErrorContains(t, err, "no imageDigestSources entry covers")

	// Without the CA, TLS fails: the CA must reach the hosts.
	relRef, err := name.ParseReference(relMirror)
	require.NoError(t, err)
	_, err = remote.Image(relRef, remote.WithContext(ctx), remote.WithTransport(&http.Transport{Proxy: nil}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "certificate signed by unknown authority")

	// agentiso's release reader resolves the payload through the digest-only
	// mirror with the CA as trust bundle, never contacting the source.
	var mirrors []agentrelease.Mirror
	for _, s := range m.ImageDigestSources {
		mirrors = append(mirrors, agentrelease.Mirror{Source: s.Source, Mirrors: s.Mirrors, DigestOnly: true, Blocked: true})
	}
	rc, err := agentrelease.New(agentrelease.Options{Mirrors: mirrors, TrustBundle: m.CACertPEM, Proxy: &agentrelease.Proxy{}})
	require.NoError(t, err)
	got, err := rc.Resolve(ctx, m.ReleaseImage)
	require.NoError(t, err)
	assert.Equal(t, "4.20.3", got.Version)
	require.NotNil(t, got.Stream)
	assert.Equal(t, m.ReleaseImage, got.Pinned)
	assert.Equal(t, api.Source, got.Components["agent-installer-api-server"])
	_, err = rc.Resolve(ctx, m.ReleaseTag)
	require.Error(t, err, "a tag cannot be resolved in the air gap")

	for _, im := range m.Images {
		assert.Positive(t, im.Size)
		t.Logf("image %-30s %8.1f MiB compressed  %s", im.Component, float64(im.Size)/(1<<20), im.Source)
	}
}

func TestStartRejectsBadListen(t *testing.T) {
	_, err := mirror.Start(context.Background(), mirror.Options{Listen: "no-port", StandinBinary: "/nonexistent"})
	require.ErrorContains(t, err, `mirror: Listen "no-port"`)
}

// The docker-registry component the extended ISO's hosts run: the registry
// binary given, its configuration, no stand-in, and named by the release's
// image-references like every component.
func TestRegistryComponent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	standin, registryBin := filepath.Join(dir, "standin"), filepath.Join(dir, "registry")
	require.NoError(t, os.WriteFile(standin, []byte("#!/bin/false\n"), 0o755))
	require.NoError(t, os.WriteFile(registryBin, []byte("the distribution registry\n"), 0o755))
	m, err := mirror.Start(ctx, mirror.Options{Listen: "127.0.0.1:0", StandinBinary: standin, Version: "4.23.0", RegistryBinary: registryBin})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, m.Close()) })
	tr, err := m.Transport()
	require.NoError(t, err)

	reg, ok := m.Component(mirror.RegistryComponent)
	require.True(t, ok, "the payload has no %s component", mirror.RegistryComponent)
	ref, err := name.ParseReference(reg.Mirror)
	require.NoError(t, err)
	img, err := remote.Image(ref, remote.WithContext(ctx), remote.WithTransport(tr))
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, []string{mirror.RegistryBinaryPath}, cf.Config.Entrypoint)
	assert.Equal(t, []string{"serve", mirror.RegistryConfigPath}, cf.Config.Cmd)
	assert.Contains(t, cf.Config.Env, "OTEL_TRACES_EXPORTER=none")

	root := t.TempDir()
	hdrs := extract(t, img, root)
	require.Contains(t, hdrs, mirror.RegistryBinaryPath)
	assert.EqualValues(t, 0o755, hdrs[mirror.RegistryBinaryPath].Mode)
	b, err := os.ReadFile(filepath.Join(root, mirror.RegistryBinaryPath))
	require.NoError(t, err)
	assert.Equal(t, "the distribution registry\n", string(b))
	conf, err := os.ReadFile(filepath.Join(root, mirror.RegistryConfigPath))
	require.NoError(t, err)
	assert.Contains(t, string(conf), "rootdirectory: /var/lib/registry", "the store where every upstream unit mounts the payload")
	assert.NotContains(t, hdrs, mirror.StandinPath, "the registry image carries no stand-in")

	// The release names it, by digest under the source registry.
	var mirrors []agentrelease.Mirror
	for _, s := range m.ImageDigestSources {
		mirrors = append(mirrors, agentrelease.Mirror{Source: s.Source, Mirrors: s.Mirrors, DigestOnly: true, Blocked: true})
	}
	rc, err := agentrelease.New(agentrelease.Options{Mirrors: mirrors, TrustBundle: m.CACertPEM, Proxy: &agentrelease.Proxy{}})
	require.NoError(t, err)
	got, err := rc.Resolve(ctx, m.ReleaseImage)
	require.NoError(t, err)
	assert.Equal(t, reg.Source, got.Components[mirror.RegistryComponent])

	// Without the binary, Start says what builds it.
	_, err = mirror.Start(ctx, mirror.Options{Listen: "127.0.0.1:0", StandinBinary: standin, RegistryBinary: filepath.Join(dir, "missing")})
	require.ErrorContains(t, err, "hack/build-distribution.sh")
}
