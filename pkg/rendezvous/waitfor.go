package rendezvous

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Defaults of the wait loop.
const (
	DefaultPollInterval     = 2 * time.Second
	DefaultMaxBackoff       = 16 * time.Second
	DefaultBootstrapTimeout = 60 * time.Minute
	DefaultInstallTimeout   = 90 * time.Minute
	// InitSleep is how long to wait while neither API has ever answered.
	InitSleep = 30 * time.Second
	// ReadyStuckAfter is how long the cluster may sit in ready before wait-for gives up.
	ReadyStuckAfter = time.Minute
	// SSHProbeAfter is when, with no API ever seen, the rendezvous host is probed on port 22.
	SSHProbeAfter = 2 * time.Minute
	// MaxKeptEvents is how many of the newest events are kept for the
	// failure report: one full answer of assisted-service (docs/wait-for.md).
	MaxKeptEvents = 5000
	// maxKeptEventMessage is how much of each kept event message is kept.
	maxKeptEventMessage = 2048
)

// Exit codes of the wait-for commands.
const (
	ExitOK              = 0
	ExitUsage           = 1
	ExitBootstrapFailed = 5
	ExitInstallFailed   = 6
	ExitInterrupted     = 130
)

// Phase names the part of the install a failure belongs to.
type Phase string

// The two phases.
const (
	PhaseBootstrap Phase = "bootstrap"
	PhaseInstall   Phase = "install"
)

// ErrInterrupted is returned (wrapped) when the context is cancelled, e.g. by Ctrl-C.
var ErrInterrupted = errors.New("interrupted: stopped waiting (the installation itself goes on)")

// WaitError is a failed wait; ExitCode gives the process exit code (5 or 6).
type WaitError struct {
	Phase Phase
	Err   error
}

func (e *WaitError) Error() string {
	if e.Phase == PhaseBootstrap {
		return "Bootstrap failed to complete: " + e.Err.Error()
	}
	return "Cluster installation failed: " + e.Err.Error()
}

func (e *WaitError) Unwrap() error { return e.Err }

// ExitCode is 5 for bootstrap failures and 6 for install failures.
func (e *WaitError) ExitCode() int {
	if e.Phase == PhaseBootstrap {
		return ExitBootstrapFailed
	}
	return ExitInstallFailed
}

// apiError marks a failure to talk to an API; only these back off.
type apiError struct{ err error }

func (a *apiError) Error() string { return a.err.Error() }
func (a *apiError) Unwrap() error { return a.err }

// fatalError stops the wait at once.
type fatalError struct{ err error }

func (f *fatalError) Error() string { return f.err.Error() }

// Options configure a Waiter.
type Options struct {
	REST     RESTAPI
	Kube     KubeAPI
	Reporter Reporter
	// Clock defaults to RealClock.
	Clock Clock
	// PollInterval defaults to 2 s; errors back off up to MaxBackoff (16 s).
	PollInterval time.Duration
	MaxBackoff   time.Duration
	// BootstrapTimeout (60 min) and InstallTimeout (90 min) bound the two phases.
	BootstrapTimeout time.Duration
	InstallTimeout   time.Duration
	// ProbeSSH, when set, checks that the rendezvous host answers on port 22;
	// it is used when no API has answered for SSHProbeAfter.
	ProbeSSH func(ctx context.Context) error
	// KubeconfigPath and PasswordPath appear in the completion message.
	KubeconfigPath string
	PasswordPath   string
	// RendezvousIP is named in the messages and hints that point at the
	// rendezvous host ("" when unknown).
	RendezvousIP string
}

