package manifests

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/pkg/nmstate"
)

// validateNMState runs the full NMState checks (the ones nmstatectl would
// run, and stricter) on a networkConfig, reporting each problem at its field.
func validateNMState(e *errs, path string, raw json.RawMessage) {
	y, err := yaml.JSONToYAML(raw)
	if err != nil {
		e.invalid(path, nil, "not an NMState document: %v", err)
		return
	}
	validateDNSSearch(e, path, raw)
	for _, ne := range nmstate.Errors(nmstate.Validate(y, nmstate.Options{})) {
		var fe *nmstate.FieldError
		if errors.As(ne, &fe) {
			sub := path
			if fe.Path != "" {
				sub = path + "." + fe.Path
			}
			e.invalid(sub, nil, "%s", fe.Msg)
			continue
		}
		e.invalid(path, nil, "%v", ne)
	}
}

// NetworkConfig is the small view of a host's NMState YAML that cluster
// validation needs (names and static addresses); full parsing and keyfile
// generation live in pkg/nmstate.
type NetworkConfig struct {
	Interfaces []struct {
		Name string   `json:"name"`
		Type string   `json:"type"`
		MAC  string   `json:"mac-address"`
		IPv4 *ipBlock `json:"ipv4"`
		IPv6 *ipBlock `json:"ipv6"`
		// Identifier and LinkAggregation feed UnmappedNICs; raw, so an
		// odd value there leaves the rest readable (pkg/nmstate reports it).
		Identifier      json.RawMessage `json:"identifier"`
		LinkAggregation json.RawMessage `json:"link-aggregation"`
	} `json:"interfaces"`
}

type ipBlock struct {
	Enabled any `json:"enabled"`
	Address []struct {
		IP           string `json:"ip"`
		PrefixLength any    `json:"prefix-length"`
	} `json:"address"`
}

// ParseNetworkConfig reads the parts of an NMState document validation uses.
func ParseNetworkConfig(raw json.RawMessage) (*NetworkConfig, error) {
	var nc NetworkConfig
	if err := json.Unmarshal(raw, &nc); err != nil {
		return nil, fmt.Errorf("not an NMState document: %v", err)
	}
	return &nc, nil
}

// InterfaceNames lists the interfaces the config defines, in order.
func (nc *NetworkConfig) InterfaceNames() []string {
	var out []string
	for _, i := range nc.Interfaces {
		if i.Name != "" {
			out = append(out, i.Name)
		}
	}
	return out
}

// StaticIPs lists every static address, IPv4 of each interface before
// IPv6, interfaces in order.
func (nc *NetworkConfig) StaticIPs() []netip.Addr {
	var out []netip.Addr
	for _, i := range nc.Interfaces {
		for _, b := range []*ipBlock{i.IPv4, i.IPv6} {
			if b == nil {
				continue
			}
			for _, a := range b.Address {
				if ip, err := netip.ParseAddr(a.IP); err == nil {
					out = append(out, ip)
				}
			}
		}
	}
	return out
}

// validateDNSSearch checks the search domains of an NMState document:
// each must be one DNS name, since NetworkManager keyfiles separate search
// domains with ';' and a space or ';' inside one would add another.
func validateDNSSearch(e *errs, path string, raw json.RawMessage) {
	var doc struct {
		DNS *struct {
			Config *struct {
				Search []string `json:"search"`
			} `json:"config"`
		} `json:"dns-resolver"`
	}
	if json.Unmarshal(raw, &doc) != nil || doc.DNS == nil || doc.DNS.Config == nil {
		return
	}
	for i, s := range doc.DNS.Config.Search {
		p := fmt.Sprintf("%s.dns-resolver.config.search[%d]", path, i)
		if !dnsName.MatchString(s) {
			e.invalid(p, s, "not a valid DNS search domain; give one domain per list entry, e.g. [example.com, lab.example.com]")
			continue
		}
		if why := dnsLengthProblem(s); why != "" {
			e.invalid(p, s, "%s", why)
		}
	}
}

// MACConflict is an interface-table entry whose MAC differs from the
// mac-address the NMState gives the interface of the same name.
type MACConflict struct {
	Table               int    // index in the interface table (hosts[].interfaces, spec.interfaces)
	Config              int    // index in the NMState interfaces list
	Name                string // the interface name both use
	TableMAC, ConfigMAC string
}

