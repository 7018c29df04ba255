package manifests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/arch"
)

// Label that ties NMStateConfigs to their InfraEnv.
const InfraEnvLabel = "infraenvs.agent-install.openshift.io"

// NMStateConfigLabels are the labels of the NMStateConfigs agentiso
// generates and, the same map, its InfraEnv's nmStateConfigLabelSelector:
// the agent-installer-client requires the two to be equal (see
// CheckNMStateConfigLabels).
func NMStateConfigLabels(ic *InstallConfig) map[string]string {
	return map[string]string{InfraEnvLabel: ic.ClusterName()}
}

// ArchToRPM is the RPM spelling (InfraEnv, ISO file names) of an
// architecture setting, "" being arch.Default; an unsupported one is kept
// as it is, for validation to report where it was written.
func ArchToRPM(a string) string {
	if r, err := arch.Normalize(a); err == nil {
		return r
	}
	return a
}

// ClusterImageSetName is "openshift-<version>".
func ClusterImageSetName(version string) string { return "openshift-" + version }

// ClusterImageSetNameFor names the ClusterImageSet of a release without
// reading its payload (upstream's installer names it after its own
// version, openshift/installer pkg/asset/agent/manifests/clusterimageset.go,
// and never reads the payload for it): openshift-<version> when the
// version is known (--release-version), else after the tag as written
// ("4.19.2-x86_64" gives "openshift-4.19.2-x86-64"), else after the digest.
// The name is a label that the AgentClusterInstall refers to; nothing is
// decided from it.
func ClusterImageSetNameFor(pullSpec, version string) string {
	if version != "" {
		return ClusterImageSetName(version)
	}
	label := pullSpec
	if i := strings.LastIndex(pullSpec, "@"); i >= 0 {
		label = pullSpec[i+1:]
		if algo, hex, ok := strings.Cut(label, ":"); ok && len(hex) > 12 {
			label = algo + "-" + hex[:12]
		}
	} else if i := strings.LastIndex(pullSpec, ":"); i > strings.LastIndex(pullSpec, "/") {
		label = pullSpec[i+1:]
	}
	var b strings.Builder
	for _, r := range strings.ToLower(label) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), ".-")
	if name == "" {
		name = "release"
	}
	const maxName = 253 - len("openshift-")
	if len(name) > maxName {
		name = strings.TrimRight(name[:maxName], ".-")
	}
	return ClusterImageSetName(name)
}

// PullSecretName is "<cluster>-pull-secret".
func PullSecretName(cluster string) string { return cluster + "-pull-secret" }

// GeneratePullSecret builds cluster-manifests/pull-secret.yaml.
func GeneratePullSecret(ic *InstallConfig) *Secret {
	return &Secret{
		TypeMeta:   TypeMeta{APIVersion: "v1", Kind: "Secret"},
		Metadata:   ObjectMeta{Name: PullSecretName(ic.ClusterName()), Namespace: ic.Metadata.Namespace},
		StringData: map[string]string{".dockerconfigjson": reindentJSON(ic.PullSecret)},
	}
}

func reindentJSON(s string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(strings.TrimSpace(s)), "", "  "); err != nil {
		return s
	}
	return b.String()
}

// NoProxyWithRendezvous appends the machine network holding the
// rendezvous IP to noProxy when a proxy is set, unless already listed.
func NoProxyWithRendezvous(ic *InstallConfig, rendezvousIP string) *Proxy {
	if ic.Proxy == nil || (ic.Proxy.HTTPProxy == "" && ic.Proxy.HTTPSProxy == "") {
		return ic.Proxy
	}
	p := *ic.Proxy
	ip, err := netip.ParseAddr(rendezvousIP)
	if err != nil {
		return &p
	}
	for _, m := range ic.Networking.MachineNetwork {
		pfx, err := netip.ParsePrefix(m.CIDR)
		if err != nil || !pfx.Contains(ip) {
			continue
		}
		for _, e := range strings.Split(p.NoProxy, ",") {
			if strings.TrimSpace(e) == m.CIDR {
				return &p
			}
		}
		if p.NoProxy == "" {
			p.NoProxy = m.CIDR
		} else {
			p.NoProxy += "," + m.CIDR
		}
		return &p
	}
	return &p
}

// GenerateInfraEnv builds cluster-manifests/infraenv.yaml.
func GenerateInfraEnv(ic *InstallConfig, ac *AgentConfig, rendezvousIP string) *InfraEnv {
	name, ns := ic.ClusterName(), ic.Metadata.Namespace
	ie := &InfraEnv{
		TypeMeta: TypeMeta{APIVersion: "agent-install.openshift.io/v1beta1", Kind: "InfraEnv"},
		Metadata: ObjectMeta{Name: name, Namespace: ns},
		Spec: InfraEnvSpec{
			ClusterRef:                 &ObjectRef{Name: name, Namespace: ns},
			CPUArchitecture:            ArchToRPM(ic.ControlPlane.Architecture),
			SSHAuthorizedKey:           strings.Trim(strings.TrimSpace(ic.SSHKey), "|\t\n"),
			PullSecretRef:              &LocalObjectRef{Name: PullSecretName(name)},
			NMStateConfigLabelSelector: LabelSelector{MatchLabels: NMStateConfigLabels(ic)},
			AdditionalTrustBundle:      ic.AdditionalTrustBundle,
			Proxy:                      NoProxyWithRendezvous(ic, rendezvousIP),
		},
	}
	if ac != nil {
		ie.Spec.AdditionalNTPSources = ac.AdditionalNTPSources
	}
	// Upstream: agent-config's sources win; without them the bare-metal
	// platform's additionalNTPServers are used.
	if bm := ic.Platform.BareMetal; bm != nil && len(ie.Spec.AdditionalNTPSources) == 0 {
		ie.Spec.AdditionalNTPSources = bm.AdditionalNTPServers
	}
	return ie
}

