package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

// store returns an asset store on a new directory holding the given
// input files, with the golden release pinned.
func store(t *testing.T, files map[string]string) (*asset.Store, string) {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	s := newStore(t, dir, quietLog())
	rel, err := offlineRelease(goldenRelease)
	require.NoError(t, err)
	require.NoError(t, s.Provide(rel))
	return s, dir
}

// writeManifests runs `create cluster-manifests` on the inputs and returns
// the asset directory.
func writeManifests(t *testing.T, ic, ac string) string {
	t.Helper()
	s, dir := store(t, map[string]string{assetdir.InstallConfig: ic, assetdir.AgentConfig: ac})
	targets := agent.ClusterManifestsTargets()
	for _, a := range targets {
		_, err := s.Fetch(context.Background(), a)
		require.NoError(t, err, "fetch %s", a.Name())
	}
	require.NoError(t, s.Persist(context.Background(), targets...))
	return dir
}

// TestSecretsOnlyInPrivateFiles checks that every cluster manifest that can
// carry a BMC password or proxy credentials is written 0600.
func TestSecretsOnlyInPrivateFiles(t *testing.T) {
	ic := strings.Replace(testfixture.CompactInstallConfig, "    ingressVIPs: [192.168.111.4]\n", `    ingressVIPs: [192.168.111.4]
    hosts:
    - name: master-0
      role: master
      bootMACAddress: 52:54:00:00:00:01
      bmc:
        address: redfish-virtualmedia://192.168.111.1:8000/redfish/v1/Systems/1
        username: admin
        password: bmc-s3cret
`, 1) + "proxy:\n  httpProxy: http://user:proxy-s3cret@proxy.example.com:3128\n"
	dir := writeManifests(t, ic, testfixture.AgentConfig)
	found := map[string]bool{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		for _, secret := range []string{"bmc-s3cret", "proxy-s3cret"} {
			if strings.Contains(string(b), secret) && rel != assetdir.InstallConfig {
				found[rel] = true
				assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "%s carries %s", rel, secret)
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.True(t, found[filepath.Join("cluster-manifests", "agent-cluster-install.yaml")], "the BMC credentials reach the ACI overrides as upstream: %v", found)
	assert.True(t, found[filepath.Join("cluster-manifests", "infraenv.yaml")], "the proxy reaches the InfraEnv: %v", found)
}