// MACConflicts finds the entries of an interface table (name -> MAC) whose
// MAC is not the mac-address the NMState document sets on the interface of
// the same name. The ISO's mac_interface.ini is written from the table and
// the keyfile from the NMState, so such a host would get a keyfile bound to
// one NIC and a name mapping that points at another.
func (nc *NetworkConfig) MACConflicts(table []HostInterface) []MACConflict {
	var out []MACConflict
	for t, itf := range table {
		if itf.Name == "" || itf.MACAddress == "" {
			continue
		}
		for c, ci := range nc.Interfaces {
			if ci.Name != itf.Name || ci.MAC == "" {
				continue
			}
			if !strings.EqualFold(NormalizeMAC(ci.MAC), NormalizeMAC(itf.MACAddress)) {
				out = append(out, MACConflict{Table: t, Config: c, Name: itf.Name, TableMAC: itf.MACAddress, ConfigMAC: ci.MAC})
			}
		}
	}
	return out
}

// macConflictDetail says what is wrong with a MACConflict, naming where
// the other MAC is written (cfgWhere: file:line and field path).
func macConflictDetail(c MACConflict, cfgWhere string) string {
	return fmt.Sprintf("interface %s has MAC %s here but mac-address %s in %s: the ISO's mac_interface.ini would map %s to one NIC while its keyfile binds to another; write the same MAC in both places",
		c.Name, c.TableMAC, c.ConfigMAC, cfgWhere, c.Name)
}

// predictableNIC matches the NIC names systemd's predictable naming gives
// (see systemd.net-naming-scheme: en + a type letter), the names
// assisted-service accepts without a MAC mapping.
var predictableNIC = regexp.MustCompile(`^en[PsvxXbucaipod]`)

// UnmappedNIC is a NIC the NMState uses that the interface table does not
// map to a MAC and that assisted-service refuses for it.
type UnmappedNIC struct {
	Config int    // index in the NMState interfaces list
	Port   int    // index in link-aggregation.port, -1 for the interface itself
	Name   string // the NIC name
}

// UnmappedNICs applies assisted-service's rule for static networking
// (pkg/staticnetworkconfig/generator.go validateInterfaceNamesExistenceYAML,
// run when the infra-env is registered; the same on release-4.18 ...
// master): every interface of type ethernet, and every name in a bond's
// link-aggregation.port list, must be in the interface table, be an
// interface identified by mac-address, or have a predictable physical NIC
// name (en and one of PsvxXbucaipod). Anything else is answered with
// HTTP 400.
func (nc *NetworkConfig) UnmappedNICs(table []HostInterface) []UnmappedNIC {
	mapped := map[string]bool{}
	for _, t := range table {
		mapped[t.Name] = true
	}
	byMAC := map[string]bool{}
	for _, ci := range nc.Interfaces {
		var id string
		if json.Unmarshal(ci.Identifier, &id) == nil && id == "mac-address" {
			byMAC[ci.Name] = true
		}
	}
	ok := func(name string) bool { return mapped[name] || byMAC[name] || predictableNIC.MatchString(name) }
	var out []UnmappedNIC
	for c, ci := range nc.Interfaces {
		switch ci.Type {
		case "ethernet", "802-3-ethernet":
			if !ok(ci.Name) {
				out = append(out, UnmappedNIC{Config: c, Port: -1, Name: ci.Name})
			}
		case "bond":
			var la struct {
				Port []string `json:"port"`
			}
			if json.Unmarshal(ci.LinkAggregation, &la) != nil {
				continue
			}
			for p, name := range la.Port {
				if !ok(name) {
					out = append(out, UnmappedNIC{Config: c, Port: p, Name: name})
				}
			}
		}
	}
	return out
}

// unmappedDetail says what is wrong with an UnmappedNIC and how to fix it;
// table names the interface table's field.
func unmappedDetail(u UnmappedNIC, table string) string {
	return fmt.Sprintf("NIC %s has no MAC in %s and is not a predictable physical NIC name (en followed by one of PsvxXbucaipod), so assisted-service refuses the static network configuration with HTTP 400 (mac-interface mapping for interface %s is missing); add {name: %s, macAddress: <its MAC>} to %s, or identify it by MAC (identifier: mac-address and mac-address)",
		u.Name, table, u.Name, u.Name, table)
}

// unmappedPath is the NMState field of an UnmappedNIC under base.
func unmappedPath(base string, u UnmappedNIC) string {
	if u.Port >= 0 {
		return fmt.Sprintf("%s.interfaces[%d].link-aggregation.port[%d]", base, u.Config, u.Port)
	}
	return fmt.Sprintf("%s.interfaces[%d].name", base, u.Config)
}
