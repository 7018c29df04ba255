package nmstate

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/seed-a052040e/agentiso/internal/suggest"

	yaml "go.yaml.in/yaml/v3"
)

// FieldError is a problem with one field of the input.
type FieldError struct {
	Path string // e.g. "interfaces[1].ipv4.address[0].ip"
	Line int    // 1-based, 0 when unknown
	Msg  string
}

func (e *FieldError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// maxNodes bounds the work done on inputs that expand aliases repeatedly.
const maxNodes = 200000

type parser struct {
	errs  []error
	nodes int
	lines map[string]int // YAML path -> line of its key
}

func (p *parser) errorf(n *yaml.Node, path, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.errs = append(p.errs, &FieldError{Path: path, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// resolve follows aliases and counts visited nodes.
func (p *parser) resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	p.nodes++
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

type fieldFn func(v *yaml.Node, path string)

// unsupportedFields are fields nmstate knows that this package does not support.
var unsupportedFields = map[string]bool{
	"description": true, "lldp": true, "ethtool": true, "802.1x": true, "mptcp": true,
	"dispatch": true, "copy-mac-from": true, "min-mtu": true, "max-mtu": true,
	"wait-ip": true, "ovs-db": true, "route-rules": true, "ovn": true, "hostname": true,
	"sr-iov": true, "veth": true, "vxlan": true, "mac-vlan": true, "mac-vtap": true,
	"vrf": true, "infiniband": true, "team": true, "ipsec": true, "hsr": true,
	"macsec": true, "ipvlan": true, "permanent-mac-address": true, "driver": true,
	"allow-extra-address": true, "rules": true,
}

// mapping walks a YAML mapping, calling fields[key] for each key and
// reporting unknown and duplicate keys.
func (p *parser) mapping(n *yaml.Node, path string, fields map[string]fieldFn) {
	n = p.resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path, "expected a mapping, got %s", describe(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if p.nodes > maxNodes {
			p.errorf(n, path, "document too large or too many aliases")
			return
		}
		kn := p.resolve(n.Content[i])
		if kn.Kind != yaml.ScalarNode {
			p.errorf(kn, path, "mapping keys must be strings")
			continue
		}
		key := kn.Value
		kpath := join(path, key)
		if seen[key] {
			p.errorf(kn, kpath, "duplicate key %q; give each key once", key)
			continue
		}
		seen[key] = true
		if p.lines != nil {
			p.lines[kpath] = kn.Line
		}
		fn, ok := fields[key]
		if !ok {
			p.unknownField(kn, kpath, key, fields)
			continue
		}
		fn(n.Content[i+1], kpath)
	}
}

func (p *parser) unknownField(kn *yaml.Node, kpath, key string, fields map[string]fieldFn) {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	if unsupportedFields[key] {
		p.errorf(kn, kpath, "unknown field `%s`: nmstate knows it but agentiso does not support it; remove it (supported here: %s)", key, strings.Join(names, ", "))
		return
	}
	if s := suggest.Closest(key, names); s != "" {
		p.errorf(kn, kpath, "unknown field `%s`, did you mean %q?", key, s)
		return
	}
	p.errorf(kn, kpath, "unknown field `%s`, expected one of: %s", key, strings.Join(names, ", "))
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

func (p *parser) sequence(n *yaml.Node, path string, each func(i int, item *yaml.Node, path string)) {
	n = p.resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, path, "expected a list, got %s", describe(n))
		return
	}
	for i, item := range n.Content {
		if p.nodes > maxNodes {
			p.errorf(n, path, "document too large or too many aliases")
			return
		}
		each(i, p.resolve(item), fmt.Sprintf("%s[%d]", path, i))
	}
}

func (p *parser) scalar(n *yaml.Node, path string) (string, bool) {
	n = p.resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		p.errorf(n, path, "expected a single value, got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

func (p *parser) str(dst *string) fieldFn {
	return func(v *yaml.Node, path string) {
		if isNull(p.resolve(v)) {
			return
		}
		if s, ok := p.text(v, path); ok {
			*dst = s
		}
	}
}

// text is a scalar that ends up in a keyfile: control characters would
// break the file, so they are rejected.
func (p *parser) text(v *yaml.Node, path string) (string, bool) {
	s, ok := p.scalar(v, path)
	if !ok {
		return "", false
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		p.errorf(p.resolve(v), path, "%q contains a control character (newline, tab, ...): remove it", s)
		return "", false
	}
	return s, true
}

func (p *parser) strList(dst *[]string, given *bool) fieldFn {
	return func(v *yaml.Node, path string) {
		if given != nil {
			*given = true
		}
		*dst = []string{}
		p.sequence(v, path, func(_ int, item *yaml.Node, ipath string) {
			if s, ok := p.text(item, ipath); ok {
				*dst = append(*dst, s)
			}
		})
	}
}

// parseBool accepts what nmstate accepts: booleans, and strings or numbers
// meaning true/false.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "y", "on", "1":
		return true, true
	case "false", "no", "n", "off", "0":
		return false, true
	}
	return false, false
}

func (p *parser) boolean(dst **bool) fieldFn {
	return func(v *yaml.Node, path string) {
		if isNull(p.resolve(v)) {
			return
		}
		s, ok := p.scalar(v, path)
		if !ok {
			return
		}
		b, ok := parseBool(s)
		if !ok {
			p.errorf(p.resolve(v), path, "expected true or false, got %q", s)
			return
		}
		*dst = &b
	}
}

func (p *parser) uintVal(v *yaml.Node, path string, max uint64) (uint64, bool) {
	s, ok := p.scalar(v, path)
	if !ok {
		return 0, false
	}
	u, err := strconv.ParseUint(strings.TrimSpace(s), 0, 64)
	if err != nil {
		p.errorf(p.resolve(v), path, "expected a non-negative integer, got %q", s)
		return 0, false
	}
	if u > max {
		p.errorf(p.resolve(v), path, "%d is too large (maximum %d)", u, max)
		return 0, false
	}
	return u, true
}

func (p *parser) uint(dst **uint64, max uint64) fieldFn {
	return func(v *yaml.Node, path string) {
		if isNull(p.resolve(v)) {
			return
		}
		if u, ok := p.uintVal(v, path, max); ok {
			*dst = &u
		}
	}
}

func (p *parser) int(dst **int64, lo, hi int64) fieldFn {
	return func(v *yaml.Node, path string) {
		if isNull(p.resolve(v)) {
			return
		}
		s, ok := p.scalar(v, path)
		if !ok {
			return
		}
		i, err := strconv.ParseInt(strings.TrimSpace(s), 0, 64)
		if err != nil || i < lo || i > hi {
			p.errorf(p.resolve(v), path, "expected an integer between %d and %d, got %q", lo, hi, s)
			return
		}
		*dst = &i
	}
}

func (p *parser) enum(dst *string, allowed ...string) fieldFn {
	return func(v *yaml.Node, path string) {
		if isNull(p.resolve(v)) {
			return
		}
		s, ok := p.scalar(v, path)
		if !ok {
			return
		}
		for _, a := range allowed {
			if s == a {
				*dst = s
				return
			}
		}
		p.errorf(p.resolve(v), path, "unknown variant `%s`, expected one of `%s`", s, strings.Join(allowed, "`, `"))
	}
}

// Parse parses NMState YAML strictly into a State. Every unknown field,
// wrongly typed value and malformed address is reported; the returned error
// joins all of them (use errors.Join's Unwrap to get each *FieldError).
// Parse does not perform the semantic checks of Validate.
func Parse(data []byte) (*State, error) {
	data = []byte(strings.ReplaceAll(string(data), "\u00a0", " "))
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	p := &parser{lines: map[string]int{}}
	st := &State{lines: p.lines}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return st, nil
		}
		root = root.Content[0]
	}
	if root.Kind == 0 || isNull(root) {
		return st, nil
	}
	p.mapping(root, "", map[string]fieldFn{
		"interfaces": func(v *yaml.Node, path string) {
			p.sequence(v, path, func(i int, item *yaml.Node, ipath string) {
				st.Interfaces = append(st.Interfaces, p.iface(item, ipath))
			})
		},
		"routes": func(v *yaml.Node, path string) {
			p.mapping(v, path, map[string]fieldFn{
				"config": func(v *yaml.Node, path string) {
					p.sequence(v, path, func(i int, item *yaml.Node, ipath string) {
						st.Routes = append(st.Routes, p.route(item, ipath))
					})
				},
				"running": func(*yaml.Node, string) {},
			})
		},
		"dns-resolver": func(v *yaml.Node, path string) {
			p.mapping(v, path, map[string]fieldFn{
				"config": func(v *yaml.Node, path string) {
					p.mapping(v, path, map[string]fieldFn{
						"server":  p.strList(&st.DNS.Servers, nil),
						"search":  p.strList(&st.DNS.Search, nil),
						"options": p.strList(&st.DNS.Options, nil),
					})
				},
				"running": func(*yaml.Node, string) {},
			})
		},
	})
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return st, nil
}

func (p *parser) iface(n *yaml.Node, path string) Interface {
	ifc := Interface{Path: path, Line: n.Line}
	var hasName bool
	fields := map[string]fieldFn{
		"name": func(v *yaml.Node, fp string) {
			hasName = true
			p.str(&ifc.Name)(v, fp)
		},
		"type":         p.str(&ifc.TypeGiven),
		"state":        p.enum(&ifc.State, StateUp, StateDown, StateAbsent),
		"mtu":          p.uint(&ifc.MTU, 1<<32-1),
		"mac-address":  p.str(&ifc.MACAddress),
		"identifier":   p.enum(&ifc.Identifier, "name", "mac-address"),
		"profile-name": p.str(&ifc.ProfileName),
		"controller": func(v *yaml.Node, fp string) {
			var s string
			p.str(&s)(v, fp)
			ifc.Controller = &s
		},
		"ipv4": func(v *yaml.Node, fp string) {
			if !isNull(p.resolve(v)) {
				ifc.IPv4 = p.ip(v, fp, false)
			}
		},
		"ipv6": func(v *yaml.Node, fp string) {
			if !isNull(p.resolve(v)) {
				ifc.IPv6 = p.ip(v, fp, true)
			}
		},
		"link-aggregation": func(v *yaml.Node, fp string) { ifc.Bond = p.bond(v, fp) },
		"bridge":           func(v *yaml.Node, fp string) { ifc.Bridge = p.bridge(v, fp) },
		"vlan":             func(v *yaml.Node, fp string) { ifc.VLAN = p.vlan(v, fp) },
		"ethernet": func(v *yaml.Node, fp string) {
			e := &EthernetConfig{}
			p.mapping(v, fp, map[string]fieldFn{
				"auto-negotiation": p.boolean(&e.AutoNegotiation),
				"speed":            p.uint(&e.Speed, 1<<32-1),
				"duplex":           p.enum(&e.Duplex, "full", "half"),
			})
			ifc.Ethernet = e
		},
		"accept-all-mac-addresses": p.boolean(&ifc.AcceptAllMACAddresses),
	}
	before := len(p.errs)
	p.mapping(n, path, fields)
	if ifc.Name != "" {
		for _, e := range p.errs[before:] {
			if fe, ok := e.(*FieldError); ok {
				fe.Msg = "interface " + ifc.Name + ": " + fe.Msg
			}
		}
	}
	if n.Kind == yaml.MappingNode && !hasName {
		p.errorf(n, path, "missing field `name`: every interface needs a name")
	}
	if ifc.State == "" {
		ifc.State = StateUp
	}
	ifc.Type = ifc.TypeGiven
	if ifc.Type == "" {
		ifc.Type = TypeEthernet
	}
	return ifc
}

func (p *parser) ip(n *yaml.Node, path string, v6 bool) *IPConfig {
	c := &IPConfig{}
	fields := map[string]fieldFn{
		"enabled": p.boolean(&c.Enabled),
		"dhcp":    p.boolean(&c.DHCP),
		"address": func(v *yaml.Node, fp string) {
			c.Addresses = []netip.Prefix{}
			p.sequence(v, fp, func(_ int, item *yaml.Node, ap string) {
				if a, ok := p.address(item, ap, v6); ok {
					c.Addresses = append(c.Addresses, a)
				}
			})
		},
		"auto-dns":             p.boolean(&c.AutoDNS),
		"auto-gateway":         p.boolean(&c.AutoGateway),
		"auto-routes":          p.boolean(&c.AutoRoutes),
		"auto-route-table-id":  p.uint(&c.AutoRouteTableID, 1<<32-1),
		"auto-route-metric":    p.uint(&c.AutoRouteMetric, 1<<32-1),
		"dhcp-send-hostname":   p.boolean(&c.DHCPSendHostname),
		"dhcp-custom-hostname": p.str(&c.DHCPCustomHostname),
	}
	if v6 {
		fields["autoconf"] = p.boolean(&c.Autoconf)
		fields["addr-gen-mode"] = p.enum(&c.AddrGenMode, "eui64", "stable-privacy")
		fields["dhcp-duid"] = p.str(&c.DHCPDUID)
		fields["token"] = p.str(&c.Token)
	} else {
		fields["dhcp-client-id"] = p.str(&c.DHCPClientID)
		fields["autoconf"] = func(v *yaml.Node, fp string) {
			p.errorf(p.resolve(v), fp, "autoconf is not allowed for IPv4; remove it (it only exists under ipv6)")
		}
	}
	p.mapping(n, path, fields)
	return c
}

func (p *parser) address(n *yaml.Node, path string, v6 bool) (netip.Prefix, bool) {
	var ipStr string
	var plen *uint64
	hasIP := false
	p.mapping(n, path, map[string]fieldFn{
		"ip": func(v *yaml.Node, fp string) {
			hasIP = true
			p.str(&ipStr)(v, fp)
		},
		"prefix-length": p.uint(&plen, 1<<16),
		// nmstate accepts these; they do not reach keyfiles.
		"valid-left":     func(*yaml.Node, string) {},
		"preferred-left": func(*yaml.Node, string) {},
	})
	if n.Kind != yaml.MappingNode {
		return netip.Prefix{}, false
	}
	if !hasIP {
		p.errorf(n, path, "missing field `ip`")
		return netip.Prefix{}, false
	}
	if plen == nil {
		p.errorf(n, path, "missing field `prefix-length`")
		return netip.Prefix{}, false
	}
	addr, err := netip.ParseAddr(ipStr)
	if err != nil || addr.Zone() != "" {
		p.errorf(n, join(path, "ip"), "invalid IP address syntax: %q is not an IP address", ipStr)
		return netip.Prefix{}, false
	}
	addr = addr.Unmap()
	fam, maxLen := "IPv4", uint64(32)
	if v6 {
		fam, maxLen = "IPv6", 128
	}
	if addr.Is6() != v6 {
		sect := "ipv4"
		if v6 {
			sect = "ipv6"
		}
		p.errorf(n, join(path, "ip"), "Got %s address %s/%d in %s config section; move it to the other family's block", famName(addr), addr, *plen, sect)
		return netip.Prefix{}, false
	}
	if *plen > maxLen {
		p.errorf(n, join(path, "prefix-length"), "Invalid %s network prefix length '%d', should be in the range of 0 to %d", fam, *plen, maxLen)
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(addr, int(*plen)), true
}

func famName(a netip.Addr) string {
	if a.Is4() {
		return "IPv4"
	}
	return "IPv6"
}

var bondModes = []string{"balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad", "balance-tlb", "balance-alb"}

// bondEnums maps enum bond options to their names, indexed by numeric alias.
var bondEnums = map[string][]string{
	"lacp_rate":        {"slow", "fast"},
	"xmit_hash_policy": {"layer2", "layer3+4", "layer2+3", "encap2+3", "encap3+4", "vlan+srcmac"},
	"ad_select":        {"stable", "bandwidth", "count"},
	"arp_validate":     {"none", "active", "backup", "all", "filter", "filter_active", "filter_backup"},
	"arp_all_targets":  {"any", "all"},
	"fail_over_mac":    {"none", "active", "follow"},
	"primary_reselect": {"always", "better", "failure"},
}

var bondBools = map[string]bool{"all_slaves_active": true, "tlb_dynamic_lb": true, "use_carrier": true, "balance_slb": true}

// bondOptionAliases are other spellings nmstate accepts for bond options
// (ifaces/bond.rs serde aliases).
var bondOptionAliases = map[string]string{"balance-slb": "balance_slb"}

var bondNumbers = map[string]uint64{
	"ad_actor_sys_prio": 65535, "ad_user_port_key": 1023, "arp_interval": 1<<32 - 1,
	"downdelay": 1<<32 - 1, "lp_interval": 1<<32 - 1, "miimon": 1<<32 - 1, "min_links": 1<<32 - 1,
	"num_grat_arp": 255, "num_unsol_na": 255, "packets_per_slave": 65535, "resend_igmp": 255,
	"updelay": 1<<32 - 1, "arp_missed_max": 255, "peer_notif_delay": 1<<32 - 1,
}

var bondStrings = map[string]bool{"ad_actor_system": true, "primary": true, "arp_ip_target": true}

func (p *parser) bond(n *yaml.Node, path string) *BondConfig {
	b := &BondConfig{}
	p.mapping(n, path, map[string]fieldFn{
		"mode": func(v *yaml.Node, fp string) {
			s, ok := p.scalar(v, fp)
			if !ok {
				return
			}
			if i, err := strconv.Atoi(s); err == nil && i >= 0 && i < len(bondModes) {
				b.Mode = bondModes[i]
				return
			}
			for _, m := range bondModes {
				if s == m {
					b.Mode = m
					return
				}
			}
			p.errorf(p.resolve(v), fp, "unknown variant `%s`, expected one of `%s`", s, strings.Join(bondModes, "`, `"))
		},
		"port":  p.strList(&b.Ports, &b.PortsGiven),
		"ports": p.strList(&b.Ports, &b.PortsGiven),
		"ports-config": func(v *yaml.Node, fp string) {
			p.sequence(v, fp, func(_ int, item *yaml.Node, ip string) {
				var pc BondPortConfig
				p.mapping(item, ip, map[string]fieldFn{
					"name":     p.str(&pc.Name),
					"priority": p.int(&pc.Priority, -(1 << 31), 1<<31-1),
					"queue-id": p.uint(&pc.QueueID, 65535),
				})
				b.PortsConfig = append(b.PortsConfig, pc)
			})
		},
		"options": func(v *yaml.Node, fp string) {
			fields := map[string]fieldFn{}
			add := func(name string, fn func(s string, v *yaml.Node, op string) (string, bool)) {
				fields[name] = func(v *yaml.Node, op string) {
					s, ok := p.scalar(v, op)
					if !ok {
						return
					}
					if val, ok := fn(s, v, op); ok {
						b.Options = append(b.Options, BondOption{Name: name, Value: val})
					}
				}
			}
			for name, vals := range bondEnums {
				add(name, func(s string, v *yaml.Node, op string) (string, bool) {
					if i, err := strconv.Atoi(s); err == nil && i >= 0 && i < len(vals) {
						return vals[i], true
					}
					for _, x := range vals {
						if s == x {
							return x, true
						}
					}
					p.errorf(p.resolve(v), op, "unknown variant `%s`, expected one of `%s`", s, strings.Join(vals, "`, `"))
					return "", false
				})
			}
			for name := range bondBools {
				add(name, func(s string, v *yaml.Node, op string) (string, bool) {
					switch strings.ToLower(s) {
					case "dropped":
						return "0", true
					case "delivered":
						return "1", true
					}
					bv, ok := parseBool(s)
					if !ok {
						p.errorf(p.resolve(v), op, "expected true or false, got %q", s)
						return "", false
					}
					if bv {
						return "1", true
					}
					return "0", true
				})
			}
			for name, max := range bondNumbers {
				add(name, func(s string, v *yaml.Node, op string) (string, bool) {
					u, ok := p.uintVal(v, op, max)
					return strconv.FormatUint(u, 10), ok
				})
			}
			for name := range bondStrings {
				add(name, func(_ string, v *yaml.Node, op string) (string, bool) { return p.text(v, op) })
			}
			for alias, canon := range bondOptionAliases {
				fields[alias] = fields[canon]
			}
			p.mapping(v, fp, fields)
		},
	})
	return b
}

func (p *parser) bridge(n *yaml.Node, path string) *BridgeConfig {
	br := &BridgeConfig{Options: map[string]string{}}
	u := func(key string, max uint64) fieldFn {
		return func(v *yaml.Node, fp string) {
			var x *uint64
			p.uint(&x, max)(v, fp)
			if x != nil {
				br.Options[key] = strconv.FormatUint(*x, 10)
			}
		}
	}
	bl := func(m map[string]string, key string) fieldFn {
		return func(v *yaml.Node, fp string) {
			var x *bool
			p.boolean(&x)(v, fp)
			if x != nil {
				m[key] = strconv.FormatBool(*x)
			}
		}
	}
	rng := func(key, what string, lo, hi uint64) fieldFn {
		return func(v *yaml.Node, fp string) {
			var x *uint64
			p.uint(&x, 1<<16)(v, fp)
			if x == nil {
				return
			}
			if *x < lo || *x > hi {
				p.errorf(p.resolve(v), fp, "Desired STP %s %d is not in the range of [%d,%d]", what, *x, lo, hi)
				return
			}
			br.Options[key] = strconv.FormatUint(*x, 10)
		}
	}
	// group-fwd-mask is nmstate's preferred name, group-forward-mask its
	// alias (linux_bridge.rs); both set must agree.
	var fwdMask, fwdMaskAlias *uint64
	var fwdMaskNode *yaml.Node
	var fwdMaskPath string
	portFn := func(v *yaml.Node, fp string) {
		br.PortsGiven = true
		p.sequence(v, fp, func(_ int, item *yaml.Node, ip string) {
			bp := BridgePort{Options: map[string]string{}}
			pu := func(key string, max uint64) fieldFn {
				return func(v *yaml.Node, fp string) {
					var x *uint64
					p.uint(&x, max)(v, fp)
					if x != nil {
						bp.Options[key] = strconv.FormatUint(*x, 10)
					}
				}
			}
			hasName := false
			p.mapping(item, ip, map[string]fieldFn{
				"name": func(v *yaml.Node, fp string) {
					hasName = true
					p.str(&bp.Name)(v, fp)
				},
				"stp-priority":     pu("priority", 63),
				"stp-path-cost":    pu("path-cost", 65535),
				"stp-hairpin-mode": bl(bp.Options, "hairpin-mode"),
			})
			if item.Kind == yaml.MappingNode && !hasName {
				p.errorf(item, ip, "missing field `name`: give the port's interface name")
			}
			br.Ports = append(br.Ports, bp)
		})
	}
	defer func() {
		switch {
		case fwdMask != nil && fwdMaskAlias != nil && *fwdMask != *fwdMaskAlias:
			p.errorf(fwdMaskNode, fwdMaskPath, "Linux bridge has different group_forward_mask: %d, group_fwd_mask: %d, these two property is the same, hence conflicting: keep only group-fwd-mask", *fwdMaskAlias, *fwdMask)
		case fwdMask != nil:
			br.Options["group-forward-mask"] = strconv.FormatUint(*fwdMask, 10)
		case fwdMaskAlias != nil:
			br.Options["group-forward-mask"] = strconv.FormatUint(*fwdMaskAlias, 10)
		}
	}()
	p.mapping(n, path, map[string]fieldFn{
		"options": func(v *yaml.Node, fp string) {
			p.mapping(v, fp, map[string]fieldFn{
				"stp": func(v *yaml.Node, fp string) {
					p.mapping(v, fp, map[string]fieldFn{
						"enabled":       bl(br.Options, "stp"),
						"priority":      u("priority", 65535),
						"forward-delay": rng("forward-delay", "forward delay", 2, 30),
						"hello-time":    rng("hello-time", "hello time", 1, 10),
						"max-age":       rng("max-age", "max age", 6, 40),
					})
				},
				"mac-ageing-time": u("ageing-time", 1<<32-1),
				"group-forward-mask": func(v *yaml.Node, fp string) {
					p.uint(&fwdMaskAlias, 65535)(v, fp)
				},
				"group-fwd-mask": func(v *yaml.Node, fp string) {
					p.uint(&fwdMask, 65535)(v, fp)
					fwdMaskNode, fwdMaskPath = p.resolve(v), fp
				},
				"multicast-snooping": bl(br.Options, "multicast-snooping"),
			})
		},
		"port":  portFn,
		"ports": portFn,
	})
	return br
}

func (p *parser) vlan(n *yaml.Node, path string) *VLANConfig {
	vc := &VLANConfig{}
	var id *uint64
	p.mapping(n, path, map[string]fieldFn{
		"base-iface":            p.str(&vc.BaseIface),
		"id":                    p.uint(&id, 65535),
		"protocol":              p.enum(&vc.Protocol, "802.1q", "802.1ad"),
		"reorder-headers":       p.boolean(&vc.ReorderHeaders),
		"loose-binding":         p.boolean(&vc.LooseBinding),
		"registration-protocol": p.enum(&vc.RegistrationProtocol, "gvrp", "mvrp", "none"),
	})
	if p.resolve(n).Kind == yaml.MappingNode && id == nil {
		p.errorf(n, path, "missing field `id`: give the VLAN id (1-4094)")
	} else if id != nil {
		vc.ID = *id
	}
	return vc
}

func (p *parser) route(n *yaml.Node, path string) Route {
	r := Route{Path: path, Line: n.Line}
	p.mapping(n, path, map[string]fieldFn{
		"state":              p.enum(&r.State, "absent"),
		"destination":        p.str(&r.Destination),
		"next-hop-address":   p.str(&r.NextHopAddress),
		"next-hop-interface": p.str(&r.NextHopInterface),
		"metric":             p.int(&r.Metric, -1, 1<<32-1),
		"table-id":           p.uint(&r.TableID, 1<<32-1),
		"weight":             p.uint(&r.Weight, 256),
		"route-type":         p.enum(&r.RouteType, "blackhole", "unreachable", "prohibit"),
		"cwnd":               p.uint(&r.Cwnd, 1<<32-1),
		"source":             p.str(&r.Source),
	})
	return r
}
