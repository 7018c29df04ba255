package nmstate

import (
	"cmp"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/seed-a052040e/agentiso/pkg/fsutil"
)

// Options control Generate.
type Options struct {
	// Lenient reproduces nmstatectl gc exactly, accepting the questionable
	// inputs agentiso rejects by default (unknown interface types, duplicate
	// names, out-of-range VLAN ids, malformed MACs, over-long names, route
	// next hops of the other family, routes via undefined interfaces, and
	// addresses given while `enabled` is omitted).
	Lenient bool
	// Installer applies the OpenShift post-processing (autoconnect=true,
	// autoconnect-priority=1) that the keyfiles get before they go into the ISO.
	Installer bool
}

// Keyfile is one generated NetworkManager connection profile.
type Keyfile struct {
	// Name is the file name, "<connection.id>.nmconnection".
	Name string
	// Content is the keyfile text, ending in one "\n".
	Content []byte
}

// Generate parses NMState YAML, validates it and returns the keyfiles in
// nmstatectl gc's order. Errors name the interface and field.
func Generate(data []byte, opts Options) ([]Keyfile, error) {
	st, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return st.Keyfiles(opts)
}

// GenerateFile is Generate for the document a user gave as the file
// named name (nmstate gc and validate): a whole agent-config.yaml or
// NMStateConfig is refused with where its NMState is (CheckNotWrapped),
// and each problem is prefixed with name.
func GenerateFile(name string, data []byte, opts Options) ([]Keyfile, error) {
	if err := CheckNotWrapped(data); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	files, err := Generate(data, opts)
	if err != nil {
		var errs []error
		for _, e := range Errors(err) {
			errs = append(errs, fmt.Errorf("%s: %w", name, e))
		}
		return nil, errors.Join(errs...)
	}
	return files, nil
}

// MaxFileSize bounds the NMState YAML GenerateInput reads, as every input
// file of the asset directory is bounded.
const MaxFileSize = 4 << 20

// GenerateInput is GenerateFile for the file named name, read here ("-"
// reads stdin): a regular file of at most MaxFileSize bytes.
func GenerateInput(name string, stdin io.Reader, opts Options) ([]Keyfile, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = fsutil.ReadLimited(stdin, "standard input", MaxFileSize)
	} else {
		data, err = fsutil.ReadRegular(name, MaxFileSize)
	}
	if err != nil {
		return nil, fmt.Errorf("reading NMState YAML: %w", err)
	}
	return GenerateFile(name, data, opts)
}

// Validate reports every problem Generate would report, without output.
func Validate(data []byte, opts Options) error {
	_, err := Generate(data, opts)
	return err
}

// maxIfaceName is the kernel's limit (IFNAMSIZ - 1).
const maxIfaceName = 15

var macRE = regexp.MustCompile(`^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$`)

// unsupportedTypes are nmstate types outside agentiso's subset.
var unsupportedTypes = map[string]bool{
	"ovs-bridge": true, "ovs-interface": true, "vxlan": true, "mac-vlan": true, "mac-vtap": true,
	"vrf": true, "veth": true, "infiniband": true, "ipvlan": true, "hsr": true, "macsec": true,
	"ipsec": true, "loopback": true, "team": true, "xfrm": true, "dispatch": true, "unknown": true,
}

type ctrlRef struct {
	name string
	typ  string // bond or linux-bridge
}

// conn is one interface that produces a keyfile.
type conn struct {
	ifc    *Interface
	auto   bool // auto-created port
	ctrl   *ctrlRef
	prio   int
	idx    int // position in the YAML list (-1 for auto-created)
	routes [2][]routeEntry
	dns    [2]dnsKeys
}

type routeEntry struct {
	table   uint64
	iface   string
	dest    string
	nextHop string
	source  string
	weight  uint64
	cwnd    uint64
	metric  int64
	typ     string
	hasW    bool
	hasCwnd bool
}

type dnsKeys struct {
	set      bool
	servers  []string
	search   []string
	options  []string
	priority int
}

type gen struct {
	lines map[string]int
	opts  Options
	errs  []error
	conns []*conn
	by    map[string]*conn
	abs   map[string]bool
}

func (g *gen) fail(ifc *Interface, field, format string, args ...any) {
	path := ""
	line := 0
	msg := fmt.Sprintf(format, args...)
	if ifc != nil {
		path = join(ifc.Path, field)
		line = ifc.Line
		if l, ok := g.lines[path]; ok {
			line = l
		}
		if ifc.Name != "" {
			msg = fmt.Sprintf("interface %s: %s", ifc.Name, msg)
		}
	} else {
		path = field
		// the field's line, else its closest ancestor's
		for p := path; p != "" && line == 0; {
			line = g.lines[p]
			i := strings.LastIndexAny(p, ".[")
			if i <= 0 {
				break
			}
			p = p[:i]
		}
	}
	g.errs = append(g.errs, &FieldError{Path: path, Line: line, Msg: msg})
}

func (g *gen) failRoute(r *Route, format string, args ...any) {
	g.errs = append(g.errs, &FieldError{Path: r.Path, Line: r.Line, Msg: fmt.Sprintf(format, args...)})
}

func (g *gen) err() error {
	if len(g.errs) == 0 {
		return nil
	}
	return errors.Join(g.errs...)
}

// Keyfiles validates the state and renders its keyfiles in nmstatectl gc's
// order. The state is not modified.
func (st *State) Keyfiles(opts Options) ([]Keyfile, error) {
	g := &gen{opts: opts, by: map[string]*conn{}, abs: map[string]bool{}, lines: st.lines}
	g.collect(st)
	if err := g.err(); err != nil {
		return nil, err
	}
	g.ports()
	if err := g.err(); err != nil {
		return nil, err
	}
	g.priorities()
	g.checkIP()
	g.routes(st.Routes)
	if err := g.err(); err != nil {
		return nil, err
	}
	g.placeDNS(st.DNS)
	if err := g.err(); err != nil {
		return nil, err
	}
	order := slices.Clone(g.conns)
	slices.SortFunc(order, func(a, b *conn) int { return strings.Compare(a.ifc.Name, b.ifc.Name) })
	slices.SortStableFunc(order, func(a, b *conn) int { return cmp.Compare(a.prio, b.prio) })
	out := make([]Keyfile, 0, len(order))
	for _, c := range order {
		kf := Keyfile{Name: c.id() + ".nmconnection", Content: g.render(c).bytes()}
		if opts.Installer {
			b, err := InstallerKeyfile(kf.Content)
			if err != nil {
				return nil, fmt.Errorf("post-processing %s: %w", kf.Name, err)
			}
			kf.Content = b
		}
		out = append(out, kf)
	}
	return out, nil
}

