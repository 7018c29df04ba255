package manifests

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

// Upstream's defaults for the bare-metal provisioning network, which it
// fills before writing the install-config-overrides annotation.
const (
	defaultProvisioningNetwork = "Managed"
	defaultProvisioningCIDR    = "172.22.0.0/24"
	// clusterProvisioningHost and dhcpFirstHost are host numbers inside
	// the provisioning CIDR: .3 for the cluster provisioning IP, .10 up to
	// the last address but one for the managed DHCP range.
	clusterProvisioningHost = 3
	dhcpFirstHost           = 10
)

// overrideHost is what upstream keeps of a bare-metal host in the
// overrides: enough for the cluster's bare-metal operator to manage it.
type overrideHost struct {
	Name           string `json:"name"`
	Role           string `json:"role,omitempty"`
	BootMACAddress string `json:"bootMACAddress,omitempty"`
	BMC            BMC    `json:"bmc"`
}

type bareMetalOverrides struct {
	Hosts                        []overrideHost `json:"hosts,omitempty"`
	ClusterProvisioningIP        string         `json:"clusterProvisioningIP,omitempty"`
	ProvisioningNetwork          string         `json:"provisioningNetwork,omitempty"`
	ProvisioningNetworkInterface string         `json:"provisioningNetworkInterface,omitempty"`
	ProvisioningNetworkCIDR      string         `json:"provisioningNetworkCIDR,omitempty"`
	ProvisioningDHCPRange        string         `json:"provisioningDHCPRange,omitempty"`
}

type vsphereOverrides struct {
	APIVIPs        []string               `json:"apiVIPs,omitempty"`
	IngressVIPs    []string               `json:"ingressVIPs,omitempty"`
	VCenters       []VCenter              `json:"vcenters,omitempty"`
	FailureDomains []VSphereFailureDomain `json:"failureDomains,omitempty"`
}

// installConfigOverrides is the JSON of the install-config settings the
// ACI cannot express; assisted-service merges it into the install-config
// it writes. It carries what upstream carries and nothing more: no VIPs
// (they are ACI fields) unless vSphere has two of each, no host network or
// disk settings.
func installConfigOverrides(ic *InstallConfig, hosts []Host) (string, error) {
	o := map[string]any{}
	if ic.FIPS {
		o["fips"] = true
	}
	if ic.Capabilities != nil {
		o["capabilities"] = ic.Capabilities
	}
	if ic.CPUPartitioningMode != "" {
		o["cpuPartitioningMode"] = ic.CPUPartitioningMode
	}
	if ic.AdditionalTrustBundlePolicy != "" && ic.AdditionalTrustBundlePolicy != "Proxyonly" {
		o["additionalTrustBundlePolicy"] = ic.AdditionalTrustBundlePolicy
	}
	if ic.FeatureSet != "" {
		o["featureSet"] = ic.FeatureSet
	}
	if len(ic.FeatureGates) > 0 {
		o["featureGates"] = ic.FeatureGates
	}
	if nt := ic.Networking.NetworkType; nt != "OVNKubernetes" && nt != "OpenShiftSDN" {
		o["networking"] = ic.Networking
	}
	switch p := ic.Platform; {
	case p.BareMetal != nil:
		if bm := bareMetalOverride(p.BareMetal, hosts); bm != nil {
			o["platform"] = map[string]any{"baremetal": bm}
		}
	case p.VSphere != nil:
		if vs := vsphereOverride(p.VSphere); vs != nil {
			o["platform"] = map[string]any{"vsphere": vs}
		}
	case p.Nutanix != nil:
		nx := *p.Nutanix
		nx.LoadBalancer = nil // an ACI field
		o["platform"] = map[string]any{"nutanix": nx}
	case p.External != nil:
		o["platform"] = map[string]any{"external": ExternalPlatform{PlatformName: p.External.PlatformName, CloudControllerManager: p.External.CloudControllerManager}}
	}
	if len(o) == 0 {
		return "", nil
	}
	b, err := json.Marshal(o)
	if err != nil {
		return "", fmt.Errorf("encode install-config overrides: %w", err)
	}
	return string(b), nil
}

// bareMetalOverride returns the hosts with BMC details and the
// provisioning settings, or nil when no host has BMC details. Hosts from
// agent-config.yaml replace install-config hosts, BMCs included.
func bareMetalOverride(bm *BareMetalPlatform, hosts []Host) *bareMetalOverrides {
	for _, h := range hosts {
		if h.File == assetdir.AgentConfig {
			return nil
		}
	}
	out := &bareMetalOverrides{}
	for _, h := range bm.Hosts {
		if h.BMC == nil || (h.BMC.Address == "" && h.BMC.Username == "" && h.BMC.Password == "") {
			continue
		}
		out.Hosts = append(out.Hosts, overrideHost{Name: h.Name, Role: h.Role, BootMACAddress: h.BootMACAddress, BMC: *h.BMC})
	}
	if len(out.Hosts) == 0 {
		return nil
	}
	out.ClusterProvisioningIP = bm.ClusterProvisioningIP
	out.ProvisioningNetwork = bm.ProvisioningNetwork
	out.ProvisioningNetworkInterface = bm.ProvisioningNetworkInterface
	out.ProvisioningNetworkCIDR = bm.ProvisioningNetworkCIDR
	out.ProvisioningDHCPRange = bm.ProvisioningDHCPRange
	return out
}

// vsphereOverride returns the VIPs when there are two of each, the
// vCenters that carry credentials and, with credentials, the failure
// domains; nil when there is none of these.
func vsphereOverride(vs *VSpherePlatform) *vsphereOverrides {
	out := &vsphereOverrides{}
	set := false
	if len(vs.APIVIPs) > 1 {
		out.APIVIPs, out.IngressVIPs = vs.APIVIPs, vs.IngressVIPs
		set = true
	}
	for _, vc := range vs.VCenters {
		if vc.Server != "" || vc.User != "" || vc.Password != "" || len(vc.Datacenters) > 0 {
			out.VCenters = append(out.VCenters, vc)
		}
	}
	if len(out.VCenters) > 0 {
		out.FailureDomains = vs.FailureDomains
		set = true
	}
	if !set {
		return nil
	}
	return out
}

// inventoryPath turns a bare vSphere object name into its inventory path
// /<datacenter>/<kind>/<name>; a path (leading '/') or "" is kept.
func inventoryPath(name, datacenter, kind string) string {
	if name == "" || strings.HasPrefix(name, "/") {
		return name
	}
	return "/" + datacenter + "/" + kind + "/" + name
}
