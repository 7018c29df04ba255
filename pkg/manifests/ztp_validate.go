package manifests

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"

	"github.com/seed-a052040e/agentiso/pkg/arch"
)

// NormalizeSecret fills stringData from base64 data, as upstream does.
func NormalizeSecret(s *Secret) {
	if s.StringData == nil && len(s.Data) > 0 {
		s.StringData = map[string]string{}
	}
	for k, v := range s.Data {
		if _, ok := s.StringData[k]; !ok {
			s.StringData[k] = string(v)
		}
	}
}

// PullSecretJSON returns the .dockerconfigjson content of the Secret.
func (s *Secret) PullSecretJSON() string { return s.StringData[".dockerconfigjson"] }

// ValidateSecret checks a user-supplied pull-secret Secret.
func ValidateSecret(s *Secret, lines Lines) error {
	e := newErrs(assetdir.PullSecret, lines)
	switch {
	case len(s.StringData) == 0:
		e.required("stringData", "the pull secret is empty; put the pull secret JSON under stringData.\".dockerconfigjson\"")
	default:
		v, ok := s.StringData[".dockerconfigjson"]
		switch {
		case !ok:
			e.required("stringData", "the pull secret key '.dockerconfigjson' is not defined")
		case strings.TrimSpace(v) == "":
			e.required("stringData", "the pull secret does not contain any data")
		default:
			if err := ValidatePullSecret(v); err != nil {
				e.invalid("stringData", nil, "%v", err)
			}
		}
	}
	return e.err()
}

// NormalizeInfraEnv rewrites Go arch names to RPM names.
func NormalizeInfraEnv(ie *InfraEnv) {
	if ie.Spec.CPUArchitecture != "" {
		ie.Spec.CPUArchitecture = ArchToRPM(ie.Spec.CPUArchitecture)
	}
}

// ValidateInfraEnv checks a user-supplied InfraEnv.
func ValidateInfraEnv(ie *InfraEnv, lines Lines) error {
	e := newErrs(assetdir.InfraEnv, lines)
	if a := ie.Spec.CPUArchitecture; a != "" && !slices.Contains(arch.Supported(), a) {
		e.unsupported("spec.cpuArchitecture", a, arch.Supported()...)
	}
	if ie.Metadata.Name == "" {
		e.required("metadata.name", "the InfraEnv needs a name")
	}
	if ie.Spec.PullSecretRef == nil || ie.Spec.PullSecretRef.Name == "" {
		e.required("spec.pullSecretRef.name", "name the pull-secret Secret (cluster-manifests/pull-secret.yaml metadata.name)")
	}
	if ie.Spec.SSHAuthorizedKey != "" {
		if err := ValidateSSHKey(ie.Spec.SSHAuthorizedKey); err != nil {
			e.invalid("spec.sshAuthorizedKey", nil, "%v", err)
		}
	}
	for i, s := range ie.Spec.AdditionalNTPSources {
		if _, err := netip.ParseAddr(s); err != nil && !dnsName.MatchString(s) {
			e.invalid(fmt.Sprintf("spec.additionalNTPSources[%d]", i), s, "NTP source is not a valid domain name nor a valid IP")
		}
	}
	return e.err()
}

var platformTypes = map[string]string{"baremetal": "BareMetal", "none": "None", "vsphere": "VSphere", "nutanix": "Nutanix", "external": "External"}

// NormalizeACI applies upstream's defaults to a user-supplied ACI and
// returns notes about what it changed.
func NormalizeACI(aci *AgentClusterInstall) []string {
	var notes []string
	if pt, ok := platformTypes[strings.ToLower(aci.Spec.PlatformType)]; ok && pt != aci.Spec.PlatformType {
		aci.Spec.PlatformType = pt
	}
	if aci.Spec.PlatformType == "" {
		aci.Spec.PlatformType = "BareMetal"
		if aci.Spec.ProvisionRequirements.ControlPlaneAgents == 1 {
			aci.Spec.PlatformType = "None"
		}
	}
	if aci.Spec.Networking.UserManagedNetworking == nil {
		umn := aci.Spec.PlatformType == "None" || aci.Spec.PlatformType == "External"
		aci.Spec.Networking.UserManagedNetworking = &umn
	}
	if aci.Spec.Networking.NetworkType == "" {
		aci.Spec.Networking.NetworkType = "OVNKubernetes"
		notes = append(notes, "NetworkType is not specified in AgentClusterInstall. Defaulting NetworkType to OVNKubernetes.")
	}
	return notes
}