func (c *conn) id() string {
	if c.ifc.ProfileName != "" {
		return c.ifc.ProfileName
	}
	return c.ifc.Name
}

// collect checks each interface on its own and indexes them by name.
func (g *gen) collect(st *State) {
	firstIdx := map[string]int{}
	// Work on a copy: lenient mode rewrites unknown types.
	ifaces := slices.Clone(st.Interfaces)
	for i := range ifaces {
		ifc := &ifaces[i]
		if ifc.Name == "" {
			g.fail(ifc, "name", "the name is empty; give the interface's name")
			continue
		}
		if j, dup := firstIdx[ifc.Name]; dup {
			if !g.opts.Lenient {
				g.fail(ifc, "name", "duplicate interface name, also defined at interfaces[%d]; nmstate would silently keep only the last entry: merge the two entries into one", j)
				continue
			}
			// nmstate: the later entry replaces the earlier one whole.
			old := g.by[ifc.Name]
			if old != nil {
				old.ifc = ifc
			} else {
				delete(g.abs, ifc.Name)
				if ifc.State != StateAbsent {
					c := &conn{ifc: ifc, idx: i}
					g.conns = append(g.conns, c)
					g.by[ifc.Name] = c
				}
			}
			if ifc.State == StateAbsent && old != nil {
				g.conns = slices.DeleteFunc(g.conns, func(c *conn) bool { return c == old })
				delete(g.by, ifc.Name)
				g.abs[ifc.Name] = true
			}
			continue
		}
		firstIdx[ifc.Name] = i
		if ifc.State == StateAbsent {
			g.abs[ifc.Name] = true
			continue
		}
		c := &conn{ifc: ifc, idx: i}
		g.conns = append(g.conns, c)
		g.by[ifc.Name] = c
	}
	for _, c := range g.conns {
		g.checkIface(c.ifc)
	}
}

func (g *gen) checkIface(ifc *Interface) {
	strict := !g.opts.Lenient
	switch ifc.Type {
	case TypeEthernet, TypeBond, TypeVLAN, TypeLinuxBridge, TypeDummy:
	default:
		if unsupportedTypes[ifc.Type] {
			g.fail(ifc, "type", "type %q is not supported by agentiso (supported: ethernet, bond, vlan, linux-bridge, dummy)", ifc.Type)
			return
		}
		if strict {
			g.fail(ifc, "type", "unknown interface type %q; nmstate would treat it as ethernet with only a warning: use one of ethernet, bond, vlan, linux-bridge, dummy", ifc.Type)
			return
		}
		ifc.Type = TypeEthernet
	}
	if strings.ContainsAny(ifc.Name, "/") || ifc.Name == "." || ifc.Name == ".." {
		g.fail(ifc, "name", "%q is not a valid interface name: it must not be \".\", \"..\" or contain '/'", ifc.Name)
	} else if strict && strings.ContainsFunc(ifc.Name, func(r rune) bool { return r == ':' || unicode.IsSpace(r) }) {
		g.fail(ifc, "name", "%q is not a valid interface name: it must not contain ':' or whitespace", ifc.Name)
	}
	if strings.Contains(ifc.ProfileName, "/") || ifc.ProfileName == "." || ifc.ProfileName == ".." {
		g.fail(ifc, "profile-name", "%q cannot be a file name: it must not be \".\", \"..\" or contain '/'", ifc.ProfileName)
	}
	if strict && len(ifc.Name) > maxIfaceName {
		g.fail(ifc, "name", "name %q is %d bytes long, the kernel allows at most %d: use a shorter name", ifc.Name, len(ifc.Name), maxIfaceName)
	}
	if strict && ifc.MACAddress != "" && !macRE.MatchString(ifc.MACAddress) {
		g.fail(ifc, "mac-address", "%q is not a MAC address: write six hex octets separated by colons, e.g. 52:54:00:12:34:56", ifc.MACAddress)
	}
	if strict && ifc.Identifier == "mac-address" && ifc.MACAddress == "" {
		g.fail(ifc, "identifier", "identifier is mac-address but mac-address is not set, so the profile would match any NIC: add mac-address")
	}
	only := func(present bool, field, typ string) {
		if present && ifc.Type != typ {
			g.fail(ifc, field, "unknown field `%s` for type %s: it is only valid for type %s", field, ifc.Type, typ)
		}
	}
	only(ifc.Bond != nil, "link-aggregation", TypeBond)
	only(ifc.Bridge != nil, "bridge", TypeLinuxBridge)
	only(ifc.VLAN != nil, "vlan", TypeVLAN)
	only(ifc.Ethernet != nil, "ethernet", TypeEthernet)
	switch ifc.Type {
	case TypeBond:
		if ifc.Bond == nil || ifc.Bond.Mode == "" {
			g.fail(ifc, "link-aggregation.mode", "Bond mode is mandatory for new bond interface: %s; set link-aggregation.mode (e.g. active-backup or 802.3ad)", ifc.Name)
		}
		g.checkBond(ifc)
	case TypeVLAN:
		if ifc.VLAN == nil {
			g.fail(ifc, "vlan", "missing field `id`: a vlan interface needs a vlan block with base-iface and id")
			return
		}
		if ifc.VLAN.BaseIface == "" {
			g.fail(ifc, "vlan.base-iface", "Missing 'vlan.base-iface' for interface '%s'; set it to the parent interface", ifc.Name)
		}
		if strict && (ifc.VLAN.ID < 1 || ifc.VLAN.ID > 4094) {
			g.fail(ifc, "vlan.id", "VLAN id %d is outside 1-4094: use a valid 802.1Q VLAN id", ifc.VLAN.ID)
		}
	}
	for i, c := range []*IPConfig{ifc.IPv4, ifc.IPv6} {
		fam := family(i)
		if c == nil {
			continue
		}
		sect := fam.section()
		if strict && c.Enabled == nil {
			switch {
			case len(c.Addresses) > 0:
				g.fail(ifc, sect+".address", "addresses are given but %s.enabled is omitted, so nmstate would disable %s and silently drop them: add \"enabled: true\" under %s", sect, fam.String(), sect)
			case c.DHCP != nil && *c.DHCP:
				g.fail(ifc, sect+".dhcp", "dhcp is true but %s.enabled is omitted, so nmstate would disable %s: add \"enabled: true\" under %s", sect, fam.String(), sect)
			}
		}
	}
	// nmstate ip.rs InterfaceIpv6 sanitize: the token is the host part of
	// SLAAC addresses.
	if v6 := ifc.IPv6; v6 != nil && v6.Token != "" && v6.Token != "::" {
		if isTrue(v6.Enabled) && isFalse(v6.Autoconf) {
			g.fail(ifc, "ipv6.token", "Desired IPv6 token '%s' cannot be applied with IPv6 autoconf disabled, you may remove IPv6 token by setting as empty string or `::`", v6.Token)
		}
		if a, err := netip.ParseAddr(v6.Token); err != nil || !a.Is6() || a.Zone() != "" {
			g.fail(ifc, "ipv6.token", "Desired IPv6 token '%s' is not a valid IPv6 address: write the interface identifier as an IPv6 address, e.g. ::fac1", v6.Token)
		} else if b := a.As16(); [8]byte(b[:8]) != [8]byte{} {
			g.fail(ifc, "ipv6.token", "Desired IPv6 token should be lead by 64 bits 0. But got %s: keep only the interface identifier, e.g. ::fac1", v6.Token)
		}
	}
}

