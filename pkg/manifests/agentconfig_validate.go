package manifests

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

var dnsName = regexp.MustCompile(`^([a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?\.)*[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?\.?$`)

// grubSpecial are the characters GRUB's script syntax treats specially
// outside quotes (besides whitespace, quotes, $ and \, refused already).
const grubSpecial = ";|&<>{}`"

// ValidateAgentConfig checks agent-config.yaml on its own: versions,
// addresses, URLs, NTP sources and every host entry.
func ValidateAgentConfig(ac *AgentConfig, lines Lines) error {
	e := newErrs(assetdir.AgentConfig, lines)
	switch ac.APIVersion {
	case "":
		e.required("apiVersion", "no version was provided; use \"v1beta1\"")
	case "v1alpha1", "v1beta1":
	default:
		e.invalid("apiVersion", ac.APIVersion, "cannot upconvert from version %s; use \"v1beta1\"", ac.APIVersion)
	}
	if ac.Kind != "" && ac.Kind != "AgentConfig" {
		e.invalid("kind", ac.Kind, "must be AgentConfig")
	}
	if ac.RendezvousIP != "" {
		if _, err := netip.ParseAddr(ac.RendezvousIP); err != nil {
			e.invalid("rendezvousIP", ac.RendezvousIP, "%q is not a valid IP", ac.RendezvousIP)
		}
	}
	if ac.BootArtifactsBaseURL != "" {
		u, err := url.Parse(ac.BootArtifactsBaseURL)
		switch {
		case err != nil || u.Scheme == "" || u.Host == "":
			e.invalid("bootArtifactsBaseURL", ac.BootArtifactsBaseURL, "invalid URI %q (no scheme); use e.g. http://10.0.0.1:8080/boot", ac.BootArtifactsBaseURL)
		case u.Scheme != "http" && u.Scheme != "https":
			e.invalid("bootArtifactsBaseURL", ac.BootArtifactsBaseURL, "hosts download boot artifacts over http or https, not %s; use e.g. http://10.0.0.1:8080/boot", u.Scheme)
		case strings.ContainsAny(ac.BootArtifactsBaseURL, "?#"):
			// Even an empty one: "/boot?" + "/agent.x86_64-rootfs.img"
			// makes the query, and the fetch goes to /boot.
			e.invalid("bootArtifactsBaseURL", ac.BootArtifactsBaseURL, "it has a query or a fragment (\"?\" or \"#\"), even an empty one: "+
				"the file names are appended to the URL, so %s/%s would fetch the base URL itself; serve the files under a plain path",
				ac.BootArtifactsBaseURL, "agent.x86_64-rootfs.img")
		case strings.ContainsAny(ac.BootArtifactsBaseURL, " \t\r\n\"'$\\"):
			e.invalid("bootArtifactsBaseURL", ac.BootArtifactsBaseURL, "the URL goes into kernel arguments and an iPXE script: no spaces, quotes, $, \\, query or fragment")
		case strings.ContainsAny(ac.BootArtifactsBaseURL, grubSpecial):
			// The minimal ISO's grub.cfg carries the rootfs URL on its
			// linux line, where GRUB's script syntax splits commands at
			// these characters (and iPXE treats some of them too).
			c := ac.BootArtifactsBaseURL[strings.IndexAny(ac.BootArtifactsBaseURL, grubSpecial)]
			e.invalid("bootArtifactsBaseURL", ac.BootArtifactsBaseURL, "it contains %q, which GRUB's linux line in the minimal ISO would take as a command separator or redirection; "+
				"percent-encode it (%%%02X) or serve the files under a path without it", string(c), c)
		}
	}
	for i, s := range ac.AdditionalNTPSources {
		if _, err := netip.ParseAddr(s); err == nil {
			continue
		}
		if !dnsName.MatchString(s) {
			e.invalid(fmt.Sprintf("additionalNTPSources[%d]", i), s, "NTP source is not a valid domain name nor a valid IP")
		}
	}
	known := map[string]bool{"belongs-to-majority-group": true, "belongs-to-machine-cidr": true, "ntp-synced": true,
		"container-images-available": true, "sufficient-network-latency-requirement-for-role": true,
		"sufficient-packet-loss-requirement-for-role": true, "has-default-route": true, "api-domain-name-resolved-correctly": true,
		"api-int-domain-name-resolved-correctly": true, "apps-domain-name-resolved-correctly": true, "dns-wildcard-not-configured": true,
		"non-overlapping-subnets": true, "mtu-valid": true}
	for i, v := range ac.DisabledHostValidations {
		if !known[v] {
			e.invalid(fmt.Sprintf("disabledHostValidations[%d]", i), v, "not a host validation agentiso lets you disable; use one of belongs-to-majority-group, belongs-to-machine-cidr, ntp-synced, container-images-available, sufficient-network-latency-requirement-for-role, sufficient-packet-loss-requirement-for-role, has-default-route, api-domain-name-resolved-correctly, api-int-domain-name-resolved-correctly, apps-domain-name-resolved-correctly, dns-wildcard-not-configured, non-overlapping-subnets, mtu-valid")
		}
	}
	validateHostEntries(e, ac.Hosts)
	return e.err()
}

