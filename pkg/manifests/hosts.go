package manifests

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

// Host is one machine of the cluster, from agent-config.yaml hosts[] or,
// when those are absent, from install-config.yaml platform.baremetal.hosts[].
type Host struct {
	AgentHost
	// File and Path locate the entry for errors.
	File string `json:"file"`
	Path string `json:"path"`
}

// HasNetworkConfig reports whether the host carries static networking.
func (h *Host) HasNetworkConfig() bool {
	return len(h.NetworkConfig) > 0 && string(h.NetworkConfig) != "null"
}

// ResolveHosts picks the host list: agent-config hosts win over
// install-config baremetal hosts (with a warning when both are given).
func ResolveHosts(ic *InstallConfig, ac *AgentConfig) ([]Host, []Warning) {
	var warns []Warning
	var bmHosts []BareMetalHost
	if ic != nil && ic.Platform.BareMetal != nil {
		bmHosts = ic.Platform.BareMetal.Hosts
	}
	if ac != nil && len(ac.Hosts) > 0 {
		if len(bmHosts) > 0 {
			warns = append(warns, Warning{File: assetdir.InstallConfig, Path: "platform.baremetal.hosts", Msg: "hosts from install-config.yaml are ignored because agent-config.yaml defines hosts"})
		}
		out := make([]Host, len(ac.Hosts))
		for i, h := range ac.Hosts {
			out[i] = Host{AgentHost: h, File: assetdir.AgentConfig, Path: fmt.Sprintf("hosts[%d]", i)}
		}
		return out, warns
	}
	out := make([]Host, 0, len(bmHosts))
	for i, h := range bmHosts {
		host := Host{AgentHost: AgentHost{Hostname: h.Name, Role: h.Role, RootDeviceHints: h.RootDeviceHints, NetworkConfig: h.NetworkConfig},
			File: assetdir.InstallConfig, Path: fmt.Sprintf("platform.baremetal.hosts[%d]", i)}
		if h.BootMACAddress != "" {
			name := "boot"
			if host.HasNetworkConfig() {
				if n := interfaceWithMAC(h.NetworkConfig, h.BootMACAddress); n != "" {
					name = n
				} else {
					warns = append(warns, Warning{File: assetdir.InstallConfig, Path: host.Path + ".bootMACAddress",
						Msg: fmt.Sprintf("For host %s, BootMACAddress %s is not in NetworkConfig", h.Name, h.BootMACAddress)})
				}
			}
			host.Interfaces = []HostInterface{{Name: name, MACAddress: h.BootMACAddress}}
		}
		if h.BootMode != "" && h.BootMode != "UEFI" {
			warns = append(warns, Warning{File: assetdir.InstallConfig, Path: host.Path + ".bootMode", Msg: "bootMode is ignored by the agent-based installer"})
		}
		out = append(out, host)
	}
	return out, warns
}

func interfaceWithMAC(raw json.RawMessage, mac string) string {
	var nc struct {
		Interfaces []struct {
			Name string `json:"name"`
			MAC  string `json:"mac-address"`
		} `json:"interfaces"`
	}
	if json.Unmarshal(raw, &nc) != nil {
		return ""
	}
	for _, i := range nc.Interfaces {
		if strings.EqualFold(i.MAC, mac) {
			return i.Name
		}
	}
	return ""
}

// RoleCounts counts hosts per role; role-less hosts fill masters first,
// then arbiters, then workers, as upstream assigns them.
func RoleCounts(hosts []Host, masters, arbiters int64) (m, a, w int64) {
	unassigned := int64(0)
	for _, h := range hosts {
		switch h.Role {
		case "master":
			m++
		case "arbiter":
			a++
		case "worker":
			w++
		default:
			unassigned++
		}
	}
	for ; unassigned > 0 && m < masters; unassigned-- {
		m++
	}
	for ; unassigned > 0 && a < arbiters; unassigned-- {
		a++
	}
	w += unassigned
	return m, a, w
}

// ChooseRendezvousIP returns the rendezvous IP: the configured one, else
// the first static IP of a master/arbiter host, then of a role-less host,
// then of the NMStateConfig manifests.
func ChooseRendezvousIP(configured string, hosts []Host, nmstate []NMStateConfig) (string, error) {
	if configured != "" {
		ip, err := netip.ParseAddr(configured)
		if err != nil {
			return "", fmt.Errorf("invalid rendezvous IP: %s", configured)
		}
		return ip.String(), nil
	}
	first := func(raw json.RawMessage) string {
		nc, err := ParseNetworkConfig(raw)
		if err != nil {
			return ""
		}
		if ips := nc.StaticIPs(); len(ips) > 0 {
			return ips[0].String()
		}
		return ""
	}
	for _, pass := range [][]string{{"master", "arbiter"}, {""}} {
		for _, h := range hosts {
			for _, r := range pass {
				if h.Role == r && h.HasNetworkConfig() {
					if ip := first(h.NetworkConfig); ip != "" {
						return ip, nil
					}
				}
			}
		}
	}
	for _, n := range nmstate {
		if ip := first(n.Spec.Config); ip != "" {
			return ip, nil
		}
	}
	return "", fmt.Errorf("missing rendezvousIP in agent-config, at least one host networkConfig, or at least one NMStateConfig manifest: " +
		"set rendezvousIP in agent-config.yaml to the IP the first control-plane host will have")
}