// checkBond applies nmstate's bond rules (ifaces/bond.rs: the checks of
// post_inter_ifaces_process_bond and BondInterface::sanitize, nmstate
// 614c66dc), which nmstatectl gc runs too.
func (g *gen) checkBond(ifc *Interface) {
	b := ifc.Bond
	if b == nil {
		return
	}
	opt := func(name string) (string, bool) {
		for _, o := range b.Options {
			if o.Name == name {
				return o.Value, true
			}
		}
		return "", false
	}
	optPath := func(name string) string {
		for alias, canon := range bondOptionAliases {
			if canon == name {
				if _, ok := g.lines[join(ifc.Path, "link-aggregation.options."+alias)]; ok {
					return "link-aggregation.options." + alias
				}
			}
		}
		return "link-aggregation.options." + name
	}
	if f, _ := opt("fail_over_mac"); f == "active" && b.Mode == "active-backup" && ifc.MACAddress != "" {
		g.fail(ifc, "mac-address", "MAC address cannot be specified in bond interface along with fail_over_mac active on active backup mode: remove mac-address, or use another fail_over_mac")
	}
	if v, ok := opt("ad_actor_system"); ok && strings.HasPrefix(strings.ToUpper(v), "01:00:5E") {
		g.fail(ifc, optPath("ad_actor_system"), "The ad_actor_system bond option cannot be an IANA multicast address(prefix with 01:00:5E): use a unicast MAC")
	}
	mii, okM := opt("miimon")
	arp, okA := opt("arp_interval")
	if okM && okA && mii != "0" && arp != "0" {
		g.fail(ifc, optPath("arp_interval"), "Bond miimon and arp interval are not compatible options: set one of them to 0 or remove it")
	}
	if v, _ := opt("balance_slb"); v == "1" {
		if x, _ := opt("xmit_hash_policy"); b.Mode != "balance-xor" || x != "vlan+srcmac" {
			g.fail(ifc, optPath("balance_slb"), "To enable balance-slb, bond mode should be balance-xor and xmit_hash_policy: 'vlan+srcmac'")
		}
	}
	if b.PortsGiven && len(b.PortsConfig) > 0 {
		ports := slices.Sorted(slices.Values(b.Ports))
		var conf []string
		for _, pc := range b.PortsConfig {
			conf = append(conf, pc.Name)
		}
		slices.Sort(conf)
		if !slices.Equal(ports, conf) {
			g.fail(ifc, "link-aggregation.ports-config", "The port names specified in `port` conflict with the port names specified in `ports-config` for bond interface: %s (port: %s; ports-config: %s): list the same ports in both, or drop `port`", ifc.Name, strings.Join(ports, ", "), strings.Join(conf, ", "))
		}
	}
	queue := map[uint64]string{}
	for i, pc := range b.PortsConfig {
		if pc.QueueID == nil || *pc.QueueID == 0 {
			continue
		}
		if other, dup := queue[*pc.QueueID]; dup {
			g.fail(ifc, fmt.Sprintf("link-aggregation.ports-config[%d].queue-id", i), "Port %s and %s of Bond %s are sharing the same queue-id which is not supported by linux kernel yet: give each port its own queue-id", other, pc.Name, ifc.Name)
			continue
		}
		queue[*pc.QueueID] = pc.Name
	}
}

// family is an IP address family. Its value indexes the per-family arrays of
// a connection (routes, dns).
type family int

const (
	ipv4 family = iota
	ipv6
)

// familyOf is the family of an address (IPv4-mapped IPv6 counts as IPv4).
func familyOf(a netip.Addr) family {
	if a.Unmap().Is6() {
		return ipv6
	}
	return ipv4
}

// section is the family's NMState and keyfile section name.
func (f family) section() string {
	if f == ipv6 {
		return "ipv6"
	}
	return "ipv4"
}

// String is the family's name in messages.
func (f family) String() string {
	if f == ipv6 {
		return "IPv6"
	}
	return "IPv4"
}

func isController(typ string) bool { return typ == TypeBond || typ == TypeLinuxBridge }

