package main

import (
	"fmt"
	"net/url"
	"path/filepath"

	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous/sim"
)

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
