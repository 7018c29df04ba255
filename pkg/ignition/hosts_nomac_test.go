package ignition

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostWithoutMACs: a host without MACs gets its directory as upstream
// writes it (openshift/installer testscript
// agent/image/configurations/ha_hosts_no_interfaces_no_macAddress: role,
// and the other settings, but no mac_addresses and no hostnames file).
// The agent-installer-client skips such a directory; agent-config's
// warnings say so before the build (manifests.AgentConfigWarnings).
func TestHostWithoutMACs(t *testing.T) {
	in := snoInput()
	h := &in.Hosts[0]
	h.MACs, h.Role, h.RootDeviceHintsYAML = nil, "master", []byte("deviceName: /dev/sda\n")
	cfg, _, err := Build(in)
	require.NoError(t, err)
	dir := HostConfigDir + "/" + h.configDirName(0)
	role, ok := fileContents(t, cfg, dir+"/role")
	require.True(t, ok, "the role is written, as upstream writes it")
	assert.Equal(t, "master", string(role))
	_, ok = fileContents(t, cfg, dir+"/root-device-hints.yaml")
	assert.True(t, ok)
	_, ok = fileContents(t, cfg, dir+"/mac_addresses")
	assert.False(t, ok, "no mac_addresses without a MAC")
	for _, f := range cfg.Storage.Files {
		assert.NotContains(t, f.Path, HostnamesDir+"/", "no hostnames file without a MAC")
	}
}
