package rendezvous

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var we *WaitError
	require.ErrorAs(t, err, &we)
	return we.ExitCode()
}

// Rule: neither API ever seen -> "Waiting ... Sleeping for 30 seconds", and a 30 s sleep.
// After 2 minutes with the SSH probe failing -> "Cannot access Rendezvous
// Host <ip>", said once as a warning and then only at debug level; the
// failure hints name the address too.
func TestInitWaitThenCannotAccess(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c)
	r := &recordReporter{}
	probed := 0
	wt := newTestWaiter(w, c, r, func(o *Options) {
		o.BootstrapTimeout = 4 * time.Minute
		o.ProbeSSH = func(context.Context) error { probed++; return errors.New("no route to host") }
		o.RendezvousIP = "192.0.2.10"
	})
	err := wt.WaitForBootstrapComplete(context.Background())
	assert.Equal(t, ExitBootstrapFailed, exitCode(t, err))
	assert.Contains(t, err.Error(), "bootstrap process timed out")
	// t=0,30,60,90,120 -> waiting (5 polls); 150..240 -> cannot access (4 polls).
	assert.Equal(t, 5, r.count("Waiting for cluster install to initialize. Sleeping for 30 seconds"), r)
	assert.Equal(t, 4, r.count("Cannot access Rendezvous Host 192.0.2.10: neither its API (port 8090) nor SSH (port 22) answers. There may be a network configuration problem"), r)
	lvl, _ := r.level("Cannot access Rendezvous Host")
	assert.Equal(t, slog.LevelWarn, lvl, "the first one is a warning")
	shown := 0
	for _, l := range r.lines {
		if strings.Contains(l.msg, "Cannot access") && l.level >= slog.LevelInfo {
			shown++
		}
	}
	assert.Equal(t, 1, shown, "shown once at the default level")
	assert.Equal(t, 4, probed)
	assert.Equal(t, 1, r.count("ssh core@192.0.2.10 sudo journalctl"), "the hints name the address")
	assert.Equal(t, 1, r.count("ssh core@192.0.2.10 agent-gather"), "the hints name the address")
	assert.Zero(t, r.count("<rendezvous IP>"))
	for _, s := range c.sleeps {
		assert.Equal(t, InitSleep, s)
	}
}

func TestInitWaitSSHReachable(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c)
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r, func(o *Options) {
		o.BootstrapTimeout = 4 * time.Minute
		o.ProbeSSH = func(context.Context) error { return nil }
	})
	require.Error(t, wt.WaitForBootstrapComplete(context.Background()))
	assert.Zero(t, r.count("Cannot access Rendezvous Host"))
	// t=0..210: the poll at the deadline (t=240) says no sleep it will
	// not take.
	assert.Equal(t, 8, r.count("Waiting for cluster install to initialize"))
}

// Rule: status line logged once per change, with the upstream texts.
func TestStatusLines(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c,
		step{0, restUp},
		step{0, status(ClusterInsufficient)},
		step{10 * time.Second, status(ClusterReady)},
		step{20 * time.Second, status(ClusterPreparing)},
		step{30 * time.Second, status(ClusterInstalling)},
		step{40 * time.Second, status(ClusterFinalizing)},
		step{50 * time.Second, status(ClusterInstalled)},
	)
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r, func(o *Options) { o.BootstrapTimeout = time.Minute })
	require.Error(t, wt.WaitForBootstrapComplete(context.Background()))
	want := []string{
		"Cluster is not ready for install. Check validations",
		"Cluster is ready for install",
		"Preparing cluster for installation",
		"Cluster installation in progress",
		"Finalizing cluster installation",
	}
	last := -1
	for _, m := range want {
		assert.Equal(t, 1, r.count(m), m)
		i := r.index(m)
		assert.Greater(t, i, last, "order of %q", m)
		last = i
	}
	assert.Equal(t, 1, r.count("Agent Rest API Initialized"))
	for _, s := range []string{"adding-hosts", "pending-for-input", "installing-pending-user-action", "error", "cancelled"} {
		assert.NotEmpty(t, StatusMessage(s))
	}
	assert.Empty(t, StatusMessage(ClusterInstalled))
}

