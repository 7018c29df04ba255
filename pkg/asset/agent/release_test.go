package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

// disconnected returns examples/disconnected with its mirror host, trust
// bundle and pull secret pointing at the loopback registry r.
func disconnected(t *testing.T, r *testrelease.Registry) map[string]string {
	t.Helper()
	ic, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "disconnected", assetdir.InstallConfig))
	require.NoError(t, err)
	ac, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "disconnected", assetdir.AgentConfig))
	require.NoError(t, err)
	s := strings.ReplaceAll(string(ic), "mirror.example.com:5000", r.Host)
	ca := "additionalTrustBundle: |\n  " + strings.ReplaceAll(strings.TrimSpace(string(r.CAPEM)), "\n", "\n  ") + "\n"
	s = regexp.MustCompile(`(?s)additionalTrustBundle: \|\n.*?END CERTIFICATE-----\n`).ReplaceAllString(s, ca)
	s = regexp.MustCompile(`(?m)^pullSecret: .*$`).ReplaceAllString(s, "pullSecret: '"+string(r.PullSecret())+"'")
	require.Contains(t, s, r.Host+"/ocp/release")
	return map[string]string{assetdir.InstallConfig: s, assetdir.AgentConfig: string(ac)}
}

func storeWith(t *testing.T, files map[string]string, rel *agent.ReleaseImage) *asset.Store {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	s := newStore(t, dir, quietLog())
	require.NoError(t, s.Provide(rel))
	return s
}

func fetchT[T asset.Asset](t *testing.T, s *asset.Store, _ T) T {
	t.Helper()
	got, err := asset.Fetch[T](context.Background(), s)
	require.NoError(t, err)
	return got
}

// releaseEnv decodes RELEASE_IMAGES and OS_IMAGES from the ISO's Ignition.
func releaseEnv(t *testing.T, s *asset.Store) (rel []map[string]any, os []map[string]any) {
	t.Helper()
	ign := fetchT(t, s, &agent.AgentIgnition{})
	var cfg types.Config
	require.NoError(t, json.Unmarshal(ign.Config, &cfg))
	for _, f := range []struct {
		path, key string
		out       *[]map[string]any
	}{
		{"/usr/local/share/assisted-service/assisted-service.env", "RELEASE_IMAGES=", &rel},
		{"/usr/local/share/assisted-service/images.env", "OS_IMAGES=", &os},
	} {
		env := string(ignitionFile(t, cfg, f.path))
		i := strings.Index(env, f.key)
		require.GreaterOrEqual(t, i, 0, "%s has no %s", f.path, f.key)
		line, _, _ := strings.Cut(env[i+len(f.key):], "\n")
		require.NoError(t, json.Unmarshal([]byte(line), f.out), line)
	}
	return rel, os
}

// TestDisconnectedResolvesMirroredReleaseByDigest: examples/disconnected's
// mirrored, by-digest release is read through the loopback mirror (with
// its CA and credentials); the ISO carries the payload's exact version,
// architecture, digest and RHCOS stream.
func TestDisconnectedResolvesMirroredReleaseByDigest(t *testing.T) {
	r := testrelease.StartRegistry(t, testrelease.RegistryOptions{Auth: testrelease.AuthBearer})
	isoURL := "https://127.0.0.1:1/rhcos-9.6.20260101-0-live-iso.x86_64.iso"
	st := testrelease.Stream("rhcos-4.19", "9.6.20260101-0", map[string]testrelease.ISO{"x86_64": {Location: isoURL, SHA256: strings.Repeat("a", 64)}})
	img, err := testrelease.Payload{Version: "4.19.3", Stream: st}.Image()
	require.NoError(t, err)
	dg, err := r.Push("ocp/release", "", img)
	require.NoError(t, err)
	spec := "quay.io/openshift-release-dev/ocp-release@" + dg

	rel, err := agent.NewReleaseImage(spec)
	require.NoError(t, err)
	s := storeWith(t, disconnected(t, r), rel)

	p := fetchT(t, s, &agent.ReleasePayload{})
	assert.Equal(t, agent.ReleaseFromRegistry, p.Source)
	assert.Equal(t, spec, p.Pinned)
	assert.Equal(t, r.Host+"/ocp/release@"+dg, p.From)
	assert.True(t, p.ReadFromMirror())
	assert.Equal(t, "4.19.3", p.Version)
	assert.Equal(t, testrelease.DefaultComponents()["machine-os-images"], p.MachineOSImages)

	// The ClusterImageSet is written without the payload: a digest given
	// without --release-version names it after the digest.
	cis := fetchT(t, s, &agent.ClusterImageSet{})
	assert.Equal(t, "openshift-sha256-"+strings.TrimPrefix(dg, "sha256:")[:12], cis.Manifest.Metadata.Name)
	assert.Equal(t, spec, cis.Manifest.Spec.ReleaseImage)
	aci := fetchT(t, s, &agent.AgentClusterInstall{})
	assert.Equal(t, cis.Manifest.Metadata.Name, aci.Manifest.Spec.ImageSetRef.Name)

	relImgs, osImgs := releaseEnv(t, s)
	require.Len(t, relImgs, 1)
	assert.Equal(t, map[string]any{"openshift_version": "4.19", "cpu_architecture": "x86_64", "cpu_architectures": []any{"x86_64"},
		"url": spec, "version": "4.19.3"}, relImgs[0])
	require.Len(t, osImgs, 1)
	assert.Equal(t, map[string]any{"openshift_version": "4.19.3", "cpu_architecture": "x86_64", "url": isoURL, "version": "9.6.20260101-0"}, osImgs[0])
}

