package rendezvous

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStatusBeforeWait(t *testing.T) {
	s := StatusBeforeWait("install-complete", ExitUsage, errors.New("read d/rendezvousIP: no such file"))
	assert.Equal(t, Status{Target: "install-complete", Result: ResultFailed, ExitCode: 1, Error: "read d/rendezvousIP: no such file"}, s)

	s = StatusBeforeWait("", ExitInterrupted, errors.New("interrupted"))
	assert.Equal(t, ResultInterrupted, s.Result)
	assert.Equal(t, 130, s.ExitCode)
	assert.Empty(t, s.Target)
}

func TestExitCodeAndCheckTiming(t *testing.T) {
	assert.Equal(t, 0, ExitCode(nil))
	assert.Equal(t, ExitUsage, ExitCode(errors.New("read d/rendezvousIP")))
	assert.Equal(t, ExitInterrupted, ExitCode(ErrInterrupted))
	assert.NoError(t, CheckTiming(0, 1))
	assert.EqualError(t, CheckTiming(-time.Second, 1), "--timeout must be positive and --time-scale greater than zero")
	assert.Error(t, CheckTiming(time.Minute, 0))
}

// Issue 37 item 12: -o json's role is the API's role with the bootstrap
// host marked apart (not the display "master (bootstrap)"), and after
// installComplete the object says the end state, not the rendezvous API's
// last, stale answer ("installing", hosts rebooting).
func TestStatusAfterInstallComplete(t *testing.T) {
	c := newFakeClock()
	hosts := []Host{
		{ID: "a", RequestedHostname: "master-0", Role: "master", Bootstrap: true, Status: "installing-in-progress", Progress: &HostProgress{CurrentStage: "Rebooting", InstallationPercentage: 70}},
		{ID: "b", RequestedHostname: "master-1", Role: "master", Status: "installing-in-progress", Progress: &HostProgress{CurrentStage: "Rebooting", InstallationPercentage: 70}},
	}
	w := newWorld(c,
		step{0, restUp},
		step{0, status(ClusterInstalling, hosts...)},
		step{10 * time.Second, func(w *world) { w.restUp = false }},
		step{60 * time.Second, func(w *world) { w.kubeUp = true }},
		step{80 * time.Second, func(w *world) { w.bootstrap = "complete" }},
		step{120 * time.Second, cvConds("True", "False", "False", "Cluster version is 4.20.0", "4")},
		step{130 * time.Second, admittedRoute},
	)
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r)
	require.NoError(t, wt.WaitForInstallComplete(context.Background()), r)
	st := wt.Status("install-complete", nil)
	assert.True(t, st.InstallComplete)
	assert.Equal(t, ClusterInstalled, st.ClusterStatus)
	require.Len(t, st.Hosts, 2)
	assert.Equal(t, HostStatus{Name: "master-0", Role: "master", Bootstrap: true, Status: "installed", Stage: "Done", Percent: 100}, st.Hosts[0])
	assert.Equal(t, HostStatus{Name: "master-1", Role: "master", Status: "installed", Stage: "Done", Percent: 100}, st.Hosts[1])

	// Before the end, the last answer as it was, the role still apart.
	st = wt.Status("bootstrap-complete", errors.New("boom"))
	assert.Equal(t, "master", st.Hosts[0].Role)
	assert.True(t, st.Hosts[0].Bootstrap)
}
