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
	hs, err := HubHosts(ic, ie, map[string][]string{"m0": {"--append-karg", `a"b`}})
	require.NoError(t, err)
	require.Len(t, hs, 1)
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

	_, err = HubHosts(&InstallConfig{Platform: Platform{BareMetal: &BareMetalPlatform{Hosts: []BareMetalHost{{Name: "w0"}}}}}, ie, nil)
	assert.ErrorContains(t, err, "no host in install-config.yaml platform.baremetal.hosts has a bmc.address")
	_, err = HubHosts(&InstallConfig{Platform: Platform{None: &struct{}{}}}, ie, nil)
	assert.ErrorContains(t, err, "--for-hub needs install-config.yaml with platform.baremetal.hosts[].bmc")
}