// TestTagIsPinnedByDigest: a release given by tag is resolved once; the
// ISO names it by digest everywhere, and messages keep the user's spelling.
func TestTagIsPinnedByDigest(t *testing.T) {
	r := testrelease.StartRegistry(t, testrelease.RegistryOptions{})
	idx, err := testrelease.Index(testrelease.Payload{Version: "4.20.2"}, "x86_64", "aarch64", "ppc64le", "s390x")
	require.NoError(t, err)
	dg, err := r.Push("ocp/release", "4.20.2-multi", idx)
	require.NoError(t, err)
	files := disconnected(t, r)
	// No mirrors: the release is read from its own (loopback) registry.
	files[assetdir.InstallConfig] = regexp.MustCompile(`(?s)imageDigestSources:.*?additionalTrustBundle`).ReplaceAllString(files[assetdir.InstallConfig], "additionalTrustBundle")
	spec := r.Host + "/ocp/release:4.20.2-multi"
	rel, err := agent.NewReleaseImage(spec)
	require.NoError(t, err)
	s := storeWith(t, files, rel)

	p := fetchT(t, s, &agent.ReleasePayload{})
	assert.Equal(t, spec, p.PullSpec)
	assert.Equal(t, r.Host+"/ocp/release@"+dg, p.Pinned)
	assert.Equal(t, "multi", p.Arch)
	assert.False(t, p.ReadFromMirror())

	relImgs, _ := releaseEnv(t, s)
	require.Len(t, relImgs, 1)
	assert.Equal(t, "multi", relImgs[0]["cpu_architecture"])
	assert.Equal(t, []any{"aarch64", "x86_64", "ppc64le", "s390x"}, relImgs[0]["cpu_architectures"])
	assert.Equal(t, "4.20.2", relImgs[0]["version"])
	assert.Equal(t, r.Host+"/ocp/release@"+dg, relImgs[0]["url"])
	ign := fetchT(t, s, &agent.AgentIgnition{})
	assert.NotContains(t, string(ign.Config), ":4.20.2-multi", "the tag leaked into the ISO")
	assert.Equal(t, "x86_64", fetchT(t, s, &agent.Architecture{}).Arch, "the ISO is for the cluster's architecture, not 'multi'")

	// --release-version must agree with the payload.
	rel.Version = "4.20.9"
	s = storeWith(t, files, rel)
	_, err = s.Fetch(context.Background(), &agent.ReleasePayload{})
	assert.ErrorContains(t, err, "is OpenShift 4.20.2, not 4.20.9 (--release-version)")
}

func TestOfflineReleaseRules(t *testing.T) {
	files := map[string]string{assetdir.InstallConfig: testfixture.SNOInstallConfig, assetdir.AgentConfig: testfixture.AgentConfig}
	tag, err := agent.NewReleaseImage("quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64")
	require.NoError(t, err)
	tag.Offline = true
	_, err = storeWith(t, files, tag).Fetch(context.Background(), &agent.ReleasePayload{})
	assert.ErrorContains(t, err, "is a tag, and --offline forbids looking it up: pass it by digest")

	byDigest, err := agent.NewReleaseImage("quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("1", 64))
	require.NoError(t, err)
	byDigest.Offline = true
	_, err = storeWith(t, files, byDigest).Fetch(context.Background(), &agent.ReleasePayload{})
	assert.ErrorContains(t, err, "--offline needs --release-version")

	byDigest.Version = "4.19.3"
	s := storeWith(t, files, byDigest)
	p := fetchT(t, s, &agent.ReleasePayload{})
	assert.Equal(t, agent.ReleaseFromOffline, p.Source)
	cis := fetchT(t, s, &agent.ClusterImageSet{})
	assert.Equal(t, "openshift-4.19.3", cis.Manifest.Metadata.Name)
	assert.Equal(t, byDigest.PullSpec, cis.Manifest.Spec.ReleaseImage)
}

// TestOfflineDigestUnderDigestOnlyMirrors: with examples/disconnected's
// digest-only mirrors and a release given by digest with --offline, the
// ISO names it by digest everywhere, with its exact version, and no warning
// says the mirrors cannot serve it.
func TestOfflineDigestUnderDigestOnlyMirrors(t *testing.T) {
	r := testrelease.StartRegistry(t, testrelease.RegistryOptions{})
	def, err := agent.OfflineRelease("quay.io/openshift-release-dev/ocp-release@sha256:"+strings.Repeat("4", 64), "4.20.0")
	require.NoError(t, err)
	s := storeWith(t, disconnected(t, r), def)

	p := fetchT(t, s, &agent.ReleasePayload{})
	assert.Equal(t, agent.ReleaseFromOffline, p.Source)
	assert.Equal(t, def.PullSpec, p.Pinned)
	assert.Equal(t, def.PullSpec, "quay.io/openshift-release-dev/ocp-release@"+p.Digest)
	assert.Empty(t, p.AssetWarnings())

	cis := fetchT(t, s, &agent.ClusterImageSet{})
	assert.Equal(t, "openshift-"+def.Version, cis.Manifest.Metadata.Name)
	assert.Equal(t, def.PullSpec, cis.Manifest.Spec.ReleaseImage)

	relImgs, _ := releaseEnv(t, s)
	require.Len(t, relImgs, 1)
	minor := def.Version[:strings.LastIndex(def.Version, ".")]
	assert.Equal(t, map[string]any{"openshift_version": minor, "cpu_architecture": "x86_64", "cpu_architectures": []any{"x86_64"},
		"url": def.PullSpec, "version": def.Version}, relImgs[0])
}