// Rule: ready for more than one minute is fatal.
func TestStuckInReady(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c, step{0, restUp}, step{0, status(ClusterReady)})
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r)
	err := wt.WaitForBootstrapComplete(context.Background())
	assert.Equal(t, ExitBootstrapFailed, exitCode(t, err))
	assert.Contains(t, err.Error(), "bootstrap process returned error: failed to progress after all hosts available")
	el := c.Now().Sub(w.start)
	assert.Greater(t, el, ReadyStuckAfter)
	assert.Less(t, el, ReadyStuckAfter+5*time.Second)
	assert.Equal(t, 1, r.count("sudo journalctl -b -u assisted-service -u agent-register-cluster -u start-cluster-installation -u agent"))
	assert.Equal(t, 1, r.count("ssh core@<rendezvous IP> agent-gather -O >agent-gather.tar.xz"))
}

// Rule: ready for less than a minute, then progress, is fine.
func TestReadyBrieflyIsFine(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c, step{0, restUp}, step{0, status(ClusterReady)}, step{50 * time.Second, status(ClusterInstalling)})
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r, func(o *Options) { o.BootstrapTimeout = 5 * time.Minute })
	err := wt.WaitForBootstrapComplete(context.Background())
	assert.Contains(t, err.Error(), "timed out", "only the timeout ends this wait")
}

// Rule: time spent waiting for an answer is not time in ready. Ready at
// 0-50 s; the poll at 2 s reads ready and then waits 70 s for the events:
// the status was known to be ready at 0 s and 2 s only, not for a minute.
func TestReadySlowAnswerIsNotStuck(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c, step{0, restUp}, step{0, status(ClusterReady)}, step{50 * time.Second, status(ClusterInstalling)})
	w.eventsLatency = []time.Duration{0, 70 * time.Second}
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r, func(o *Options) { o.BootstrapTimeout = 5 * time.Minute })
	err := wt.WaitForBootstrapComplete(context.Background())
	assert.Contains(t, err.Error(), "timed out", "only the timeout ends this wait")
	assert.Equal(t, 1, r.count("Cluster installation in progress"))
}

// Rule: back to ready from preparing -> non-fatal "failed to prepare ... retrying" and the timer restarts.
func TestBackToReadyFromPreparing(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c, step{0, restUp}, step{0, status(ClusterReady)},
		step{40 * time.Second, status(ClusterPreparing)},
		step{50 * time.Second, status(ClusterReady)},
		step{100 * time.Second, status(ClusterInstalling)})
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r, func(o *Options) { o.BootstrapTimeout = 3 * time.Minute })
	err := wt.WaitForBootstrapComplete(context.Background())
	assert.Contains(t, err.Error(), "timed out", "ready at 0-40 s and 50-100 s never exceeds a minute")
	assert.Equal(t, 1, r.count("failed to prepare cluster installation, retrying"))
	lvl, _ := r.level("failed to prepare cluster installation, retrying")
	assert.Equal(t, slog.LevelInfo, lvl)
	assert.Equal(t, 2, r.count("Cluster is ready for install"))
}

// Rule: error and installing-pending-user-action are non-fatal; hosts needing action are warned about.
func TestErrorAndPendingUserAction(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c, step{0, restUp},
		step{0, status(ClusterInstalling, Host{RequestedHostname: "m0", Status: "installing-in-progress"}, Host{RequestedHostname: "m1", Status: "installing-in-progress"})},
		step{10 * time.Second, status(ClusterInstallingPendingUser,
			Host{RequestedHostname: "m0", Status: "installing-in-progress"},
			Host{RequestedHostname: "m1", Status: HostInstallingPendingUser, StatusInfo: "Expected the host to boot from disk, but it booted the installation image"})},
		step{30 * time.Second, status(ClusterInstalling)},
		step{40 * time.Second, status(ClusterError)},
	)
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r, func(o *Options) { o.BootstrapTimeout = time.Minute })
	err := wt.WaitForBootstrapComplete(context.Background())
	assert.Contains(t, err.Error(), "timed out", "neither status is fatal")
	assert.Equal(t, 1, r.count("Cluster has hosts requiring user input"))
	lvl, ok := r.level("Host m1 Expected the host to boot from disk")
	require.True(t, ok, r)
	assert.Equal(t, slog.LevelWarn, lvl)
	assert.Zero(t, r.count("Host m0 installing"))
	assert.Equal(t, 1, r.count("Cluster has hosts in error"))
	// logged once per change of the error text: pending-user (1), then error after a clean installing tick (2)
	assert.Equal(t, 2, r.count("cluster has stopped installing... working to recover installation"))
}