func validateHostEntries(e *errs, hosts []AgentHost) {
	macOwner := map[string]string{}
	nameOwner := map[string]string{}
	ipOwner := map[netip.Addr]string{}
	for i, h := range hosts {
		p := fmt.Sprintf("hosts[%d]", i)
		switch h.Role {
		case "", "master", "worker", "arbiter":
		default:
			e.forbidden(p+".role", "host role has incorrect value %q. Role must either be 'master', 'arbiter' or 'worker'", h.Role)
		}
		if h.Hostname != "" {
			if !dns1123Subdomain.MatchString(h.Hostname) {
				e.invalid(p+".hostname", h.Hostname, "must be a lower-case DNS name")
			} else if why := dnsLengthProblem(h.Hostname); why != "" {
				e.invalid(p+".hostname", h.Hostname, "%s", why)
			}
			if o, dup := nameOwner[h.Hostname]; dup {
				e.add(p+".hostname", TypeDuplicate, h.Hostname, "hostname already used by %s", o)
			}
			nameOwner[h.Hostname] = p
		}
		if h.RootDeviceHints != nil {
			validateRootDeviceHints(e, p+".rootDeviceHints", h.RootDeviceHints)
		}
		ifNames := map[string]bool{}
		// badMAC are the interfaces whose MAC is reported invalid: a
		// mismatch with the networkConfig would only repeat it.
		badMAC := map[int]bool{}
		for j, itf := range h.Interfaces {
			ip := fmt.Sprintf("%s.interfaces[%d]", p, j)
			if itf.Name == "" {
				e.required(ip+".name", "each interface needs the name used for it in networkConfig")
			} else if ifNames[itf.Name] {
				e.add(ip+".name", TypeDuplicate, itf.Name, "MACs and Interfaces for each host must be unique")
			}
			ifNames[itf.Name] = true
			if itf.MACAddress == "" {
				e.required(ip+".macAddress", "each interface must have a MAC address defined")
				continue
			}
			if strings.Contains(itf.MACAddress, "-") {
				e.invalid(ip+".macAddress", itf.MACAddress, "MAC address %s is incorrectly formatted, use XX:XX:XX:XX:XX:XX format", itf.MACAddress)
				badMAC[j] = true
				continue
			}
			hw, err := net.ParseMAC(itf.MACAddress)
			if err != nil || len(hw) != 6 {
				e.invalid(ip+".macAddress", itf.MACAddress, "address %s: invalid MAC address%s", itf.MACAddress, macFix(itf.MACAddress))
				badMAC[j] = true
				continue
			}
			key := hw.String()
			if o, dup := macOwner[key]; dup {
				e.add(ip+".macAddress", TypeDuplicate, itf.MACAddress, "duplicate MAC address found; also used by %s", o)
			}
			macOwner[key] = ip
		}
		for _, pr := range CheckInstallerArgs(h.InstallerArgs) {
			e.invalid(fmt.Sprintf("%s.installerArgs[%d]", p, pr.Index), h.InstallerArgs[pr.Index], "%s", pr.Msg)
		}
		if h.IgnitionConfigOverride != "" {
			var probe struct {
				Ignition struct {
					Version string `json:"version"`
				} `json:"ignition"`
			}
			if err := json.Unmarshal([]byte(h.IgnitionConfigOverride), &probe); err != nil || probe.Ignition.Version == "" {
				e.invalid(p+".ignitionConfigOverride", nil, "must be an Ignition JSON document with ignition.version set, e.g. {\"ignition\":{\"version\":\"3.2.0\"},...}")
			}
		}
		if len(h.NetworkConfig) == 0 || string(h.NetworkConfig) == "null" {
			continue
		}
		nc, err := ParseNetworkConfig(h.NetworkConfig)
		if err != nil {
			e.invalid(p+".networkConfig", nil, "%v", err)
			continue
		}
		validateNMState(e, p+".networkConfig", h.NetworkConfig)
		if len(h.Interfaces) == 0 {
			e.required(p+".interfaces", "at least one interface for host %d must be provided when networkConfig is set, mapping each NIC name to its MAC", i)
		}
		if len(h.Interfaces) > 0 {
			for _, u := range nc.UnmappedNICs(h.Interfaces) {
				e.invalid(unmappedPath(p+".networkConfig", u), u.Name, "%s", unmappedDetail(u, p+".interfaces"))
			}
		}
		for _, c := range nc.MACConflicts(h.Interfaces) {
			if badMAC[c.Table] {
				continue
			}
			cfgPath := fmt.Sprintf("%s.networkConfig.interfaces[%d].mac-address", p, c.Config)
			e.invalid(fmt.Sprintf("%s.interfaces[%d].macAddress", p, c.Table), c.TableMAC, "%s", macConflictDetail(c, e.where(cfgPath)))
		}
		names := nc.InterfaceNames()
		for j, itf := range h.Interfaces {
			if itf.Name != "" && !slices.Contains(names, itf.Name) {
				e.invalid(fmt.Sprintf("%s.interfaces[%d].name", p, j), itf.Name,
					"not used in this host's networkConfig, so it would never be configured; interfaces there are: %s", strings.Join(names, ", "))
			}
		}
		for _, ip := range nc.StaticIPs() {
			if o, dup := ipOwner[ip]; dup && o != p {
				e.add(p+".networkConfig", TypeDuplicate, ip.String(), "static IP also assigned to %s", o)
			}
			ipOwner[ip] = p
		}
	}
}