// ports resolves controller/port relations and auto-creates undefined ports.
func (g *gen) ports() {
	users := slices.Clone(g.conns)
	assign := func(port string, ctrl *conn, field string) {
		ref := &ctrlRef{name: ctrl.ifc.Name, typ: ctrl.ifc.Type}
		if g.abs[port] {
			g.fail(ctrl.ifc, field, "port %s is marked absent: remove it from the port list or set its state to up", port)
			return
		}
		pc, ok := g.by[port]
		if !ok && (port == "" || port == "." || port == ".." || strings.Contains(port, "/")) {
			g.fail(ctrl.ifc, field, "%q is not a valid port name: give the port's interface name", port)
			return
		}
		if !ok {
			// nmstate: "Assuming undefined port X as ethernet".
			pc = &conn{ifc: &Interface{Name: port, Type: TypeEthernet, State: StateUp}, auto: true, idx: -1}
			if !g.opts.Lenient && len(port) > maxIfaceName {
				g.fail(ctrl.ifc, field, "port name %q is %d bytes long, the kernel allows at most %d: use a shorter name", port, len(port), maxIfaceName)
			}
			g.conns = append(g.conns, pc)
			g.by[port] = pc
		}
		if pc.ctrl != nil && pc.ctrl.name != ref.name {
			g.fail(ctrl.ifc, field, "Port %s is overbooked by two controller: %s, %s; list it under one controller only", port, pc.ctrl.name, ref.name)
			return
		}
		if port == ctrl.ifc.Name {
			g.fail(ctrl.ifc, field, "interface cannot be its own port")
			return
		}
		pc.ctrl = ref
	}
	for _, c := range users {
		switch {
		case c.ifc.Type == TypeBond && c.ifc.Bond != nil:
			for i, p := range c.ifc.Bond.Ports {
				assign(p, c, fmt.Sprintf("link-aggregation.port[%d]", i))
			}
		case c.ifc.Type == TypeLinuxBridge && c.ifc.Bridge != nil:
			for i, p := range c.ifc.Bridge.Ports {
				assign(p.Name, c, fmt.Sprintf("bridge.port[%d]", i))
			}
		}
	}
	for _, c := range users {
		if c.ifc.Controller == nil {
			continue
		}
		name := *c.ifc.Controller
		if name == "" {
			// nmstate inter_ifaces_controller.rs
			// validate_controller_in_other_port_list.
			if c.ctrl != nil && c.ifc.State != StateDown {
				g.fail(c.ifc, "controller", "Interface %s desired to detach controller via controller property set to '', but still been listed as port of controller %s: remove it from %s's port list, or drop `controller: \"\"`", c.ifc.Name, c.ctrl.name, c.ctrl.name)
			}
			continue
		}
		cc, ok := g.by[name]
		if !ok || cc.auto || !isController(cc.ifc.Type) {
			g.fail(c.ifc, "controller", "Interface %s desired controller %s not found: define %s as a bond or linux-bridge", c.ifc.Name, name, name)
			continue
		}
		// nmstate validate_controller_and_port_list_confliction: a
		// controller that lists its ports must list this one.
		if listed, given := portList(cc.ifc); given && !slices.Contains(listed, c.ifc.Name) && (c.ctrl == nil || c.ctrl.name == name) {
			g.fail(c.ifc, "controller", "Interface %s has controller %s but not listed in port list of controller interface: add %s to %s's port list, or remove `controller`", c.ifc.Name, name, c.ifc.Name, name)
			continue
		}
		assign(c.ifc.Name, cc, "controller")
	}
}

// portList is a controller's port list and whether the YAML gives one.
func portList(ifc *Interface) ([]string, bool) {
	switch {
	case ifc.Type == TypeBond && ifc.Bond != nil:
		return ifc.Bond.Ports, ifc.Bond.PortsGiven
	case ifc.Type == TypeLinuxBridge && ifc.Bridge != nil:
		var names []string
		for _, p := range ifc.Bridge.Ports {
			names = append(names, p.Name)
		}
		return names, ifc.Bridge.PortsGiven
	}
	return nil, false
}

// priorities computes nmstate's "up priority": controllers and parents
// before their ports and children. Auto-created ports keep 0.
func (g *gen) priorities() {
	state := map[*conn]int{} // 0 unvisited, 1 visiting, 2 done
	var visit func(c *conn) int
	visit = func(c *conn) int {
		if c.auto {
			return 0
		}
		switch state[c] {
		case 1:
			g.fail(c.ifc, "", "controller/parent loop: an interface cannot be (indirectly) its own controller or parent")
			return 0
		case 2:
			return c.prio
		}
		state[c] = 1
		p := 0
		if c.ctrl != nil {
			if cc := g.by[c.ctrl.name]; cc != nil {
				p = max(p, visit(cc)+1)
			}
		}
		if c.ifc.Type == TypeVLAN && c.ifc.VLAN != nil {
			if pc := g.by[c.ifc.VLAN.BaseIface]; pc != nil && !pc.auto {
				p = max(p, visit(pc)+1)
			}
		}
		c.prio = p
		state[c] = 2
		return p
	}
	for _, c := range g.conns {
		visit(c)
	}
	g.nmstateUpOrder()
}

// upOrderPasses is how many passes nmstate makes over the interfaces, in
// YAML order, to give every port a priority after its controller's
// (ifaces/inter_ifaces.rs INTERFACES_SET_PRIORITY_MAX_RETRY, nmstate
// 614c66dc).
const upOrderPasses = 4

// nmstateUpOrder fails the state when nmstate could not order it: each
// pass gives a port its priority once its controller has one (set in an
// earlier pass, set earlier in the same pass, or none needed because it
// has no controller itself); after upOrderPasses passes every port must
// have one. Listing controllers before their ports always succeeds.
func (g *gen) nmstateUpOrder() {
	done := map[*conn]bool{}
	var users []*conn
	for _, c := range g.userConns() {
		if c.ifc.State != StateDown {
			users = append(users, c)
		}
	}
	ready := func(c *conn) bool { return c.ctrl == nil || done[c] }
	for pass := 0; pass < upOrderPasses; pass++ {
		ok := true
		thisPass := map[*conn]bool{}
		for _, c := range users {
			if ready(c) {
				continue
			}
			cc := g.by[c.ctrl.name]
			if cc == nil {
				continue
			}
			if thisPass[cc] || ready(cc) {
				thisPass[c] = true
			} else {
				ok = false
			}
		}
		for c := range thisPass {
			done[c] = true
		}
		if ok {
			return
		}
	}
	for _, c := range users {
		if !ready(c) {
			g.fail(c.ifc, "controller", "Failed to set up priority: nmstate only support nested interface up to 4 levels. To support more nest level, please order the interfaces in desire state to place controller before its ports (%s's controller chain is listed after it)", c.ifc.Name)
			return
		}
	}
}

func enabled(c *IPConfig) bool { return c != nil && c.Enabled != nil && *c.Enabled }
func isTrue(b *bool) bool      { return b != nil && *b }
func isFalse(b *bool) bool     { return b != nil && !*b }

// ipOn reports whether the interface may carry IP of family fam.
func (c *conn) ipOn(fam family) bool {
	if c.ctrl != nil || c.auto {
		return false
	}
	if fam == ipv4 {
		return enabled(c.ifc.IPv4)
	}
	return enabled(c.ifc.IPv6)
}

func (c *conn) ipCfg(fam family) *IPConfig {
	if fam == ipv4 {
		return c.ifc.IPv4
	}
	return c.ifc.IPv6
}

func (c *conn) auto6() bool {
	v6 := c.ifc.IPv6
	return isTrue(v6.DHCP) || isTrue(v6.Autoconf)
}

// isAuto reports dynamic addressing for family fam (IP assumed enabled).
func (c *conn) isAuto(fam family) bool {
	if fam == ipv4 {
		return isTrue(c.ifc.IPv4.DHCP)
	}
	return c.auto6()
}

