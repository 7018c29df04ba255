package ignition

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostWithoutMACs checks that a host with no MAC (hostname, role and
// root device hints only, as upstream accepts) gets its role and hints
// but no mac_addresses or hostnames file.
func TestHostWithoutMACs(t *testing.T) {
	in := snoInput()
	in.Hosts[0].MACs = nil
	cfg, _, err := Build(in)
	require.NoError(t, err)
	dir := HostConfigDir + "/" + in.Hosts[0].configDirName(0) + "/"
	role, ok := fileContents(t, cfg, dir+"role")
	require.True(t, ok, "role file")
	assert.Equal(t, in.Hosts[0].Role, string(role))
	_, ok = fileContents(t, cfg, dir+"mac_addresses")
	assert.False(t, ok, "no mac_addresses without a MAC")
	for _, f := range cfg.Storage.Files {
		assert.NotContains(t, f.Path, HostnamesDir+"/", "no hostnames file without a MAC")
	}
}
