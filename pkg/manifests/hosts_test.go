package manifests

import (
	"encoding/json"
	"testing"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func staticHost(role, ip string) Host {
	nc := `{"interfaces":[{"name":"eth0","type":"ethernet","ipv4":{"enabled":true,"address":[{"ip":"` + ip + `","prefix-length":24}]}}]}`
	return Host{AgentHost: AgentHost{Role: role, NetworkConfig: json.RawMessage(nc), Interfaces: []HostInterface{{Name: "eth0", MACAddress: "52:54:00:00:00:01"}}},
		File: assetdir.AgentConfig, Path: "hosts[0]"}
}

func TestChooseRendezvousIPPrefersControlPlane(t *testing.T) {
	hosts := []Host{staticHost("worker", "10.0.0.9"), staticHost("", "10.0.0.8"), staticHost("master", "10.0.0.7")}
	ip, err := ChooseRendezvousIP("", hosts, nil)
	require.NoError(t, err)
	assert.Equal(t, "10.0.0.7", ip)
	ip, err = ChooseRendezvousIP("", hosts[:2], nil)
	require.NoError(t, err)
	assert.Equal(t, "10.0.0.8", ip, "role-less hosts come after masters")
	ip, err = ChooseRendezvousIP("fd00::0001", nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "fd00::1", ip, "canonical form")
	_, err = ChooseRendezvousIP("", []Host{{AgentHost: AgentHost{Role: "master"}}}, nil)
	assert.ErrorContains(t, err, "missing rendezvousIP")
	ip, err = ChooseRendezvousIP("", nil, []NMStateConfig{{Spec: NMStateConfigSpec{Config: staticHost("", "10.1.1.1").NetworkConfig}}})
	require.NoError(t, err)
	assert.Equal(t, "10.1.1.1", ip)
}

func TestRoleCountsFillsMastersFirst(t *testing.T) {
	hosts := []Host{{}, {}, {}, {AgentHost: AgentHost{Role: "worker"}}, {}}
	m, a, w := RoleCounts(hosts, 3, 0)
	assert.Equal(t, []int64{3, 0, 2}, []int64{m, a, w})
	m, a, w = RoleCounts(hosts, 1, 1)
	assert.Equal(t, []int64{1, 1, 3}, []int64{m, a, w})
}

func clusterIC(t *testing.T) *InstallConfig {
	t.Helper()
	ic := &InstallConfig{APIVersion: "v1", Metadata: ObjectMeta{Name: "c"}, BaseDomain: "example.com",
		ControlPlane: &MachinePool{Name: "master", Replicas: ptr(int64(1))}, Compute: []MachinePool{{Name: "worker", Replicas: ptr(int64(0))}},
		Networking: &Networking{MachineNetwork: []MachineNetwork{{CIDR: "10.0.0.0/24"}}}, Platform: Platform{None: &struct{}{}}}
	ic.SetDefaults()
	return ic
}

func TestValidateClusterRendezvousRules(t *testing.T) {
	ic := clusterIC(t)
	_, err := ValidateCluster(ic, []Host{staticHost("master", "10.0.0.7")}, "10.0.0.7", nil)
	assert.NoError(t, err)

	_, err = ValidateCluster(ic, []Host{staticHost("master", "10.0.0.7")}, "10.0.0.8", nil)
	assert.ErrorContains(t, err, "is not a static address of any control-plane host's networkConfig")

	_, err = ValidateCluster(ic, nil, "192.168.1.1", nil)
	assert.ErrorContains(t, err, `agent-config.yaml: rendezvousIP: Invalid value: "192.168.1.1": is outside every machine network (10.0.0.0/24)`)

	ic.ControlPlane.Replicas = ptr(int64(3))
	ic.Compute[0].Replicas = ptr(int64(1))
	hosts := []Host{staticHost("master", "10.0.0.7"), staticHost("worker", "10.0.0.8")}
	_, err = ValidateCluster(ic, hosts, "10.0.0.8", nil)
	assert.ErrorContains(t, err, "Host hosts[0] has role 'worker' and has the rendezvousIP assigned to it")
}

func TestValidateClusterHostCounts(t *testing.T) {
	ic := clusterIC(t)
	ic.ControlPlane.Replicas = ptr(int64(3))
	m, w := Host{AgentHost: AgentHost{Role: "master"}}, Host{AgentHost: AgentHost{Role: "worker"}}
	hosts := []Host{m, m, m, m, w}
	_, err := ValidateCluster(ic, hosts, "10.0.0.1", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the number of master hosts defined (4) exceeds the configured ControlPlane replicas (3)")
	assert.Contains(t, err.Error(), "the number of worker hosts defined (1) exceeds the configured Compute replicas (0)")
	warns, _ := ValidateCluster(ic, hosts[:2], "10.0.0.1", nil)
	require.Len(t, warns, 1)
	assert.Contains(t, warns[0].Msg, "not enough master hosts defined (2)")
}
