package manifests

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"

	"golang.org/x/crypto/ssh"

	"github.com/seed-a052040e/agentiso/internal/suggest"
	"github.com/seed-a052040e/agentiso/pkg/arch"
)

// Supported platforms, as upstream; the architectures are arch.SupportedGo.
var supportedPlatforms = []string{"baremetal", "vsphere", "nutanix", "none", "external"}

// FeatureGateOn reports whether install-config enables the feature gate
// name: by featureSet TechPreviewNoUpgrade or DevPreviewNoUpgrade, or by
// name=true in featureGates.
func (ic *InstallConfig) FeatureGateOn(name string) bool {
	if ic.FeatureSet == "TechPreviewNoUpgrade" || ic.FeatureSet == "DevPreviewNoUpgrade" {
		return true
	}
	for _, g := range ic.FeatureGates {
		if strings.TrimSpace(g) == name+"=true" {
			return true
		}
	}
	return false
}

var (
	dns1123Label     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dns1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// ValidateInstallConfig checks install-config.yaml (after SetDefaults)
// against the agent flow's rules, returning every problem at once.
func ValidateInstallConfig(ic *InstallConfig, lines Lines) error {
	e := newErrs(assetdir.InstallConfig, lines)
	switch ic.APIVersion {
	case "":
		e.required("apiVersion", "install-config version required; use \"v1\"")
	case "v1":
	default:
		e.invalid("apiVersion", ic.APIVersion, "install-config version must be \"v1\"")
	}
	validateClusterIdentity(e, ic)
	validatePlatform(e, ic)
	validatePools(e, ic)
	validateNetworking(e, ic)
	validateVIPs(e, ic)
	if err := ValidatePullSecret(ic.PullSecret); err != nil {
		e.invalid("pullSecret", nil, "%v", err)
	}
	if ic.SSHKey != "" {
		if err := ValidateSSHKey(ic.SSHKey); err != nil {
			e.invalid("sshKey", nil, "%v", err)
		}
	}
	if ic.AdditionalTrustBundle != "" {
		if err := ValidateCABundle([]byte(ic.AdditionalTrustBundle)); err != nil {
			e.invalid("additionalTrustBundle", nil, "%v", err)
		}
	}
	switch ic.AdditionalTrustBundlePolicy {
	case "Proxyonly", "Always":
	default:
		e.unsupported("additionalTrustBundlePolicy", ic.AdditionalTrustBundlePolicy, "Proxyonly", "Always")
	}
	if len(ic.ImageContentSources) > 0 && len(ic.ImageDigestSources) > 0 {
		e.forbidden("imageContentSources", "cannot set imageContentSources and imageDigestSources at the same time; move every entry to imageDigestSources")
	}
	blockedBy := map[string]int{} // source -> index of its first entry
	for i, s := range ic.MirrorSources() {
		field := "imageDigestSources"
		if len(ic.ImageContentSources) > 0 {
			field = "imageContentSources"
		}
		p := fmt.Sprintf("%s[%d]", field, i)
		if j, seen := blockedBy[s.Source]; !seen {
			blockedBy[s.Source] = i
		} else if first := ic.MirrorSources()[j]; (first.SourcePolicy == "NeverContactSource") != (s.SourcePolicy == "NeverContactSource") {
			shown := first.SourcePolicy
			if shown == "" {
				shown = "no sourcePolicy"
			}
			e.invalid(p+".sourcePolicy", s.SourcePolicy, "conflicts with %s[%d] (%s) for the same source %s; give every entry of one source the same sourcePolicy", field, j, shown, s.Source)
		}
		if s.Source == "" {
			e.required(p+".source", "the repository to mirror, e.g. quay.io/openshift-release-dev/ocp-release")
		}
		switch s.SourcePolicy {
		case "", "NeverContactSource", "AllowContactingSource":
		default:
			e.unsupported(p+".sourcePolicy", s.SourcePolicy, "NeverContactSource", "AllowContactingSource")
		}
	}
	if p := ic.Proxy; p != nil {
		if p.HTTPProxy != "" {
			validateProxyURL(e, "proxy.httpProxy", p.HTTPProxy, "http")
			validateProxyNotInNetworks(e, "proxy.httpProxy", p.HTTPProxy, ic.Networking)
		}
		if p.HTTPSProxy != "" {
			validateProxyURL(e, "proxy.httpsProxy", p.HTTPSProxy, "http", "https")
			validateProxyNotInNetworks(e, "proxy.httpsProxy", p.HTTPSProxy, ic.Networking)
		}
		validateNoProxy(e, p.NoProxy)
	}
	validateCapabilities(e, ic)
	switch ic.CPUPartitioningMode {
	case "", "None", "AllNodes":
	default:
		e.unsupported("cpuPartitioningMode", ic.CPUPartitioningMode, "None", "AllNodes")
	}
	return e.err()
}

func validateClusterIdentity(e *errs, ic *InstallConfig) {
	name := ic.Metadata.Name
	switch {
	case name == "":
		e.required("metadata.name", "the cluster name is required")
	case len(name) > 54:
		e.invalid("metadata.name", name, "cluster name must be at most 54 characters")
	case !dns1123Label.MatchString(name):
		e.invalid("metadata.name", name, "cluster name must be lower-case letters, digits and '-', starting and ending with a letter or digit")
	}
	switch {
	case ic.BaseDomain == "":
		e.required("baseDomain", "the base DNS domain of the cluster is required, e.g. example.com")
	case !dns1123Subdomain.MatchString(ic.BaseDomain):
		e.invalid("baseDomain", ic.BaseDomain, "must be a valid DNS subdomain (lower case, dots between labels, no trailing dot)")
	case name != "" && len(name+"."+ic.BaseDomain) > 253:
		e.invalid("baseDomain", ic.BaseDomain, "%s.%s is longer than 253 characters", name, ic.BaseDomain)
	}
}

func validatePlatform(e *errs, ic *InstallConfig) {
	set := ic.Platform.SetPlatforms()
	switch {
	case len(set) == 0:
		e.required("platform", "set exactly one of: baremetal, vsphere, nutanix, none, external")
		return
	case len(set) > 1:
		e.invalid("platform", strings.Join(set, ", "), "set exactly one platform")
	}
	p := set[0]
	if !slices.Contains(supportedPlatforms, p) {
		e.unsupported("platform", p, supportedPlatforms...)
		return
	}
	arch := ic.ControlPlane.Architecture
	if (arch == "ppc64le" || arch == "s390x") && p != "none" {
		e.invalid("platform", p, "CPU architecture %q only supports platform \"none\".", arch)
	}
	if ex := ic.Platform.External; ex != nil {
		if ex.PlatformName == "oci" && ex.CloudControllerManager != "External" {
			e.invalid("platform.external.cloudControllerManager", ex.CloudControllerManager, "When using external oci platform, platform.external.cloudControllerManager must be set to External")
		}
		switch ex.CloudControllerManager {
		case "", "None", "External":
		default:
			e.unsupported("platform.external.cloudControllerManager", ex.CloudControllerManager, "", "None", "External")
		}
	}
	if bm := ic.Platform.BareMetal; bm != nil {
		validateBareMetal(e, ic, bm)
	}
	if vs := ic.Platform.VSphere; vs != nil {
		validateVSphere(e, vs)
	}
	if nx := ic.Platform.Nutanix; nx != nil {
		validateNutanix(e, nx)
	}
	for _, pl := range []struct {
		path string
		lb   *LoadBalancer
	}{{"platform.baremetal.loadBalancer.type", lbOf(ic.Platform.BareMetal)}, {"platform.vsphere.loadBalancer.type", lbOfVS(ic.Platform.VSphere)}} {
		if pl.lb != nil && pl.lb.Type != "" && pl.lb.Type != "UserManaged" && pl.lb.Type != "OpenShiftManagedDefault" {
			e.unsupported(pl.path, pl.lb.Type, "OpenShiftManagedDefault", "UserManaged")
		}
	}
}

func lbOf(bm *BareMetalPlatform) *LoadBalancer {
	if bm == nil {
		return nil
	}
	return bm.LoadBalancer
}

func lbOfVS(vs *VSpherePlatform) *LoadBalancer {
	if vs == nil {
		return nil
	}
	return vs.LoadBalancer
}

func validateBareMetal(e *errs, ic *InstallConfig, bm *BareMetalPlatform) {
	for i, s := range bm.AdditionalNTPServers {
		if _, err := netip.ParseAddr(s); err != nil && !dnsName.MatchString(s) {
			e.invalid(fmt.Sprintf("platform.baremetal.additionalNTPServers[%d]", i), s, "NTP server is not a valid domain name nor a valid IP")
		}
	}
	anyBMC := false
	bmcSeen := map[string]int{}
	for i, h := range bm.Hosts {
		p := fmt.Sprintf("platform.baremetal.hosts[%d]", i)
		if h.BootMACAddress == "" {
			e.required(p+".bootMACAddress", "invalid host definition in install-config.yaml: host bootMACAddress is required")
		} else if _, err := net.ParseMAC(h.BootMACAddress); err != nil {
			e.invalid(p+".bootMACAddress", h.BootMACAddress, "not a MAC address; use the form 52:54:00:aa:bb:cc")
		}
		if why := dnsLengthProblem(h.Name); why != "" {
			e.invalid(p+".name", h.Name, "%s", why)
		}
		switch h.Role {
		case "", "master", "worker", "arbiter":
		default:
			e.unsupported(p+".role", h.Role, "master", "worker", "arbiter")
		}
		if h.BMC != nil && h.BMC.Address != "" {
			anyBMC = true
			if j, dup := bmcSeen[h.BMC.Address]; dup {
				e.add(p+".bmc.address", TypeDuplicate, RedactURL(h.BMC.Address), "also used by platform.baremetal.hosts[%d]", j)
			}
			bmcSeen[h.BMC.Address] = i
		}
		if h.RootDeviceHints != nil {
			validateRootDeviceHints(e, p+".rootDeviceHints", h.RootDeviceHints)
		}
	}
	if !anyBMC {
		return
	}
	switch bm.ProvisioningNetwork {
	case "", "Managed", "Unmanaged", "Disabled":
	default:
		e.unsupported("platform.baremetal.provisioningNetwork", bm.ProvisioningNetwork, "Disabled", "Managed", "Unmanaged")
	}
	if bm.ProvisioningNetwork != "Disabled" && bm.ProvisioningNetworkCIDR != "" {
		pfx, err := netip.ParsePrefix(bm.ProvisioningNetworkCIDR)
		if err != nil {
			e.invalid("platform.baremetal.provisioningNetworkCIDR", bm.ProvisioningNetworkCIDR, "not a CIDR")
		} else if bm.ClusterProvisioningIP != "" {
			ip, err := netip.ParseAddr(bm.ClusterProvisioningIP)
			if err != nil || !pfx.Contains(ip) {
				e.invalid("platform.baremetal.clusterProvisioningIP", bm.ClusterProvisioningIP, "must be an IP inside provisioningNetworkCIDR %s", bm.ProvisioningNetworkCIDR)
			} else if lo, hi, ok := parseRange(bm.ProvisioningDHCPRange); ok && ip.Compare(lo) >= 0 && ip.Compare(hi) <= 0 {
				e.invalid("platform.baremetal.clusterProvisioningIP", bm.ClusterProvisioningIP, "%q overlaps with the allocated DHCP range", bm.ClusterProvisioningIP)
			}
		}
	}
	if bm.ProvisioningNetwork == "Disabled" {
		for i, h := range bm.Hosts {
			if h.BMC != nil && strings.HasPrefix(h.BMC.Address, "ipmi://") {
				e.invalid(fmt.Sprintf("platform.baremetal.hosts[%d].bmc.address", i), RedactURL(h.BMC.Address), "driver ipmi requires provisioning network")
			}
		}
	}
}

func parseRange(r string) (netip.Addr, netip.Addr, bool) {
	a, b, ok := strings.Cut(r, ",")
	if !ok {
		return netip.Addr{}, netip.Addr{}, false
	}
	lo, err1 := netip.ParseAddr(strings.TrimSpace(a))
	hi, err2 := netip.ParseAddr(strings.TrimSpace(b))
	return lo, hi, err1 == nil && err2 == nil
}

func validateVSphere(e *errs, vs *VSpherePlatform) {
	for i, vc := range vs.VCenters {
		p := fmt.Sprintf("platform.vsphere.vcenters[%d]", i)
		any := vc.Server != "" || vc.User != "" || vc.Password != "" || len(vc.Datacenters) > 0
		if !any {
			continue
		}
		for _, f := range []struct {
			name string
			set  bool
		}{{"server", vc.Server != ""}, {"user", vc.User != ""}, {"password", vc.Password != ""}, {"datacenters", len(vc.Datacenters) > 0}} {
			if !f.set {
				e.required(p+"."+f.name, "All credential fields are required if any one is specified")
			}
		}
	}
	legacy := vs.VCenter != "" || vs.Username != "" || vs.Password != "" || vs.Datacenter != ""
	if legacy {
		for _, f := range []struct {
			name string
			set  bool
		}{{"vCenter", vs.VCenter != ""}, {"username", vs.Username != ""}, {"password", vs.Password != ""}, {"datacenter", vs.Datacenter != ""}} {
			if !f.set {
				e.required("platform.vsphere."+f.name, "All credential fields are required if any one is specified")
			}
		}
	}
	hasCreds := len(vs.VCenters) > 0 || legacy
	servers := map[string]bool{}
	for _, vc := range vs.VCenters {
		servers[vc.Server] = true
	}
	for i, fd := range vs.FailureDomains {
		p := fmt.Sprintf("platform.vsphere.failureDomains[%d]", i)
		if hasCreds && fd.Topology.Folder == "" {
			e.required(p+".topology.folder", "must specify a folder for agent-based installs")
		}
		if len(vs.VCenters) > 0 && fd.Server != "" && !servers[fd.Server] {
			e.invalid(p+".server", fd.Server, "server does not exist in vcenters")
		}
	}
}

func validateNutanix(e *errs, nx *NutanixPlatform) {
	pc := nx.PrismCentral
	if pc.Endpoint.Address == "" {
		e.required("platform.nutanix.prismCentral.endpoint.address", "must specify the Prism Central endpoint address")
	}
	if pc.Endpoint.Port < 1 || pc.Endpoint.Port > 65535 {
		e.invalid("platform.nutanix.prismCentral.endpoint.port", pc.Endpoint.Port, "The Prism Central endpoint port is invalid, must be in the range of 1 to 65535")
	}
	if pc.Username == "" {
		e.required("platform.nutanix.prismCentral.username", "must specify the Prism Central username")
	}
	if pc.Password == "" {
		e.required("platform.nutanix.prismCentral.password", "must specify the Prism Central password")
	}
	if len(nx.PrismElements) == 0 {
		e.required("platform.nutanix.prismElements", "must specify one Prism Element")
	}
	for i, pe := range nx.PrismElements {
		if pe.UUID == "" {
			e.required(fmt.Sprintf("platform.nutanix.prismElements[%d].uuid", i), "must specify the Prism Element UUID")
		}
	}
	if len(nx.SubnetUUIDs) == 0 {
		e.required("platform.nutanix.subnetUUIDs", "must specify at least one subnet")
	}
	seen := map[string]bool{}
	for i, s := range nx.SubnetUUIDs {
		if seen[s] {
			e.invalid(fmt.Sprintf("platform.nutanix.subnetUUIDs[%d]", i), s, "should not configure duplicate value")
		}
		seen[s] = true
	}
}

func validatePools(e *errs, ic *InstallConfig) {
	cp := ic.ControlPlane
	if cp.Name != "" && cp.Name != "master" {
		e.unsupported("controlPlane.name", cp.Name, "master")
	}
	cpArchOK := slices.Contains(arch.SupportedGo(), cp.Architecture)
	if !cpArchOK {
		unsupportedArch(e, "controlPlane.architecture", cp.Architecture)
	}
	if cp.Hyperthreading != "Enabled" && cp.Hyperthreading != "Disabled" {
		e.unsupported("controlPlane.hyperthreading", cp.Hyperthreading, "Enabled", "Disabled")
	}
	replicas := ic.ControlPlaneReplicas()
	arbiter := ic.ArbiterReplicas()
	// Two nodes with fencing: whether the release can apply it is checked
	// by ValidateFencingRelease.
	twoNodeOK := (arbiter > 0 && ic.FeatureGateOn("HighlyAvailableArbiter")) ||
		(cp.Fencing != nil && len(cp.Fencing.Credentials) > 0)
	switch {
	case replicas <= 0:
		e.invalid("controlPlane.replicas", replicas, "number of control plane replicas must be positive")
	case replicas == 2 && twoNodeOK:
	case replicas == 1, replicas == 3, replicas == 4, replicas == 5:
	default:
		allowed := []string{"3", "1", "4", "5"}
		if ic.FeatureGateOn("HighlyAvailableArbiter") {
			allowed = append(allowed, "2 (with arbiter)")
		}
		if ic.FeatureGateOn("DualReplica") {
			allowed = append(allowed, "2 (with fencing)")
		}
		e.unsupported("controlPlane.replicas", replicas, allowed...)
	}
	validateFencing(e, ic)
	for i, c := range ic.Compute {
		p := fmt.Sprintf("compute[%d]", i)
		if c.Name != "worker" {
			e.unsupported(p+".name", c.Name, "worker")
		}
		if c.Replicas != nil && *c.Replicas < 0 {
			e.invalid(p+".replicas", *c.Replicas, "must not be negative")
		}
		_, written := e.lines[p+".architecture"]
		switch {
		case !cpArchOK && c.Architecture == cp.Architecture && !written:
			// The default copied from controlPlane.architecture: its
			// error is already reported, at the line the user wrote.
		case !slices.Contains(arch.SupportedGo(), c.Architecture):
			unsupportedArch(e, p+".architecture", c.Architecture)
		case c.Architecture != cp.Architecture:
			e.invalid(p+".architecture", c.Architecture, "heteregeneous multi-arch is not supported; compute pool architecture must match control plane (%s)", cp.Architecture)
		}
		if c.Hyperthreading != "Enabled" && c.Hyperthreading != "Disabled" {
			e.unsupported(p+".hyperthreading", c.Hyperthreading, "Enabled", "Disabled")
		}
	}
	if ic.Arbiter != nil {
		if !ic.FeatureGateOn("HighlyAvailableArbiter") && arbiter > 0 {
			e.forbidden("arbiter", "HighlyAvailableArbiter feature must be enabled in order to use arbiter cluster deployment; add featureGates: [HighlyAvailableArbiter=true] or featureSet: TechPreviewNoUpgrade")
		}
		if arbiter > 0 && ic.Platform.BareMetal == nil && ic.Platform.None == nil {
			e.forbidden("arbiter", "arbiter clusters are supported only on platform baremetal or none")
		}
		if arbiter > 0 && replicas < 2 {
			e.forbidden("arbiter", "an arbiter cluster needs at least 2 control plane replicas")
		}
	}
	// Single-node OpenShift.
	if replicas == 1 {
		p := ic.Platform.PlatformName()
		compute := ic.ComputeReplicas()
		if p != "none" && p != "external" && slices.Contains(supportedPlatforms, p) {
			e.invalid("platform", p, "Only platform none and external supports 1 ControlPlane and 0 Compute nodes")
		} else if compute > 0 {
			e.forbidden("compute.replicas", "Total number of compute replicas must be 0 when controlPlane.replicas is 1 for platform none or external. Found %d", compute)
		}
		if ic.Networking.NetworkType != "OVNKubernetes" {
			e.invalid("networking.networkType", ic.Networking.NetworkType, "Only OVNKubernetes network type is allowed for Single Node OpenShift (SNO) cluster")
		}
		if arbiter > 0 {
			e.forbidden("arbiter.replicas", "Total number of arbiter replicas must be 0 when controlPlane.replicas is 1. Found %d", arbiter)
		}
	}
}

func validateNetworking(e *errs, ic *InstallConfig) {
	n := ic.Networking
	switch n.NetworkType {
	case "OVNKubernetes", "OpenShiftSDN":
	default:
		if n.NetworkType == "" {
			e.required("networking.networkType", "set OVNKubernetes")
		}
	}
	type named struct {
		path string
		pfx  netip.Prefix
	}
	var all []named
	v4, v6 := 0, 0
	for i, m := range n.MachineNetwork {
		p := fmt.Sprintf("networking.machineNetwork[%d].cidr", i)
		pfx, err := netip.ParsePrefix(m.CIDR)
		if err != nil {
			e.invalid(p, m.CIDR, "not a CIDR, e.g. 192.168.111.0/24")
			continue
		}
		subnetCIDR(e, p, m.CIDR, pfx)
		all = append(all, named{p, pfx.Masked()})
		if pfx.Addr().Is4() {
			v4++
		} else {
			v6++
		}
	}
	for i, c := range n.ClusterNetwork {
		p := fmt.Sprintf("networking.clusterNetwork[%d]", i)
		pfx, err := netip.ParsePrefix(c.CIDR)
		if err != nil {
			e.invalid(p+".cidr", c.CIDR, "not a CIDR, e.g. 10.128.0.0/14")
			continue
		}
		subnetCIDR(e, p+".cidr", c.CIDR, pfx)
		all = append(all, named{p + ".cidr", pfx.Masked()})
		bits := 32
		if pfx.Addr().Is6() {
			bits = 128
		}
		if c.HostPrefix < 0 || int(c.HostPrefix) > bits {
			e.invalid(p+".hostPrefix", c.HostPrefix, "must be between %d and %d", pfx.Bits(), bits)
		} else if int(c.HostPrefix) < pfx.Bits() {
			e.invalid(p+".hostPrefix", c.HostPrefix, "cluster network prefix length %d is larger than host prefix %d", pfx.Bits(), c.HostPrefix)
		}
		if n.NetworkType == "OpenShiftSDN" && pfx.Addr().Is6() {
			e.invalid(p+".cidr", c.CIDR, "clusterNetwork CIDR is IPv6 and is not compatible with networkType OpenShiftSDN")
		}
	}
	sv4, sv6 := 0, 0
	for i, s := range n.ServiceNetwork {
		p := fmt.Sprintf("networking.serviceNetwork[%d]", i)
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			e.invalid(p, s, "not a CIDR, e.g. 172.30.0.0/16")
			continue
		}
		subnetCIDR(e, p, s, pfx)
		all = append(all, named{p, pfx.Masked()})
		if pfx.Addr().Is4() {
			sv4++
		} else {
			sv6++
		}
	}
	if len(n.ServiceNetwork) > 2 {
		e.add("networking.serviceNetwork", TypeTooMany, len(n.ServiceNetwork), "must have at most 2 items")
	}
	if v4 > 0 && v6 > 0 && (sv4 == 0 || sv6 == 0) {
		e.invalid("networking.serviceNetwork", strings.Join(n.ServiceNetwork, ","), "when installing dual-stack IPv4/IPv6 you must provide two service networks, one for each IP address type")
	}
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			if all[i].pfx.Overlaps(all[j].pfx) {
				e.invalid(all[j].path, all[j].pfx.String(), "overlaps with %s (%s)", all[i].path, all[i].pfx)
			}
		}
	}
}

