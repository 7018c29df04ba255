package rendezvous

import (
	"errors"
	"time"
)

// Status is the outcome of a wait, for scripts (wait-for -o json): what
// happened, the cluster as last seen, and where to go next. It is made once,
// when the wait has ended.
type Status struct {
	// Target is what was waited for: "bootstrap-complete" or
	// "install-complete" (set by the caller).
	Target string `json:"target"`
	// Result is "complete", "failed", "timed-out" or "interrupted".
	Result string `json:"result"`
	// Phase is the phase that failed or timed out ("bootstrap", "install").
	Phase Phase `json:"phase,omitempty"`
	// Error is the error the command ends with ("" on success).
	Error string `json:"error,omitempty"`
	// ExitCode is the process's exit code (0, 5, 6 or 130).
	ExitCode          int     `json:"exitCode"`
	BootstrapComplete bool    `json:"bootstrapComplete"`
	InstallComplete   bool    `json:"installComplete"`
	ElapsedSeconds    float64 `json:"elapsedSeconds"`
	RendezvousIP      string  `json:"rendezvousIP,omitempty"`
	ClusterID         string  `json:"clusterID,omitempty"`
	// ClusterStatus and Hosts are the rendezvous API's last answer, at
	// ClusterStatusAt (RFC 3339, by the local clock). After bootstrap the
	// API goes away with node zero's reboot: they are then history, not
	// the hosts' present state; once the install is complete they are
	// its end state (installed, each host installed, stage Done, 100%),
	// as the text output ends, at the time the cluster said so.
	ClusterStatus   string       `json:"clusterStatus,omitempty"`
	ClusterStatusAt string       `json:"clusterStatusAt,omitempty"`
	Hosts           []HostStatus `json:"hosts,omitempty"`
	// ConsoleURL, Kubeconfig and KubeadminPasswordFile say how to reach
	// the installed cluster (the password itself is never printed).
	ConsoleURL            string `json:"consoleURL,omitempty"`
	Kubeconfig            string `json:"kubeconfig,omitempty"`
	KubeadminPasswordFile string `json:"kubeadminPasswordFile,omitempty"`
}

// HostStatus is one host as the rendezvous API last described it.
type HostStatus struct {
	Name string `json:"name"`
	// Role is the API's role (master, worker, arbiter); Bootstrap marks
	// the bootstrap host.
	Role       string `json:"role,omitempty"`
	Bootstrap  bool   `json:"bootstrap,omitempty"`
	Status     string `json:"status"`
	StatusInfo string `json:"statusInfo,omitempty"`
	Stage      string `json:"stage,omitempty"`
	Percent    int64  `json:"percent"`
}

// The results of a Status.
const (
	ResultComplete    = "complete"
	ResultFailed      = "failed"
	ResultTimedOut    = "timed-out"
	ResultInterrupted = "interrupted"
)

// Status describes the wait that ended with err (the error
// WaitForBootstrapComplete or WaitForInstallComplete returned).
func (w *Waiter) Status(target string, err error) Status {
	s := Status{Target: target, Result: ResultComplete, BootstrapComplete: w.bootstrapDone,
		InstallComplete: target == "install-complete" && err == nil, RendezvousIP: w.o.RendezvousIP, ClusterID: w.clusterID,
		ClusterStatus: w.lastStatus, ConsoleURL: w.consoleURL}
	if !w.start.IsZero() {
		s.ElapsedSeconds = w.o.Clock.Now().Sub(w.start).Round(time.Second).Seconds()
	}
	if !w.lastAnswer.IsZero() {
		s.ClusterStatusAt = w.lastAnswer.UTC().Format(time.RFC3339)
	}
	for _, h := range w.lastHosts {
		hs := HostStatus{Name: h.Name, Role: h.Role, Bootstrap: h.Bootstrap, Status: h.Status, StatusInfo: h.StatusInfo, Stage: h.Stage, Percent: h.Percent}
		if s.InstallComplete {
			hs.Status, hs.StatusInfo, hs.Stage, hs.Percent = HostInstalled, "", "Done", 100
		}
		s.Hosts = append(s.Hosts, hs)
	}
	if s.InstallComplete {
		s.ClusterStatus, s.ClusterStatusAt = ClusterInstalled, w.o.Clock.Now().UTC().Format(time.RFC3339)
	}
	if w.kubeSeen || s.InstallComplete {
		s.Kubeconfig, s.KubeadminPasswordFile = w.o.KubeconfigPath, w.o.PasswordPath
	}
	var we *WaitError
	switch {
	case err == nil:
	case errors.Is(err, ErrInterrupted):
		s.Result, s.ExitCode = ResultInterrupted, ExitInterrupted
	case errors.As(err, &we):
		s.Result, s.Phase, s.ExitCode = ResultFailed, we.Phase, we.ExitCode()
		if w.timedOut {
			s.Result = ResultTimedOut
		}
	default:
		s.Result, s.ExitCode = ResultFailed, 1
	}
	if err != nil {
		s.Error = err.Error()
	}
	return s
}

// StatusBeforeWait describes a wait that never began: the command line,
// a setting or the inputs in --dir were wrong, so nothing was asked of any
// API. err is the error the command ends with, code its exit code
// (ExitUsage, or ExitInterrupted); target may be "" (no target given).
func StatusBeforeWait(target string, code int, err error) Status {
	s := Status{Target: target, Result: ResultFailed, ExitCode: code}
	if code == ExitInterrupted {
		s.Result = ResultInterrupted
	}
	if err != nil {
		s.Error = err.Error()
	}
	return s
}
