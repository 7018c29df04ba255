package console

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"
	"time"
)

// CancelOnInterrupt returns a context that Ctrl-C (SIGINT) or SIGTERM
// cancels, so that long work stops and removes what it had half-written. A
// phase that cannot see the context (a read blocked on standard input) is
// ended anyway: on a second signal, or grace after the first, force is
// called (it exits the process). stop ends the watch; force is not called
// after it.
func CancelOnInterrupt(parent context.Context, grace time.Duration, force func()) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	finished := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-finished:
			return
		}
		cancel()
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-sigs:
		case <-t.C:
		case <-finished:
			return
		}
		force()
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(finished)
		cancel()
	}
}

// EarlierImages are the images agentiso writes (agent*.iso, node*.iso)
// that an interrupted run left in dir as they were, from an earlier run
// (modified before started): the message of the interruption names them,
// so nobody boots one thinking it holds this run's inputs. Sorted; nil
// when there are none.
func EarlierImages(dir string, started time.Time) []string {
	m, _ := filepath.Glob(filepath.Join(dir, "agent*.iso"))
	n, _ := filepath.Glob(filepath.Join(dir, "node*.iso"))
	m = append(m, n...)
	var out []string
	for _, p := range m {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(started) {
			out = append(out, filepath.Base(p))
		}
	}
	sort.Strings(out)
	return out
}
