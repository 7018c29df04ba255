package manifests

import "github.com/seed-a052040e/agentiso/pkg/assetdir"

// The asset-directory files this package reads and names in its errors.
// The layout is pkg/assetdir's; these are its names under this package's
// spelling, kept for the code still using them (pkg/asset/agent/ztp.go).
const (
	InstallConfigFile     = assetdir.InstallConfig
	AgentConfigFile       = assetdir.AgentConfig
	ClusterManifestsDir   = assetdir.ClusterManifestsDir
	PullSecretFile        = assetdir.PullSecret
	InfraEnvFile          = assetdir.InfraEnv
	NMStateConfigFile     = assetdir.NMStateConfig
	AgentClusterInstallF  = assetdir.AgentClusterInstall
	ClusterDeploymentFile = assetdir.ClusterDeployment
	ClusterImageSetFile   = assetdir.ClusterImageSet
	RegistriesConfFile    = assetdir.RegistriesConf
	CABundleFile          = assetdir.CABundle
)
