package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

const icTNF = `apiVersion: v1
metadata:
  name: tnf
  namespace: cluster0
baseDomain: example.com
controlPlane:
  name: master
  replicas: 2
  fencing:
    credentials:
    - hostName: master-0
      address: redfish+https://192.168.111.1:8000/redfish/v1/Systems/1
      username: admin
      password: secret0
    - macAddress: 52:54:00:00:00:02
      address: redfish+https://192.168.111.1:8000/redfish/v1/Systems/2
      username: admin
      password: secret1
      certificateVerification: Disabled
compute:
- name: worker
  replicas: 0
networking:
  machineNetwork:
  - cidr: 192.168.111.0/24
platform:
  baremetal:
    apiVIPs: [192.168.111.5]
    ingressVIPs: [192.168.111.4]
pullSecret: '{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}'
`

const acTNF = `apiVersion: v1beta1
kind: AgentConfig
rendezvousIP: 192.168.111.20
hosts:
- hostname: master-0
  role: master
  interfaces: [{name: eth0, macAddress: '52:54:00:00:00:01'}]
- hostname: master-1
  role: master
  interfaces: [{name: eth0, macAddress: '52:54:00:00:00:02'}]
`

// TestFencingCredentialsReachTheISO checks that two-node fencing
// credentials travel in the ISO where assisted-service reads them, as
// upstream lays them out: hostname-keyed ones in
// /etc/assisted/hostconfig/fencing-credentials.yaml, MAC-keyed ones in the
// matching host's directory; both private (0600).
func TestFencingCredentialsReachTheISO(t *testing.T) {
	files := map[string]string{assetdir.InstallConfig: icTNF, assetdir.AgentConfig: acTNF}
	cfg := ignitionFor(t, "quay.io/openshift-release-dev/ocp-release:4.22.0-x86_64", files)

	type cred struct {
		Hostname                string `json:"hostname"`
		MACAddress              string `json:"macaddress"`
		Address                 string `json:"address"`
		Username                string `json:"username"`
		Password                string `json:"password"`
		CertificateVerification string `json:"certificateVerification"`
	}
	read := func(path string) []cred {
		var f struct {
			Credentials []cred `json:"credentials"`
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
	assert.Equal(t, []cred{{Hostname: "master-0", Address: "redfish+https://192.168.111.1:8000/redfish/v1/Systems/1", Username: "admin", Password: "secret0"}},
		read("/etc/assisted/hostconfig/fencing-credentials.yaml"))
	assert.Equal(t, []cred{{MACAddress: "52:54:00:00:00:02", Address: "redfish+https://192.168.111.1:8000/redfish/v1/Systems/2", Username: "admin", Password: "secret1", CertificateVerification: "Disabled"}},
		read("/etc/assisted/hostconfig/master-1/fencing-credentials.yaml"))
	assert.False(t, hasFile(cfg, "/etc/assisted/hostconfig/master-0/fencing-credentials.yaml"))
}

// TestFencingRefusedByRelease checks the release rules reach the user:
// before 4.22 without the DualReplica gate the ISO is refused, as is a MAC
// that no host has.
func TestFencingRefusedByRelease(t *testing.T) {
	s, _ := store(t, map[string]string{assetdir.InstallConfig: icTNF, assetdir.AgentConfig: acTNF})
	_, err := s.Fetch(context.Background(), &agent.AgentManifests{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "install-config.yaml:10: controlPlane.fencing: Forbidden: two-node fencing needs OpenShift 4.20 or later; the release is 4.19.0")

	// master-1 has another MAC than its fencing credential names. (A host
	// without interfaces is refused by agent-config validation itself.)
	bad := map[string]string{assetdir.InstallConfig: icTNF, assetdir.AgentConfig: strings.Replace(acTNF, "52:54:00:00:00:02", "52:54:00:00:00:09", 1)}
	s, _ = store(t, bad)
	rel, err := offlineRelease("quay.io/openshift-release-dev/ocp-release:4.22.0-x86_64")
	require.NoError(t, err)
	require.NoError(t, s.Provide(rel))
	_, err = s.Fetch(context.Background(), &agent.AgentIgnition{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `install-config.yaml:15: controlPlane.fencing.credentials[1].macAddress: Invalid value: "52:54:00:00:00:02": does not match any configured host interface`)
}
