package agent_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/configimage"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
)

func quietStore(t *testing.T, dir string) *asset.Store {
	t.Helper()
	s := newStore(t, dir, quietLog())
	rel, err := offlineRelease(goldenRelease)
	require.NoError(t, err)
	require.NoError(t, s.Provide(rel))
	return s
}

// TestConfigImageMatchesGenericISO builds, from one cluster's inputs, the
// config image and, from that cluster's InfraEnv, pull secret and
// ClusterImageSet alone, the generic ISO's config: what the host compares
// (release pinned by digest, architecture, rendezvous IP) agrees, and the
// config image's manifests replace the generic ISO's.
func TestConfigImageMatchesGenericISO(t *testing.T) {
	ctx := context.Background()
	site := generate(t, "ha")
	s := quietStore(t, site)
	ci, err := asset.Fetch[*agent.ConfigImage](ctx, s)
	require.NoError(t, err)
	for _, a := range agent.ConfigImageTargets() {
		_, err := s.Fetch(ctx, a)
		require.NoError(t, err)
	}
	require.NoError(t, s.Persist(ctx, agent.ConfigImageTargets()...))
	f, err := os.Open(filepath.Join(site, assetdir.ConfigImage))
	require.NoError(t, err)
	defer f.Close()
	img, err := configimage.Read(f)
	require.NoError(t, err)
	assert.Equal(t, ci.Info.ReleaseImage, img.Info["RELEASE_IMAGE"])
	assert.Contains(t, img.Info["RELEASE_IMAGE"], "@sha256:")

	factory := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(factory, assetdir.ClusterManifestsDir), 0o755))
	for _, f := range []string{assetdir.InfraEnv, assetdir.PullSecret, assetdir.ClusterImageSet, assetdir.NMStateConfig} {
		b, err := os.ReadFile(filepath.Join(site, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(factory, f), b, 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(factory, assetdir.AgentConfig),
		[]byte("apiVersion: v1beta1\nkind: AgentConfig\nrendezvousIP: "+img.Info["RENDEZVOUS_IP"]+"\n"), 0o600))
	fs := quietStore(t, factory)
	require.NoError(t, fs.Provide(&agent.Workflow{Unconfigured: true}))
	ign, err := asset.Fetch[*agent.UnconfiguredIgnition](ctx, fs)
	require.NoError(t, err)
	var cfg types.Config
	require.NoError(t, json.Unmarshal(ign.Config, &cfg))
	env := ""
	for _, file := range cfg.Storage.Files {
		if file.Path == "/etc/assisted/unconfigured.env" {
			env = *file.Contents.Source
		}
	}
	require.NotEmpty(t, env)
	for _, k := range []string{"RELEASE_IMAGE", "CPU_ARCH", "RENDEZVOUS_IP"} {
		assert.Contains(t, decodeDataURL(t, env), k+"="+img.Info[k]+"\n", k)
	}
}

func decodeDataURL(t *testing.T, src string) string {
	t.Helper()
	_, b64, ok := strings.Cut(src, "base64,")
	require.True(t, ok, src)
	var out bytes.Buffer
	dec := base64Decoder(b64)
	_, err := io.Copy(&out, dec)
	require.NoError(t, err)
	return out.String()
}

// TestUnconfiguredRefusesClusterInputs: install-config, missing manifests
// and agent-config fields other than rendezvousIP, all in one error.
func TestUnconfiguredRefusesClusterInputs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.InstallConfig), []byte("apiVersion: v1\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.AgentConfig),
		[]byte("apiVersion: v1beta1\nkind: AgentConfig\nrendezvousIP: 192.168.111.80\nminimalISO: true\n"), 0o600))
	s := quietStore(t, dir)
	require.NoError(t, s.Provide(&agent.Workflow{Unconfigured: true}))
	_, err := asset.Fetch[*agent.UnconfiguredIgnition](ctx, s)
	require.Error(t, err)
	assert.True(t, manifests.IsConfigError(err), "%v", err)
	for _, want := range []string{"install-config.yaml: Forbidden: the generic ISO names no cluster",
		"cluster-manifests/infraenv.yaml: Required value", "cluster-manifests/pull-secret.yaml: Required value",
		"agent-config.yaml:4: minimalISO: Forbidden"} {
		assert.Contains(t, err.Error(), want)
	}
	// Without the workflow the generic ISO's config is never built.
	s = quietStore(t, generate(t, "ha"))
	_, err = asset.Fetch[*agent.UnconfiguredIgnition](ctx, s)
	assert.ErrorContains(t, err, "unconfigured workflow")
}