// subnetCIDR refuses a network whose address is unspecified or has host
// bits set, in the installer's words (openshift/installer pkg/validate
// SubnetCIDR, which validateNetworking runs on every machine, cluster and
// service network).
func subnetCIDR(e *errs, path, given string, pfx netip.Prefix) {
	switch {
	case pfx.Addr().IsUnspecified():
		e.invalid(path, given, "address must be specified")
	case pfx != pfx.Masked():
		e.invalid(path, given, "invalid network address. got %s, expecting %s", pfx, pfx.Masked())
	}
}

func validateVIPs(e *errs, ic *InstallConfig) {
	var pname string
	switch {
	case ic.Platform.BareMetal != nil:
		pname = "baremetal"
	case ic.Platform.VSphere != nil:
		pname = "vsphere"
	case ic.Platform.Nutanix != nil:
		pname = "nutanix"
	default:
		return
	}
	api, ingress := ic.Platform.APIVIPs(), ic.Platform.IngressVIPs()
	base := "platform." + pname
	switch {
	case len(api) == 0 && len(ingress) == 0:
		e.required(base+".apiVIPs", "must specify at least one VIP for the API")
		e.required(base+".ingressVIPs", "must specify at least one VIP for the Ingress")
	case len(api) == 0:
		e.required(base+".apiVIPs", "must specify VIP for API, when VIP for ingress is set")
	case len(ingress) == 0:
		e.required(base+".ingressVIPs", "must specify VIP for ingress, when VIP for API is set")
	}
	userLB := ic.Platform.userManagedLB()
	check := func(field string, list []string, what string) []netip.Addr {
		var out []netip.Addr
		p := base + "." + field
		if len(list) > 2 {
			e.add(p, TypeTooMany, len(list), "must have at most 2 items")
		}
		for i, v := range list {
			ip, err := netip.ParseAddr(v)
			if err != nil || ip.Zone() != "" {
				e.invalid(fmt.Sprintf("%s[%d]", p, i), v, "%q is not a valid IP", v)
				continue
			}
			out = append(out, ip)
			if !userLB && !ic.MachineNetworkContains(ip) {
				e.invalid(fmt.Sprintf("%s[%d]", p, i), v, "IP expected to be in one of the machine networks: %s", ic.machineCIDRs())
			}
		}
		if len(out) == 2 && out[0].Is4() == out[1].Is4() {
			e.invalid(p, strings.Join(list, ","), "If two %s VIPs are given, one must be an IPv4 address, the other an IPv6", what)
		}
		return out
	}
	apiIPs := check("apiVIPs", api, "API")
	ingIPs := check("ingressVIPs", ingress, "Ingress")
	if !userLB {
		for i, a := range apiIPs {
			if slices.Contains(ingIPs, a) {
				e.invalid(fmt.Sprintf("%s.apiVIPs[%d]", base, i), a.String(), "VIP for API must not be one of the Ingress VIPs")
			}
		}
	}
}

