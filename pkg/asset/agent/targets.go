package agent

import (
	"reflect"

	"github.com/seed-a052040e/agentiso/pkg/asset"
)

// The targets of each create command: what it writes into the asset
// directory (asset.Store.Persist), resolved through the graph.

// ClusterManifestsTargets are the files `create cluster-manifests` writes.
func ClusterManifestsTargets() []asset.Asset {
	return []asset.Asset{&PullSecret{}, &InfraEnv{}, &NMStateConfigs{}, &AgentClusterInstall{},
		&ClusterDeployment{}, &ClusterImageSet{}, &RegistriesConf{}, &CABundle{}}
}

// HubTargets are what `create cluster-manifests --for-hub` writes in
// addition: each BMC host's BareMetalHost and BMC Secret.
func HubTargets() []asset.Asset { return []asset.Asset{&HubManifests{}} }

// IgnitionTargets are what `create ignition` writes: agent.ign and the
// credentials that go with it.
func IgnitionTargets() []asset.Asset {
	return []asset.Asset{&AgentIgnition{}, &RendezvousIP{}, &AdminKubeconfig{}, &KubeadminPassword{}}
}

// ImageTargets are what `create image` writes: the agent ISO (a minimal
// one with its root file system, when the inputs ask for it) and the
// credentials that go with it.
func ImageTargets() []asset.Asset {
	return []asset.Asset{&AgentISO{}, &RendezvousIP{}, &AdminKubeconfig{}, &KubeadminPassword{}}
}

// PXETargets are what `create pxe-files` writes: the PXE files, a sibling
// of AgentISO with the same parents, and the same credentials.
func PXETargets() []asset.Asset {
	return []asset.Asset{&PXEFiles{}, &RendezvousIP{}, &AdminKubeconfig{}, &KubeadminPassword{}}
}

// UnconfiguredIgnitionTargets are what `create unconfigured-ignition`
// writes: the generic ISO's config, and no credentials (it has none).
func UnconfiguredIgnitionTargets() []asset.Asset {
	return []asset.Asset{&UnconfiguredIgnition{}}
}

// UnconfiguredImageTargets are what `create unconfigured-image` writes:
// the generic ISO.
func UnconfiguredImageTargets() []asset.Asset {
	return []asset.Asset{&UnconfiguredISO{}}
}

// ConfigImageTargets are what `create config-image` writes: the config
// image and the credentials that go with it, as `create image`.
func ConfigImageTargets() []asset.Asset {
	return []asset.Asset{&ConfigImage{}, &RendezvousIP{}, &AdminKubeconfig{}, &KubeadminPassword{}}
}

// AllTargets lists the root assets of every command, for `agentiso graph`.
func AllTargets() []asset.Asset {
	return []asset.Asset{&AgentManifests{}, &RegistriesConf{}, &CABundle{}, &ExtraManifests{},
		&AgentIgnition{}, &AgentISO{}, &PXEFiles{}, &AdminKubeconfig{}, &KubeadminPassword{}, &RendezvousIP{},
		&UnconfiguredIgnition{}, &UnconfiguredISO{}, &ConfigImage{}}
}

// WriterOf names the command that writes a's files ("create ignition"),
// or "" for an asset no command writes as a target: the first command, in
// the order a user runs them, whose targets include it.
func WriterOf(a asset.Asset) string {
	t := reflect.TypeOf(a)
	for _, c := range []struct {
		name    string
		targets []asset.Asset
	}{
		{"create cluster-manifests", append(ClusterManifestsTargets(), HubTargets()...)},
		{"create ignition", IgnitionTargets()},
		{"create image", ImageTargets()},
		{"create pxe-files", PXETargets()},
		{"create config-image", ConfigImageTargets()},
		{"create unconfigured-ignition", UnconfiguredIgnitionTargets()},
		{"create unconfigured-image", UnconfiguredImageTargets()},
	} {
		for _, x := range c.targets {
			if reflect.TypeOf(x) == t {
				return c.name
			}
		}
	}
	return ""
}
