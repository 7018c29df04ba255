package nodejoin_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testcluster"
	"github.com/seed-a052040e/agentiso/pkg/kubeapi"
	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
)

func start(t *testing.T, o testcluster.Options) (*testcluster.Cluster, *kubeapi.Client) {
	t.Helper()
	c, err := testcluster.Start(o)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	cfg, err := kubeapi.ParseKubeconfig(c.Kubeconfig(), t.TempDir(), "")
	require.NoError(t, err)
	return c, kubeapi.New(cfg, 5*time.Second)
}

func TestInspectReadsTheCluster(t *testing.T) {
	o := testcluster.Default()
	o.HTTPProxy, o.NoProxy = "http://proxy.example.com:3128", ".example.com"
	o.TrustBundle = "-----BEGIN CERTIFICATE-----\nMIRROR\n-----END CERTIFICATE-----\n"
	o.DigestMirrors = []testcluster.Mirror{{Source: "quay.io/openshift-release-dev/ocp-release", Mirrors: []string{"mirror.example.com:8443/ocp/release"}}}
	o.LegacyMirrors = []testcluster.Mirror{{Source: "quay.io/openshift-release-dev/ocp-v4.0-art-dev", Mirrors: []string{"mirror.example.com:8443/ocp/art"}}}
	o.FIPS = true
	o.Chrony = "server ntp.example.com iburst\n"
	_, api := start(t, o)

	ci, err := nodejoin.Inspect(context.Background(), api, nodejoin.InspectOptions{})
	require.NoError(t, err)
	assert.Equal(t, o.ClusterID, ci.ClusterID)
	assert.Equal(t, "ostest", ci.ClusterName)
	assert.Equal(t, "example.com", ci.BaseDomain)
	assert.Equal(t, "api.ostest.example.com", ci.APIDNSName)
	assert.Equal(t, o.Version, ci.Version)
	assert.Equal(t, o.ReleaseImage, ci.ReleaseImage)
	assert.Equal(t, "BareMetal", ci.Platform)
	assert.False(t, ci.UserManagedNetworking())
	assert.Equal(t, "x86_64", ci.Arch)
	assert.Equal(t, o.PullSecret, ci.PullSecret)
	assert.Equal(t, &nodejoin.Proxy{HTTPProxy: o.HTTPProxy, NoProxy: o.NoProxy}, ci.Proxy)
	assert.Equal(t, o.TrustBundle, ci.TrustBundle)
	assert.Equal(t, []nodejoin.Mirror{{Source: o.DigestMirrors[0].Source, Mirrors: o.DigestMirrors[0].Mirrors}}, ci.DigestMirrors)
	assert.Equal(t, []nodejoin.Mirror{{Source: o.LegacyMirrors[0].Source, Mirrors: o.LegacyMirrors[0].Mirrors}}, ci.LegacyMirrors)
	assert.Equal(t, o.SSHKey, ci.SSHKey)
	assert.True(t, ci.FIPS)
	assert.Equal(t, o.Chrony, string(ci.Chrony))
	assert.Equal(t, o.BootISO, ci.BootISO)
	assert.Equal(t, o.BootISOSHA256, ci.BootISOSHA256)
	assert.Equal(t, "9.6.20250925-0", ci.BootRelease)
	var st struct {
		Stream string `json:"stream"`
	}
	require.NoError(t, json.Unmarshal(ci.BootStream, &st), "the whole stream, as the configmap holds it")
	assert.Equal(t, "rhcos-4.20.3", st.Stream)
	assert.Equal(t, "https://api-int.ostest.example.com:22623/config/worker", ci.IgnitionEndpoint)
	assert.Contains(t, ci.IgnitionCA, "BEGIN CERTIFICATE")
	assert.Equal(t, []string{"192.168.111.0/24"}, ci.MachineNetworks)
	require.Len(t, ci.Existing, 8, "four nodes and their four bare-metal hosts")
	assert.Equal(t, nodejoin.ExistingNode{Name: "master-0", Kind: "node", IPs: []string{"192.168.111.20"}, MACs: []string{"52:54:00:00:00:20"}, Roles: []string{"master"}}, ci.Existing[0])
	assert.Empty(t, ci.Notes)
}