func validateCapabilities(e *errs, ic *InstallConfig) {
	c := ic.Capabilities
	if c == nil {
		return
	}
	switch c.BaselineCapabilitySet {
	case "", "None", "vCurrent", "v4.11", "v4.12", "v4.13", "v4.14", "v4.15", "v4.16", "v4.17", "v4.18", "v4.19", "v4.20":
	default:
		e.unsupported("capabilities.baselineCapabilitySet", c.BaselineCapabilitySet, "None", "vCurrent", "v4.11", "...", "v4.20")
	}
	if c.BaselineCapabilitySet == "None" {
		has := func(n string) bool { return slices.Contains(c.AdditionalEnabledCapabilities, n) }
		if !has("Ingress") {
			e.invalid("capabilities.additionalEnabledCapabilities", strings.Join(c.AdditionalEnabledCapabilities, ","), "the Ingress capability is required; add Ingress")
		}
		if ic.Platform.BareMetal != nil && !has("baremetal") {
			e.invalid("capabilities.additionalEnabledCapabilities", strings.Join(c.AdditionalEnabledCapabilities, ","), "platform baremetal requires the baremetal capability; add baremetal")
		}
		if has("marketplace") && !has("OperatorLifecycleManager") {
			e.invalid("capabilities.additionalEnabledCapabilities", strings.Join(c.AdditionalEnabledCapabilities, ","), "the marketplace capability requires the OperatorLifecycleManager capability")
		}
	}
}