// Rule: cancelled is fatal.
func TestCancelled(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c, step{0, restUp}, step{0, status(ClusterInstalling)}, step{20 * time.Second, status(ClusterCancelled)})
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r)
	err := wt.WaitForInstallComplete(context.Background())
	assert.Equal(t, ExitBootstrapFailed, exitCode(t, err))
	assert.Contains(t, err.Error(), "cluster installation was cancelled")
	assert.Equal(t, 1, r.count("Cluster installation cancelled"))
	assert.Less(t, c.Now().Sub(w.start), 30*time.Second)
}

// Rules: REST gone before Kube -> "cluster bootstrap did not complete" (once); Kube first time ->
// "Bootstrap Kube API Initialized"; configmap complete -> done; install phase -> ClusterVersion and route.
func TestHappyPathRESTThenKube(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c,
		step{0, restUp},
		step{0, status(ClusterInstalling)},
		step{10 * time.Second, func(w *world) { w.restUp = false }},
		step{60 * time.Second, func(w *world) { w.kubeUp = true }},
		step{60 * time.Second, cvConds("False", "False", "True", "Working towards 4.20.0: 10% complete", "1")},
		step{80 * time.Second, func(w *world) { w.bootstrap = "complete" }},
		step{100 * time.Second, cvConds("False", "False", "True", "Working towards 4.20.0: 10% complete", "2")},
		step{110 * time.Second, cvConds("False", "False", "True", "Working towards 4.20.0: 80% complete", "3")},
		step{120 * time.Second, cvConds("True", "False", "False", "Cluster version is 4.20.0", "4")},
		step{130 * time.Second, admittedRoute},
	)
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r)
	require.NoError(t, wt.WaitForInstallComplete(context.Background()), r)
	assert.Equal(t, 1, r.count("cluster bootstrap did not complete"))
	for _, m := range []string{"Bootstrap Kube API Initialized", "Bootstrap configMap status is complete", "cluster bootstrap is complete",
		"Still waiting for the cluster to initialize: Working towards 4.20.0: 80% complete", "Cluster is installed", "Install complete!",
		"export KUBECONFIG=/d/auth/kubeconfig", "Access the OpenShift web-console here: https://console-openshift-console.apps.ocp.example.com",
		`Login to the console with user: "kubeadmin", and the password in /d/auth/kubeadmin-password`} {
		assert.Equal(t, 1, r.count(m), m)
	}
	// Same message with a new resourceVersion is only Debug.
	assert.Equal(t, 2, r.count("Working towards 4.20.0: 10% complete"))
	assert.Equal(t, "https://console-openshift-console.apps.ocp.example.com", wt.ConsoleURL())
	assert.Less(t, r.index("cluster bootstrap did not complete"), r.index("Bootstrap Kube API Initialized"))
}

func TestBootstrapTimeoutWithFailingValidation(t *testing.T) {
	c := newFakeClock()
	disk := `{"hardware":[{"id":"has-min-valid-disks","status":"failure","message":"No eligible disks were found, please check specific disks to see why they are not eligible"}],"network":[{"id":"connected","status":"success","message":"Host is connected"}]}`
	w := newWorld(c, step{0, restUp}, step{0, status(ClusterInsufficient, Host{RequestedHostname: "m0", Status: "insufficient", ValidationsInfo: disk})})
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r)
	err := wt.WaitForBootstrapComplete(context.Background())
	assert.Equal(t, ExitBootstrapFailed, exitCode(t, err))
	assert.Contains(t, err.Error(), "Bootstrap failed to complete: bootstrap process timed out after 1h0m0s")
	assert.Equal(t, DefaultBootstrapTimeout, c.Now().Sub(w.start), "the last sleep is cut to the deadline")
	assert.Equal(t, 1, r.count("Host m0 validation: No eligible disks were found"), r)
	lvl, _ := r.level("Host m0 validation: No eligible disks")
	assert.Equal(t, slog.LevelWarn, lvl)
	assert.Equal(t, 1, r.count("hint: no usable installation disk"))
	lvl, _ = r.level("Host m0 validation: Host is connected")
	assert.Equal(t, slog.LevelDebug, lvl)
}

