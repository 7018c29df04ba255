package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/pkg/asset"
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

// TestHostWithoutInterfaces: a host listed without interfaces is
// accepted, as upstream accepts it (openshift/installer testscript
// agent/image/configurations/ha_hosts_no_interfaces_no_macAddress), with
// its settings written as upstream writes them and a warning naming each
// setting that will not apply: the real agent-installer-client skips a
// hostconfig directory without mac_addresses (assisted-service
// cmd/agentbasedinstaller/host_config.go, LoadHostConfigs, release-4.18 ...
// master), and apply-host-overrides.sh finds hosts by MAC too.
func TestHostWithoutInterfaces(t *testing.T) {
	ac := testfixture.AgentConfig + `hosts:
- hostname: master-0
  role: master
  rootDeviceHints:
    deviceName: /dev/sda
  installerArgs: [--append-karg, nosmt]
`
	s, _ := store(t, map[string]string{assetdir.InstallConfig: testfixture.CompactInstallConfig, assetdir.AgentConfig: ac})
	ign, err := asset.Fetch[*agent.AgentIgnition](context.Background(), s)
	require.NoError(t, err)
	warns := strings.Join(s.Warnings(), "\n")
	assert.Contains(t, warns, "agent-config.yaml:5: hosts[0].interfaces: host master-0 lists no interfaces, so no machine can be matched to it: its hostname, role, rootDeviceHints, installerArgs will not apply")
	var cfg types.Config
	require.NoError(t, json.Unmarshal(ign.Config, &cfg))
	assert.True(t, hasFile(cfg, "/etc/assisted/hostconfig/master-0/role"))
	assert.False(t, hasFile(cfg, "/etc/assisted/hostconfig/master-0/mac_addresses"))
}