// ValidateCluster cross-checks hosts, the rendezvous IP and install-config:
// host counts against replicas, where the rendezvous IP lives, and that
// VIPs are not host addresses. It returns errors and warnings.
//
// lines, when known, maps each input file name to its line map so every
// finding points at its line.
func ValidateCluster(ic *InstallConfig, hosts []Host, rendezvousIP string, lines map[string]Lines) ([]Warning, error) {
	var list ErrorList
	var warns []Warning
	add := func(file, path, typ string, v any, detail string, args ...any) {
		list = append(list, &FieldError{File: file, Line: lines[file].Line(path), Path: path, Type: typ, Value: v, Detail: fmt.Sprintf(detail, args...)})
	}
	if ic != nil && len(hosts) > 0 {
		cp, arb, comp := ic.ControlPlaneReplicas(), ic.ArbiterReplicas(), ic.ComputeReplicas()
		m, a, w := RoleCounts(hosts, cp, arb)
		file := hosts[0].File
		if m > cp {
			add(file, "hosts", TypeForbidden, nil, "the number of master hosts defined (%d) exceeds the configured ControlPlane replicas (%d)", m, cp)
		} else if m < cp {
			warns = append(warns, Warning{File: file, Line: lines[file].Line("hosts"), Path: "hosts", Msg: fmt.Sprintf("not enough master hosts defined (%d) to support all the configured ControlPlane replicas (%d)", m, cp)})
		}
		if a > arb {
			add(file, "hosts", TypeForbidden, nil, "the number of arbiter hosts defined (%d) exceeds the configured Arbiter replicas (%d)", a, arb)
		}
		if w > comp {
			add(file, "hosts", TypeForbidden, nil, "the number of worker hosts defined (%d) exceeds the configured Compute replicas (%d)", w, comp)
		} else if w < comp && m+a+w >= cp+arb {
			warns = append(warns, Warning{File: file, Line: lines[file].Line("hosts"), Path: "hosts", Msg: fmt.Sprintf("not enough worker hosts defined (%d) to support all the configured Compute replicas (%d)", w, comp)})
		}
	}
	rip, err := netip.ParseAddr(rendezvousIP)
	if err != nil {
		return warns, list.OrNil()
	}
	anyStatic := false
	ownerIsCP := false
	for _, h := range hosts {
		if !h.HasNetworkConfig() {
			continue
		}
		nc, err := ParseNetworkConfig(h.NetworkConfig)
		if err != nil {
			continue
		}
		ips := nc.StaticIPs()
		if len(ips) > 0 {
			anyStatic = true
		}
		for _, ip := range ips {
			if ip != rip {
				continue
			}
			if h.Role == "worker" {
				name := h.Hostname
				if name == "" {
					name = h.Path
				}
				add(h.File, h.Path+".role", TypeForbidden, nil, "Host %s has role 'worker' and has the rendezvousIP assigned to it. The rendezvousIP must be assigned to a control plane host.", name)
			} else {
				ownerIsCP = true
			}
		}
	}
	if anyStatic && !ownerIsCP && len(list) == 0 {
		add(assetdir.AgentConfig, "rendezvousIP", TypeInvalid, rendezvousIP, "is not a static address of any control-plane host's networkConfig; the host that boots with this IP runs the installer service, so set it to one of the master hosts' addresses")
	}
	if ic != nil && ic.Networking != nil && !ic.MachineNetworkContains(rip) {
		add(assetdir.AgentConfig, "rendezvousIP", TypeInvalid, rendezvousIP, "is outside every machine network (%s); hosts could not reach it", ic.machineCIDRs())
	}
	if ic != nil {
		vips := append(append([]string{}, ic.Platform.APIVIPs()...), ic.Platform.IngressVIPs()...)
		for _, h := range hosts {
			if !h.HasNetworkConfig() {
				continue
			}
			nc, err := ParseNetworkConfig(h.NetworkConfig)
			if err != nil {
				continue
			}
			for _, ip := range nc.StaticIPs() {
				for _, v := range vips {
					if vip, err := netip.ParseAddr(v); err == nil && vip == ip {
						add(h.File, h.Path+".networkConfig", TypeInvalid, ip.String(), "is also a VIP in install-config.yaml; VIPs must not be host addresses")
					}
				}
			}
		}
	}
	return warns, list.OrNil()
}

// NormalizeMAC lower-cases a MAC in colon form, or returns it unchanged.
func NormalizeMAC(mac string) string {
	if hw, err := net.ParseMAC(mac); err == nil {
		return hw.String()
	}
	return strings.ToLower(mac)
}

// DNS limits (RFC 1035): a label has at most 63 characters, a name at most
// 253 (without the trailing dot). Longer host names break Ignition paths
// and the hosts' own resolvers.
const (
	maxDNSLabel = 63
	maxDNSName  = 253
)

// dnsLengthProblem returns why name breaks the DNS length limits, or "".
func dnsLengthProblem(name string) string {
	n := strings.TrimSuffix(name, ".")
	if len(n) > maxDNSName {
		return fmt.Sprintf("is longer than %d characters", maxDNSName)
	}
	for _, l := range strings.Split(n, ".") {
		if len(l) > maxDNSLabel {
			return fmt.Sprintf("has a label longer than %d characters", maxDNSLabel)
		}
	}
	return ""
}
