package manifests

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"

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
