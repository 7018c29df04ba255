package assetdir

import (
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The mode of every file agentiso writes into the asset directory.
func TestModes(t *testing.T) {
	for path, want := range map[string]fs.FileMode{
		AgentConfig:                        0o600,
		PullSecret:                         0o600,
		InfraEnv:                           0o600,
		AgentClusterInstall:                0o600,
		NMStateConfig:                      0o644,
		ClusterDeployment:                  0o644,
		ClusterImageSet:                    0o644,
		RegistriesConf:                     0o644,
		CABundle:                           0o644,
		AgentIgnition:                      0o600,
		RendezvousIP:                       0o644,
		Kubeconfig:                         0o600,
		KubeadminPassword:                  0o600,
		State:                              0o600,
		DevSim:                             0o644,
		AgentISO("x86_64"):                 0o600,
		AgentISO("aarch64"):                0o600,
		AgentISO("x86_64") + ".sha256":     0o644,
		BootArtifact("x86_64", PXEInitrd):  0o600,
		BootArtifact("aarch64", PXEInitrd): 0o600,
		BootArtifact("x86_64", PXEInitrd) + ".sha256": 0o644,
		BootArtifact("x86_64", PXERootfs):             0o644,
		BootArtifact("x86_64", PXEKernel):             0o644,
		IPXEScript("x86_64"):                          0o644,
		HubHost("master-0"):                           0o600,
		UnconfiguredIgnition:                          0o600,
		ConfigImage:                                   0o600,
		UnconfiguredISO("x86_64"):                     0o600,
		UnconfiguredISO("x86_64") + ".sha256":         0o644,
		NodeWatcherToken:                              0o600,
		NodeBootArtifact("x86_64", PXEInitrd):         0o600,
		NodeBootArtifact("x86_64", PXERootfs):         0o644,
		NodeIPXEScript("x86_64"):                      0o644,
	} {
		assert.Equal(t, want, Mode(path), path)
	}
}

func TestPaths(t *testing.T) {
	assert.Equal(t, "agent.s390x.iso", AgentISO("s390x"))
	assert.Equal(t, "cluster-manifests/infraenv.yaml", InfraEnv)
	assert.Equal(t, ".agentiso/state.json", State)
	assert.Equal(t, "auth/kubeadmin-password", KubeadminPassword)
	assert.Equal(t, "boot-artifacts/agent.x86_64-rootfs.img", BootArtifact("x86_64", PXERootfs))
	assert.Equal(t, "boot-artifacts/agent.aarch64-vmlinuz", BootArtifact("aarch64", PXEKernel))
	assert.Equal(t, "boot-artifacts/agent.x86_64.ipxe", IPXEScript("x86_64"))
	assert.Equal(t, "boot-artifacts/node.x86_64-initrd.img", NodeBootArtifact("x86_64", PXEInitrd))
	assert.Equal(t, "boot-artifacts/node.x86_64.ipxe", NodeIPXEScript("x86_64"))
}