// ValidateACI checks a user-supplied AgentClusterInstall.
func ValidateACI(aci *AgentClusterInstall, lines Lines) error {
	e := newErrs(assetdir.AgentClusterInstall, lines)
	s := aci.Spec
	switch s.PlatformType {
	case "BareMetal", "None", "VSphere", "Nutanix", "External":
	default:
		e.unsupported("spec.platformType", s.PlatformType, "BareMetal", "None", "VSphere", "Nutanix", "External")
	}
	if (s.PlatformType == "None" || s.PlatformType == "External") && s.Networking.UserManagedNetworking != nil && !*s.Networking.UserManagedNetworking {
		e.forbidden("spec.networking.userManagedNetworking", "%s platform requires user-managed networking; set it to true", s.PlatformType)
	}
	if s.ProvisionRequirements.ControlPlaneAgents <= 0 {
		e.required("spec.provisionRequirements.controlPlaneAgents", "must be at least 1")
	}
	if s.ClusterDeploymentRef.Name == "" {
		e.required("spec.clusterDeploymentRef.name", "name the ClusterDeployment (cluster-manifests/cluster-deployment.yaml metadata.name)")
	}
	if s.ImageSetRef == nil || s.ImageSetRef.Name == "" {
		e.required("spec.imageSetRef.name", "name the ClusterImageSet (cluster-manifests/cluster-image-set.yaml metadata.name)")
	}
	hosts := s.ProvisionRequirements.ControlPlaneAgents + s.ProvisionRequirements.ArbiterAgents + s.ProvisionRequirements.WorkerAgents
	for i, c := range s.Networking.ClusterNetwork {
		p := fmt.Sprintf("spec.networking.clusterNetwork[%d]", i)
		pfx, err := netip.ParsePrefix(c.CIDR)
		if err != nil {
			e.invalid(p+".cidr", c.CIDR, "error parsing the clusterNetwork CIDR")
			continue
		}
		networkCIDR(e, p+".cidr", c.CIDR, pfx)
		if s.Networking.NetworkType == "OpenShiftSDN" && pfx.Addr().Is6() {
			e.required("spec.networking.networkType", "clusterNetwork CIDR is IPv6 and is not compatible with networkType OpenShiftSDN")
		}
		if s.Networking.NetworkType == "OVNKubernetes" {
			bits := pfx.Addr().BitLen()
			if int(c.HostPrefix) > bits-7 {
				e.invalid(p+".hostPrefix", c.HostPrefix, "must be at most %d", bits-7)
			} else if c.HostPrefix > 0 && int(c.HostPrefix) >= pfx.Bits() && hosts > 0 {
				avail := int(c.HostPrefix) - pfx.Bits()
				if avail < 63 && 1<<avail < hosts {
					e.invalid(p+".cidr", c.CIDR, "prefix length %d not large enough to accommodate %d hosts with hostPrefix length %d", pfx.Bits(), hosts, c.HostPrefix)
				}
			}
		}
	}
	for i, sn := range s.Networking.ServiceNetwork {
		pfx, err := netip.ParsePrefix(sn)
		if err != nil {
			e.invalid(fmt.Sprintf("spec.networking.serviceNetwork[%d]", i), sn, "not a CIDR")
			continue
		}
		networkCIDR(e, fmt.Sprintf("spec.networking.serviceNetwork[%d]", i), sn, pfx)
		if s.Networking.NetworkType == "OpenShiftSDN" && pfx.Addr().Is6() {
			e.required("spec.networking.networkType", "serviceNetwork CIDR is IPv6 and is not compatible with networkType OpenShiftSDN")
		}
	}
	for i, m := range s.Networking.MachineNetwork {
		p := fmt.Sprintf("spec.networking.machineNetwork[%d].cidr", i)
		if pfx, err := netip.ParsePrefix(m.CIDR); err != nil {
			e.invalid(p, m.CIDR, "not a CIDR")
		} else {
			networkCIDR(e, p, m.CIDR, pfx)
		}
	}
	if d := s.DiskEncryption; d != nil {
		switch d.EnableOn {
		case "", "none", "all", "masters", "workers":
		default:
			e.unsupported("spec.diskEncryption.enableOn", d.EnableOn, "none", "all", "masters", "workers")
		}
		switch d.Mode {
		case "", "tpmv2", "tang":
		default:
			e.unsupported("spec.diskEncryption.mode", d.Mode, "tpmv2", "tang")
		}
		if d.Mode == "tang" && d.TangServers == "" {
			e.required("spec.diskEncryption.tangServers", "tang mode needs tangServers (a JSON list of {url, thumbprint})")
		}
	}
	if ann := aci.Metadata.Annotations["agent-install.openshift.io/install-config-overrides"]; ann != "" {
		var m map[string]any
		if err := json.Unmarshal([]byte(ann), &m); err != nil {
			e.invalid("metadata.annotations[agent-install.openshift.io/install-config-overrides]", nil, "must be a JSON object: %v", err)
		}
	}
	return e.err()
}

