package agent_test

import (
	"testing"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

func hasFile(cfg types.Config, path string) bool {
	for _, f := range cfg.Storage.Files {
		if f.Path == path {
			return true
		}
	}
	return false
}

// TestHostWithoutInterfaces checks that a host listed with only a
// hostname, a role and root device hints is accepted, as newer upstream
// does: its role and hints are written, and no mac_addresses file (there
// is no MAC to match the host by).
func TestHostWithoutInterfaces(t *testing.T) {
	ac := acSimple + `hosts:
- hostname: master-0
  role: master
  rootDeviceHints:
    deviceName: /dev/sda
`
	cfg := ignitionFor(t, goldenRelease, map[string]string{assetdir.InstallConfig: icSimple, assetdir.AgentConfig: ac})
	const dir = "/etc/assisted/hostconfig/master-0/"
	assert.Equal(t, "master", string(ignitionFile(t, cfg, dir+"role")))
	assert.Contains(t, string(ignitionFile(t, cfg, dir+"root-device-hints.yaml")), "deviceName: /dev/sda")
	assert.False(t, hasFile(cfg, dir+"mac_addresses"), "no MAC, no mac_addresses file")
}
