package nodejoin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckHosts(t *testing.T) {
	ci := &ClusterInfo{MachineNetworks: []string{"192.168.111.0/24"}, Existing: []ExistingNode{
		{Name: "worker-0", Kind: "node", IPs: []string{"192.168.111.23"}, MACs: []string{"52:54:00:00:00:23"}},
		{Name: "worker-5", Kind: "bare-metal host", MACs: []string{"52:54:00:00:00:55"}},
	}}
	require.NoError(t, CheckHosts(ci, []NewHost{{Name: "worker-1", MACs: []string{"52:54:00:00:00:31"}, IPs: []string{"192.168.111.31"}}, {MACs: []string{"52:54:00:00:00:32"}}}))

	err := CheckHosts(ci, []NewHost{
		{Name: "Worker-0", MACs: []string{"52:54:00:00:00:AA"}},
		{Name: "worker-2", MACs: []string{"52:54:00:00:00:23"}, IPs: []string{"192.168.111.23"}},
		{MACs: []string{"52:54:00:00:00:55"}, IPs: []string{"10.0.0.5"}},
	})
	require.Error(t, err)
	assert.Equal(t, `hosts[0] (Worker-0): hostname "Worker-0" is already the name of a node of the cluster: choose another name, or delete the node first (oc delete node worker-0)
hosts[1] (worker-2): MAC address 52:54:00:00:00:23 already belongs to node worker-0 of the cluster
hosts[1] (worker-2): IP address 192.168.111.23 is already the address of node worker-0 of the cluster
hosts[2]: MAC address 52:54:00:00:00:55 already belongs to bare-metal host worker-5 of the cluster
hosts[2]: IP address 10.0.0.5 is outside the cluster's machine networks (192.168.111.0/24)`, err.Error())
}
