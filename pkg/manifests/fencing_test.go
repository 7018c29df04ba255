package manifests

import (
	"testing"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tnfInstallConfig is a two-node cluster with fencing on bare metal.
const tnfInstallConfig = `apiVersion: v1
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
    - hostName: master-1
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

// TestValidateFencing checks two-node-with-fencing install-configs:
// controlPlane.replicas 2 with two complete credentials is accepted on
// platforms baremetal and none; the rest is refused at its field.
func TestValidateFencing(t *testing.T) {
	const bm = "  baremetal:\n    apiVIPs: [192.168.111.5]\n    ingressVIPs: [192.168.111.4]\n"
	tests := []struct {
		name  string
		pairs []string
		want  []string
	}{
		{"valid baremetal", nil, nil},
		{"valid none", []string{bm, "  none: {}\n"}, nil},
		{"MAC-keyed credential", []string{"- hostName: master-0\n", "- macAddress: 52:54:00:00:00:01\n"}, nil},
		{"vsphere", []string{bm, "  vsphere:\n    apiVIPs: [192.168.111.5]\n    ingressVIPs: [192.168.111.4]\n"},
			[]string{`install-config.yaml:10: controlPlane.fencing: Forbidden: two-node fencing is supported on platforms baremetal and none only, not "vsphere"`}},
		{"three replicas", []string{"replicas: 2", "replicas: 3"},
			[]string{"install-config.yaml:10: controlPlane.fencing: Forbidden: fencing credentials are only for a two-node cluster (controlPlane.replicas: 2); found 3 replicas"}},
		{"one credential", []string{"    - hostName: master-1\n      address: redfish+https://192.168.111.1:8000/redfish/v1/Systems/2\n      username: admin\n      password: secret1\n      certificateVerification: Disabled\n", ""},
			[]string{"controlPlane.fencing.credentials: Forbidden: there should be exactly two fencing credentials to support the two node cluster, instead 1 credentials were found"}},
		{"missing password", []string{"      password: secret1\n", ""},
			[]string{"install-config.yaml:15: controlPlane.fencing.credentials[1].password: Required value: the BMC password is required"}},
		{"no host identity", []string{"- hostName: master-1\n", "- username: admin\n", "      username: admin\n      password: secret1", "      password: secret1"},
			[]string{"install-config.yaml:15: controlPlane.fencing.credentials[1]: Required value: set hostName (the node's host name) or macAddress (one of its NICs) so the credential can be matched to a host"}},
		{"duplicate host", []string{"hostName: master-1", "hostName: master-0"},
			[]string{`install-config.yaml:15: controlPlane.fencing.credentials[1].hostName: Duplicate value: "master-0"`}},
		{"duplicate address", []string{"Systems/2", "Systems/1"},
			[]string{`controlPlane.fencing.credentials[1].address: Duplicate value: "redfish+https://192.168.111.1:8000/redfish/v1/Systems/1"`}},
		{"bad certificateVerification", []string{"certificateVerification: Disabled", "certificateVerification: None"},
			[]string{`install-config.yaml:19: controlPlane.fencing.credentials[1].certificateVerification: Unsupported value: "None": supported values: "Enabled", "Disabled"`}},
		{"bad MAC", []string{"- hostName: master-0\n", "- macAddress: 52:54:00\n"},
			[]string{`install-config.yaml:11: controlPlane.fencing.credentials[0].macAddress: Invalid value: "52:54:00": not a MAC address; use the form 52:54:00:aa:bb:cc`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ic, lines := decodeT[InstallConfig](t, assetdir.InstallConfig, edit(t, tnfInstallConfig, tc.pairs...))
			ic.SetDefaults()
			assertErrs(t, ValidateInstallConfig(ic, lines), tc.want...)
		})
	}
}

// TestFencingNeedsRelease checks the release-dependent rules: two-node
// fencing needs OpenShift 4.20 or later, and before 4.22 the DualReplica
// feature gate (TechPreviewNoUpgrade or featureGates: [DualReplica=true]);
// from 4.22 on it is enabled by default.
func TestFencingNeedsRelease(t *testing.T) {
	ic, lines := decodeT[InstallConfig](t, assetdir.InstallConfig, tnfInstallConfig)
	ic.SetDefaults()
	require.NoError(t, ValidateInstallConfig(ic, lines))
	assert.ErrorContains(t, ValidateFencingRelease(ic, "4.19.3", lines),
		"install-config.yaml:10: controlPlane.fencing: Forbidden: two-node fencing needs OpenShift 4.20 or later; the release is 4.19.3")
	assert.ErrorContains(t, ValidateFencingRelease(ic, "4.21.0", lines),
		"install-config.yaml:10: controlPlane.fencing: Forbidden: fencing configuration requires the DualReplica feature gate before OpenShift 4.22: add featureSet: TechPreviewNoUpgrade or featureGates: [DualReplica=true]")
	assert.NoError(t, ValidateFencingRelease(ic, "4.22.0", lines))
	ic.FeatureGates = []string{"DualReplica=true"}
	assert.NoError(t, ValidateFencingRelease(ic, "4.20.1", lines))
	ic.FeatureGates = nil
	ic.FeatureSet = "TechPreviewNoUpgrade"
	assert.NoError(t, ValidateFencingRelease(ic, "4.21.0", lines))
}