// ValidateClusterDeployment checks a user-supplied ClusterDeployment.
func ValidateClusterDeployment(cd *ClusterDeployment, lines Lines) error {
	e := newErrs(assetdir.ClusterDeployment, lines)
	if cd.Spec.ClusterName == "" {
		e.required("spec.clusterName", "the cluster name is required")
	} else if !dns1123Label.MatchString(cd.Spec.ClusterName) {
		e.invalid("spec.clusterName", cd.Spec.ClusterName, "must be lower-case letters, digits and '-'")
	}
	if cd.Spec.BaseDomain == "" {
		e.required("spec.baseDomain", "the base DNS domain is required")
	} else if !dns1123Subdomain.MatchString(cd.Spec.BaseDomain) {
		e.invalid("spec.baseDomain", cd.Spec.BaseDomain, "must be a valid DNS subdomain")
	}
	if cd.Spec.PullSecretRef == nil || cd.Spec.PullSecretRef.Name == "" {
		e.required("spec.pullSecretRef.name", "name the pull-secret Secret")
	}
	return e.err()
}

// ValidateClusterImageSet checks the ClusterImageSet against the release
// image this agentiso build installs.
func ValidateClusterImageSet(cis *ClusterImageSet, lines Lines, releaseImage string) error {
	e := newErrs(assetdir.ClusterImageSet, lines)
	switch {
	case cis.Spec.ReleaseImage == "":
		e.required("spec.releaseImage", "the release image pull spec is required")
	case cis.Spec.ReleaseImage != releaseImage:
		e.forbidden("spec.releaseImage", "value must be equal to %s (the release image of this run; pass --release-image %s to install that one instead)", releaseImage, cis.Spec.ReleaseImage)
	}
	return e.err()
}

// ValidateNMStateConfigs checks user NMStateConfigs one by one: each must
// carry labels, and its interface table and NMState must be well formed.
// CheckNMStateConfigLabels checks the labels against the InfraEnv.
func ValidateNMStateConfigs(list []NMStateConfig, lines []Lines) error {
	var all ErrorList
	for i, n := range list {
		var l Lines
		if i < len(lines) {
			l = lines[i]
		}
		e := newErrs(assetdir.NMStateConfig, l)
		doc := fmt.Sprintf("document %d (%s)", i+1, n.Metadata.Name)
		if len(n.Metadata.Labels) == 0 {
			e.required("metadata.labels", "%s does not have any label set; add %s: <infraenv name>", doc, InfraEnvLabel)
		}
		if len(n.Spec.Config) > 0 && string(n.Spec.Config) != "null" {
			validateNMState(e, "spec.config", n.Spec.Config)
			if nc, err := ParseNetworkConfig(n.Spec.Config); err == nil {
				if len(n.Spec.Interfaces) > 0 {
					for _, u := range nc.UnmappedNICs(n.Spec.Interfaces) {
						e.invalid(unmappedPath("spec.config", u), u.Name, "%s: %s", doc, unmappedDetail(u, "spec.interfaces"))
					}
				}
				for _, c := range nc.MACConflicts(n.Spec.Interfaces) {
					cfgPath := fmt.Sprintf("spec.config.interfaces[%d].mac-address", c.Config)
					e.invalid(fmt.Sprintf("spec.interfaces[%d].macAddress", c.Table), c.TableMAC, "%s: %s", doc, macConflictDetail(c, e.where(cfgPath)))
				}
			}
		}
		if len(n.Spec.Config) > 0 && len(n.Spec.Interfaces) == 0 {
			e.required("spec.interfaces", "at least one interface for host %d must be provided", i)
		}
		seenName, seenMAC := map[string]bool{}, map[string]bool{}
		for j, itf := range n.Spec.Interfaces {
			p := fmt.Sprintf("spec.interfaces[%d]", j)
			if strings.Contains(itf.MACAddress, "-") {
				e.invalid(p+".macAddress", itf.MACAddress, "MAC address %s for host %d is incorrectly formatted, use XX:XX:XX:XX:XX:XX format", itf.MACAddress, i)
			}
			if seenName[itf.Name] || seenMAC[NormalizeMAC(itf.MACAddress)] {
				e.add(p, TypeDuplicate, itf.Name, "MACs and Interfaces for host %d must be unique", i)
			}
			seenName[itf.Name], seenMAC[NormalizeMAC(itf.MACAddress)] = true, true
		}
		all = append(all, e.list...)
	}
	return all.OrNil()
}

