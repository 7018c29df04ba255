package sim

import (
	"fmt"
	"net/url"
	"path/filepath"

	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// WaitInputs is what wait-for reads from the asset directory
// (agent.WaitInputs) and the REST URL it polls.
type WaitInputs struct {
	*agent.WaitInputs
	RESTURL string
	// RESTURLSource says where RESTURL was given: "" when it was derived
	// from the rendezvous IP.
	RESTURLSource string
}

// ReadWaitInputs reads dir's inputs for wait-for and works out the REST
// URL: restURL (--rendezvous-url or its environment variable, named by
// restURLFrom) when set, else the address `dev init-dir --local` recorded
// for the simulator (DevSim), else rendezvous.BaseURL of the rendezvous IP.
func ReadWaitInputs(dir, restURL, restURLFrom string) (*WaitInputs, error) {
	wi, err := agent.ReadWaitInputs(dir)
	if err != nil {
		return nil, err
	}
	in := &WaitInputs{WaitInputs: wi, RESTURL: restURL, RESTURLSource: restURLFrom}
	if restURL == "" {
		ds, err := ReadDevSim(dir)
		if err != nil {
			return nil, err
		}
		if ds != nil && ds.RESTAddr != "" {
			in.RESTURL, in.RESTURLSource = "http://"+ds.RESTAddr+"/api/assisted-install/v2", filepath.Join(dir, filepath.FromSlash(assetdir.DevSim))
		} else {
			in.RESTURL, in.RESTURLSource = rendezvous.BaseURL(in.RendezvousIP), ""
		}
	}
	if _, err := url.Parse(in.RESTURL); err != nil {
		return nil, fmt.Errorf("rendezvous URL from %s: %w", in.RESTURLSource, err)
	}
	return in, nil
}
