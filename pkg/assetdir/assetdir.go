// Package assetdir is the layout of the asset directory (--dir): the path of every file agentiso reads or writes there, and the mode it writes each with.
package assetdir

import (
	"io/fs"
	"strings"
)

// Modes: Private for a file that holds a secret (the pull secret, keys,
// tokens, the password, proxy credentials), Public for the others.
const (
	Private fs.FileMode = 0o600
	Public  fs.FileMode = 0o644
)

// The user's inputs. Every path is relative to the asset directory and
// slash-separated.
const (
	InstallConfig = "install-config.yaml"
	AgentConfig   = "agent-config.yaml"
	// ExtraManifestsDir holds extra cluster manifests (*.yaml, *.yml).
	ExtraManifestsDir = "openshift"
)

// The ZTP manifests and the mirror configuration: written by agentiso, or
// supplied by the user and then used as they are.
const (
	ClusterManifestsDir = "cluster-manifests"
	PullSecret          = ClusterManifestsDir + "/pull-secret.yaml"
	InfraEnv            = ClusterManifestsDir + "/infraenv.yaml"
	NMStateConfig       = ClusterManifestsDir + "/nmstateconfig.yaml"
	AgentClusterInstall = ClusterManifestsDir + "/agent-cluster-install.yaml"
	ClusterDeployment   = ClusterManifestsDir + "/cluster-deployment.yaml"
	ClusterImageSet     = ClusterManifestsDir + "/cluster-image-set.yaml"

	MirrorDir      = "mirror"
	RegistriesConf = MirrorDir + "/registries.conf"
	CABundle       = MirrorDir + "/ca-bundle.crt"
)

// What the other commands write.
const (
	AgentIgnition     = "agent.ign"
	RendezvousIP      = "rendezvousIP"
	AuthDir           = "auth"
	Kubeconfig        = AuthDir + "/kubeconfig"
	KubeadminPassword = AuthDir + "/kubeadmin-password"
	// NodeWatcherToken is the watcher token of the last node ISO
	// (node-image create): node-image monitor reads the hosts' own
	// assisted-service with it.
	NodeWatcherToken = StateDir + "/node-watcher-token"
	// StateDir holds State: what was generated from what, and the keys,
	// tokens and CAs an ISO is built with.
	StateDir = ".agentiso"
	State    = StateDir + "/state.json"
	// DevSim is where `agentiso-dev init-dir --local` records the loopback
	// addresses the simulator serves on (development only).
	DevSim = StateDir + "/dev-sim.json"
)

// The generic ISO and the config image (docs/unconfigured.md).
const (
	// UnconfiguredIgnition is the generic ISO's Ignition config, as
	// upstream names it.
	UnconfiguredIgnition = "unconfigured-agent.ign"
	// ConfigImage is the config image, as upstream names it.
	ConfigImage = "agentconfig.noarch.iso"
)

// UnconfiguredISO is the generic ISO's path for a CPU architecture (RPM
// spelling). Its checksum is UnconfiguredISO(arch) + ".sha256".
func UnconfiguredISO(cpu string) string { return "agent-unconfigured." + cpu + ".iso" }

// AgentISO is the agent ISO's path for a CPU architecture (RPM spelling).
// Its checksum is AgentISO(arch) + ".sha256".
func AgentISO(cpu string) string { return "agent." + cpu + ".iso" }

// HubDir holds, with create cluster-manifests --for-hub, one file per
// host with a BMC: its BMC credentials Secret and its BareMetalHost, for a
// hub's Metal3 and assisted-service (private: the Secret holds the BMC
// password).
const HubDir = "hub"

// HubHost is the path of a host's hub manifests.
func HubHost(name string) string { return HubDir + "/" + name + ".yaml" }

// NodeISO is node-image create's ISO for a CPU architecture (RPM
// spelling), node.<arch>.iso as oc adm node-image names it; --output-name
// may name it otherwise. Its checksum is NodeISO(arch) + ".sha256".
func NodeISO(cpu string) string { return "node." + cpu + ".iso" }

// BootArtifactsDir holds what hosts download at boot: the root file system
// of a minimal ISO, and the PXE files. Each file has a <file>.sha256.
const BootArtifactsDir = "boot-artifacts"

// The boot artifacts of a CPU architecture (RPM spelling), by kind.
const (
	PXEKernel = "vmlinuz"
	PXEInitrd = "initrd.img"
	PXERootfs = "rootfs.img"
	// s390x only: the initrd's load address and size, the LPAR .ins
	// file that loads the files, and the parm file (kernel arguments) it
	// loads.
	PXEAddrsize   = "initrd.addrsize"
	PXEGenericIns = "generic.ins"
	PXEParm       = "generic.prm"
)

// BootArtifact is the path of the boot artifact of kind (PXEKernel,
// PXEInitrd, PXERootfs) for cpu: boot-artifacts/agent.<arch>-<kind>, the
// names upstream uses; the file name alone is what bootArtifactsBaseURL is
// joined with.
func BootArtifact(cpu, kind string) string { return BootArtifactsDir + "/agent." + cpu + "-" + kind }

// IPXEScript is the path of the iPXE script for cpu.
func IPXEScript(cpu string) string { return BootArtifactsDir + "/agent." + cpu + ".ipxe" }

// NodeBootArtifact and NodeIPXEScript are node-image create --pxe's:
// boot-artifacts/node.<arch>-<kind> and node.<arch>.ipxe, the names
// upstream's node-joiner writes.
func NodeBootArtifact(cpu, kind string) string { return BootArtifactsDir + "/node." + cpu + "-" + kind }

// NodeIPXEScript is the node image's iPXE script for cpu.
func NodeIPXEScript(cpu string) string { return BootArtifactsDir + "/node." + cpu + ".ipxe" }

// private are the files that hold a secret: the pull secret, the
// InfraEnv (proxy credentials), the AgentClusterInstall (install-config
// overrides), agent.ign, the credentials, the state, the
// agent-config.yaml template (a user's copy may hold BMC credentials), the
// generic ISO's config (the pull secret) and the config image (the pull
// secret, tokens, CA keys) and the node ISO's watcher token.
var private = map[string]bool{
	AgentConfig: true, PullSecret: true, InfraEnv: true, AgentClusterInstall: true,
	AgentIgnition: true, Kubeconfig: true, KubeadminPassword: true, State: true,
	UnconfiguredIgnition: true, ConfigImage: true, NodeWatcherToken: true,
}

// Mode is the mode agentiso writes the file at path with: Private for a
// file that holds a secret and for an agent ISO and a PXE initrd (an
// install's or a node image's: they embed the pull secret and tokens),
// Public for the others.
func Mode(path string) fs.FileMode {
	if private[path] || strings.HasPrefix(path, HubDir+"/") ||
		((strings.HasPrefix(path, "agent.") || strings.HasPrefix(path, "agent-unconfigured.") || strings.HasPrefix(path, "node.")) && strings.HasSuffix(path, ".iso")) ||
		((strings.HasPrefix(path, BootArtifactsDir+"/agent.") || strings.HasPrefix(path, BootArtifactsDir+"/node.")) && strings.HasSuffix(path, "-"+PXEInitrd)) {
		return Private
	}
	return Public
}