func TestInspectNamesTheMissingPermission(t *testing.T) {
	o := testcluster.Default()
	o.User = "system:serviceaccount:day2:joiner"
	c, api := start(t, o)
	c.Deny("get", testcluster.PullSecret)

	_, err := nodejoin.Inspect(context.Background(), api, nodejoin.InspectOptions{})
	require.Error(t, err)
	assert.Equal(t, `cannot read secrets openshift-config/pull-secret (the pull secret): the kubeconfig's user "system:serviceaccount:day2:joiner" may not get secrets pull-secret (API group "") in namespace openshift-config: grant it get on secrets in API group "" in namespace openshift-config, or use a cluster-admin kubeconfig`, err.Error())
}

func TestInspectRefusesCloudPlatforms(t *testing.T) {
	o := testcluster.Default()
	o.Platform = "AWS"
	_, api := start(t, o)
	_, err := nodejoin.Inspect(context.Background(), api, nodejoin.InspectOptions{})
	var pe *nodejoin.PlatformError
	require.ErrorAs(t, err, &pe)
	assert.Contains(t, err.Error(), `the cluster's platform is "AWS": nodes can be added from an agent ISO only to an on-prem cluster`)
}

func TestInspectUserManagedNetworkingPlatforms(t *testing.T) {
	o := testcluster.Default()
	o.Platform = "None"
	_, api := start(t, o)
	ci, err := nodejoin.Inspect(context.Background(), api, nodejoin.InspectOptions{Arch: "arm64", SSHKey: "ssh-ed25519 AAAA other"})
	require.Error(t, err, "the stream has no aarch64 ISO")
	assert.Nil(t, ci)
	assert.Contains(t, err.Error(), "has no aarch64 images")

	ci, err = nodejoin.Inspect(context.Background(), api, nodejoin.InspectOptions{SSHKey: "ssh-ed25519 AAAA other"})
	require.NoError(t, err)
	assert.True(t, ci.UserManagedNetworking())
	assert.Equal(t, "ssh-ed25519 AAAA other", ci.SSHKey)
	assert.Len(t, ci.Existing, 4, "no bare-metal hosts outside BareMetal")
}

func TestInspectFallsBackToTheInstallConfig(t *testing.T) {
	o := testcluster.Default()
	o.DigestMirrors = []testcluster.Mirror{{Source: "quay.io/a", Mirrors: []string{"m.example.com/a"}}}
	o.FIPS = true
	c, api := start(t, o)
	c.Deny("list", testcluster.DigestMirrors)
	c.Deny("get", testcluster.Named(testcluster.MachineConfigs, "99-worker-ssh"))
	c.Deny("get", testcluster.Named(testcluster.MachineConfigs, "99-worker-fips"))
	c.Deny("list", testcluster.BareMetalHosts)

	ci, err := nodejoin.Inspect(context.Background(), api, nodejoin.InspectOptions{})
	require.NoError(t, err)
	assert.Equal(t, []nodejoin.Mirror{{Source: "quay.io/a", Mirrors: []string{"m.example.com/a"}}}, ci.DigestMirrors)
	assert.Equal(t, o.SSHKey, ci.SSHKey)
	assert.True(t, ci.FIPS)
	assert.Len(t, ci.Existing, 4)
	assert.Len(t, ci.Notes, 2)

	// Without the fallback either, the error says both.
	c.Deny("get", testcluster.ClusterConfig)
	_, err = nodejoin.Inspect(context.Background(), api, nodejoin.InspectOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot read imagedigestmirrorsets.config.openshift.io (the mirrors), nor the install-config it falls back to")
	assert.Contains(t, err.Error(), `may not get configmaps cluster-config-v1 (API group "") in namespace kube-system`)
}

func TestInspectRefusedCredentials(t *testing.T) {
	c, _ := start(t, testcluster.Default())
	kc := []byte(string(c.Kubeconfig()))
	cfg, err := kubeapi.ParseKubeconfig(kc, t.TempDir(), "")
	require.NoError(t, err)
	rc := cfg.Rest()
	rc.BearerToken = "sha256~wrong"
	_, err = nodejoin.Inspect(context.Background(), kubeapi.New(kubeapi.NewConfig(rc, "test"), 5*time.Second), nodejoin.InspectOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the API server refused the kubeconfig's credentials (401 Unauthorized")
	assert.NotContains(t, err.Error(), "sha256~wrong")
}