// ValidatePullSecret checks a pull secret: JSON with non-empty "auths",
// each entry with a base64 "auth" or a "credsStore".
func ValidatePullSecret(ps string) error {
	if strings.TrimSpace(ps) == "" {
		return fmt.Errorf("the pull secret is empty; paste the JSON from console.redhat.com or your mirror registry")
	}
	var doc struct {
		Auths map[string]map[string]any `json:"auths"`
	}
	if err := json.Unmarshal([]byte(ps), &doc); err != nil {
		return fmt.Errorf("the pull secret is not valid JSON: %v", err)
	}
	if len(doc.Auths) == 0 {
		return fmt.Errorf("auths required: the pull secret needs an \"auths\" object with one entry per registry")
	}
	regs := make([]string, 0, len(doc.Auths))
	for r := range doc.Auths {
		regs = append(regs, r)
	}
	slices.Sort(regs)
	for _, r := range regs {
		entry := doc.Auths[r]
		auth, hasAuth := entry["auth"].(string)
		_, hasStore := entry["credsStore"]
		if !hasAuth && !hasStore {
			return fmt.Errorf("%q requires either auth or credsStore", r)
		}
		if hasAuth {
			if _, err := base64.StdEncoding.DecodeString(auth); err != nil {
				return fmt.Errorf("the auth of %q is not valid base64: %v", r, err)
			}
		}
	}
	return nil
}