func (g *gen) checkIP() {
	for _, c := range g.conns {
		if c.auto {
			continue
		}
		ifc := c.ifc
		if c.ctrl != nil {
			for _, fam := range []family{ipv4, ipv6} {
				if enabled(c.ipCfg(fam)) {
					g.fail(ifc, fam.section()+".enabled", "Interface %s cannot have IP enabled as it is attached to a controller where IP is not allowed (%s): set %s.enabled to false or remove the %s block", ifc.Name, c.ctrl.name, fam.section(), fam.section())
				}
			}
		}
		if enabled(ifc.IPv6) && !isTrue(ifc.IPv6.DHCP) && isTrue(ifc.IPv6.Autoconf) {
			g.fail(ifc, "ipv6.autoconf", "Autoconf without DHCP is not supported yet: set ipv6.dhcp to true as well, or autoconf to false")
		}
		if c.ipOn(ipv6) && ifc.MTU != nil && *ifc.MTU < 1280 {
			g.fail(ifc, "mtu", "MTU should be >= 1280 when IPv6 is enabled on interface %s, but got mtu: %d", ifc.Name, *ifc.MTU)
		}
	}
}

func routeDesc(r *Route) string {
	s := "destination: " + r.Destination
	if r.NextHopInterface != "" {
		s += " next-hop-interface: " + r.NextHopInterface
	}
	if r.NextHopAddress != "" {
		s += " next-hop-address: " + r.NextHopAddress
	}
	return s
}

// parseDest parses a route destination and returns its network and family.
func parseDest(s string) (netip.Prefix, string) {
	addrStr, lenStr, hasLen := strings.Cut(s, "/")
	addr, err := netip.ParseAddr(addrStr)
	if err != nil || addr.Zone() != "" {
		return netip.Prefix{}, fmt.Sprintf("invalid IP address syntax in destination %q", s)
	}
	addr = addr.Unmap()
	maxLen := addr.BitLen()
	n := maxLen
	if hasLen {
		n, err = strconv.Atoi(lenStr)
		if err != nil || n < 0 {
			return netip.Prefix{}, fmt.Sprintf("invalid prefix length in destination %q", s)
		}
		if n > maxLen {
			return netip.Prefix{}, fmt.Sprintf("Invalid %s network prefix length '%d' in '%s', should be smaller than %d'", famName(addr), n, s, maxLen)
		}
	}
	pfx := netip.PrefixFrom(addr, n).Masked()
	if addr.Is4() && n >= 8 && pfx.Addr().As4()[0] == 0 {
		return netip.Prefix{}, fmt.Sprintf("0.0.0.0/8 and its subnet cannot be used as the route destination, got %s: please use the default gateway 0.0.0.0/0 instead", s)
	}
	return pfx, ""
}

func (g *gen) routes(routes []Route) {
	for i := range routes {
		r := &routes[i]
		if !g.routeValues(r) || r.State == StateAbsent {
			continue
		}
		if r.Destination == "" {
			g.failRoute(r, "missing field `destination`: give the route's destination network, e.g. 0.0.0.0/0 for the default route")
			continue
		}
		dest, msg := parseDest(r.Destination)
		if msg != "" {
			g.failRoute(r, "%s", msg)
			continue
		}
		fam := familyOf(dest.Addr())
		nh := ""
		if r.NextHopAddress != "" {
			a, err := netip.ParseAddr(r.NextHopAddress)
			if err != nil || a.Zone() != "" {
				g.failRoute(r, "invalid IP address syntax in next-hop-address %q", r.NextHopAddress)
				continue
			}
			a = a.Unmap()
			if a.Is6() != dest.Addr().Is6() && !g.opts.Lenient {
				g.failRoute(r, "next-hop-address %s is %s but destination %s is %s: use a next hop of the destination's family (nmstate accepts this, but the route cannot work)", a, famName(a), r.Destination, famName(dest.Addr()))
				continue
			}
			nh = a.String()
		}
		if r.NextHopInterface == "" {
			g.failRoute(r, "Route with empty next hop interface is not supported (%s): set next-hop-interface to the interface that reaches the next hop", routeDesc(r))
			continue
		}
		if g.abs[r.NextHopInterface] {
			g.failRoute(r, "The next hop interface of desired Route '%s' has been marked as absent: route via an interface that is up", routeDesc(r))
			continue
		}
		c, ok := g.by[r.NextHopInterface]
		if !ok {
			if g.opts.Lenient {
				continue // nmstate drops it silently
			}
			g.failRoute(r, "next-hop-interface %q is not defined in interfaces, so nmstate would silently drop this route: add the interface or fix the name", r.NextHopInterface)
			continue
		}
		if !c.ipOn(fam) {
			g.failRoute(r, "The next hop interface of desired Route '%s' has been marked as %s disabled: enable %s on %s (%s.enabled: true) or route via another interface", routeDesc(r), fam.String(), fam.String(), c.ifc.Name, fam.section())
			continue
		}
		e := routeEntry{iface: r.NextHopInterface, dest: dest.String(), nextHop: nh, source: r.Source, typ: r.RouteType, table: 254}
		if r.TableID != nil && *r.TableID != 0 {
			e.table = *r.TableID
		}
		if r.Metric != nil && *r.Metric >= 0 {
			e.metric = *r.Metric
		}
		if r.Weight != nil {
			e.weight, e.hasW = *r.Weight, true
		}
		if r.Cwnd != nil {
			e.cwnd, e.hasCwnd = *r.Cwnd, true
		}
		c.routes[fam] = append(c.routes[fam], e)
	}
	for _, c := range g.conns {
		for fam := range c.routes {
			rs := c.routes[fam]
			slices.SortStableFunc(rs, routeCmp)
			c.routes[fam] = slices.CompactFunc(rs, func(a, b routeEntry) bool { return routeCmp(a, b) == 0 })
		}
	}
}