func validateRootDeviceHints(e *errs, p string, h *RootDeviceHints) {
	if h.DeviceName != "" && !strings.HasPrefix(h.DeviceName, "/dev/") {
		e.invalid(p+".deviceName", h.DeviceName, "Device Name of root device hint must be path in /dev/ or /dev/disk/by-path/")
	}
	if strings.HasPrefix(h.DeviceName, "/dev/disk/") && !strings.HasPrefix(h.DeviceName, "/dev/disk/by-path/") {
		e.invalid(p+".deviceName", h.DeviceName, "Device Name of root device hint must be path in /dev/ or /dev/disk/by-path/")
	}
	if h.WWNWithExtension != "" {
		e.forbidden(p+".wwnWithExtension", "WWN extensions are not supported in root device hints")
	}
	if h.WWNVendorExtension != "" {
		e.forbidden(p+".wwnVendorExtension", "WWN vendor extensions are not supported in root device hints")
	}
	if h.MinSizeGigabytes < 0 {
		e.invalid(p+".minSizeGigabytes", h.MinSizeGigabytes, "must not be negative")
	}
}

// settingsNeedingMAC lists the settings of a host entry that only apply
// once a booted machine is matched to the entry by one of its MACs.
// AgentConfigWarnings are what agent-config.yaml sets that the install
// will not use though it is valid: a host listed without interfaces (and
// without networkConfig) is accepted, as upstream accepts it
// (openshift/installer testscript agent/image/configurations/
// ha_hosts_no_interfaces_no_macAddress), but no machine can be matched to
// it: the agent-installer-client skips a host configuration without MAC
// addresses (assisted-service cmd/agentbasedinstaller/host_config.go,
// LoadHostConfigs, release-4.18 ... master), and agentiso's overrides find
// hosts by MAC too. One warning per such host names every setting that
// will not apply.
func AgentConfigWarnings(ac *AgentConfig, lines Lines) []Warning {
	var out []Warning
	for i, h := range ac.Hosts {
		if len(h.Interfaces) > 0 || !(len(h.NetworkConfig) == 0 || string(h.NetworkConfig) == "null") {
			continue
		}
		p := fmt.Sprintf("hosts[%d]", i)
		dropped := settingsNeedingMAC(h)
		if len(dropped) == 0 {
			continue
		}
		out = append(out, Warning{File: assetdir.AgentConfig, Line: lines.Line(p), Path: p + ".interfaces",
			Msg: fmt.Sprintf("%s lists no interfaces, so no machine can be matched to it: its %s will not apply (the agent-installer-client skips a host configuration without MAC addresses, as upstream's does); add interfaces: [{name: <nic>, macAddress: <MAC>}] for at least one of its NICs to apply them",
				hostLabel(h, p), strings.Join(dropped, ", "))})
	}
	return out
}