// Waiter runs the bootstrap-complete and install-complete waits. It is not safe for concurrent use.
type Waiter struct {
	o     Options
	start time.Time

	bootstrapDone bool
	restSeen      bool
	kubeSeen      bool
	lastNonFatal  string
	failures      int

	infraEnvID  string
	clusterID   string
	lastStatus  string
	readySince  time.Time
	validations map[string]Validation
	// validationsSeen collects the keys of one answer's validations.
	validationsSeen map[string]bool
	eventsSeen      int
	lastEvent       string
	events          []Event   // a ring of at most MaxKeptEvents (keepEvent)
	eventsNext      int       // where the ring's next event goes once it is full
	lastAnswer      time.Time // local clock time of the last cluster answer
	unreachableSaid bool
	// answeredSaid: the warning that something else answers the
	// rendezvous address was given.
	answeredSaid bool
	// deadline ends the current wait (loop).
	deadline time.Time
	lastMsg  map[string]string

	cvVersion  string
	cvMessage  string
	consoleURL string

	// lastHosts are the hosts of the last cluster answer; timedOut is set
	// when a phase ran out of time (for Status).
	lastHosts []HostRow
	timedOut  bool
}

// NewWaiter fills defaults and returns a Waiter.
func NewWaiter(o Options) *Waiter {
	if o.Clock == nil {
		o.Clock = RealClock{}
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.BootstrapTimeout <= 0 {
		o.BootstrapTimeout = DefaultBootstrapTimeout
	}
	if o.InstallTimeout <= 0 {
		o.InstallTimeout = DefaultInstallTimeout
	}
	return &Waiter{o: o, validations: map[string]Validation{}, lastMsg: map[string]string{}}
}

func (w *Waiter) log(l slog.Level, format string, args ...any) {
	w.o.Reporter.Log(l, fmt.Sprintf(format, args...))
}

// logOnce logs msg unless the last message under key was the same.
func (w *Waiter) logOnce(key string, l slog.Level, msg string) {
	if w.lastMsg[key] == msg {
		return
	}
	w.lastMsg[key] = msg
	w.o.Reporter.Log(l, msg)
}

type tickFunc func(ctx context.Context) (done bool, next time.Duration, err error)

func (w *Waiter) loop(ctx context.Context, timeout time.Duration, tick tickFunc) (bool, error) {
	deadline := w.o.Clock.Now().Add(timeout)
	w.deadline = deadline
	for {
		if ctx.Err() != nil {
			return false, ErrInterrupted
		}
		done, next, err := tick(ctx)
		if ctx.Err() != nil {
			return false, ErrInterrupted
		}
		if err != nil {
			var f *fatalError
			if errors.As(err, &f) {
				return false, f.err
			}
			var ae *apiError
			if errors.As(err, &ae) {
				w.failures++
			} else {
				w.failures = 0
			}
			if msg := err.Error(); msg != w.lastNonFatal {
				w.lastNonFatal = msg
				w.log(slog.LevelInfo, "%s", msg)
			}
		} else {
			w.failures = 0
			w.lastNonFatal = ""
		}
		if done {
			return true, nil
		}
		now := w.o.Clock.Now()
		if !now.Before(deadline) {
			return false, nil
		}
		if next <= 0 {
			next = w.o.PollInterval
			for i := 1; i < w.failures && next < w.o.MaxBackoff; i++ {
				next *= 2
			}
			next = min(next, w.o.MaxBackoff)
		}
		next = min(next, deadline.Sub(now))
		select {
		case <-ctx.Done():
			return false, ErrInterrupted
		case <-w.o.Clock.After(next):
		}
	}
}

// WaitForBootstrapComplete waits until the bootstrap configmap says complete.
func (w *Waiter) WaitForBootstrapComplete(ctx context.Context) error {
	if w.start.IsZero() {
		w.start = w.o.Clock.Now()
	}
	done, err := w.loop(ctx, w.o.BootstrapTimeout, w.bootstrapTick)
	if errors.Is(err, ErrInterrupted) {
		return err
	}
	if done {
		return nil
	}
	if err == nil {
		w.timedOut = true
		err = fmt.Errorf("bootstrap process timed out after %s", w.o.BootstrapTimeout)
	} else {
		err = fmt.Errorf("bootstrap process returned error: %w", err)
	}
	w.reportFailure(ctx, PhaseBootstrap)
	return &WaitError{Phase: PhaseBootstrap, Err: err}
}

// WaitForInstallComplete waits for bootstrap, then for the cluster to be
// installed, and reports the completion message.
func (w *Waiter) WaitForInstallComplete(ctx context.Context) error {
	if err := w.WaitForBootstrapComplete(ctx); err != nil {
		return err
	}
	if w.restSeen {
		w.o.Reporter.Stale(w.staleNote())
	}
	done, err := w.loop(ctx, w.o.InstallTimeout, w.installTick)
	if errors.Is(err, ErrInterrupted) {
		return err
	}
	if done {
		w.printComplete()
		return nil
	}
	if err == nil {
		w.timedOut = true
		err = fmt.Errorf("Cluster installation timed out after %s", w.o.InstallTimeout)
	}
	w.reportFailure(ctx, PhaseInstall)
	w.log(slog.LevelError, "Cluster initialization failed because one or more operators are not functioning properly. "+
		"The cluster should be accessible for troubleshooting as detailed in the documentation linked below, "+
		"https://docs.openshift.com/container-platform/latest/support/troubleshooting/troubleshooting-installations.html")
	return &WaitError{Phase: PhaseInstall, Err: err}
}

func (w *Waiter) bootstrapTick(ctx context.Context) (bool, time.Duration, error) {
	if w.bootstrapDone {
		w.log(slog.LevelInfo, "Bootstrap is complete")
		return true, 0, nil
	}
	_, kubeErr := w.o.Kube.Version(ctx)
	infraEnvs, restErr := w.o.REST.ListInfraEnvs(ctx)
	kubeLive, restLive := kubeErr == nil, restErr == nil
	w.log(slog.LevelDebug, "poll: rest api %s, kube api %s", liveText(restErr), liveText(kubeErr))

	if !kubeLive && !restLive {
		if !w.restSeen && !w.kubeSeen {
			var se *StatusError
			if errors.As(restErr, &se) {
				// Something answers HTTP at the address: say what, once
				// as a warning (a wrong IP in a busy network would
				// otherwise be an hour of "Sleeping").
				lvl := slog.LevelWarn
				if w.answeredSaid {
					lvl = slog.LevelDebug
				}
				w.answeredSaid = true
				what := "check that %[5]s is node zero's address (rendezvousIP in agent-config.yaml)"
				if se.StatusCode == 401 || se.StatusCode == 403 {
					what = "it refuses this directory's token: is --dir the one the ISO was built from? Else " + what
				}
				w.log(lvl, "Something answers at %[5]s port %[6]d, but not as the rendezvous host's assisted-service: %[1]s %[2]s answered HTTP %[3]d (%[4]s); "+what+"; still trying every %[7]s",
					se.Method, se.URL, se.StatusCode, se.Message, w.hostName(), Port, InitSleep)
				return false, InitSleep, nil
			}
			if w.o.Clock.Now().Sub(w.start) > SSHProbeAfter && (w.o.ProbeSSH == nil || w.o.ProbeSSH(ctx) != nil) {
				// Said once (then at debug level): it names the address,
				// and repeating it every 30 s would push everything else away.
				lvl := slog.LevelWarn
				if w.unreachableSaid {
					lvl = slog.LevelDebug
				}
				w.unreachableSaid = true
				w.log(lvl, "Cannot access Rendezvous Host %s: neither its API (port %d) nor SSH (port 22) answers. "+
					"There may be a network configuration problem, check its console for additional info; still trying every %s", w.hostName(), Port, InitSleep)
			} else if left := w.deadline.Sub(w.o.Clock.Now()); left > 0 {
				// The sleep the loop will take: 30 s, or what is left
				// of the timeout (said once then, not again at its end).
				w.log(slog.LevelInfo, "Waiting for cluster install to initialize. Sleeping for %s", sleepText(min(InitSleep, left)))
			}
			return false, InitSleep, nil
		}
		if w.restSeen {
			w.o.Reporter.Stale(w.staleNote())
		}
		if !w.kubeSeen {
			return false, 0, &apiError{errors.New("cluster bootstrap did not complete yet: the rendezvous host's API went away (node zero reboots to join the cluster); waiting for the cluster API")}
		}
		return false, 0, &apiError{fmt.Errorf("the cluster API is not reachable: %v", kubeErr)}
	}

	if kubeLive {
		if !w.kubeSeen {
			w.kubeSeen = true
			w.log(slog.LevelInfo, "Bootstrap Kube API Initialized")
		}
		cm, err := w.o.Kube.ConfigMap(ctx, "kube-system", "bootstrap")
		if err == nil && cm.Data["status"] == "complete" {
			w.log(slog.LevelInfo, "Bootstrap configMap status is complete")
			w.bootstrapDone = true
			w.log(slog.LevelInfo, "cluster bootstrap is complete")
			return true, 0, nil
		}
		if err != nil {
			w.log(slog.LevelDebug, "bootstrap configmap: %v", err)
		}
	}
	if restLive {
		return false, 0, w.monitorREST(ctx, infraEnvs)
	}
	if w.restSeen {
		w.o.Reporter.Stale(w.staleNote())
	}
	return false, 0, nil
}

// hostName is the rendezvous host as messages name it.
func (w *Waiter) hostName() string {
	if w.o.RendezvousIP == "" {
		return "(address unknown)"
	}
	return w.o.RendezvousIP
}

// staleNote says why the host table stopped following the install.
func (w *Waiter) staleNote() string {
	return fmt.Sprintf("as of %s: the rendezvous API went away (node zero reboots to join the cluster)",
		w.lastAnswer.Local().Format("15:04:05"))
}

// sleepText says a sleep as upstream says its 30 s: "30 seconds".
func sleepText(d time.Duration) string {
	if d%time.Second == 0 {
		n := int(d / time.Second)
		if n == 1 {
			return "1 second"
		}
		return fmt.Sprintf("%d seconds", n)
	}
	return d.Round(100 * time.Millisecond).String()
}

func liveText(err error) string {
	if err == nil {
		return "up"
	}
	return "down (" + err.Error() + ")"
}

// StatusMessage is the line logged when the cluster enters status ("" for unknown ones).
func StatusMessage(status string) string {
	switch status {
	case ClusterAddingHosts:
		return "Cluster is adding hosts"
	case ClusterCancelled:
		return "Cluster installation cancelled"
	case ClusterError:
		return "Cluster has hosts in error"
	case ClusterFinalizing:
		return "Finalizing cluster installation"
	case ClusterInstalling:
		return "Cluster installation in progress"
	case ClusterInstallingPendingUser:
		return "Cluster has hosts requiring user input"
	case ClusterInsufficient:
		return "Cluster is not ready for install. Check validations"
	case ClusterPendingForInput:
		return "User input is required to continue cluster installation"
	case ClusterPreparing:
		return "Preparing cluster for installation"
	case ClusterReady:
		return "Cluster is ready for install"
	}
	return ""
}

func (w *Waiter) monitorREST(ctx context.Context, infraEnvs []InfraEnv) error {
	if !w.restSeen {
		w.restSeen = true
		w.log(slog.LevelDebug, "Agent Rest API Initialized")
	}
	if w.infraEnvID == "" {
		switch len(infraEnvs) {
		case 0:
			w.log(slog.LevelDebug, "infraenv is not registered in rest API")
		case 1:
			w.infraEnvID = infraEnvs[0].ID
		default:
			w.logOnce("infraenvs", slog.LevelInfo, fmt.Sprintf("found too many infraenvs. number of infraenvs found: %d", len(infraEnvs)))
		}
	}
	if w.clusterID == "" {
		cs, err := w.o.REST.ListClusters(ctx)
		if err != nil {
			//lint:ignore ST1005 upstream's wording, which users search their logs for (docs/wait-for.md)
			return &apiError{fmt.Errorf("Unable to retrieve cluster metadata from Agent Rest API: %w", err)}
		}
		switch len(cs) {
		case 0:
			w.log(slog.LevelDebug, "cluster is not registered in rest API")
		case 1:
			w.clusterID = cs[0].ID
		default:
			w.logOnce("clusters", slog.LevelInfo, fmt.Sprintf("found too many clusters. number of clusters found: %d", len(cs)))
		}
		if w.clusterID == "" {
			//lint:ignore ST1005 upstream's wording, which users search their logs for (docs/wait-for.md)
			return errors.New("Unable to retrieve cluster metadata from Agent Rest API: no clusterID known for the cluster")
		}
	}
	// The ready rule needs two instants the status is known at: a
	// slow answer or a slow events call must not count as time in ready.
	// asked is no later than the moment the status was read, answered no earlier.
	asked := w.o.Clock.Now()
	c, err := w.o.REST.GetCluster(ctx, w.clusterID)
	answered := w.o.Clock.Now()
	if err != nil {
		//lint:ignore ST1005 upstream's wording, which users search their logs for (docs/wait-for.md)
		return &apiError{fmt.Errorf("Unable to retrieve cluster metadata from Agent Rest API: %w", err)}
	}
	w.lastAnswer = answered
	prev := w.lastStatus
	w.lastStatus = c.Status
	w.log(slog.LevelDebug, "poll: cluster %s (%s), %d hosts", c.Status, c.StatusInfo, len(c.Hosts))
	if c.Status != prev {
		if msg := StatusMessage(c.Status); msg != "" {
			w.log(slog.LevelInfo, "%s", msg)
		}
		if c.Status == ClusterInstallingPendingUser {
			for _, h := range c.Hosts {
				if h.Status == HostInstallingPendingUser {
					w.log(slog.LevelWarn, "Host %s %s", h.Name(), h.StatusInfo)
				}
			}
		}
	}
	w.lastHosts = hostRows(c, serverNow(c))
	w.o.Reporter.Hosts(w.lastHosts)

	// Validation state is kept for what this answer holds only: a host
	// that is gone (or renamed) does not stay in the map for ever.
	w.validationsSeen = make(map[string]bool, len(w.validations))
	var valErr error
	if err := w.checkValidations("Cluster validation: ", "cluster", c.ValidationsInfo); err != nil {
		valErr = err
	}
	for _, h := range c.Hosts {
		if err := w.checkValidations("Host "+h.Name()+" validation: ", "host/"+h.Name(), h.ValidationsInfo); err != nil {
			valErr = err
		}
	}
	maps.DeleteFunc(w.validations, func(k string, _ Validation) bool { return !w.validationsSeen[k] })
	w.validationsSeen = nil
	if w.infraEnvID != "" {
		evs, err := w.o.REST.ListEvents(ctx, w.infraEnvID)
		if err != nil {
			w.log(slog.LevelDebug, "events: %v", err)
		} else {
			w.reportEvents(evs)
		}
	}

	switch c.Status {
	case ClusterReady:
		if prev == ClusterPreparing {
			w.readySince = answered
			return errors.New("failed to prepare cluster installation, retrying")
		}
		if w.readySince.IsZero() {
			w.readySince = answered
		} else if asked.Sub(w.readySince) > ReadyStuckAfter {
			return &fatalError{errors.New("failed to progress after all hosts available")}
		}
		return valErr
	case ClusterError, ClusterInstallingPendingUser:
		w.readySince = time.Time{}
		return errors.New("cluster has stopped installing... working to recover installation")
	case ClusterCancelled:
		w.readySince = time.Time{}
		return &fatalError{errors.New("cluster installation was cancelled")}
	}
	w.readySince = time.Time{}
	return valErr
}

// serverNow is the server's clock when it answered: the Date of the answer
// (one-second resolution), else the newest time in the answer. Host ages
// are measured on it so that a workstation clock that is off (or a
// different time zone) does not show "-18s ago".
func serverNow(c *Cluster) time.Time {
	if !c.ServerTime.IsZero() {
		return c.ServerTime
	}
	var newest time.Time
	see := func(t *time.Time) {
		if t != nil && t.After(newest) {
			newest = *t
		}
	}
	see(c.StatusUpdatedAt)
	for i := range c.Hosts {
		h := &c.Hosts[i]
		see(h.StatusUpdatedAt)
		if h.Progress != nil {
			see(h.Progress.StageUpdatedAt)
		}
	}
	return newest
}

// HostRows is the host table of a cluster answer, as wait-for shows it
// (ages by the server's clock).
func HostRows(c *Cluster) []HostRow { return hostRows(c, serverNow(c)) }

func hostRows(c *Cluster, now time.Time) []HostRow {
	rows := make([]HostRow, 0, len(c.Hosts))
	for _, h := range c.Hosts {
		role := h.Role
		if role == "" || role == "auto-assign" {
			role = h.SuggestedRole
		}
		r := HostRow{Name: h.Name(), Role: role, Bootstrap: h.Bootstrap, Status: h.Status, StatusInfo: h.StatusInfo}
		if h.StatusUpdatedAt != nil {
			r.LastChange = *h.StatusUpdatedAt
		}
		if p := h.Progress; p != nil {
			r.Stage, r.Percent = p.CurrentStage, p.InstallationPercentage
			if p.StageUpdatedAt != nil && p.StageUpdatedAt.After(r.LastChange) {
				r.LastChange = *p.StageUpdatedAt
			}
		}
		if !r.LastChange.IsZero() && !now.IsZero() {
			r.Age = max(now.Sub(r.LastChange), 0)
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return rows
}

// checkValidations logs what changed in one validations_info and records
// its validations (in validationsSeen too, while monitorREST collects it).
func (w *Waiter) checkValidations(prefix, key, info string) error {
	vs, err := ParseValidations(info)
	if err != nil {
		return fmt.Errorf("host validations failed: %w", err)
	}
	for _, v := range vs {
		k := key + "/" + v.ID
		prev, known := w.validations[k]
		w.validations[k] = v
		if w.validationsSeen != nil {
			w.validationsSeen[k] = true
		}
		failing := v.Status == ValidationFailure || v.Status == ValidationError
		msg := prefix + v.Message
		if failing {
			if h := Hint(v.ID); h != "" {
				msg += " (hint: " + h + ")"
			}
		}
		switch {
		case !known:
			switch {
			case v.Status == ValidationSuccess:
				w.o.Reporter.Log(slog.LevelDebug, msg)
			case failing:
				w.o.Reporter.Log(slog.LevelWarn, msg)
			default:
				w.o.Reporter.Log(LevelTrace, msg)
			}
		case prev.Message != v.Message || prev.Status != v.Status:
			wasFailing := prev.Status == ValidationFailure || prev.Status == ValidationError
			switch {
			case v.Status == ValidationSuccess && wasFailing:
				w.o.Reporter.Log(slog.LevelInfo, msg)
			case v.Status == ValidationSuccess:
				w.o.Reporter.Log(slog.LevelDebug, msg)
			case failing:
				w.o.Reporter.Log(slog.LevelWarn, msg)
			default:
				w.o.Reporter.Log(LevelTrace, msg)
			}
		}
	}
	return nil
}

// reportEvents logs every event not seen yet (the list is ascending and
// grows); consecutive duplicates are dropped. If the list shrank, only the
// newest event is considered.
func (w *Waiter) reportEvents(evs []Event) {
	start := w.eventsSeen
	if len(evs) < w.eventsSeen {
		start = max(len(evs)-1, 0)
	}
	for _, e := range evs[start:] {
		w.keepEvent(e)
		if e.Message == w.lastEvent {
			continue
		}
		w.lastEvent = e.Message
		if e.Severity == "info" {
			w.o.Reporter.Log(slog.LevelInfo, e.Message)
		} else {
			w.o.Reporter.Log(slog.LevelWarn, e.Message)
		}
	}
	w.eventsSeen = len(evs)
}

// keepEvent adds e to the history printed by the failure report. Only the
// newest MaxKeptEvents are kept, each with the fields the report prints and
// at most maxKeptEventMessage bytes of message, so a hostile API cannot grow
// the history without bound (say, by shrinking and regrowing its list).
func (w *Waiter) keepEvent(e Event) {
	kept := Event{
		EventTime: e.EventTime,
		Severity:  cutText(e.Severity, 64),
		Message:   cutText(e.Message, maxKeptEventMessage),
	}
	if len(w.events) < MaxKeptEvents {
		w.events = append(w.events, kept)
		return
	}
	w.events[w.eventsNext] = kept
	w.eventsNext = (w.eventsNext + 1) % MaxKeptEvents
}

// keptEvents is the kept history, oldest first.
func (w *Waiter) keptEvents() []Event {
	return append(slices.Clone(w.events[w.eventsNext:]), w.events[:w.eventsNext]...)
}

// cutText returns a copy of s cut to at most n bytes on a character
// boundary, with "..." when it was cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return strings.Clone(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func (w *Waiter) installTick(ctx context.Context) (bool, time.Duration, error) {
	cv, err := w.o.Kube.ClusterVersion(ctx)
	if err != nil {
		return false, 0, &apiError{fmt.Errorf("failed to get ClusterVersion: %w", err)}
	}
	if !cv.Initialized() {
		msg := ""
		if c := cv.Condition("Failing"); c != nil && c.Status == "True" {
			msg = c.Message
		} else if c := cv.Condition("Progressing"); c != nil {
			msg = c.Message
		}
		if cv.Metadata.ResourceVersion != w.cvVersion {
			w.cvVersion = cv.Metadata.ResourceVersion
			lvl := slog.LevelDebug
			if msg != w.cvMessage {
				lvl = slog.LevelInfo
			}
			w.cvMessage = msg
			w.log(lvl, "Still waiting for the cluster to initialize: %s", msg)
		}
		return false, 0, nil
	}
	r, err := w.o.Kube.ConsoleRoute(ctx)
	if err != nil {
		return false, 0, &apiError{fmt.Errorf("failed to get the console route: %w", err)}
	}
	u := r.AdmittedURL()
	if u == "" {
		w.logOnce("route", slog.LevelDebug, "Waiting for the console route to be admitted")
		return false, 0, nil
	}
	w.consoleURL = u
	w.log(slog.LevelInfo, "Cluster is installed")
	return true, 0, nil
}

// printComplete reports the success: shown whatever --log-level says.
func (w *Waiter) printComplete() {
	w.o.Reporter.Result("Install complete!")
	w.o.Reporter.Result(fmt.Sprintf("To access the cluster as the system:admin user when using 'oc', run\n    export KUBECONFIG=%s", w.o.KubeconfigPath))
	w.o.Reporter.Result(fmt.Sprintf("Access the OpenShift web-console here: %s", w.consoleURL))
	w.o.Reporter.Result(fmt.Sprintf("Login to the console with user: %q, and the password in %s", "kubeadmin", w.o.PasswordPath))
}

func (w *Waiter) reportFailure(ctx context.Context, phase Phase) {
	if evs := w.keptEvents(); len(evs) > 0 {
		w.log(slog.LevelDebug, "Printing the event list gathered from the Agent Rest API")
		for _, e := range evs {
			w.log(slog.LevelDebug, "%s %s %s", e.EventTime.UTC().Format(time.RFC3339), e.Severity, e.Message)
		}
	}
	if w.kubeSeen && ctx.Err() == nil {
		w.logClusterOperators(ctx)
	}
	if phase == PhaseBootstrap {
		ip := w.o.RendezvousIP
		if ip == "" {
			ip = "<rendezvous IP>"
		}
		// One message: the commands on lines of their own, indented and
		// without a level, so they can be copied as they are.
		w.log(slog.LevelError, "To see why, read the rendezvous host's installer logs:\n"+
			"    ssh core@%s sudo journalctl -b -u assisted-service -u agent-register-cluster -u start-cluster-installation -u agent\n"+
			"For a bug report, collect its troubleshooting data (secrets masked):\n"+
			"    ssh core@%s agent-gather -O >agent-gather.tar.xz", ip, ip)
	}
}

func (w *Waiter) logClusterOperators(ctx context.Context) {
	cos, err := w.o.Kube.ClusterOperators(ctx)
	if err != nil {
		w.log(slog.LevelDebug, "listing cluster operators: %v", err)
		return
	}
	for _, co := range cos {
		for _, c := range co.Status.Conditions {
			switch {
			case c.Type == "Upgradeable",
				c.Type == "Available" && c.Status == "True",
				c.Type == "Degraded" && c.Status == "False",
				c.Type == "Progressing" && c.Status == "False":
				continue
			}
			lvl := slog.LevelInfo
			if c.Type == "Degraded" {
				lvl = slog.LevelError
			}
			w.log(lvl, "Cluster operator %s %s is %s with %s: %s", co.Metadata.Name, c.Type, c.Status, c.Reason, c.Message)
		}
	}
}
