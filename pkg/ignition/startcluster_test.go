package ignition

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const startClusterScript = "/usr/local/bin/start-cluster-installation.sh"

// startClusterHost is the HA fixture's rendezvous host (3 masters + 2
// workers required) with assisted-service faked; sleep ends the script
// after maxSleeps waits.
func startClusterHost(t *testing.T, maxSleeps int, hostResponses ...string) *scriptHost {
	t.Helper()
	cfg, _ := mustBuild(t, haInput())
	h := newScriptHost(t, cfg)
	h.write("/proc/self/cgroup", "0::/system.slice/start-cluster-installation.service\n", 0o644)
	h.fakeAssistedService(hostResponses)
	h.fake("agetty", "")
	h.fake("sleep", `n=$(grep -c '^sleep ' `+shellQuoted(h.path("calls.log"))+`)
if [ "${n}" -ge `+strconv.Itoa(maxSleeps)+` ]; then kill -TERM "${PPID}"; fi`)
	// As systemd would: the unit's EnvironmentFile= lines.
	for _, p := range []string{"/usr/local/share/start-cluster/start-cluster.env", RendezvousEnvPath} {
		h.env = append(h.env, strings.Split(strings.TrimSpace(h.read(p)), "\n")...)
	}
	h.env = append(h.env, "INFRA_ENV_ID="+testInfraEnv)
	return h
}

func TestStartClusterInstallationWhenAllHostsKnown(t *testing.T) {
	five := hostsJSON("known", "known", "known", "known", "known")
	h := startClusterHost(t, 50,
		"", // assisted-service did not answer
		hostsJSON("known", "known", "insufficient"),
		hostsJSON("known", "known", "known", "known", "discovering"),
		five)
	out, err := h.run(startClusterScript)
	require.NoError(t, err, out)
	calls := h.calls()
	assert.Equal(t, 1, strings.Count(calls, "--request POST"), "install requested once:\n%s", calls)
	assert.Contains(t, out, "Hosts known and ready for cluster installation (5/5)")
	// The install is requested only after the fourth host list, the first
	// with all five hosts known.
	post := strings.Index(calls, "/actions/install")
	require.Positive(t, post)
	assert.Equal(t, 4, strings.Count(calls[:post], "/hosts"), calls)
	assert.Contains(t, out, "Waiting for all hosts to be ready: 5 expected, 2 ready, 1 not validated")
	assert.Contains(t, out, "Cluster installation complete")
	assert.Empty(t, h.read("/etc/issue.d/90_start-install.issue"), "the console status is cleared at the end")
	assert.Equal(t, "service start, stage start/wait-for-cluster, stage end/wait-for-cluster=success, "+
		"stage start/wait-for-hosts, stage end/wait-for-hosts=success, "+
		"stage start/install-cluster, stage end/install-cluster=success, service end=success",
		phases(h.records("start-cluster-installation")))
}

func TestStartClusterInstallationNotWithMoreHostsThanExpected(t *testing.T) {
	// Six known hosts for five expected: as upstream, the installation
	// does not start (an extra host would be installed into the cluster);
	// the console says why.
	six := hostsJSON("known", "known", "known", "known", "known", "known")
	h := startClusterHost(t, 5, six)
	out, _ := h.run(startClusterScript)
	assert.NotContains(t, h.calls(), "/actions/install", "the installation must not start:\n%s", out)
	issue := h.read("/etc/issue.d/90_start-install.issue")
	assert.Contains(t, issue, "6 hosts are ready but the installation expects 5")
}