func TestInstallTimeoutListsOperators(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c,
		step{0, func(w *world) { w.kubeUp = true; w.bootstrap = "complete" }},
		step{0, cvConds("True", "True", "True", "some operators are degraded", "1")},
		step{0, func(w *world) {
			w.operators = []ClusterOperator{{}, {}}
			w.operators[0].Metadata.Name = "ingress"
			w.operators[0].Status.Conditions = []Condition{{Type: "Available", Status: "True"}, {Type: "Degraded", Status: "True", Reason: "IngressDegraded", Message: "router pods not ready"}, {Type: "Upgradeable", Status: "False"}}
			w.operators[1].Metadata.Name = "dns"
			w.operators[1].Status.Conditions = []Condition{{Type: "Available", Status: "True"}, {Type: "Degraded", Status: "False"}, {Type: "Progressing", Status: "True", Reason: "Rolling", Message: "rolling out"}}
		}},
	)
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r, func(o *Options) { o.InstallTimeout = 10 * time.Minute })
	err := wt.WaitForInstallComplete(context.Background())
	assert.Equal(t, ExitInstallFailed, exitCode(t, err))
	assert.Contains(t, err.Error(), "Cluster installation timed out")
	lvl, ok := r.level("Cluster operator ingress Degraded is True with IngressDegraded: router pods not ready")
	require.True(t, ok, r)
	assert.Equal(t, slog.LevelError, lvl)
	lvl, _ = r.level("Cluster operator dns Progressing is True with Rolling: rolling out")
	assert.Equal(t, slog.LevelInfo, lvl)
	assert.Zero(t, r.count("Upgradeable"))
	assert.Zero(t, r.count("Available is True"))
	assert.Equal(t, 1, r.count("Cluster initialization failed because one or more operators are not functioning properly"))
}

func TestValidationTransitions(t *testing.T) {
	r := &recordReporter{}
	wt := NewWaiter(Options{Reporter: r, Clock: newFakeClock()})
	v := func(status, msg string) string {
		return `{"network":[{"id":"ntp-synced","status":"` + status + `","message":"` + msg + `"}]}`
	}
	require.NoError(t, wt.checkValidations("Host m0 validation: ", "h/m0", v("pending", "Waiting for NTP")))
	require.NoError(t, wt.checkValidations("Host m0 validation: ", "h/m0", v("pending", "Waiting for NTP")))
	require.NoError(t, wt.checkValidations("Host m0 validation: ", "h/m0", v("failure", "Host couldn't synchronize with any NTP server")))
	require.NoError(t, wt.checkValidations("Host m0 validation: ", "h/m0", v("failure", "Host couldn't synchronize with any NTP server")))
	require.NoError(t, wt.checkValidations("Host m0 validation: ", "h/m0", v("success", "Host NTP is synced")))
	require.NoError(t, wt.checkValidations("Host m1 validation: ", "h/m1", v("success", "Host NTP is synced")))
	require.NoError(t, wt.checkValidations("Cluster validation: ", "c", ""))
	err := wt.checkValidations("Cluster validation: ", "c", "{not json")
	assert.ErrorContains(t, err, "host validations failed: unable to verify validations")

	require.Len(t, r.lines, 4, r)
	assert.Equal(t, logLine{LevelTrace, "Host m0 validation: Waiting for NTP"}, r.lines[0])
	assert.Equal(t, slog.LevelWarn, r.lines[1].level)
	assert.Contains(t, r.lines[1].msg, "Host m0 validation: Host couldn't synchronize with any NTP server (hint: ")
	assert.Equal(t, logLine{slog.LevelInfo, "Host m0 validation: Host NTP is synced"}, r.lines[2])
	assert.Equal(t, logLine{slog.LevelDebug, "Host m1 validation: Host NTP is synced"}, r.lines[3])
}

func TestEventsEachNewOnce(t *testing.T) {
	r := &recordReporter{}
	wt := NewWaiter(Options{Reporter: r, Clock: newFakeClock()})
	e := func(sev, msg string) Event { return Event{Severity: sev, Message: msg} }
	evs := []Event{e("info", "Successfully registered cluster"), e("info", "Host m0: updated status from discovering to known")}
	wt.reportEvents(evs)
	wt.reportEvents(evs)
	evs = append(evs, e("warning", "Host m0: validation 'ntp-synced' that used to succeed is now failing"), e("info", "Host: m0, reached installation stage Writing image to disk: 45%"))
	wt.reportEvents(evs)
	require.Len(t, r.lines, 4)
	assert.Equal(t, slog.LevelWarn, r.lines[2].level)
	assert.Equal(t, slog.LevelInfo, r.lines[3].level)
	// A shorter list (service restarted) only reconsiders the newest event.
	wt.reportEvents(evs[:1])
	assert.Len(t, r.lines, 5)
}

