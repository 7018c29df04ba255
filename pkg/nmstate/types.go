// Package nmstate turns NMState YAML into NetworkManager keyfiles, byte-identical to nmstatectl gc.
//
// It covers the subset OpenShift agent installs use (ethernet, bond, vlan,
// linux-bridge and dummy interfaces, static and dynamic IP, routes and DNS),
// parses strictly (unknown fields are errors that carry their path and
// line) and rejects several inputs nmstate itself silently accepts. See
// docs/nmstate.md.
package nmstate

import "net/netip"

// Interface types understood by this package.
const (
	TypeEthernet    = "ethernet"
	TypeBond        = "bond"
	TypeVLAN        = "vlan"
	TypeLinuxBridge = "linux-bridge"
	TypeDummy       = "dummy"
)

// Interface states.
const (
	StateUp     = "up"
	StateDown   = "down"
	StateAbsent = "absent"
)

// State is a parsed NMState desired state, limited to the supported subset.
type State struct {
	Interfaces []Interface
	Routes     []Route
	DNS        DNSConfig

	lines map[string]int // YAML path -> line, for error messages
}

// Interface is one entry of the `interfaces` list.
type Interface struct {
	Name string
	// Type is the nmstate type; "ethernet" when omitted in the YAML.
	Type string
	// TypeGiven is the type exactly as written ("" when omitted).
	TypeGiven             string
	State                 string
	MTU                   *uint64
	MACAddress            string
	Identifier            string // "", "name" or "mac-address"
	ProfileName           string
	Controller            *string
	IPv4                  *IPConfig // nil when the `ipv4` block is omitted
	IPv6                  *IPConfig // nil when the `ipv6` block is omitted
	Bond                  *BondConfig
	Bridge                *BridgeConfig
	VLAN                  *VLANConfig
	Ethernet              *EthernetConfig
	AcceptAllMACAddresses *bool

	// Path is the YAML path of the entry, e.g. "interfaces[2]".
	Path string
	// Line is the 1-based line of the entry in the input, 0 if unknown.
	Line int
}

// IPConfig is an `ipv4` or `ipv6` block.
type IPConfig struct {
	Enabled            *bool
	DHCP               *bool
	Autoconf           *bool
	Addresses          []netip.Prefix // address with its prefix length, host bits kept
	AutoDNS            *bool
	AutoGateway        *bool
	AutoRoutes         *bool
	AutoRouteTableID   *uint64
	AutoRouteMetric    *uint64
	DHCPClientID       string
	DHCPDUID           string
	AddrGenMode        string
	Token              string
	DHCPSendHostname   *bool
	DHCPCustomHostname string
}

// BondConfig is the `link-aggregation` block.
type BondConfig struct {
	Mode        string // canonical name, "" when omitted
	Options     []BondOption
	Ports       []string
	PortsGiven  bool
	PortsConfig []BondPortConfig
}

// BondOption is one `link-aggregation.options` entry, value already in keyfile form.
type BondOption struct {
	Name  string
	Value string
}

// BondPortConfig is one `link-aggregation.ports-config` entry.
type BondPortConfig struct {
	Name     string
	Priority *int64
	QueueID  *uint64
}

// BridgeConfig is the `bridge` block of a linux-bridge.
type BridgeConfig struct {
	// Options holds `bridge.options` already mapped to keyfile keys.
	Options    map[string]string
	Ports      []BridgePort
	PortsGiven bool
}

// BridgePort is one `bridge.port` entry.
type BridgePort struct {
	Name    string
	Options map[string]string // keyfile keys of [bridge-port]
}

// VLANConfig is the `vlan` block.
type VLANConfig struct {
	BaseIface            string
	ID                   uint64
	Protocol             string
	ReorderHeaders       *bool
	LooseBinding         *bool
	RegistrationProtocol string
}

// EthernetConfig is the `ethernet` block.
type EthernetConfig struct {
	AutoNegotiation *bool
	Speed           *uint64
	Duplex          string
}

// Route is one `routes.config` entry.
type Route struct {
	State            string
	Destination      string
	NextHopAddress   string
	NextHopInterface string
	Metric           *int64
	TableID          *uint64
	Weight           *uint64
	RouteType        string
	Cwnd             *uint64
	Source           string

	Path string
	Line int
}

// DNSConfig is `dns-resolver.config`.
type DNSConfig struct {
	Servers []string
	Search  []string
	Options []string
}
