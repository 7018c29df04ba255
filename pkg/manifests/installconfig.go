package manifests

import (
	"encoding/json"
	"net/netip"
	"strings"
)

// ObjectMeta is the subset of Kubernetes object metadata the inputs use.
type ObjectMeta struct {
	Name              string            `json:"name,omitempty"`
	Namespace         string            `json:"namespace,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	CreationTimestamp json.RawMessage   `json:"creationTimestamp,omitempty"`
	GenerateName      string            `json:"generateName,omitempty"`
	UID               string            `json:"uid,omitempty"`
	ResourceVersion   string            `json:"resourceVersion,omitempty"`
}

// InstallConfig is install-config.yaml: the fields the agent flow reads.
type InstallConfig struct {
	APIVersion                  string              `json:"apiVersion"`
	Kind                        string              `json:"kind,omitempty"`
	Metadata                    ObjectMeta          `json:"metadata"`
	BaseDomain                  string              `json:"baseDomain"`
	ControlPlane                *MachinePool        `json:"controlPlane,omitempty"`
	Compute                     []MachinePool       `json:"compute,omitempty"`
	Arbiter                     *MachinePool        `json:"arbiter,omitempty"`
	Networking                  *Networking         `json:"networking,omitempty"`
	Platform                    Platform            `json:"platform"`
	PullSecret                  string              `json:"pullSecret"`
	SSHKey                      string              `json:"sshKey,omitempty"`
	FIPS                        bool                `json:"fips,omitempty"`
	Proxy                       *Proxy              `json:"proxy,omitempty"`
	AdditionalTrustBundle       string              `json:"additionalTrustBundle,omitempty"`
	AdditionalTrustBundlePolicy string              `json:"additionalTrustBundlePolicy,omitempty"`
	ImageDigestSources          []ImageDigestSource `json:"imageDigestSources,omitempty"`
	ImageContentSources         []ImageDigestSource `json:"imageContentSources,omitempty"`
	Capabilities                *Capabilities       `json:"capabilities,omitempty"`
	CPUPartitioningMode         string              `json:"cpuPartitioningMode,omitempty"`
	FeatureSet                  string              `json:"featureSet,omitempty"`
	FeatureGates                []string            `json:"featureGates,omitempty"`
	Publish                     string              `json:"publish,omitempty"`
	CredentialsMode             string              `json:"credentialsMode,omitempty"`
	BootstrapInPlace            json.RawMessage     `json:"bootstrapInPlace,omitempty"`
}

// MachinePool is controlPlane, compute[] or arbiter.
type MachinePool struct {
	Name           string          `json:"name"`
	Replicas       *int64          `json:"replicas,omitempty"`
	Architecture   string          `json:"architecture,omitempty"`
	Hyperthreading string          `json:"hyperthreading,omitempty"`
	Platform       json.RawMessage `json:"platform,omitempty"`
	Fencing        *Fencing        `json:"fencing,omitempty"`
}

// Fencing holds two-node fencing credentials.
type Fencing struct {
	Credentials []FencingCredential `json:"credentials,omitempty"`
}

// FencingCredential is one BMC credential for two-node fencing.
type FencingCredential struct {
	HostName                string `json:"hostName,omitempty"`
	MACAddress              string `json:"macAddress,omitempty"`
	Address                 string `json:"address"`
	Username                string `json:"username"`
	Password                string `json:"password"`
	CertificateVerification string `json:"certificateVerification,omitempty"`
}

// Networking is install-config networking.
type Networking struct {
	NetworkType         string           `json:"networkType,omitempty"`
	MachineNetwork      []MachineNetwork `json:"machineNetwork,omitempty"`
	ClusterNetwork      []ClusterNetwork `json:"clusterNetwork,omitempty"`
	ServiceNetwork      []string         `json:"serviceNetwork,omitempty"`
	OVNKubernetesConfig json.RawMessage  `json:"ovnKubernetesConfig,omitempty"`
	ClusterNetworkMTU   uint32           `json:"clusterNetworkMTU,omitempty"`
}

// MachineNetwork is one machine CIDR.
type MachineNetwork struct {
	CIDR string `json:"cidr"`
}

// ClusterNetwork is one pod network block.
type ClusterNetwork struct {
	CIDR       string `json:"cidr"`
	HostPrefix int32  `json:"hostPrefix,omitempty"`
}

// Proxy is the cluster-wide proxy.
type Proxy struct {
	HTTPProxy  string `json:"httpProxy,omitempty"`
	HTTPSProxy string `json:"httpsProxy,omitempty"`
	NoProxy    string `json:"noProxy,omitempty"`
}

// ImageDigestSource maps a source repository to its mirrors.
type ImageDigestSource struct {
	Source       string   `json:"source"`
	Mirrors      []string `json:"mirrors,omitempty"`
	SourcePolicy string   `json:"sourcePolicy,omitempty"`
}

// Capabilities selects optional cluster capabilities.
type Capabilities struct {
	BaselineCapabilitySet         string   `json:"baselineCapabilitySet,omitempty"`
	AdditionalEnabledCapabilities []string `json:"additionalEnabledCapabilities,omitempty"`
}

// Platform is the one platform section of install-config.
type Platform struct {
	BareMetal *BareMetalPlatform `json:"baremetal,omitempty"`
	VSphere   *VSpherePlatform   `json:"vsphere,omitempty"`
	Nutanix   *NutanixPlatform   `json:"nutanix,omitempty"`
	None      *struct{}          `json:"none,omitempty"`
	External  *ExternalPlatform  `json:"external,omitempty"`
	// Other platforms are decoded only to report them as unsupported.
	AWS       json.RawMessage `json:"aws,omitempty"`
	Azure     json.RawMessage `json:"azure,omitempty"`
	GCP       json.RawMessage `json:"gcp,omitempty"`
	IBMCloud  json.RawMessage `json:"ibmcloud,omitempty"`
	OpenStack json.RawMessage `json:"openstack,omitempty"`
	OVirt     json.RawMessage `json:"ovirt,omitempty"`
	PowerVS   json.RawMessage `json:"powervs,omitempty"`
}

// BareMetalPlatform is platform.baremetal.
type BareMetalPlatform struct {
	APIVIPs                      []string        `json:"apiVIPs,omitempty"`
	IngressVIPs                  []string        `json:"ingressVIPs,omitempty"`
	APIVIP                       string          `json:"apiVIP,omitempty"`
	IngressVIP                   string          `json:"ingressVIP,omitempty"`
	LoadBalancer                 *LoadBalancer   `json:"loadBalancer,omitempty"`
	Hosts                        []BareMetalHost `json:"hosts,omitempty"`
	ProvisioningNetwork          string          `json:"provisioningNetwork,omitempty"`
	ProvisioningNetworkInterface string          `json:"provisioningNetworkInterface,omitempty"`
	ProvisioningNetworkCIDR      string          `json:"provisioningNetworkCIDR,omitempty"`
	ProvisioningDHCPRange        string          `json:"provisioningDHCPRange,omitempty"`
	ClusterProvisioningIP        string          `json:"clusterProvisioningIP,omitempty"`
	ProvisioningMACAddress       string          `json:"provisioningMACAddress,omitempty"`
	LibvirtURI                   string          `json:"libvirtURI,omitempty"`
	BootstrapProvisioningIP      string          `json:"bootstrapProvisioningIP,omitempty"`
	ExternalBridge               string          `json:"externalBridge,omitempty"`
	ProvisioningBridge           string          `json:"provisioningBridge,omitempty"`
	DefaultMachinePlatform       json.RawMessage `json:"defaultMachinePlatform,omitempty"`
	BootstrapOSImage             string          `json:"bootstrapOSImage,omitempty"`
	ClusterOSImage               string          `json:"clusterOSImage,omitempty"`
	BootstrapExternalStaticIP    string          `json:"bootstrapExternalStaticIP,omitempty"`
	BootstrapExternalStaticGW    string          `json:"bootstrapExternalStaticGateway,omitempty"`
	BootstrapExternalStaticDNS   string          `json:"bootstrapExternalStaticDNS,omitempty"`
	ExternalMACAddress           string          `json:"externalMACAddress,omitempty"`
	// AdditionalNTPServers feed the InfraEnv's NTP sources when
	// agent-config.yaml sets no additionalNTPSources (as upstream).
	AdditionalNTPServers []string `json:"additionalNTPServers,omitempty"`
}

// LoadBalancer selects who runs the API/ingress load balancer.
type LoadBalancer struct {
	Type string `json:"type,omitempty"`
}

// BareMetalHost is platform.baremetal.hosts[].
type BareMetalHost struct {
	Name            string           `json:"name"`
	Role            string           `json:"role,omitempty"`
	BootMACAddress  string           `json:"bootMACAddress"`
	RootDeviceHints *RootDeviceHints `json:"rootDeviceHints,omitempty"`
	NetworkConfig   json.RawMessage  `json:"networkConfig,omitempty"`
	BMC             *BMC             `json:"bmc,omitempty"`
	BootMode        string           `json:"bootMode,omitempty"`
	HardwareProfile string           `json:"hardwareProfile,omitempty"`
}

// BMC is a baseboard management controller's access details.
type BMC struct {
	Address                        string `json:"address,omitempty"`
	Username                       string `json:"username,omitempty"`
	Password                       string `json:"password,omitempty"`
	DisableCertificateVerification bool   `json:"disableCertificateVerification,omitempty"`
}

// VSpherePlatform is platform.vsphere.
type VSpherePlatform struct {
	APIVIPs          []string               `json:"apiVIPs,omitempty"`
	IngressVIPs      []string               `json:"ingressVIPs,omitempty"`
	APIVIP           string                 `json:"apiVIP,omitempty"`
	IngressVIP       string                 `json:"ingressVIP,omitempty"`
	VCenters         []VCenter              `json:"vcenters,omitempty"`
	FailureDomains   []VSphereFailureDomain `json:"failureDomains,omitempty"`
	VCenter          string                 `json:"vCenter,omitempty"`
	Username         string                 `json:"username,omitempty"`
	Password         string                 `json:"password,omitempty"`
	Datacenter       string                 `json:"datacenter,omitempty"`
	DefaultDatastore string                 `json:"defaultDatastore,omitempty"`
	Folder           string                 `json:"folder,omitempty"`
	Cluster          string                 `json:"cluster,omitempty"`
	ResourcePool     string                 `json:"resourcePool,omitempty"`
	Network          string                 `json:"network,omitempty"`
	ClusterOSImage   string                 `json:"clusterOSImage,omitempty"`
	DiskType         string                 `json:"diskType,omitempty"`
	LoadBalancer     *LoadBalancer          `json:"loadBalancer,omitempty"`
	DefaultMachine   json.RawMessage        `json:"defaultMachinePlatform,omitempty"`
	Hosts            json.RawMessage        `json:"hosts,omitempty"`
}

// VCenter is one vCenter's credentials.
type VCenter struct {
	Server      string   `json:"server"`
	Port        int32    `json:"port,omitempty"`
	User        string   `json:"user"`
	Password    string   `json:"password"`
	Datacenters []string `json:"datacenters"`
}

// VSphereFailureDomain is one vSphere failure domain.
type VSphereFailureDomain struct {
	Name     string          `json:"name"`
	Region   string          `json:"region"`
	Zone     string          `json:"zone"`
	Server   string          `json:"server"`
	Topology VSphereTopology `json:"topology"`
}

// VSphereTopology locates a failure domain inside vCenter.
type VSphereTopology struct {
	Datacenter     string   `json:"datacenter"`
	ComputeCluster string   `json:"computeCluster"`
	Datastore      string   `json:"datastore"`
	Networks       []string `json:"networks,omitempty"`
	Folder         string   `json:"folder,omitempty"`
	ResourcePool   string   `json:"resourcePool,omitempty"`
	Template       string   `json:"template,omitempty"`
}

// NutanixPlatform is platform.nutanix.
type NutanixPlatform struct {
	APIVIPs       []string         `json:"apiVIPs,omitempty"`
	IngressVIPs   []string         `json:"ingressVIPs,omitempty"`
	PrismCentral  NutanixPrism     `json:"prismCentral"`
	PrismElements []NutanixElement `json:"prismElements"`
	SubnetUUIDs   []string         `json:"subnetUUIDs"`
	LoadBalancer  *LoadBalancer    `json:"loadBalancer,omitempty"`
}

// NutanixPrism is the Prism Central endpoint and credentials.
type NutanixPrism struct {
	Endpoint NutanixEndpoint `json:"endpoint"`
	Username string          `json:"username"`
	Password string          `json:"password"`
}

// NutanixEndpoint is an address and port.
type NutanixEndpoint struct {
	Address string `json:"address"`
	Port    int32  `json:"port"`
}

// NutanixElement is one Prism Element.
type NutanixElement struct {
	UUID     string          `json:"uuid"`
	Endpoint NutanixEndpoint `json:"endpoint"`
	Name     string          `json:"name,omitempty"`
}

// ExternalPlatform is platform.external.
type ExternalPlatform struct {
	PlatformName           string `json:"platformName,omitempty"`
	CloudControllerManager string `json:"cloudControllerManager,omitempty"`
}

// PlatformName returns the name of the one platform set ("" if none).
func (p Platform) PlatformName() string {
	names := p.SetPlatforms()
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// SetPlatforms lists every platform key present, in a fixed order.
func (p Platform) SetPlatforms() []string {
	var out []string
	add := func(set bool, name string) {
		if set {
			out = append(out, name)
		}
	}
	add(p.BareMetal != nil, "baremetal")
	add(p.VSphere != nil, "vsphere")
	add(p.Nutanix != nil, "nutanix")
	add(p.None != nil, "none")
	add(p.External != nil, "external")
	add(p.AWS != nil, "aws")
	add(p.Azure != nil, "azure")
	add(p.GCP != nil, "gcp")
	add(p.IBMCloud != nil, "ibmcloud")
	add(p.OpenStack != nil, "openstack")
	add(p.OVirt != nil, "ovirt")
	add(p.PowerVS != nil, "powervs")
	return out
}

// APIVIPs returns the API VIPs of the platform (plural or legacy singular).
func (p Platform) APIVIPs() []string {
	switch {
	case p.BareMetal != nil:
		return vips(p.BareMetal.APIVIPs, p.BareMetal.APIVIP)
	case p.VSphere != nil:
		return vips(p.VSphere.APIVIPs, p.VSphere.APIVIP)
	case p.Nutanix != nil:
		return p.Nutanix.APIVIPs
	}
	return nil
}

// IngressVIPs returns the ingress VIPs of the platform.
func (p Platform) IngressVIPs() []string {
	switch {
	case p.BareMetal != nil:
		return vips(p.BareMetal.IngressVIPs, p.BareMetal.IngressVIP)
	case p.VSphere != nil:
		return vips(p.VSphere.IngressVIPs, p.VSphere.IngressVIP)
	case p.Nutanix != nil:
		return p.Nutanix.IngressVIPs
	}
	return nil
}

func vips(plural []string, single string) []string {
	if len(plural) > 0 {
		return plural
	}
	if single != "" {
		return []string{single}
	}
	return nil
}

// userManagedLB reports whether the load balancer is user-managed.
func (p Platform) userManagedLB() bool {
	var lb *LoadBalancer
	switch {
	case p.BareMetal != nil:
		lb = p.BareMetal.LoadBalancer
	case p.VSphere != nil:
		lb = p.VSphere.LoadBalancer
	case p.Nutanix != nil:
		lb = p.Nutanix.LoadBalancer
	}
	return lb != nil && lb.Type == "UserManaged"
}

// ControlPlaneReplicas returns controlPlane.replicas (after defaults).
func (ic *InstallConfig) ControlPlaneReplicas() int64 {
	if ic.ControlPlane == nil || ic.ControlPlane.Replicas == nil {
		return 3
	}
	return *ic.ControlPlane.Replicas
}

// ComputeReplicas sums the replicas of every compute pool.
func (ic *InstallConfig) ComputeReplicas() int64 {
	var n int64
	for _, c := range ic.Compute {
		if c.Replicas != nil {
			n += *c.Replicas
		}
	}
	return n
}

// ArbiterReplicas returns arbiter.replicas, 0 when unset.
func (ic *InstallConfig) ArbiterReplicas() int64 {
	if ic.Arbiter == nil || ic.Arbiter.Replicas == nil {
		return 0
	}
	return *ic.Arbiter.Replicas
}

// ClusterName returns metadata.name.
func (ic *InstallConfig) ClusterName() string { return ic.Metadata.Name }

// MachineNetworkContains reports whether ip lies in any machine network.
func (ic *InstallConfig) MachineNetworkContains(ip netip.Addr) bool {
	for _, m := range ic.Networking.MachineNetwork {
		if pfx, err := netip.ParsePrefix(m.CIDR); err == nil && pfx.Contains(ip) {
			return true
		}
	}
	return false
}

func (ic *InstallConfig) machineCIDRs() string {
	var out []string
	for _, m := range ic.Networking.MachineNetwork {
		out = append(out, m.CIDR)
	}
	return strings.Join(out, ", ")
}

// MirrorSources returns imageDigestSources, or the deprecated
// imageContentSources when only those are set.
func (ic *InstallConfig) MirrorSources() []ImageDigestSource {
	if len(ic.ImageDigestSources) > 0 {
		return ic.ImageDigestSources
	}
	return ic.ImageContentSources
}
