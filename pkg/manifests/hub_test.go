package manifests

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHubHosts(t *testing.T) {
	ic := &InstallConfig{Platform: Platform{BareMetal: &BareMetalPlatform{Hosts: []BareMetalHost{
		{Name: "m0", Role: "master", BootMACAddress: "52:54:00:AA:00:01", BMC: &BMC{Address: "redfish-virtualmedia://10.0.0.5/redfish/v1/Systems/1", Username: "u", Password: "p\"w"}},
		{Name: "w0", BootMACAddress: "52:54:00:aa:00:02"},
	}}}}
	ie := &InfraEnv{Metadata: ObjectMeta{Name: "ie", Namespace: "ns"}}
	hs, notes, err := HubHosts(ic, ie, map[string][]string{"m0": {"--append-karg", `a"b`}})
	require.NoError(t, err)
	require.Len(t, hs, 1)
	assert.Empty(t, notes)
	h := hs[0]
	assert.Equal(t, "m0-bmc-secret", h.Secret.Metadata.Name)
	assert.Equal(t, "ns", h.Secret.Metadata.Namespace)
	assert.Equal(t, []byte("p\"w"), h.Secret.Data["password"])
	b := h.BareMetalHost
	assert.Equal(t, "ie", b.Metadata.Labels[BMHInfraEnvLabel])
	assert.Equal(t, "disabled", b.Metadata.Annotations[BMHInspectAnnotation])
	assert.Equal(t, `["--append-karg","a\"b"]`, b.Metadata.Annotations[BMHInstallerArgsAnnotation])
	assert.Equal(t, "master", b.Metadata.Annotations[BMHRoleAnnotation])
	assert.True(t, b.Spec.Online)
	assert.Equal(t, "disabled", b.Spec.AutomatedCleaningMode)
	assert.Equal(t, "52:54:00:aa:00:01", b.Spec.BootMACAddress)
	assert.Equal(t, "m0-bmc-secret", b.Spec.BMC.CredentialsName)
	assert.Equal(t, "redfish-virtualmedia://10.0.0.5/redfish/v1/Systems/1", b.Spec.BMC.Address)

	_, _, err = HubHosts(&InstallConfig{Platform: Platform{BareMetal: &BareMetalPlatform{Hosts: []BareMetalHost{{Name: "w0"}}}}}, ie, nil)
	assert.ErrorContains(t, err, "no host in install-config.yaml platform.baremetal.hosts has a bmc.address")
	_, _, err = HubHosts(&InstallConfig{Platform: Platform{None: &struct{}{}}}, ie, nil)
	assert.ErrorContains(t, err, "--for-hub needs install-config.yaml with platform.baremetal.hosts[].bmc")
}

// A network-booting Redfish address becomes the virtual-media scheme of
// the same driver and transport in the hub's BareMetalHost (Metal3 would
// network-boot it over a provisioning network), and a note says so; the
// virtual-media and other schemes are kept as given.
func TestHubBMCAddressVirtualMedia(t *testing.T) {
	for in, want := range map[string]string{
		"redfish://10.0.0.5/redfish/v1/Systems/1":                                 "redfish-virtualmedia://10.0.0.5/redfish/v1/Systems/1",
		"redfish+http://10.0.0.5:8000/redfish/v1/Systems/1":                       "redfish-virtualmedia+http://10.0.0.5:8000/redfish/v1/Systems/1",
		"idrac-redfish://10.0.0.6/redfish/v1/Systems/System.Embedded.1":           "idrac-virtualmedia://10.0.0.6/redfish/v1/Systems/System.Embedded.1",
		"idrac-redfish+https://10.0.0.6/redfish/v1/Systems/System.Embedded.1":     "idrac-virtualmedia+https://10.0.0.6/redfish/v1/Systems/System.Embedded.1",
		"ilo5-redfish://10.0.0.7/redfish/v1/Systems/1":                            "ilo5-virtualmedia://10.0.0.7/redfish/v1/Systems/1",
		"redfish-virtualmedia://10.0.0.5/redfish/v1/Systems/1":                    "",
		"idrac-virtualmedia+http://10.0.0.6/redfish/v1/Systems/System.Embedded.1": "",
		"ipmi://10.0.0.8": "",
	} {
		got, note := HubBMCAddress(in)
		if want == "" {
			assert.Equal(t, in, got)
			assert.Empty(t, note)
			continue
		}
		assert.Equal(t, want, got, in)
		assert.Contains(t, note, "network-boots")
	}
	ic := &InstallConfig{Platform: Platform{BareMetal: &BareMetalPlatform{Hosts: []BareMetalHost{
		{Name: "m0", BMC: &BMC{Address: "idrac-redfish://10.0.0.6/redfish/v1/Systems/System.Embedded.1", Username: "u", Password: "p"}},
	}}}}
	hs, notes, err := HubHosts(ic, &InfraEnv{Metadata: ObjectMeta{Name: "ie", Namespace: "ns"}}, nil)
	require.NoError(t, err)
	assert.Equal(t, "idrac-virtualmedia://10.0.0.6/redfish/v1/Systems/System.Embedded.1", hs[0].BareMetalHost.Spec.BMC.Address)
	assert.Equal(t, []string{"host m0 (platform.baremetal.hosts[0].bmc.address): the hub's BareMetalHost gets idrac-virtualmedia:// instead of idrac-redfish:// (Metal3 network-boots idrac-redfish:// hosts over a provisioning network; agentiso boots them from virtual media, and so will the hub)"}, notes)
}
