package nodejoin

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const roleHosts = `hosts:
- hostname: worker-3
  interfaces:
  - name: eth0
    macAddress: 52:54:00:00:00:31
- hostname: master-3
  role: master
  interfaces:
  - name: eth0
    macAddress: 52:54:00:00:00:32
- hostname: arbiter-1
  role: arbiter
  interfaces:
  - name: eth0
    macAddress: 52:54:00:00:00:33
`

// A control-plane or arbiter host parses; whether the cluster's release
// takes it is CheckRoles' question, once the cluster is read.
func TestParseNodesConfigRoles(t *testing.T) {
	nc, err := ParseNodesConfig([]byte(roleHosts))
	require.NoError(t, err)
	assert.Equal(t, []string{"", "master", "arbiter"}, []string{nc.Hosts[0].Role, nc.Hosts[1].Role, nc.Hosts[2].Role})

	for _, role := range []string{"bootstrap", "auto-assign", "Master", "control-plane"} {
		_, err := ParseNodesConfig([]byte(strings.Replace(roleHosts, "role: master", "role: "+role, 1)))
		require.Error(t, err, role)
		assert.Contains(t, err.Error(), "nodes-config.yaml:7: hosts[1].role", role)
		assert.Contains(t, err.Error(), role, "the value is named")
		assert.Contains(t, err.Error(), "'master', 'arbiter' or 'worker'", "the allowed roles are named")
	}
}

func TestCheckRoles(t *testing.T) {
	nc, err := ParseNodesConfig([]byte(roleHosts))
	require.NoError(t, err)
	cluster := func(version string, roles ...string) *ClusterInfo {
		return &ClusterInfo{Version: version, Existing: []ExistingNode{{Name: "master-0", Kind: "node", Roles: roles}}}
	}

	// 4.21 and later: master and arbiter (a cluster with an arbiter node).
	for _, v := range []string{"4.21.0", "4.23.1", "4.24.0-ec.2"} {
		notes, err := CheckRoles(nc, cluster(v, "master", "arbiter"))
		require.NoError(t, err, v)
		assert.Empty(t, notes, v)
	}
	// An arbiter for a cluster that has no arbiter node is taken, with a
	// note: the machine-config server serves the arbiter pool only on a
	// cluster installed with one.
	notes, err := CheckRoles(nc, cluster("4.21.0", "master"))
	require.NoError(t, err)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "hosts[2] (arbiter-1) has role arbiter, but no node of the cluster is labelled node-role.kubernetes.io/arbiter")

	// 4.18 ... 4.20: master only; the arbiter is refused with the file, its
	// line, the host, the field, the cluster's release and the first
	// release that takes it.
	for _, v := range []string{"4.18.0", "4.19.7", "4.20.3"} {
		_, err := CheckRoles(nc, cluster(v, "master", "arbiter"))
		require.Error(t, err, v)
		msg := err.Error()
		assert.Contains(t, msg, `nodes-config.yaml:12: hosts[2] (arbiter-1).role: "arbiter": the cluster runs OpenShift `+v, v)
		assert.Contains(t, msg, "from OpenShift 4.21", v)
		assert.Contains(t, msg, "remove the role to add the host as a worker", v)
		assert.NotContains(t, msg, "master-3", "the master is taken on "+v)
	}
	// Below the floor, neither.
	_, err = CheckRoles(nc, cluster("4.17.2", "master"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `nodes-config.yaml:7: hosts[1] (master-3).role: "master": the cluster runs OpenShift 4.17.2`)
	assert.Contains(t, err.Error(), "from OpenShift 4.18")
	assert.Contains(t, err.Error(), `hosts[2] (arbiter-1).role: "arbiter"`, "every refusal is reported")

	// Workers only: nothing to check, whatever the version says.
	w, err := ParseNodesConfig([]byte(strings.SplitAfter(roleHosts, "52:54:00:00:00:31\n")[0]))
	require.NoError(t, err)
	notes, err = CheckRoles(w, cluster("not-a-version"))
	require.NoError(t, err)
	assert.Empty(t, notes)
	_, err = CheckRoles(nc, cluster("not-a-version"))
	assert.ErrorContains(t, err, `cannot tell whether OpenShift "not-a-version" (the cluster's ClusterVersion) takes hosts[1] (master-3) with role master`)
}

func FuzzParseNodesConfig(f *testing.F) {
	f.Add([]byte(roleHosts))
	f.Add([]byte("hosts:\n- role: arbiter\n  interfaces: [{name: eth0, macAddress: 52:54:00:00:00:01}]\n"))
	f.Add([]byte("bootArtifactsBaseURL: http://x/\nhosts: []\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		nc, err := ParseNodesConfig(b)
		if err != nil {
			return
		}
		_ = nc.NewHosts()
		_, _ = CheckRoles(nc, &ClusterInfo{Version: "4.20.3"})
	})
}