// routeValues applies nmstate's checks of a route's own values
// (route.rs: Routes::validate and RouteEntry::sanitize, nmstate 614c66dc),
// which run for every entry, state: absent included. It reports whether
// the route passed.
func (g *gen) routeValues(r *Route) bool {
	n := len(g.errs)
	if r.State == StateAbsent && r.Destination == "" && r.Line > 0 {
		if _, given := g.lines[r.Path+".destination"]; given {
			g.failRoute(r, "Invalid IP address syntax in destination \"\": an absent route needs a destination network, or remove destination to match any")
		}
	}
	if r.State == StateAbsent && r.Destination != "" {
		if _, msg := parseDest(r.Destination); msg != "" {
			g.failRoute(r, "%s", msg)
		}
	}
	if r.State == StateAbsent && r.NextHopAddress != "" {
		if _, err := netip.ParseAddr(r.NextHopAddress); err != nil {
			g.failRoute(r, "invalid IP address syntax in next-hop-address %q", r.NextHopAddress)
		}
	}
	if r.State != StateAbsent && r.RouteType != "" && ((r.NextHopInterface != "" && r.NextHopInterface != "lo") || r.NextHopAddress != "") {
		g.failRoute(r, "A %s Route cannot have a next hop: remove next-hop-address and next-hop-interface from this %s route", strings.ToUpper(r.RouteType[:1])+r.RouteType[1:], r.RouteType)
	}
	if r.Source != "" {
		if a, err := netip.ParseAddr(r.Source); err != nil || a.Zone() != "" {
			g.failRoute(r, "Failed to parse IP address '%s': give the source as an IP address", r.Source)
		}
	}
	if r.Weight != nil {
		if *r.Weight < 1 {
			g.failRoute(r, "Invalid ECMP route weight %d, should be in the range of 1 to 256", *r.Weight)
		} else if a, _, _ := strings.Cut(r.Destination, "/"); strings.Contains(a, ":") {
			g.failRoute(r, "IPv6 ECMP route with weight is not supported yet: remove weight from this IPv6 route")
		}
	}
	if r.Cwnd != nil && *r.Cwnd == 0 {
		g.failRoute(r, "The value of 'cwnd' cannot be 0: give a congestion window of at least 1, or remove cwnd")
	}
	return len(g.errs) == n
}

func routeCmp(a, b routeEntry) int {
	return cmp.Or(
		cmp.Compare(a.table, b.table),
		strings.Compare(a.iface, b.iface),
		strings.Compare(a.dest, b.dest),
		strings.Compare(a.nextHop, b.nextHop),
		strings.Compare(a.source, b.source),
		cmp.Compare(a.weight, b.weight),
		cmp.Compare(a.cwnd, b.cwnd),
	)
}

// userConns returns the interfaces defined in the YAML, in YAML order.
func (g *gen) userConns() []*conn {
	var out []*conn
	for _, c := range g.conns {
		if !c.auto {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b *conn) int { return cmp.Compare(a.idx, b.idx) })
	return out
}

// DNS options nmstate accepts (dns.rs, nmstate 614c66dc): without a value,
// and with one ("ndots:2").
var (
	dnsOptionsNoValue   = []string{"debug", "edns0", "inet6", "ip6-bytestring", "ip6-dotint", "no-aaaa", "no-check-names", "no-ip6-dotint", "no-reload", "no-tld-query", "rotate", "single-request", "single-request-reopen", "trust-ad", "use-vc"}
	dnsOptionsWithValue = []string{"ndots", "timeout", "attempts"}
)

// checkDNSOptions applies nmstate's DnsClientState::sanitize to options.
func (g *gen) checkDNSOptions(opts []string) {
	supported := strings.Join(dnsOptionsNoValue, ", ") + " and these with values: " + strings.Join(dnsOptionsWithValue, ":n, ") + ":n"
	for i, o := range opts {
		path := fmt.Sprintf("dns-resolver.config.options[%d]", i)
		if name, _, hasValue := strings.Cut(o, ":"); hasValue {
			if !slices.Contains(dnsOptionsWithValue, name) {
				g.fail(nil, path, "Option '%s' is not supported to hold a value, only support these without value: %s", name, supported)
			}
		} else if !slices.Contains(dnsOptionsNoValue, o) {
			g.fail(nil, path, "Unsupported DNS option %s, only support these without value: %s", o, supported)
		}
	}
}

func (g *gen) placeDNS(d DNSConfig) {
	var fams [2][]string
	var zoneIface string
	var zoneIfaces []string
	order := []family{}
	g.checkDNSOptions(d.Options)
	for _, s := range d.Servers {
		a, err := netip.ParseAddr(s)
		if err != nil {
			g.fail(nil, "dns-resolver.config.server", "Invalid DNS server string %s: give an IP address", s)
			continue
		}
		fam := familyOf(a)
		if a.Zone() != "" {
			zoneIface = a.Zone()
			// nmstate dns.rs validate_ipv6_link_local_address_dns_srv.
			c, ok := g.by[zoneIface]
			switch {
			case !ok || c.auto:
				g.fail(nil, "dns-resolver.config.server", "Desired IPv6 link local DNS server %s is pointing to interface %s which does not exist: define %s in interfaces or fix the name after '%%'", s, zoneIface, zoneIface)
				continue
			case !c.ipOn(ipv6) || !(c.isAuto(ipv6) || len(c.ipCfg(ipv6).Addresses) > 0):
				g.fail(nil, "dns-resolver.config.server", "Interface %s has IPv6 disabled, hence cannot hold desired IPv6 link local DNS server %s: enable IPv6 (static or DHCP/autoconf) on %s", zoneIface, s, zoneIface)
				continue
			}
			if !slices.Contains(zoneIfaces, zoneIface) {
				zoneIfaces = append(zoneIfaces, zoneIface)
			}
			if len(zoneIfaces) == 2 {
				g.fail(nil, "dns-resolver.config.server", "Only support IPv6 link local DNS name server(s) pointing to a single interface, but got '%s': use link-local servers of one interface only", strings.Join(zoneIfaces, " "))
			}
		}
		if len(order) == 0 || order[len(order)-1] != fam {
			order = append(order, fam)
		}
		fams[fam] = append(fams[fam], a.WithZone("").Unmap().String())
	}
	if len(g.errs) > 0 {
		return
	}
	if len(order) > 2 {
		g.fail(nil, "dns-resolver.config.server", "Placing IPv4/IPv6 nameserver in the middle of IPv6/IPv4 nameservers is not supported yet: list all servers of one family first")
		return
	}
	users := g.userConns()
	if len(order) == 0 {
		if len(d.Search) == 0 && len(d.Options) == 0 {
			return
		}
		pick := func(pred func(c *conn, fam family) bool) (*conn, family) {
			for _, fam := range []family{ipv6, ipv4} {
				for _, c := range users {
					if c.ipOn(fam) && pred(c, fam) {
						return c, fam
					}
				}
			}
			return nil, ipv4
		}
		c, fam := pick(func(c *conn, fam family) bool { return c.isAuto(fam) })
		if c == nil {
			c, fam = pick(func(*conn, family) bool { return true })
		}
		if c == nil {
			g.fail(nil, "dns-resolver.config.search", "Failed to find suitable(IP enabled) interface for DNS searches '%s': enable IPv4 or IPv6 on an interface", strings.Join(d.Search, " "))
			return
		}
		c.dns[fam] = dnsKeys{set: true, search: d.Search, options: d.Options, priority: 40}
		return
	}
	for i, fam := range order {
		var holder *conn
		if fam == ipv6 && zoneIface != "" {
			if c, ok := g.by[zoneIface]; ok && c.ipOn(ipv6) {
				holder = c
			}
		}
		preferred := func(c *conn) bool {
			cfg := c.ipCfg(fam)
			if c.isAuto(fam) {
				return isFalse(cfg.AutoDNS)
			}
			return len(cfg.Addresses) > 0
		}
		valid := func(c *conn) bool {
			return c.isAuto(fam) || len(c.ipCfg(fam).Addresses) > 0
		}
		for _, pred := range []func(*conn) bool{preferred, valid} {
			for _, c := range users {
				if holder == nil && c.ipOn(fam) && pred(c) {
					holder = c
				}
			}
		}
		if holder == nil {
			g.fail(nil, "dns-resolver.config.server", "Failed to find suitable(IP enabled) interface for DNS server [%s]: enable %s with a static address or DHCP on an interface", quoteList(fams[fam]), fam.String())
			continue
		}
		k := dnsKeys{set: true, servers: fams[fam], priority: 50}
		if i == 0 {
			k.priority = 40
			k.search = d.Search
			k.options = d.Options
		}
		holder.dns[fam] = k
	}
}

