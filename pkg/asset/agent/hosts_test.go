package agent_test

import (
	"context"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
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

// TestHostWithoutInterfaces checks that a host listed without interfaces
// but with settings is refused when the ISO is built, naming the settings
// that could never apply: the real agent-installer-client skips a
// hostconfig directory without mac_addresses (assisted-service
// cmd/agentbasedinstaller/host_config.go, LoadHostConfigs, release-4.18 ...
// master), and apply-host-overrides.sh finds hosts by MAC too. Before, the
// role and hints were written and silently ignored at install time.
func TestHostWithoutInterfaces(t *testing.T) {
	ac := testfixture.AgentConfig + `hosts:
- hostname: master-0
  role: master
  rootDeviceHints:
    deviceName: /dev/sda
  installerArgs: [--append-karg, nosmt]
`
	s, _ := store(t, map[string]string{assetdir.InstallConfig: testfixture.CompactInstallConfig, assetdir.AgentConfig: ac})
	_, err := s.Fetch(context.Background(), &agent.AgentIgnition{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "agent-config.yaml:5: hosts[0].interfaces: Required value: host master-0 lists no interfaces, so no machine can be matched to it")
	assert.Contains(t, err.Error(), "so its hostname, role, rootDeviceHints, installerArgs would never apply; add interfaces: [{name: <nic>, macAddress: <MAC>}]")
}