func TestTooManyClusters(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c, step{0, restUp}, step{0, func(w *world) { w.clusters = append(w.clusters, Cluster{ID: "c-2"}) }})
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r, func(o *Options) { o.BootstrapTimeout = 20 * time.Second })
	require.Error(t, wt.WaitForBootstrapComplete(context.Background()))
	assert.Equal(t, 1, r.count("found too many clusters. number of clusters found: 2"))
	assert.Equal(t, 1, r.count("Unable to retrieve cluster metadata from Agent Rest API: no clusterID known for the cluster"))
}

func TestBackoffOnErrors(t *testing.T) {
	c := newFakeClock()
	// REST seen once, then gone: every poll fails.
	w := newWorld(c, step{0, restUp}, step{0, status(ClusterInstalling)}, step{time.Second, func(w *world) { w.restUp = false }})
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r, func(o *Options) { o.BootstrapTimeout = 2 * time.Minute })
	require.Error(t, wt.WaitForBootstrapComplete(context.Background()))
	require.GreaterOrEqual(t, len(c.sleeps), 6)
	assert.Equal(t, []time.Duration{2 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 16 * time.Second}, c.sleeps[:6])
}

func TestInterrupted(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c, step{0, restUp}, step{0, status(ClusterInstalling)})
	r := &recordReporter{}
	ctx, cancel := context.WithCancel(context.Background())
	wt := newTestWaiter(w, c, r, func(o *Options) {
		o.Reporter = reporterFunc(func(l slog.Level, msg string) {
			r.Log(l, msg)
			if msg == "Cluster installation in progress" {
				cancel()
			}
		})
	})
	err := wt.WaitForInstallComplete(ctx)
	assert.ErrorIs(t, err, ErrInterrupted)
	var we *WaitError
	assert.False(t, errors.As(err, &we))
}

type reporterFunc func(slog.Level, string)

func (f reporterFunc) Log(l slog.Level, m string) { f(l, m) }
func (f reporterFunc) Hosts([]HostRow)            {}
func (f reporterFunc) Stale(string)               {}
func (f reporterFunc) Result(m string)            { f(slog.LevelInfo, m) }
func (f reporterFunc) Close(bool)                 {}

// ConsoleURL is the console URL once install-complete has seen the route.
func (w *Waiter) ConsoleURL() string { return w.consoleURL }

// LAST CHANGE ages come from the server's clock (the Date of its answer),
// not the workstation's: here the workstation runs 1 hour behind.
func TestHostAgesOnTheServerClock(t *testing.T) {
	c := newFakeClock()
	server := c.Now().Add(time.Hour)
	changed := server.Add(-90 * time.Second)
	w := newWorld(c, step{0, restUp}, step{0, status(ClusterInstalling,
		Host{ID: "h1", RequestedHostname: "m0", Role: "master", Status: "installing-in-progress", StatusUpdatedAt: &changed})},
		step{0, func(w *world) { w.cluster.ServerTime = server }})
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r, func(o *Options) { o.BootstrapTimeout = time.Second })
	_ = wt.WaitForBootstrapComplete(context.Background())
	require.NotEmpty(t, r.rows)
	assert.Equal(t, 90*time.Second, r.rows[0][0].Age)

	// With no Date, the newest time in the answer stands for the server's now.
	w = newWorld(c, step{0, restUp}, step{0, status(ClusterInstalling,
		Host{ID: "h1", RequestedHostname: "m0", Role: "master", Status: "installing-in-progress", StatusUpdatedAt: &changed},
		Host{ID: "h2", RequestedHostname: "m1", Role: "master", Status: "installing-in-progress", StatusUpdatedAt: &server})})
	r = &recordReporter{}
	wt = newTestWaiter(w, c, r, func(o *Options) { o.BootstrapTimeout = time.Second })
	_ = wt.WaitForBootstrapComplete(context.Background())
	require.NotEmpty(t, r.rows)
	assert.Equal(t, 90*time.Second, r.rows[0][0].Age)
	assert.Zero(t, r.rows[0][1].Age)
}

// When the rendezvous API goes away the host table is marked stale, and
// the success is reported as a result (shown at any --log-level).
func TestTableStaleWhenRESTGoesAndResultOnSuccess(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c,
		step{0, restUp},
		step{0, status(ClusterInstalling, Host{ID: "h1", RequestedHostname: "m0", Role: "master", Status: "installing-in-progress"})},
		step{10 * time.Second, func(w *world) { w.restUp = false }},
		step{20 * time.Second, func(w *world) { w.kubeUp = true; w.bootstrap = "complete" }},
		step{20 * time.Second, cvConds("True", "False", "False", "Done", "1")},
		step{20 * time.Second, admittedRoute},
	)
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r)
	require.NoError(t, wt.WaitForInstallComplete(context.Background()))
	require.NotEmpty(t, r.stale)
	assert.Contains(t, r.stale[0], "as of ")
	assert.Contains(t, r.stale[0], "the rendezvous API went away")
	assert.Contains(t, r.results, "Install complete!")
}