func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// uuid5 returns the RFC 4122 version 5 UUID of name in the URL namespace.
func uuid5(name string) string {
	ns := []byte{0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	h := sha1.New()
	h.Write(ns)
	h.Write([]byte(name))
	b := h.Sum(nil)[:16]
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

var nmType = map[string]string{
	TypeEthernet: "802-3-ethernet", TypeBond: "bond", TypeVLAN: "vlan",
	TypeLinuxBridge: "bridge", TypeDummy: "dummy",
}

// render builds the keyfile of one connection, one section renderer per
// concern: the connection itself, its controller role (bond, bridge), its
// port role, IP, ethernet properties and VLAN.
func (g *gen) render(c *conn) *keyfile {
	kf := &keyfile{}
	renderConnection(c, kf)
	if ifc := c.ifc; ifc.Type == TypeBond && ifc.Bond != nil {
		renderBond(ifc.Bond, kf)
	}
	if c.ifc.Type == TypeLinuxBridge {
		renderBridge(c.ifc.Bridge, kf)
	}
	if c.ctrl != nil {
		g.renderPort(c, kf)
	}
	if c.ctrl == nil && !c.auto {
		g.renderIP(c, kf, ipv4)
		g.renderIP(c, kf, ipv6)
	}
	renderEthernet(c.ifc, kf)
	if c.ifc.Type == TypeVLAN && c.ifc.VLAN != nil {
		renderVLAN(c.ifc.VLAN, kf)
	}
	kf.sortKeys()
	return kf
}

// renderConnection writes the [connection] section.
func renderConnection(c *conn, kf *keyfile) {
	ifc := c.ifc
	con := kf.section("connection")
	con.set("id", c.id())
	con.set("uuid", uuid5(ifc.Type+"://"+ifc.Name))
	con.set("type", nmType[ifc.Type])
	if ifc.Identifier != "mac-address" {
		con.set("interface-name", ifc.Name)
	}
	con.set("autoconnect", strconv.FormatBool(ifc.State != StateDown))
	if isController(ifc.Type) {
		con.set("autoconnect-slaves", "1")
	} else {
		con.set("autoconnect-slaves", "-1")
	}
	if c.ctrl != nil {
		con.set("master", c.ctrl.name)
		if c.ctrl.typ == TypeBond {
			con.set("slave-type", "bond")
		} else {
			con.set("slave-type", "bridge")
		}
	}
}

// renderBond writes a bond controller's [bond] section, leaving out the
// options nmstate drops because they are defaults or meaningless.
func renderBond(b *BondConfig, kf *keyfile) {
	s := kf.section("bond")
	s.set("mode", b.Mode)
	opts := map[string]string{}
	for _, o := range b.Options {
		opts[o.Name] = o.Value
	}
	if opts["arp_interval"] == "0" {
		delete(opts, "arp_ip_target")
	}
	if opts["arp_missed_max"] == "2" {
		delete(opts, "arp_missed_max")
	}
	for k, v := range opts {
		if k == "balance_slb" {
			k = "balance-slb" // NetworkManager's name (nmstate nm/settings/bond.rs)
		}
		s.set(k, v)
	}
}

// renderBridge writes a Linux bridge controller's [bridge] section.
func renderBridge(b *BridgeConfig, kf *keyfile) {
	s := kf.section("bridge")
	if b == nil {
		return
	}
	for k, v := range b.Options {
		s.set(k, v)
	}
	if b.PortsGiven {
		s.set("vlan-filtering", "false")
	}
}

// renderPort writes the per-port settings that the controller's own
// configuration holds for this port: [bond-port] or [bridge-port].
func (g *gen) renderPort(c *conn, kf *keyfile) {
	cc := g.by[c.ctrl.name]
	switch c.ctrl.typ {
	case TypeBond:
		if cc == nil || cc.ifc.Bond == nil {
			return
		}
		for _, pc := range cc.ifc.Bond.PortsConfig {
			if pc.Name != c.ifc.Name {
				continue
			}
			prio := pc.Priority != nil && *pc.Priority != 0
			qid := pc.QueueID != nil && *pc.QueueID != 0
			if !prio && !qid {
				continue
			}
			s := kf.section("bond-port")
			if prio {
				s.set("prio", strconv.FormatInt(*pc.Priority, 10))
			}
			if qid {
				s.set("queue-id", strconv.FormatUint(*pc.QueueID, 10))
			}
		}
	case TypeLinuxBridge:
		s := kf.section("bridge-port")
		if cc == nil || cc.ifc.Bridge == nil {
			return
		}
		for _, p := range cc.ifc.Bridge.Ports {
			if p.Name == c.ifc.Name {
				for k, v := range p.Options {
					s.set(k, v)
				}
			}
		}
	}
}

// renderEthernet writes the [ethernet] section when any link-layer property
// is set: MAC address (matched or cloned), MTU, negotiation, promiscuity.
func renderEthernet(ifc *Interface, kf *keyfile) {
	eth := map[string]string{}
	if ifc.MACAddress != "" {
		if ifc.Identifier == "mac-address" {
			eth["mac-address"] = strings.ToUpper(ifc.MACAddress)
		} else {
			eth["cloned-mac-address"] = strings.ToUpper(ifc.MACAddress)
		}
	}
	if ifc.MTU != nil {
		eth["mtu"] = strconv.FormatUint(*ifc.MTU, 10)
	}
	if e := ifc.Ethernet; e != nil {
		if e.AutoNegotiation != nil {
			eth["auto-negotiate"] = strconv.FormatBool(*e.AutoNegotiation)
		}
		if e.Speed != nil {
			eth["speed"] = strconv.FormatUint(*e.Speed, 10)
		}
		if e.Duplex != "" {
			eth["duplex"] = e.Duplex
		}
	}
	if ifc.AcceptAllMACAddresses != nil {
		eth["accept-all-mac-addresses"] = map[bool]string{true: "1", false: "0"}[*ifc.AcceptAllMACAddresses]
	}
	if len(eth) == 0 {
		return
	}
	s := kf.section("ethernet")
	for k, v := range eth {
		s.set(k, v)
	}
}

// renderVLAN writes the [vlan] section; flags is NetworkManager's bit set
// (1 reorder headers, 2 GVRP, 4 loose binding, 8 MVRP).
func renderVLAN(v *VLANConfig, kf *keyfile) {
	s := kf.section("vlan")
	flags := 0
	if v.ReorderHeaders == nil || *v.ReorderHeaders {
		flags |= 1
	}
	if v.RegistrationProtocol == "gvrp" {
		flags |= 2
	}
	if isTrue(v.LooseBinding) {
		flags |= 4
	}
	if v.RegistrationProtocol == "mvrp" {
		flags |= 8
	}
	s.set("flags", strconv.Itoa(flags))
	s.set("id", strconv.FormatUint(v.ID, 10))
	s.set("parent", v.BaseIface)
	if v.Protocol == "802.1ad" {
		s.set("protocol", "802.1ad")
	}
}

// renderIP writes the [ipv4] or [ipv6] section: method, addresses, the
// dynamic-addressing settings, DNS and routes.
func (g *gen) renderIP(c *conn, kf *keyfile, fam family) {
	cfg := c.ipCfg(fam)
	s := kf.section(fam.section())
	s.set("dhcp-timeout", "2147483647")
	if fam == ipv6 && cfg != nil {
		if cfg.AddrGenMode == "stable-privacy" {
			s.set("addr-gen-mode", "1")
		} else {
			s.set("addr-gen-mode", "0")
		}
	}
	if !c.ipOn(fam) {
		s.set("method", "disabled")
		return
	}
	auto := c.isAuto(fam)
	s.set("method", ipMethod(c, cfg, fam, auto))
	for i, a := range cfg.Addresses {
		s.set("address"+strconv.Itoa(i), a.String())
	}
	if auto {
		renderDynamic(cfg, s, fam)
	}
	if d := c.dns[fam]; d.set {
		s.set("dns", strings.Join(d.servers, ";"))
		s.set("dns-search", strings.Join(d.search, ";"))
		s.set("dns-options", strings.Join(d.options, ";"))
		s.set("dns-priority", strconv.Itoa(d.priority))
	}
	for i, r := range c.routes[fam] {
		renderRoute(s, i, r)
	}
}

// ipMethod is NetworkManager's addressing method for an IP-enabled family.
func ipMethod(c *conn, cfg *IPConfig, fam family, auto bool) string {
	switch {
	case fam == ipv4 && auto:
		return "auto"
	case fam == ipv6 && isTrue(cfg.DHCP) && isTrue(cfg.Autoconf):
		return "auto"
	case fam == ipv6 && isTrue(cfg.DHCP):
		return "dhcp"
	case len(cfg.Addresses) > 0 || len(c.routes[fam]) > 0:
		return "manual"
	case fam == ipv4:
		return "disabled"
	default:
		return "link-local"
	}
}

// renderDynamic writes the DHCP/autoconf settings of a dynamically
// addressed family.
func renderDynamic(cfg *IPConfig, s *section, fam family) {
	if fam == ipv4 {
		id := cfg.DHCPClientID
		switch id {
		case "", "ll":
			id = "mac"
		case "iaid+duid":
			id = "duid"
		}
		s.set("dhcp-client-id", id)
	} else {
		duid := cfg.DHCPDUID
		if duid == "" {
			duid = "ll"
		}
		s.set("dhcp-duid", duid)
		s.set("dhcp-iaid", "mac")
		s.set("ra-timeout", "2147483647")
		s.set("token", cfg.Token)
	}
	s.set("dhcp-send-hostname", strconv.FormatBool(!isFalse(cfg.DHCPSendHostname)))
	if h := cfg.DHCPCustomHostname; h != "" {
		if fam == ipv4 && strings.Contains(h, ".") {
			s.set("dhcp-fqdn", h)
		} else {
			s.set("dhcp-hostname", h)
		}
	}
	s.set("ignore-auto-dns", strconv.FormatBool(isFalse(cfg.AutoDNS)))
	s.set("never-default", strconv.FormatBool(isFalse(cfg.AutoGateway)))
	s.set("ignore-auto-routes", strconv.FormatBool(isFalse(cfg.AutoRoutes)))
	if cfg.AutoRouteTableID != nil {
		s.set("route-table", strconv.FormatUint(*cfg.AutoRouteTableID, 10))
	}
	if cfg.AutoRouteMetric != nil {
		s.set("route-metric", strconv.FormatUint(*cfg.AutoRouteMetric, 10))
	}
}

// renderRoute writes route<i> and its route<i>_options.
func renderRoute(s *section, i int, r routeEntry) {
	n := strconv.Itoa(i)
	s.set("route"+n, fmt.Sprintf("%s,%s,%d", r.dest, r.nextHop, r.metric))
	opt := "table=" + strconv.FormatUint(r.table, 10)
	if r.hasW {
		opt += ",weight=" + strconv.FormatUint(r.weight, 10)
	}
	if r.typ != "" {
		opt += ",type=" + r.typ
	}
	if r.hasCwnd {
		opt += ",cwnd=" + strconv.FormatUint(r.cwnd, 10) + ",lock-cwnd=true"
	}
	if r.source != "" {
		opt += ",src=" + r.source
	}
	s.set("route"+n+"_options", opt)
}