func base64Decoder(s string) io.Reader {
	return base64.NewDecoder(base64.StdEncoding, strings.NewReader(s))
}

const factoryNMStateConfig = `apiVersion: agent-install.openshift.io/v1beta1
kind: NMStateConfig
metadata:
  name: host0
  namespace: cluster0
  labels:
    factory: generic
spec:
  config:
    interfaces:
      - name: enp1s0
        type: ethernet
        state: up
        mac-address: 52:54:00:12:34:56
        ipv4:
          enabled: true
          dhcp: false
          address:
            - ip: 192.168.111.80
              prefix-length: 24
  interfaces:
    - name: enp1s0
      macAddress: 52:54:00:12:34:56
`

// factoryDir is a generic ISO's directory: the InfraEnv, pull secret and
// ClusterImageSet of a generated cluster, and nmstate (if not empty) as
// cluster-manifests/nmstateconfig.yaml.
func factoryDir(t *testing.T, nmstate string) string {
	t.Helper()
	site, factory := generate(t, "ha"), t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(factory, assetdir.ClusterManifestsDir), 0o755))
	for _, f := range []string{assetdir.InfraEnv, assetdir.PullSecret, assetdir.ClusterImageSet} {
		b, err := os.ReadFile(filepath.Join(site, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(factory, f), b, 0o600))
	}
	if nmstate != "" {
		require.NoError(t, os.WriteFile(filepath.Join(factory, assetdir.NMStateConfig), []byte(nmstate), 0o600))
	}
	return factory
}

// The generic ISO's static networking is the keyfiles alone, as
// upstream's (openshift/installer
// pkg/asset/agent/image/unconfigured_ignition.go writes only the InfraEnv,
// ClusterImageSet and pull secret manifests; the config image brings
// nmstateconfig.yaml): the manifest agent-installer-client registers with
// the cluster's InfraEnv is the cluster's, so the factory's labels need
// not match any selector. An NMStateConfig without labels is still
// refused, as upstream's NMStateConfigFile does.
func TestUnconfiguredStaticNetworkingIsKeyfilesOnly(t *testing.T) {
	ctx := context.Background()
	s := quietStore(t, factoryDir(t, factoryNMStateConfig))
	require.NoError(t, s.Provide(&agent.Workflow{Unconfigured: true}))
	ign, err := asset.Fetch[*agent.UnconfiguredIgnition](ctx, s)
	require.NoError(t, err)
	var cfg types.Config
	require.NoError(t, json.Unmarshal(ign.Config, &cfg))
	paths := map[string]bool{}
	for _, f := range cfg.Storage.Files {
		paths[f.Path] = true
	}
	assert.True(t, paths["/etc/assisted/network/host0/enp1s0.nmconnection"])
	assert.True(t, paths["/etc/assisted/network/host0/mac_interface.ini"])
	assert.True(t, paths["/etc/assisted/manifests/infraenv.yaml"])
	assert.False(t, paths["/etc/assisted/manifests/nmstateconfig.yaml"], "nmstateconfig.yaml must not be in the generic ISO")
	for _, w := range ign.AssetWarnings() {
		assert.NotContains(t, w, "labels do not match", "the generic ISO carries no NMStateConfig to match")
	}

	s = quietStore(t, factoryDir(t, strings.Replace(factoryNMStateConfig, "  labels:\n    factory: generic\n", "", 1)))
	require.NoError(t, s.Provide(&agent.Workflow{Unconfigured: true}))
	_, err = asset.Fetch[*agent.UnconfiguredIgnition](ctx, s)
	assert.ErrorContains(t, err, "does not have any label set")
}