// selectorPath is where an InfraEnv names the labels of its NMStateConfigs.
const selectorPath = "spec.nmStateConfigLabelSelector.matchLabels"

// CheckNMStateConfigLabels checks that every NMStateConfig's labels equal
// the InfraEnv's spec.nmStateConfigLabelSelector.matchLabels exactly: no
// label missing, none extra. That is the rule of the real
// agent-installer-client (assisted-service cmd/agentbasedinstaller/
// register.go, validateNMStateConfigAndInfraEnv, the same on
// release-4.18 ... release-4.23 and master): it compares the two label
// maps as a whole, before registering the infra-env, and fails on any
// difference; agent-register-infraenv.service then restarts it forever
// and no host is ever configured. The client also refuses an empty
// selector and an NMStateConfig without labels. It reads only the first
// document of nmstateconfig.yaml; agentiso checks them all.
//
// ieLines locates the InfraEnv's fields (nil when agentiso generated it).
// generated says the NMStateConfigs are agentiso's own, made from
// agent-config.yaml hosts: a mismatch is then reported at the user's
// infraenv.yaml.
func CheckNMStateConfigLabels(list []NMStateConfig, lines []Lines, ie *InfraEnv, ieLines Lines, generated bool) error {
	if len(list) == 0 || ie == nil {
		return nil
	}
	want := ie.Spec.NMStateConfigLabelSelector.MatchLabels
	ieErrs := newErrs(assetdir.InfraEnv, ieLines)
	if len(want) == 0 {
		ieErrs.required(selectorPath, "%s holds %d NMStateConfig(s), and the agent-installer-client refuses to register an InfraEnv whose selector has no labels while NMStateConfigs exist; set it to the NMStateConfigs' labels, e.g. {%s: %s}",
			assetdir.NMStateConfig, len(list), InfraEnvLabel, ie.Metadata.Name)
		return ieErrs.err()
	}
	if generated {
		got := list[0].Metadata.Labels
		if !maps.Equal(got, want) {
			ieErrs.invalid(selectorPath, formatLabels(want),
				"the NMStateConfigs agentiso generates from the hosts' networkConfig carry the labels %s, and the agent-installer-client requires the selector to equal them exactly (it retries forever otherwise); set matchLabels to %s, or supply %s with labels %s",
				formatLabels(got), formatLabels(got), assetdir.NMStateConfig, formatLabels(want))
		}
		return ieErrs.err()
	}
	var all ErrorList
	where := assetdir.InfraEnv
	if n := ieLines.Line(selectorPath); n > 0 {
		where = fmt.Sprintf("%s:%d", assetdir.InfraEnv, n)
	}
	for i, n := range list {
		if len(n.Metadata.Labels) == 0 || maps.Equal(n.Metadata.Labels, want) {
			continue // no labels at all is reported by ValidateNMStateConfigs
		}
		var l Lines
		if i < len(lines) {
			l = lines[i]
		}
		e := newErrs(assetdir.NMStateConfig, l)
		e.invalid("metadata.labels", formatLabels(n.Metadata.Labels),
			"labels do not match the InfraEnv: document %d (%s) must carry exactly the labels of %s %s %s (no label missing, none extra), or the agent-installer-client refuses the InfraEnv and retries forever; set metadata.labels to %s",
			i+1, n.Metadata.Name, where, selectorPath, formatLabels(want), formatLabels(want))
		all = append(all, e.list...)
	}
	return all.OrNil()
}

// formatLabels renders labels as a YAML flow mapping with sorted keys.
func formatLabels(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + m[k]
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// networkCIDR refuses a network whose routing prefix is the unspecified
// address or that has host bits set, as assisted-service does for every
// network of an AgentClusterInstall (release-4.20
// internal/network/cidr_validations.go verifySubnetCIDR) - on the
// rendezvous host, after boot, unless refused here.
func networkCIDR(e *errs, path, given string, pfx netip.Prefix) {
	switch {
	case pfx.Masked().Addr().IsUnspecified():
		e.invalid(path, given, "the CIDR %s is invalid because its routing prefix is the unspecified address", given)
	case pfx != pfx.Masked():
		e.invalid(path, given, "%s is not a valid network CIDR", pfx)
	}
}
