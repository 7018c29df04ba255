package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/seed-a052040e/agentiso/internal/console"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// waitFor waits for o.target, printing what it sees on standard error,
// and returns the wait's status (none when it failed before the wait
// began).
func waitFor(ctx context.Context, g *globals, o waitForOptions) (*rendezvous.Status, error) {
	if err := rendezvous.CheckTiming(o.timeout, o.timeScale); err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	lvl, err := console.ParseLevel(g.logLevel)
	if err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	in, err := agent.ReadWaitInputs(g.dir, o.restURL, g.setting("rendezvous-url").Origin)
	if err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	ro := rendezvous.RunOptions{Target: o.target, RESTURL: in.RESTURL, RESTURLSource: in.RESTURLSource, WatcherToken: in.Auth.WatcherAuthToken,
		Kubeconfig: in.Kubeconfig, KubeconfigPath: in.KubeconfigPath, PasswordPath: in.PasswordPath, RendezvousIP: in.RendezvousIP,
		Timeout: o.timeout, TimeScale: o.timeScale, RequestTimeout: o.requestTimeout, Out: g.errOut, Level: lvl, Log: g.debugLog()}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := rendezvous.Run(ctx, ro)
	if err != nil {
		return st, &exitError{code: rendezvous.ExitCode(err), err: err}
	}
	return st, nil
}
