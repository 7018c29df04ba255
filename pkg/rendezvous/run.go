package rendezvous

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/credentials"
)

// The targets of a wait.
const (
	TargetBootstrap = "bootstrap-complete"
	TargetInstall   = "install-complete"
)

// RunOptions are one `agentiso wait-for` run: what to wait for, the inputs
// read from the asset directory, and where to report.
type RunOptions struct {
	Target string // TargetBootstrap or TargetInstall
	// RESTURL is the rendezvous host's assisted-service v2 API;
	// RESTURLSource says where it was given ("" when derived from the
	// rendezvous IP, and then not mentioned).
	RESTURL, RESTURLSource string
	WatcherToken           string
	Kubeconfig             *credentials.Kubeconfig
	// KubeconfigPath and PasswordPath are shown at the end, RendezvousIP
	// in hints (and probed on port 22 when its API never answers).
	KubeconfigPath, PasswordPath, RendezvousIP string
	// Timeout bounds each phase (0: the defaults); TimeScale runs the
	// clock faster (the simulator's); RequestTimeout bounds each request.
	Timeout        time.Duration
	TimeScale      float64
	RequestTimeout time.Duration
	// Out gets the messages at Level and above: a live table of the hosts
	// on a terminal, timestamp-free lines otherwise. Log, when set, gets
	// every message at debug level (the debug log in the asset directory).
	Out   io.Writer
	Level slog.Level
	Log   io.Writer
}

// Run waits for o.Target and returns the wait's status (nil when it ended
// before the wait began: bad options, an API client that cannot be made)
// and its error; ExitCode maps that error to the process's exit code.
func Run(ctx context.Context, o RunOptions) (*Status, error) {
	if err := CheckTiming(o.Timeout, o.TimeScale); err != nil {
		return nil, err
	}
	rest, err := NewClient(o.RESTURL, o.WatcherToken, o.RequestTimeout, nil)
	if err != nil {
		return nil, err
	}
	kube, err := NewKubeClient(o.Kubeconfig, "", o.RequestTimeout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.KubeconfigPath, err)
	}
	var clock Clock = RealClock{}
	if o.TimeScale != 1 {
		clock = &ScaledClock{Scale: o.TimeScale}
	}
	rep := NewReporter(o.Out, o.Level, o.Log)
	if o.RESTURLSource != "" {
		rep.Log(slog.LevelInfo, fmt.Sprintf("Using the rendezvous API at %s (from %s)", o.RESTURL, o.RESTURLSource))
	}
	rep.Log(slog.LevelDebug, fmt.Sprintf("Rendezvous API %s, cluster API %s", rest.URL(), kube.Server()))
	ip := o.RendezvousIP
	w := NewWaiter(Options{
		REST: rest, Kube: kube, Reporter: rep, Clock: clock,
		BootstrapTimeout: o.Timeout, InstallTimeout: o.Timeout,
		KubeconfigPath: o.KubeconfigPath, PasswordPath: o.PasswordPath, RendezvousIP: ip,
		ProbeSSH: func(ctx context.Context) error {
			d := net.Dialer{Timeout: 5 * time.Second}
			c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ip, "22"))
			if err == nil {
				_ = c.Close()
			}
			return err
		},
	})
	if o.Target == TargetInstall {
		err = w.WaitForInstallComplete(ctx)
	} else {
		err = w.WaitForBootstrapComplete(ctx)
		if err == nil {
			rep.Result("Bootstrap is complete")
			rep.Result("The cluster is ready when 'agentiso wait-for install-complete' succeeds")
		}
	}
	rep.Close(err == nil)
	st := w.Status(o.Target, err)
	return &st, err
}

// CheckTiming checks a run's timeout and time scale (before anything is
// read: they are the command line's).
func CheckTiming(timeout time.Duration, timeScale float64) error {
	if timeout < 0 || timeScale <= 0 {
		return errors.New("--timeout must be positive and --time-scale greater than zero")
	}
	return nil
}

// ExitCode is the exit code of a wait that ended with err: 0, ExitUsage
// (nothing was waited for), ExitBootstrapFailed, ExitInstallFailed or
// ExitInterrupted.
func ExitCode(err error) int {
	var we *WaitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrInterrupted):
		return ExitInterrupted
	case errors.As(err, &we):
		return we.ExitCode()
	}
	return ExitUsage
}
