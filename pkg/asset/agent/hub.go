package agent

import (
	"bytes"
	"context"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
)

// HubManifests are, for `create cluster-manifests --for-hub`, the
// BareMetalHost and BMC credentials Secret of every install-config host
// with a BMC (hub/<host>.yaml, 0600): what a hub's Metal3 and
// assisted-service consume to boot the same hosts from the InfraEnv's ISO,
// so that a fleet moves from the laptop to ACM/MCE unchanged.
type HubManifests struct {
	Hosts []manifests.HubHost `json:"hosts"`
	Warnings
}

// Name implements asset.Asset.
func (*HubManifests) Name() string { return "Hub Manifests" }

// Doing says what a failure was doing, in the user's terms.
func (*HubManifests) Doing() string { return "write the hub's BareMetalHost manifests" }

// Dependencies implements asset.Asset.
func (*HubManifests) Dependencies() []asset.Asset {
	return []asset.Asset{&InstallConfig{}, &InfraEnv{}, &AgentHosts{}}
}

// Generate implements asset.Asset.
func (a *HubManifests) Generate(_ context.Context, p asset.Parents) error {
	args := map[string][]string{}
	for _, h := range asset.Get[*AgentHosts](p).Hosts {
		if h.Hostname != "" && len(h.InstallerArgs) > 0 {
			args[h.Hostname] = h.InstallerArgs
		}
	}
	hs, notes, err := manifests.HubHosts(asset.Get[*InstallConfig](p).Config, asset.Get[*InfraEnv](p).Manifest, args)
	if err != nil {
		return err
	}
	a.Hosts, a.Warn = hs, notes
	return nil
}

// Files implements asset.Writable: one file per host, the Secret first
// (the BareMetalHost names it).
func (a *HubManifests) Files() ([]asset.File, error) {
	var out []asset.File
	for _, h := range a.Hosts {
		s, err := marshalYAML(h.Secret)
		if err != nil {
			return nil, err
		}
		b, err := marshalYAML(h.BareMetalHost)
		if err != nil {
			return nil, err
		}
		p := assetdir.HubHost(h.Name)
		out = append(out, asset.File{Path: p, Data: bytes.Join([][]byte{s, b}, []byte("---\n")), Mode: assetdir.Mode(p)})
	}
	return out, nil
}
