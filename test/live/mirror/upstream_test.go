package mirror_test

import (
	"archive/tar"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	agentrelease "github.com/seed-a052040e/agentiso/pkg/release"
	"github.com/seed-a052040e/agentiso/test/live/mirror"
)

// fakeUpstream lays out a hack/build-upstream.sh cache directory and a base
// root file system with small files in place of the real binaries.
func fakeUpstream(t *testing.T, status string) mirror.Upstream {
	t.Helper()
	dir := t.TempDir()
	for p, data := range map[string]string{
		"assisted-service":              "service-binary",
		"agent-installer-client":        "client-binary",
		"agent/agent":                   "agent-binary",
		"agent/installer/ovs-gather.sh": "#!/bin/bash\n",
		"start_db.sh":                   "#!/usr/bin/env bash\nexec postgres -D /tmp/postgres/data/ -k /tmp\n",
		"BUILDINFO":                     "branch=release-4.20\nassisted-service.upstream=4e399454ffb97a17837bb2362518f5442f7dd086\nfailed=x\nstatus=" + status + "\n",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(data), 0o755))
	}
	base := func(file string) string {
		p := filepath.Join(t.TempDir(), "base.tar")
		f, err := os.Create(p)
		require.NoError(t, err)
		tw := tar.NewWriter(f)
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: "usr/bin/", Typeflag: tar.TypeDir, Mode: 0o755}))
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: "usr/bin/" + file, Typeflag: tar.TypeReg, Mode: 0o755, Size: 4}))
		_, err = tw.Write([]byte("base"))
		require.NoError(t, err)
		require.NoError(t, tw.Close())
		require.NoError(t, f.Close())
		return p
	}
	return mirror.Upstream{Dir: dir, ServiceBase: base("pg_ctl"), AgentBase: base("dmidecode")}
}

func TestUpstreamImages(t *testing.T) {
	_, err := mirror.NewUpstreamLayers(fakeUpstream(t, "incomplete"))
	require.ErrorContains(t, err, `status="incomplete"`)
	_, err = mirror.NewUpstreamLayers(mirror.Upstream{Dir: t.TempDir(), ServiceBase: "/nonexistent"})
	require.ErrorContains(t, err, "hack/build-upstream.sh builds it")

	up, err := mirror.NewUpstreamLayers(fakeUpstream(t, "complete"))
	require.NoError(t, err)
	assert.Equal(t, "upstream assisted-service release-4.20@4e399454ffb97a17837bb2362518f5442f7dd086", up.Describe())

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	m, err := mirror.Start(ctx, mirror.Options{Listen: "127.0.0.1:0", Arch: runtime.GOARCH, Version: "4.23.0", Upstream: up})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, m.Close()) })
	tr, err := m.Transport()
	require.NoError(t, err)

	files := func(component string) map[string]*tar.Header {
		img, ok := m.Component(component)
		require.True(t, ok, component)
		ref, err := name.ParseReference(img.Mirror)
		require.NoError(t, err)
		i, err := remote.Image(ref, remote.WithContext(ctx), remote.WithTransport(tr))
		require.NoError(t, err)
		cf, err := i.ConfigFile()
		require.NoError(t, err)
		hdrs := extract(t, i, t.TempDir())
		hdrs["cmd:"+cf.Config.Cmd[0]] = &tar.Header{}
		return hdrs
	}
	api := files("agent-installer-api-server")
	for _, p := range []string{"/usr/bin/pg_ctl", "/data", mirror.ServicePath, mirror.ClientPath, mirror.StartDBPath, "cmd:/assisted-service"} {
		assert.Contains(t, api, p)
	}
	assert.Equal(t, mirror.ClientPath, api[mirror.ClientLink].Linkname)
	assert.Equal(t, mirror.StandinPath, api[mirror.OCPath].Linkname, "oc is the lab's stand-in")
	assert.Equal(t, mirror.RHELTrustBundle, api["/etc/ssl/certs/ca-certificates.crt"].Linkname)

	agent, ok := m.Component("agent-installer-node-agent")
	require.True(t, ok)
	ref, err := name.ParseReference(agent.Mirror)
	require.NoError(t, err)
	ai, err := remote.Image(ref, remote.WithContext(ctx), remote.WithTransport(tr))
	require.NoError(t, err)
	ah := extract(t, ai, t.TempDir())
	assert.Contains(t, ah, "/usr/bin/dmidecode")
	assert.NotContains(t, ah, "/usr/bin/pg_ctl", "each image has its own base")
	assert.Equal(t, mirror.RHELTrustBundle, ah["/etc/ssl/certs/ca-certificates.crt"].Linkname)
	assert.Contains(t, ah, mirror.AgentPath)
	assert.Contains(t, ah, "/usr/local/bin/ovs-gather.sh")
	for _, l := range []string{"next_step_runner", "inventory", "free_addresses", "logs_sender", "disk_speed_check"} {
		assert.Equal(t, mirror.AgentPath, ah["/usr/bin/"+l].Linkname, l)
	}
	assert.NotContains(t, ah, mirror.StandinPath, "the agent image carries no stand-in")

	// The real components' images are OCI images of zstd layers (the
	// guests' gunzip of ~700 MB took most of their pull under TCG).
	for _, img := range []v1.Image{ai, apiImage(t, ctx, m, tr)} {
		mt, err := img.MediaType()
		require.NoError(t, err)
		assert.Equal(t, types.OCIManifestSchema1, mt)
		ls, err := img.Layers()
		require.NoError(t, err)
		for _, l := range ls {
			lt, err := l.MediaType()
			require.NoError(t, err)
			assert.Equal(t, types.OCILayerZStd, lt)
			rc, err := l.Compressed()
			require.NoError(t, err)
			magic := make([]byte, 4)
			_, err = io.ReadFull(rc, magic)
			require.NoError(t, err)
			require.NoError(t, rc.Close())
			assert.Equal(t, []byte{0x28, 0xb5, 0x2f, 0xfd}, magic, "the registry serves zstd frames")
		}
	}

	// The real service asks the payload for these (oc adm release info --image-for).
	c, err := agentrelease.New(agentrelease.Options{TrustBundle: m.CACertPEM})
	require.NoError(t, err)
	r, err := c.Resolve(ctx, m.Addr+"/"+mirror.MirrorReleaseRepo+"@"+m.Images[0].Digest)
	require.NoError(t, err)
	assert.Equal(t, "4.23.0", r.Version)
	assert.Contains(t, r.Components, "machine-config-operator")
	assert.Contains(t, r.Components, "must-gather")
}

// apiImage fetches the service image from the mirror.
func apiImage(t *testing.T, ctx context.Context, m *mirror.Mirror, tr http.RoundTripper) v1.Image {
	t.Helper()
	img, ok := m.Component("agent-installer-api-server")
	require.True(t, ok)
	ref, err := name.ParseReference(img.Mirror)
	require.NoError(t, err)
	i, err := remote.Image(ref, remote.WithContext(ctx), remote.WithTransport(tr))
	require.NoError(t, err)
	return i
}