// Issue 37 item 13: something else answers the rendezvous address (a wrong
// IP in a busy network): said once as a warning, with what answered, not
// an hour of "Sleeping for 30 seconds".
func TestSomethingElseAnswersTheRendezvousAddress(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c)
	w.restErr = &StatusError{Method: "GET", URL: "http://192.0.2.10:8090/api/assisted-install/v2/infra-envs", StatusCode: 404, Message: "404 page not found"}
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r, func(o *Options) {
		o.BootstrapTimeout = 3 * time.Minute
		o.RendezvousIP = "192.0.2.10"
	})
	require.Error(t, wt.WaitForBootstrapComplete(context.Background()))
	const said = "Something answers at 192.0.2.10 port 8090, but not as the rendezvous host's assisted-service: GET http://192.0.2.10:8090/api/assisted-install/v2/infra-envs answered HTTP 404 (404 page not found)"
	assert.Equal(t, 7, r.count(said), r)
	lvl, _ := r.level(said)
	assert.Equal(t, slog.LevelWarn, lvl, "the first one is a warning")
	shown := 0
	for _, l := range r.lines {
		if strings.Contains(l.msg, said) && l.level >= slog.LevelInfo {
			shown++
			assert.Contains(t, l.msg, "check that 192.0.2.10 is node zero's address (rendezvousIP in agent-config.yaml)")
		}
	}
	assert.Equal(t, 1, shown, "shown once at the default level")
	assert.Zero(t, r.count("Sleeping for 30 seconds"))

	// A service that refuses the token is an assisted-service of another ISO.
	c = newFakeClock()
	w = newWorld(c)
	w.restErr = &StatusError{Method: "GET", URL: "http://192.0.2.10:8090/api/assisted-install/v2/infra-envs", StatusCode: 401, Message: "The provided authentication token is not valid"}
	r = &recordReporter{}
	wt = newTestWaiter(w, c, r, func(o *Options) { o.BootstrapTimeout = time.Minute; o.RendezvousIP = "192.0.2.10" })
	require.Error(t, wt.WaitForBootstrapComplete(context.Background()))
	lvl, _ = r.level("refuses this directory's token")
	assert.Equal(t, slog.LevelWarn, lvl, r)
}

// Issue 37 item 13: with a timeout shorter than the 30 s wait, the message
// says the real sleep, once.
func TestShortTimeoutSaysItsSleepOnce(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c)
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r, func(o *Options) { o.BootstrapTimeout = 3 * time.Second })
	require.Error(t, wt.WaitForBootstrapComplete(context.Background()))
	assert.Equal(t, 1, r.count("Waiting for cluster install to initialize. Sleeping for 3 seconds"), r)
	assert.Zero(t, r.count("Sleeping for 30 seconds"))
}

// Issue 37 item 13: the commands of the failure hints are lines of their
// own, without a level in front, so they can be copied as they are.
func TestFailureHintsAreCopyableCommands(t *testing.T) {
	c := newFakeClock()
	w := newWorld(c, step{0, restUp}, step{0, status(ClusterReady)})
	r := &recordReporter{}
	wt := newTestWaiter(w, c, r, func(o *Options) { o.RendezvousIP = "192.0.2.10" })
	require.Error(t, wt.WaitForBootstrapComplete(context.Background()))
	var hint string
	for _, l := range r.lines {
		if strings.Contains(l.msg, "journalctl") {
			hint = l.msg
		}
	}
	lines := strings.Split(hint, "\n")
	require.Len(t, lines, 4, hint)
	assert.Equal(t, "To see why, read the rendezvous host's installer logs:", lines[0])
	assert.Equal(t, "    ssh core@192.0.2.10 sudo journalctl -b -u assisted-service -u agent-register-cluster -u start-cluster-installation -u agent", lines[1])
	assert.Equal(t, "For a bug report, collect its troubleshooting data (secrets masked):", lines[2])
	assert.Equal(t, "    ssh core@192.0.2.10 agent-gather -O >agent-gather.tar.xz", lines[3])
}
