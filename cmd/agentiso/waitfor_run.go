package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/seed-a052040e/agentiso/internal/console"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous/sim"
)

// runWaitFor waits for o.target, printing what it sees on standard error.
func runWaitFor(ctx context.Context, g *globals, o waitForOptions) error {
	_, err := waitFor(ctx, g, o)
	return err
}

// waitFor is runWaitFor, and returns the wait's status too (none when it
// failed before the wait began).
func waitFor(ctx context.Context, g *globals, o waitForOptions) (*rendezvous.Status, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := rendezvous.CheckTiming(o.timeout, o.timeScale); err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	lvl, err := console.ParseLevel(g.logLevel)
	if err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	in, err := loadWaitForInputs(g.dir, o.restURL, g.setting("rendezvous-url").Origin, rendezvous.BaseURL)
	if err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	ro := rendezvous.RunOptions{Target: o.target, RESTURL: in.restURL, RESTURLSource: in.restURLSource, WatcherToken: in.Auth.WatcherAuthToken,
		Kubeconfig: in.Kubeconfig, KubeconfigPath: in.KubeconfigPath, PasswordPath: in.PasswordPath, RendezvousIP: in.RendezvousIP,
		Timeout: o.timeout, TimeScale: o.timeScale, RequestTimeout: o.requestTimeout, Out: g.errOut, Level: lvl}
	if g.logFile != nil {
		ro.Log = g.logFile
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := rendezvous.Run(ctx, ro)
	if err != nil {
		return st, &exitError{code: rendezvous.ExitCode(err), err: err}
	}
	return st, nil
}

// waitForInputs is what wait-for reads from --dir (agent.ReadWaitInputs)
// and the REST URL it polls.
type waitForInputs struct {
	*agent.WaitInputs
	restURL       string
	restURLSource string // where restURL was given ("" when derived)
}

// loadWaitForInputs reads --dir's inputs and works out the REST URL:
// restURL (--rendezvous-url or its environment variable, named by
// restURLFrom) when set, else the dev simulator's address
// (.agentiso/dev-sim.json), else baseURL(rendezvousIP).
func loadWaitForInputs(dir, restURL, restURLFrom string, baseURL func(ip string) string) (*waitForInputs, error) {
	wi, err := agent.ReadWaitInputs(dir)
	if err != nil {
		return nil, err
	}
	in := &waitForInputs{WaitInputs: wi, restURL: restURL, restURLSource: restURLFrom}
	if restURL == "" {
		ds, err := sim.ReadDevSim(dir)
		if err != nil {
			return nil, err
		}
		if ds != nil && ds.RESTAddr != "" {
			in.restURL, in.restURLSource = "http://"+ds.RESTAddr+"/api/assisted-install/v2", filepath.Join(dir, filepath.FromSlash(assetdir.DevSim))
		} else {
			in.restURL, in.restURLSource = baseURL(in.RendezvousIP), ""
		}
	}
	if _, err := url.Parse(in.restURL); err != nil {
		return nil, fmt.Errorf("rendezvous URL from %s: %w", in.restURLSource, err)
	}
	return in, nil
}
