package agent_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_2/types"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

// fencingCred is one entry of fencing-credentials.yaml as the clients read
// it (assisted-service release-4.22 and release-4.23
// cmd/agentbasedinstaller/host_config.go).
type fencingCred struct {
	Hostname                string `json:"hostname"`
	MACAddress              string `json:"macaddress"`
	Address                 string `json:"address"`
	Username                string `json:"username"`
	Password                string `json:"password"`
	CertificateVerification string `json:"certificateVerification"`
}

func readFencing(t *testing.T, cfg types.Config, path string) []fencingCred {
	t.Helper()
	var f struct {
		Credentials []fencingCred `json:"credentials"`
	}
	require.NoError(t, yaml.UnmarshalStrict(ignitionFile(t, cfg, path), &f), path)
	for _, file := range cfg.Storage.Files {
		if file.Path == path {
			require.NotNil(t, file.Mode)
			assert.Equal(t, 0o600, *file.Mode, "%s holds BMC passwords", path)
		}
	}
	return f.Credentials
}

// TestFencingCredentialsReachTheISO checks that two-node fencing
// credentials travel in the ISO where the release's client reads them:
// from 4.23 on, hostname-keyed ones in
// /etc/assisted/hostconfig/fencing-credentials.yaml and MAC-keyed ones in
// the matching host's directory; in 4.22 (whose client reads only the
// shared file, parsed strictly without a macaddress key) only hostname-keyed
// ones, without MACs. All private (0600).
func TestFencingCredentialsReachTheISO(t *testing.T) {
	files := map[string]string{assetdir.InstallConfig: testfixture.FencingMACInstallConfig, assetdir.AgentConfig: testfixture.FencingAgentConfig}
	cfg := ignitionFor(t, "quay.io/openshift-release-dev/ocp-release:4.23.0-x86_64", files)
	assert.Equal(t, []fencingCred{{Hostname: "master-0", Address: "redfish+https://192.168.111.1:8000/redfish/v1/Systems/1", Username: "admin", Password: "secret0"}},
		readFencing(t, cfg, "/etc/assisted/hostconfig/fencing-credentials.yaml"))
	assert.Equal(t, []fencingCred{{MACAddress: "52:54:00:00:00:02", Address: "redfish+https://192.168.111.1:8000/redfish/v1/Systems/2", Username: "admin", Password: "secret1", CertificateVerification: "Disabled"}},
		readFencing(t, cfg, "/etc/assisted/hostconfig/master-1/fencing-credentials.yaml"))
	assert.False(t, hasFile(cfg, "/etc/assisted/hostconfig/master-0/fencing-credentials.yaml"))

	byName := strings.Replace(testfixture.FencingMACInstallConfig, "    - macAddress: 52:54:00:00:00:02\n", "    - hostName: master-1\n      macAddress: 52:54:00:00:00:02\n", 1)
	require.NotEqual(t, testfixture.FencingMACInstallConfig, byName)
	cfg = ignitionFor(t, "quay.io/openshift-release-dev/ocp-release:4.22.1-x86_64", map[string]string{assetdir.InstallConfig: byName, assetdir.AgentConfig: testfixture.FencingAgentConfig})
	assert.Equal(t, []fencingCred{
		{Hostname: "master-0", Address: "redfish+https://192.168.111.1:8000/redfish/v1/Systems/1", Username: "admin", Password: "secret0"},
		{Hostname: "master-1", Address: "redfish+https://192.168.111.1:8000/redfish/v1/Systems/2", Username: "admin", Password: "secret1", CertificateVerification: "Disabled"},
	}, readFencing(t, cfg, "/etc/assisted/hostconfig/fencing-credentials.yaml"))
	assert.False(t, hasFile(cfg, "/etc/assisted/hostconfig/master-1/fencing-credentials.yaml"))
}