// ValidateSSHKey checks every non-empty line is an authorized_keys key.
func ValidateSSHKey(key string) error {
	n := 0
	for _, line := range strings.Split(key, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line)); err != nil {
			return fmt.Errorf("not a valid SSH public key (expected e.g. \"ssh-ed25519 AAAA... user@host\"): %v", err)
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("no SSH public key found")
	}
	return nil
}

// ValidateCABundle checks that b is one or more PEM certificates.
func ValidateCABundle(b []byte) error {
	n := 0
	rest := b
	for {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			return fmt.Errorf("unexpected PEM block %q; only CERTIFICATE blocks are allowed", blk.Type)
		}
		if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
			return fmt.Errorf("certificate %d does not parse: %v", n+1, err)
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("no PEM certificate found")
	}
	if strings.TrimSpace(string(rest)) != "" {
		return fmt.Errorf("unexpected text after the last certificate")
	}
	return nil
}

// unsupportedArch reports an architecture install-config.yaml does not
// take, with a did-you-mean: the machine pools use the Go spelling (amd64,
// arm64), as upstream's install-config does, while agentiso's own messages
// and file names use the RPM one (x86_64, aarch64).
func unsupportedArch(e *errs, path, v string) {
	want := ""
	if g, ok := arch.Go(v); ok {
		want = g
	} else if c := suggest.Closest(v, append(arch.SupportedGo(), arch.Supported()...)); c != "" {
		want, _ = arch.Go(c)
	}
	q := make([]string, 0, 4)
	for _, s := range arch.SupportedGo() {
		q = append(q, fmt.Sprintf("%q", s))
	}
	detail := "supported values: " + strings.Join(q, ", ")
	if want != "" {
		if r, _ := arch.RPM(want); r != want {
			detail = fmt.Sprintf("did you mean %q? install-config.yaml names architectures as Go does (%s is %s); %s", want, r, want, detail)
		} else {
			detail = fmt.Sprintf("did you mean %q? %s", want, detail)
		}
	}
	e.add(path, TypeUnsupported, v, "%s", detail)
}
