package ignition

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostWithoutMACs: a host without MACs cannot carry settings, since
// both the agent-installer-client (hostconfig directories without
// mac_addresses are skipped) and apply-host-overrides.sh find a host by
// MAC; with only a hostname it gets no mac_addresses or hostnames file.
func TestHostWithoutMACs(t *testing.T) {
	for name, set := range map[string]func(*Host){
		"role":               func(h *Host) { h.Role = "master" },
		"root device hints":  func(h *Host) { h.RootDeviceHintsYAML = []byte("deviceName: /dev/sda\n") },
		"installer args":     func(h *Host) { h.InstallerArgs = []string{"--append-karg", "nosmt"} },
		"ignition override":  func(h *Host) { h.IgnitionConfigOverride = `{"ignition":{"version":"3.2.0"}}` },
		"fencing credential": func(h *Host) { h.FencingCredentialsYAML = []byte("credentials: []\n") },
	} {
		t.Run(name, func(t *testing.T) {
			in := snoInput()
			h := &in.Hosts[0]
			h.MACs, h.Role, h.RootDeviceHintsYAML, h.InstallerArgs, h.IgnitionConfigOverride, h.FencingCredentialsYAML = nil, "", nil, nil, "", nil
			set(h)
			_, _, err := Build(in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "Hosts[0].MACs: none, so its role, root device hints, installer arguments, Ignition override or fencing credentials could never be applied to a machine")
		})
	}
	in := snoInput()
	h := &in.Hosts[0]
	h.MACs, h.Role, h.RootDeviceHintsYAML, h.InstallerArgs, h.IgnitionConfigOverride, h.FencingCredentialsYAML = nil, "", nil, nil, "", nil
	cfg, _, err := Build(in)
	require.NoError(t, err)
	_, ok := fileContents(t, cfg, HostConfigDir+"/"+h.configDirName(0)+"/mac_addresses")
	assert.False(t, ok, "no mac_addresses without a MAC")
	for _, f := range cfg.Storage.Files {
		assert.NotContains(t, f.Path, HostnamesDir+"/", "no hostnames file without a MAC")
	}
}