// TestFencingRefusedByRelease checks the release rules reach the user,
// naming the release: no fencing before 4.21 (an arbiter instead), none
// through 4.21's client, no MAC-only credential for 4.22, and, for every
// release, a MAC that no host has.
func TestFencingRefusedByRelease(t *testing.T) {
	files := map[string]string{assetdir.InstallConfig: testfixture.FencingMACInstallConfig, assetdir.AgentConfig: testfixture.FencingAgentConfig}
	for spec, want := range map[string]string{
		"quay.io/openshift-release-dev/ocp-release:4.20.4-x86_64": "install-config.yaml:10: controlPlane.fencing: Forbidden: OpenShift 4.20.4 cannot apply two-node fencing: neither its assisted-service nor its agent-installer client knows fencing (assisted-service release-4.20); with 2 control-plane replicas OpenShift 4.20.4 needs an arbiter host",
		"quay.io/openshift-release-dev/ocp-release:4.21.2-x86_64": "install-config.yaml:10: controlPlane.fencing: Forbidden: OpenShift 4.21.2 cannot apply two-node fencing: its assisted-service requires fencing credentials on both control-plane hosts, but its agent-installer client has no fencing code",
		"quay.io/openshift-release-dev/ocp-release:4.22.0-x86_64": "install-config.yaml:15: controlPlane.fencing.credentials[1].macAddress: Forbidden: OpenShift 4.22.0's agent-installer client matches fencing credentials by host name only",
	} {
		s, _ := store(t, files)
		rel, err := offlineRelease(spec)
		require.NoError(t, err)
		require.NoError(t, s.Provide(rel))
		_, err = s.Fetch(context.Background(), &agent.AgentManifests{})
		require.Error(t, err, spec)
		assert.Contains(t, err.Error(), want, spec)
	}

	// master-1 has another MAC than its fencing credential names. (A host
	// without interfaces is refused by agent-config validation itself.)
	bad := map[string]string{assetdir.InstallConfig: testfixture.FencingMACInstallConfig, assetdir.AgentConfig: strings.Replace(testfixture.FencingAgentConfig, "52:54:00:00:00:02", "52:54:00:00:00:09", 1)}
	s, _ := store(t, bad)
	rel, err := offlineRelease("quay.io/openshift-release-dev/ocp-release:4.23.0-x86_64")
	require.NoError(t, err)
	require.NoError(t, s.Provide(rel))
	_, err = s.Fetch(context.Background(), &agent.AgentIgnition{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `install-config.yaml:15: controlPlane.fencing.credentials[1].macAddress: Invalid value: "52:54:00:00:00:02": does not match any configured host interface`)
}

// TestFencingRefusedWhenThePayloadIsRead: with a release by tag and no
// --release-version, the manifests are written without the payload, and
// the fencing rules of the release the payload states stop the ignition.
func TestFencingRefusedWhenThePayloadIsRead(t *testing.T) {
	r := testrelease.StartRegistry(t, testrelease.RegistryOptions{})
	img, err := testrelease.Payload{Version: "4.21.0"}.Image()
	require.NoError(t, err)
	_, err = r.Push("ocp/release", "4.21.0-x86_64", img)
	require.NoError(t, err)
	ic := strings.Replace(testfixture.FencingMACInstallConfig, "pullSecret: ", "additionalTrustBundle: |\n  "+strings.ReplaceAll(strings.TrimSpace(string(r.CAPEM)), "\n", "\n  ")+"\npullSecret: ", 1)
	ic = regexp.MustCompile(`(?m)^pullSecret: .*$`).ReplaceAllString(ic, "pullSecret: '"+string(r.PullSecret())+"'")
	rel, err := agent.NewReleaseImage(r.Host + "/ocp/release:4.21.0-x86_64")
	require.NoError(t, err)
	files := map[string]string{assetdir.InstallConfig: ic, assetdir.AgentConfig: testfixture.FencingAgentConfig}
	_, err = storeWith(t, files, rel).Fetch(context.Background(), &agent.AgentManifests{})
	require.NoError(t, err)
	_, err = storeWith(t, files, rel).Fetch(context.Background(), &agent.AgentIgnition{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "controlPlane.fencing: Forbidden: OpenShift 4.21.0 cannot apply two-node fencing")
}
