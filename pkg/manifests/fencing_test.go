package manifests

import (
	"testing"

	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
			ic, lines := decodeT[InstallConfig](t, assetdir.InstallConfig, edit(t, testfixture.FencingInstallConfig, tc.pairs...))
			ic.SetDefaults()
			assertErrs(t, ValidateInstallConfig(ic, lines), tc.want...)
		})
	}
}

// TestFencingByRelease checks what each release's assisted-service and
// agent-installer client can apply (read from openshift/assisted-service,
// the branch of each release; the table is pkg/releasepolicy): nothing
// before 4.21, not through the client in 4.21, hostname-keyed credentials
// only in 4.22, also MAC-keyed ones from 4.23. What the release cannot
// apply is refused, naming the release.
func TestFencingByRelease(t *testing.T) {
	ic, lines := decodeT[InstallConfig](t, assetdir.InstallConfig, testfixture.FencingInstallConfig)
	ic.SetDefaults()
	require.NoError(t, ValidateInstallConfig(ic, lines))
	hosts := []Host{
		{AgentHost: AgentHost{Hostname: "master-0", Interfaces: []HostInterface{{Name: "eth0", MACAddress: "52:54:00:00:00:01"}}}},
		{AgentHost: AgentHost{Hostname: "master-1", Interfaces: []HostInterface{{Name: "eth0", MACAddress: "52:54:00:00:00:02"}}}},
	}
	for _, v := range []string{"4.18.4", "4.19.3", "4.20.1"} {
		err := ValidateFencingRelease(ic, v, lines)
		assert.ErrorContains(t, err, "install-config.yaml:10: controlPlane.fencing: Forbidden: OpenShift "+v+" cannot apply two-node fencing: neither its assisted-service nor its agent-installer client knows fencing (assisted-service release-4."+v[2:4]+")", v)
		_, _, err = FencingFiles(ic, hosts, lines, v)
		assert.ErrorContains(t, err, "cannot apply two-node fencing", v)
	}
	assert.ErrorContains(t, ValidateFencingRelease(ic, "4.20.1", lines), "with 2 control-plane replicas OpenShift 4.20.1 needs an arbiter host (arbiter.replicas: 1) instead of fencing; or use OpenShift 4.22 or later")
	assert.ErrorContains(t, ValidateFencingRelease(ic, "4.18.4", lines), "use 3 control-plane replicas, or OpenShift 4.22 or later")
	err := ValidateFencingRelease(ic, "4.21.5", lines)
	assert.ErrorContains(t, err, "install-config.yaml:10: controlPlane.fencing: Forbidden: OpenShift 4.21.5 cannot apply two-node fencing: its assisted-service requires fencing credentials on both control-plane hosts, but its agent-installer client has no fencing code (assisted-service release-4.21, cmd/agentbasedinstaller), so they never reach the service and the installation waits forever")
	assert.ErrorContains(t, err, "use OpenShift 4.22 or later, or an arbiter host (arbiter.replicas: 1)")
	assert.ErrorContains(t, ValidateFencingRelease(ic, "", lines), `two-node fencing depends on the release, and the release version "" is unknown`)

	// 4.22 reads one file keyed by host name; its parser is strict and
	// knows no macaddress key, so none is written.
	ic.ControlPlane.Fencing.Credentials[1].MACAddress = "52:54:00:00:00:02"
	for _, v := range []string{"4.22.0", "4.22.9"} {
		require.NoError(t, ValidateFencingRelease(ic, v, lines))
		shared, perHost, err := FencingFiles(ic, hosts, lines, v)
		require.NoError(t, err)
		assert.Empty(t, perHost)
		assert.NotContains(t, string(shared), "macaddress")
		assert.Contains(t, string(shared), "hostname: master-1")
	}
	// 4.23 and later also read the files of each host, keyed by MAC.
	ic.ControlPlane.Fencing.Credentials[1].HostName = ""
	err = ValidateFencingRelease(ic, "4.22.3", lines)
	assert.ErrorContains(t, err, "controlPlane.fencing.credentials[1].macAddress: Forbidden: OpenShift 4.22.3's agent-installer client matches fencing credentials by host name only (assisted-service release-4.22, cmd/agentbasedinstaller/host_config.go): set hostName to the host's name, or use OpenShift 4.23 or later to match by MAC")
	for _, v := range []string{"4.23.0", "4.24.1"} {
		require.NoError(t, ValidateFencingRelease(ic, v, lines), v)
		shared, perHost, err := FencingFiles(ic, hosts, lines, v)
		require.NoError(t, err, v)
		assert.Contains(t, string(shared), "hostname: master-0")
		require.Contains(t, perHost, 1)
		assert.Contains(t, string(perHost[1]), `macaddress: "52:54:00:00:00:02"`)
	}
}
