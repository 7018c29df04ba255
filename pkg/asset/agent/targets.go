package agent

import "github.com/seed-a052040e/agentiso/pkg/asset"

// ClusterManifestsTargets are the files `create cluster-manifests` writes.
func ClusterManifestsTargets() []asset.Writable {
	return []asset.Writable{&PullSecret{}, &InfraEnv{}, &NMStateConfigs{}, &AgentClusterInstall{},
		&ClusterDeployment{}, &ClusterImageSet{}, &RegistriesConf{}, &CABundle{}}
}

// AllTargets lists the root assets of every command, for `agentiso graph`.
func AllTargets() []asset.Asset {
	return []asset.Asset{&AgentManifests{}, &RegistriesConf{}, &CABundle{}, &ExtraManifests{},
		&AgentIgnition{}, &KernelArgs{}, &AdminKubeconfig{}, &KubeadminPassword{}, &RendezvousIP{}}
}