// GenerateNMStateConfigs builds one NMStateConfig per host that has
// networkConfig (cluster-manifests/nmstateconfig.yaml).
func GenerateNMStateConfigs(ic *InstallConfig, hosts []Host) []NMStateConfig {
	var out []NMStateConfig
	for i, h := range hosts {
		if !h.HasNetworkConfig() {
			continue
		}
		out = append(out, NMStateConfig{
			TypeMeta: TypeMeta{APIVersion: "agent-install.openshift.io/v1beta1", Kind: "NMStateConfig"},
			Metadata: ObjectMeta{Name: fmt.Sprintf("%s-%d", ic.ClusterName(), i), Namespace: ic.Metadata.Namespace,
				Labels: NMStateConfigLabels(ic)},
			Spec: NMStateConfigSpec{Config: h.NetworkConfig, Interfaces: h.Interfaces},
		})
	}
	return out
}

// PlatformType maps the install-config platform to the ACI platformType.
func PlatformType(p Platform) string {
	switch p.PlatformName() {
	case "baremetal":
		return "BareMetal"
	case "vsphere":
		return "VSphere"
	case "nutanix":
		return "Nutanix"
	case "external":
		return "External"
	}
	return "None"
}

// GenerateAgentClusterInstall builds cluster-manifests/agent-cluster-install.yaml.
// imageSetName is the name of the ClusterImageSet it refers to.
func GenerateAgentClusterInstall(ic *InstallConfig, hosts []Host, imageSetName, rendezvousIP string) (*AgentClusterInstall, error) {
	name := ic.ClusterName()
	n := ic.Networking
	pt := PlatformType(ic.Platform)
	umn := pt == "None" || pt == "External"
	aci := &AgentClusterInstall{
		TypeMeta: TypeMeta{APIVersion: "extensions.hive.openshift.io/v1beta1", Kind: "AgentClusterInstall"},
		Metadata: ObjectMeta{Name: name, Namespace: ic.Metadata.Namespace},
		Spec: ACISpec{
			ImageSetRef:          &LocalObjectRef{Name: imageSetName},
			ClusterDeploymentRef: LocalObjectRef{Name: name},
			Networking: ACINetworking{
				MachineNetwork:        n.MachineNetwork,
				ClusterNetwork:        n.ClusterNetwork,
				ServiceNetwork:        n.ServiceNetwork,
				NetworkType:           n.NetworkType,
				UserManagedNetworking: &umn,
			},
			SSHPublicKey: strings.TrimSpace(ic.SSHKey),
			ProvisionRequirements: ProvisionRequirements{
				ControlPlaneAgents: int(ic.ControlPlaneReplicas()),
				ArbiterAgents:      int(ic.ArbiterReplicas()),
				WorkerAgents:       int(ic.ComputeReplicas()),
			},
			PlatformType: pt,
			Proxy:        NoProxyWithRendezvous(ic, rendezvousIP),
		},
	}
	if api := ic.Platform.APIVIPs(); len(api) > 0 {
		aci.Spec.APIVIPs = api
		if pt == "BareMetal" {
			aci.Spec.APIVIP = api[0]
		}
	}
	if ing := ic.Platform.IngressVIPs(); len(ing) > 0 {
		aci.Spec.IngressVIPs = ing
		if pt == "BareMetal" {
			aci.Spec.IngressVIP = ing[0]
		}
	}
	if ex := ic.Platform.External; ex != nil {
		aci.Spec.External = &ExternalPlatform{PlatformName: ex.PlatformName, CloudControllerManager: ex.CloudControllerManager}
	}
	if ic.Platform.userManagedLB() {
		aci.Spec.LoadBalancer = &LoadBalancer{Type: "UserManaged"}
	}
	overrides, err := installConfigOverrides(ic, hosts)
	if err != nil {
		return nil, err
	}
	if overrides != "" {
		aci.Metadata.Annotations = map[string]string{"agent-install.openshift.io/install-config-overrides": overrides}
	}
	return aci, nil
}

// GenerateClusterDeployment builds cluster-manifests/cluster-deployment.yaml.
func GenerateClusterDeployment(ic *InstallConfig) *ClusterDeployment {
	name := ic.ClusterName()
	return &ClusterDeployment{
		TypeMeta: TypeMeta{APIVersion: "hive.openshift.io/v1", Kind: "ClusterDeployment"},
		Metadata: ObjectMeta{Name: name, Namespace: ic.Metadata.Namespace},
		Spec: ClusterDeploymentSpec{
			BaseDomain:  ic.BaseDomain,
			ClusterName: name,
			ClusterInstallRef: &ClusterInstallRef{Group: "extensions.hive.openshift.io", Kind: "AgentClusterInstall",
				Name: name, Version: "v1beta1"},
			ControlPlaneConfig: ControlPlaneConfig{ServingCertificates: json.RawMessage("{}")},
			Platform:           json.RawMessage(`{"agentBareMetal":{"agentSelector":{}}}`),
			PullSecretRef:      &LocalObjectRef{Name: PullSecretName(name)},
		},
	}
}

// GenerateClusterImageSet builds cluster-manifests/cluster-image-set.yaml,
// named name (see ClusterImageSetNameFor).
func GenerateClusterImageSet(namespace, releaseImage, name string) *ClusterImageSet {
	return &ClusterImageSet{
		TypeMeta: TypeMeta{APIVersion: "hive.openshift.io/v1", Kind: "ClusterImageSet"},
		Metadata: ObjectMeta{Name: name, Namespace: namespace},
		Spec:     ClusterImageSetSpec{ReleaseImage: releaseImage},
	}
}
