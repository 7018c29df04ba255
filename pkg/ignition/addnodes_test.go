package ignition

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddNodesFiles(t *testing.T) {
	cfg, _ := mustBuild(t, addNodesInput())
	get := func(p string) string {
		b, ok := fileContents(t, cfg, p)
		require.True(t, ok, p)
		return string(b)
	}
	assert.Contains(t, get(RendezvousEnvPath), "NODE_ZERO_IP=127.0.0.1\nSERVICE_BASE_URL=http://127.0.0.1:8090/\n")
	assert.Contains(t, get(RendezvousEnvPath), "WORKFLOW_TYPE=addnodes\n")
	// AUTH_TOKEN_EXPIRY as upstream's add-nodes.env carries it (RFC 3339,
	// openshift/installer pkg/asset/agent/image/ignition.go getAddNodesEnv,
	// commit 00f6ab7e), read by agent-auth-token-status.sh.
	assert.Equal(t, "CLUSTER_ID=0d6c8d5e-6c2e-4a61-9f39-2b5c1d7e1a10\nCLUSTER_NAME=ostest\nCLUSTER_API_VIP_DNS_NAME=api.ostest.example.com\nAUTH_TOKEN_EXPIRY=2026-11-27T12:00:00Z\n", get(AddNodesEnvPath))
	_, ok := fileContents(t, cfg, "/usr/local/bin/agent-auth-token-status.sh")
	assert.True(t, ok, "the expiry warning's script")
	unit, ok := unitContents(cfg, "agent-auth-token-status.service")
	require.True(t, ok, "the expiry warning's unit")
	assert.Contains(t, unit, "EnvironmentFile=/etc/assisted/add-nodes.env\n")
	assert.Contains(t, AddNodesUnits(), "agent-auth-token-status.service")
	assert.JSONEq(t, `{"networking":{"userManagedNetworking":false}}`, get("/etc/assisted/clusterconfig/import-cluster-config.json"))
	assert.JSONEq(t, `{"url":"https://api-int.ostest.example.com:22623/config/worker","ca_certificate":"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1DUwotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg=="}`,
		get("/etc/assisted/clusterconfig/worker-ignition-endpoint.json"))
	assert.Equal(t, "server ntp.example.com iburst\n", get(ChronyPath))
	_, ok = fileContents(t, cfg, TLSDir+"/kubeadmin-password.hash")
	assert.False(t, ok, "no cluster credentials in an add-nodes ISO")
	assert.Nil(t, cfg.Passwd.Users[0].PasswordHash)

	in := addNodesInput()
	in.AddNodes.ClusterID = "not-a-uuid"
	in.AddNodes.APIDNSName = "api.$(reboot)"
	in.AddNodes.AuthTokenExpiry = "in two days"
	_, _, err := Build(in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `AddNodes.ClusterID "not-a-uuid" is not a UUID`)
	assert.Contains(t, err.Error(), `AddNodes.APIDNSName "api.$(reboot)" is not a DNS name`)
	assert.Contains(t, err.Error(), `AddNodes.AuthTokenExpiry "in two days" is not an RFC 3339 time`)

	// The install ISO is unchanged: no add-nodes file or unit.
	inst, _ := mustBuild(t, snoInput())
	_, ok = fileContents(t, inst, AddNodesEnvPath)
	assert.False(t, ok)
	for _, u := range inst.Systemd.Units {
		assert.NotContains(t, AddNodesUnits(), u.Name)
	}
}

// agent-register-infraenv runs after the import: agent-installer-client
// registerInfraEnv references the one cluster the service holds and exits
// fatally when there is none yet (assisted-service release-4.20,
// cmd/agentbasedinstaller/client/main.go registerInfraEnv), so started
// alongside agent-import-cluster it would fail and restart.
func TestAddNodesInfraEnvAfterImport(t *testing.T) {
	cfg, _ := mustBuild(t, addNodesInput())
	unit, ok := unitContents(cfg, "agent-register-infraenv.service")
	require.True(t, ok)
	var after []string
	for _, l := range strings.Split(unit, "\n") {
		if v, ok := strings.CutPrefix(l, "After="); ok {
			after = append(after, strings.Fields(v)...)
		}
	}
	assert.Contains(t, after, "agent-import-cluster.service")
}