func settingsNeedingMAC(h AgentHost) []string {
	var out []string
	if h.Hostname != "" {
		out = append(out, "hostname")
	}
	if h.Role != "" {
		out = append(out, "role")
	}
	if h.RootDeviceHints != nil {
		out = append(out, "rootDeviceHints")
	}
	if len(h.InstallerArgs) > 0 {
		out = append(out, "installerArgs")
	}
	if h.IgnitionConfigOverride != "" {
		out = append(out, "ignitionConfigOverride")
	}
	return out
}

// hostLabel names a host entry in messages: "host master-0" or its path.
func hostLabel(h AgentHost, path string) string {
	if h.Hostname != "" {
		return "host " + h.Hostname
	}
	return path
}

// macFix says what is wrong with a MAC address net.ParseMAC refused or
// that is not 6 octets long, and how to write it ("" when unclear).
func macFix(s string) string {
	sep := ":"
	if !strings.Contains(s, ":") && strings.Count(s, ".") > 0 {
		sep = "."
	}
	parts := strings.Split(s, sep)
	if sep == ":" && len(parts) > 1 {
		for _, p := range parts {
			if len(p) != 2 {
				return fmt.Sprintf(": each of the 6 octets is two hex digits (%q is not), as 52:54:00:12:34:56", p)
			}
			if _, err := strconv.ParseUint(p, 16, 8); err != nil {
				return fmt.Sprintf(": %q is not a hex octet (digits 0-9 and a-f only)", p)
			}
		}
		if len(parts) != 6 {
			return fmt.Sprintf(": it has %d octets, a MAC address has 6 (XX:XX:XX:XX:XX:XX)", len(parts))
		}
	}
	return ": write it as 6 hex octets separated by colons, XX:XX:XX:XX:XX:XX"
}

// ValidateHosts checks hosts[] entries as agent-config.yaml's are checked,
// for another file with the same hosts[] layout (nodes-config.yaml of
// node-image); errors name file and lines.
func ValidateHosts(file string, hosts []AgentHost, lines Lines) error {
	e := newErrs(file, lines)
	validateHostEntries(e, hosts)
	return e.err()
}
