package manifests

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
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
