package manifests

import (
	"encoding/json"
	"testing"

	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// overridesOf decodes, defaults and validates an install-config and
// returns the install-config-overrides annotation of its ACI, decoded.
func overridesOf(t *testing.T, y string) map[string]any {
	t.Helper()
	ic, lines := decodeT[InstallConfig](t, assetdir.InstallConfig, y)
	ic.SetDefaults()
	require.NoError(t, ValidateInstallConfig(ic, lines))
	aci, err := GenerateAgentClusterInstall(ic, nil, ClusterImageSetName("4.19.0"), "192.168.111.20")
	require.NoError(t, err)
	raw := aci.Metadata.Annotations["agent-install.openshift.io/install-config-overrides"]
	if raw == "" {
		return nil
	}
	var o map[string]any
	require.NoError(t, json.Unmarshal([]byte(raw), &o), raw)
	return o
}

// TestOverridesBareMetal checks that, as upstream, the bare-metal overrides
// carry only the hosts' name, role, boot MAC and BMC plus the provisioning
// network settings, with clusterProvisioningIP defaulted from the
// provisioning CIDR: no VIPs, no networkConfig, no root device hints.
func TestOverridesBareMetal(t *testing.T) {
	y := edit(t, testfixture.InstallConfig, "    ingressVIPs: [192.168.111.4]\n", `    ingressVIPs: [192.168.111.4]
    provisioningNetworkCIDR: 172.23.0.0/24
    hosts:
    - name: master-0
      role: master
      bootMACAddress: 52:54:00:00:00:01
      rootDeviceHints:
        deviceName: /dev/sda
      networkConfig:
        interfaces: [{name: eth0, type: ethernet, state: up}]
      bmc:
        address: redfish-virtualmedia://192.168.111.1:8000/redfish/v1/Systems/1
        username: admin
        password: secret
`)
	o := overridesOf(t, y)
	want := map[string]any{"platform": map[string]any{"baremetal": map[string]any{
		"hosts": []any{map[string]any{
			"name": "master-0", "role": "master", "bootMACAddress": "52:54:00:00:00:01",
			"bmc": map[string]any{"address": "redfish-virtualmedia://192.168.111.1:8000/redfish/v1/Systems/1", "username": "admin", "password": "secret"},
		}},
		"provisioningNetwork":     "Managed",
		"provisioningNetworkCIDR": "172.23.0.0/24",
		"clusterProvisioningIP":   "172.23.0.3",
		"provisioningDHCPRange":   "172.23.0.10,172.23.0.254",
	}}}
	assert.Equal(t, want, o)
}

// TestOverridesVSphere checks the vSphere overrides: the vCenters with
// credentials and the failure domains (their resourcePool defaulted to
// <computeCluster>/Resources, as upstream), and the VIPs only when there
// are two of each.
func TestOverridesVSphere(t *testing.T) {
	vs := `  vsphere:
    apiVIPs: [192.168.111.5]
    ingressVIPs: [192.168.111.4]
    vcenters:
    - server: vcenter.example.com
      user: administrator@vsphere.local
      password: secret
      datacenters: [dc1]
    failureDomains:
    - name: fd1
      region: r1
      zone: z1
      server: vcenter.example.com
      topology:
        datacenter: dc1
        computeCluster: /dc1/host/cluster1
        datastore: /dc1/datastore/ds1
        networks: [VM Network]
        folder: /dc1/vm/ostest
`
	y := edit(t, testfixture.InstallConfig, "  baremetal:\n    apiVIPs: [192.168.111.5]\n    ingressVIPs: [192.168.111.4]\n", vs)
	o := overridesOf(t, y)
	p := o["platform"].(map[string]any)["vsphere"].(map[string]any)
	assert.NotContains(t, p, "apiVIPs", "one VIP travels in the ACI, not in the overrides")
	assert.NotContains(t, p, "ingressVIPs")
	require.Len(t, p["vcenters"], 1)
	fds := p["failureDomains"].([]any)
	require.Len(t, fds, 1)
	assert.Equal(t, "/dc1/host/cluster1/Resources", fds[0].(map[string]any)["topology"].(map[string]any)["resourcePool"])

	twoVIPs := edit(t, y, "[192.168.111.5]", "[192.168.111.5, 'fd00::5']", "[192.168.111.4]", "[192.168.111.4, 'fd00::4']",
		"  - cidr: 192.168.111.0/24\n", "  - cidr: 192.168.111.0/24\n  - cidr: fd00::/64\n  serviceNetwork: [172.30.0.0/16, 'fd02::/112']\n")
	p = overridesOf(t, twoVIPs)["platform"].(map[string]any)["vsphere"].(map[string]any)
	assert.Equal(t, []any{"192.168.111.5", "fd00::5"}, p["apiVIPs"])
	assert.Equal(t, []any{"192.168.111.4", "fd00::4"}, p["ingressVIPs"])
}

// TestOverridesIgnoredBMCs checks that install-config hosts that
// agent-config hosts replace do not bring their BMC credentials into the
// overrides (upstream builds them from the hosts in use).
func TestOverridesIgnoredBMCs(t *testing.T) {
	y := edit(t, testfixture.InstallConfig, "    ingressVIPs: [192.168.111.4]\n", `    ingressVIPs: [192.168.111.4]
    hosts:
    - name: master-0
      bootMACAddress: 52:54:00:00:00:01
      bmc: {address: 'ipmi://192.168.111.1', username: admin, password: secret}
`)
	ic, lines := decodeT[InstallConfig](t, assetdir.InstallConfig, y)
	ic.SetDefaults()
	require.NoError(t, ValidateInstallConfig(ic, lines))
	ac, _ := decodeT[AgentConfig](t, assetdir.AgentConfig, baseAgentConfig)
	hosts, _ := ResolveHosts(ic, ac)
	aci, err := GenerateAgentClusterInstall(ic, hosts, ClusterImageSetName("4.19.0"), "192.168.111.20")
	require.NoError(t, err)
	assert.NotContains(t, aci.Metadata.Annotations["agent-install.openshift.io/install-config-overrides"], "secret")
}

// TestOverridesVSphereLegacyFields checks that the deprecated single
// vCenter fields are converted as upstream converts them (one vCenter,
// one generated failure domain with full inventory paths) so their
// credentials reach the overrides.
func TestOverridesVSphereLegacyFields(t *testing.T) {
	vs := `  vsphere:
    apiVIPs: [192.168.111.5]
    ingressVIPs: [192.168.111.4]
    vCenter: vcenter.example.com
    username: administrator@vsphere.local
    password: secret
    datacenter: dc1
    defaultDatastore: ds1
    cluster: cluster1
    folder: ostest
    network: VM Network
`
	y := edit(t, testfixture.InstallConfig, "  baremetal:\n    apiVIPs: [192.168.111.5]\n    ingressVIPs: [192.168.111.4]\n", vs)
	p := overridesOf(t, y)["platform"].(map[string]any)["vsphere"].(map[string]any)
	assert.Equal(t, []any{map[string]any{"server": "vcenter.example.com", "port": float64(443), "user": "administrator@vsphere.local", "password": "secret", "datacenters": []any{"dc1"}}}, p["vcenters"])
	assert.Equal(t, []any{map[string]any{"name": "generated-failure-domain", "region": "generated-region", "zone": "generated-zone", "server": "vcenter.example.com",
		"topology": map[string]any{"datacenter": "dc1", "computeCluster": "/dc1/host/cluster1", "datastore": "/dc1/datastore/ds1", "folder": "/dc1/vm/ostest",
			"networks": []any{"VM Network"}, "resourcePool": "/dc1/host/cluster1/Resources"}}}, p["failureDomains"])
}

func TestInstallConfigOverrides(t *testing.T) {
	ic := clusterIC(t)
	s, err := installConfigOverrides(ic, nil)
	require.NoError(t, err)
	assert.Empty(t, s)
	ic.FIPS = true
	ic.CPUPartitioningMode = "AllNodes"
	s, err = installConfigOverrides(ic, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"fips":true,"cpuPartitioningMode":"AllNodes"}`, s)
}
