package nmstate

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStrictRejects(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		want    string
		lenient bool // nmstate itself accepts it
	}{
		{"vlan id above 4094", `
interfaces:
- name: eth0.5000
  type: vlan
  vlan: {base-iface: eth0, id: 5000}`, `interfaces[0].vlan.id: interface eth0.5000: VLAN id 5000 is outside 1-4094`, true},
		{"vlan id 0", `
interfaces:
- name: v0
  type: vlan
  vlan: {base-iface: eth0, id: "0"}`, `VLAN id 0 is outside 1-4094`, true},
		{"next hop of other family", `
interfaces:
- name: eth0
  ipv4: {enabled: true, address: [{ip: 192.0.2.1, prefix-length: 24}]}
routes:
  config:
  - {destination: 0.0.0.0/0, next-hop-address: "2001:db8::1", next-hop-interface: eth0}`, `routes.config[0]: next-hop-address 2001:db8::1 is IPv6 but destination 0.0.0.0/0 is IPv4`, true},
		{"name over 15 bytes", `
interfaces:
- name: enp1s0f0-storage
  type: ethernet`, `interfaces[0].name: interface enp1s0f0-storage: name "enp1s0f0-storage" is 16 bytes long, the kernel allows at most 15`, true},
		{"undefined port name over 15 bytes", `
interfaces:
- name: bond0
  type: bond
  link-aggregation: {mode: active-backup, port: [enp1s0f0-storage]}`, `link-aggregation.port[0]: interface bond0: port name "enp1s0f0-storage" is 16 bytes long`, true},
		{"identifier mac-address without mac", `
interfaces:
- name: nic0
  identifier: mac-address`, `interfaces[0].identifier: interface nic0: identifier is mac-address but mac-address is not set`, true},
		{"dhcp with enabled omitted", `
interfaces:
- name: eth0
  ipv4: {dhcp: true}`, `interfaces[0].ipv4.dhcp: interface eth0: dhcp is true but ipv4.enabled is omitted`, true},
		{"bond port overbooked", `
interfaces:
- {name: bond0, type: bond, link-aggregation: {mode: 1, port: [eth0]}}
- {name: bond1, type: bond, link-aggregation: {mode: 1, port: [eth0]}}`, `Port eth0 is overbooked by two controller: bond0, bond1`, false},
		{"controller not found", `
interfaces:
- {name: eth0, controller: bond9}`, `Interface eth0 desired controller bond9 not found`, false},
		{"port with IP", `
interfaces:
- {name: bond0, type: bond, link-aggregation: {mode: 1, port: [eth0]}}
- {name: eth0, ipv4: {enabled: true, dhcp: true}}`, `interfaces[1].ipv4.enabled: interface eth0: Interface eth0 cannot have IP enabled as it is attached to a controller where IP is not allowed`, false},
		{"ipv6 address in ipv4", `
interfaces:
- {name: eth0, ipv4: {enabled: true, address: [{ip: "2001:db8::1", prefix-length: 64}]}}`, `Got IPv6 address 2001:db8::1/64 in ipv4 config section`, false},
		{"autoconf under ipv4", `
interfaces:
- {name: eth0, ipv4: {enabled: true, autoconf: true}}`, `autoconf is not allowed for IPv4`, false},
		{"mtu too small for ipv6", `
interfaces:
- {name: eth0, mtu: 1000, ipv6: {enabled: true, dhcp: true, autoconf: true}}`, `MTU should be >= 1280 when IPv6 is enabled on interface eth0, but got mtu: 1000`, false},
		{"vlan without base", `
interfaces:
- {name: vlan100, type: vlan, vlan: {id: 100}}`, `Missing 'vlan.base-iface' for interface 'vlan100'`, false},
		{"stp hello time", `
interfaces:
- {name: br0, type: linux-bridge, bridge: {options: {stp: {hello-time: 30}}}}`, `Desired STP hello time 30 is not in the range of [1,10]`, false},
		{"route via absent", `
interfaces:
- {name: eth0, state: absent}
routes: {config: [{destination: 0.0.0.0/0, next-hop-address: 192.0.2.1, next-hop-interface: eth0}]}`, `has been marked as absent`, false},
		{"route dest in 0/8", `
interfaces:
- {name: eth0, ipv4: {enabled: true, address: [{ip: 192.0.2.1, prefix-length: 24}]}}
routes: {config: [{destination: 0.0.0.0/8, next-hop-interface: eth0}]}`, `0.0.0.0/8 and its subnet cannot be used as the route destination`, false},
		{"mixed dns", `
interfaces:
- {name: eth0, ipv4: {enabled: true, dhcp: true}, ipv6: {enabled: true, dhcp: true, autoconf: true}}
dns-resolver: {config: {server: [192.0.2.1, "2001:db8::1", 192.0.2.2]}}`, `Placing IPv4/IPv6 nameserver in the middle of IPv6/IPv4 nameservers is not supported yet`, false},
		{"dns not an ip", `
interfaces:
- {name: eth0, ipv4: {enabled: true, dhcp: true}}
dns-resolver: {config: {server: [dns.example.com]}}`, `Invalid DNS server string dns.example.com`, false},
		{"search only without ip", `
interfaces:
- {name: eth0}
dns-resolver: {config: {search: [example.com]}}`, `Failed to find suitable(IP enabled) interface for DNS searches 'example.com'`, false},
		{"unsupported type", `
interfaces:
- {name: br-int, type: ovs-bridge}`, `type "ovs-bridge" is not supported by agentiso`, false},
		{"field of another type", `
interfaces:
- {name: eth0, type: ethernet, link-aggregation: {mode: 1}}`, "interfaces[0].link-aggregation: interface eth0: unknown field `link-aggregation` for type ethernet", false},
		{"bond option unknown", `
interfaces:
- {name: bond0, type: bond, link-aggregation: {mode: 1, options: {mimon: 100}}}`, "interfaces[0].link-aggregation.options.mimon: interface bond0: unknown field `mimon`, did you mean \"miimon\"?", false},
		{"bad bool", `
interfaces:
- {name: eth0, ipv4: {enabled: maybe}}`, `interfaces[0].ipv4.enabled: interface eth0: expected true or false, got "maybe"`, false},
		{"bad number", `
interfaces:
- {name: eth0, mtu: big}`, `interfaces[0].mtu: interface eth0: expected a non-negative integer, got "big"`, false},
		{"top-level typo", `interfacez: []`, "interfacez: unknown field `interfacez`, did you mean \"interfaces\"?", false},
		{"duplicate key", "interfaces:\n- name: eth0\n  mtu: 1500\n  mtu: 9000\n", `line 4: interfaces[0].mtu: interface eth0: duplicate key "mtu"`, false},
		{"unsupported known field", `
interfaces:
- {name: eth0, lldp: {enabled: true}}`, "unknown field `lldp`: nmstate knows it but agentiso does not support it", false},
		{"bad state", `
interfaces:
- {name: eth0, state: sleeping}`, "unknown variant `sleeping`, expected one of `up`, `down`, `absent`", false},
		{"interfaces not a list", `interfaces: {name: eth0}`, "interfaces: expected a list, got a mapping", false},
		{"controller loop", `
interfaces:
- {name: br0, type: linux-bridge, controller: br1}
- {name: br1, type: linux-bridge, controller: br0}`, "loop", false},
		{"bond rules hold for a down bond too", `
interfaces:
- {name: bond0, type: bond, state: down, link-aggregation: {mode: 1, options: {miimon: 100, arp_interval: 60}}}`, "Bond miimon and arp interval are not compatible options", false},
		{"controller not in its port list", `
interfaces:
- {name: br0, type: linux-bridge, controller: br1, bridge: {port: []}}
- {name: br1, type: linux-bridge, controller: br0, bridge: {port: []}}`, "Interface br0 has controller br1 but not listed in port list of controller interface", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate([]byte(tt.yaml), Options{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			_, lerr := Generate([]byte(tt.yaml), Options{Lenient: true})
			if tt.lenient {
				assert.NoError(t, lerr, "nmstate accepts this input, so lenient mode must too")
			} else {
				assert.Error(t, lerr)
			}
		})
	}
}

func TestParseErrorsAreFieldErrors(t *testing.T) {
	_, err := Parse([]byte("interfaces:\n- name: eth0\n  ipv4:\n    adress: []\n    enabeld: true\n"))
	require.Error(t, err)
	var list interface{ Unwrap() []error }
	require.True(t, errors.As(err, &list))
	require.Len(t, list.Unwrap(), 2)
	var fe *FieldError
	require.True(t, errors.As(list.Unwrap()[1], &fe))
	assert.Equal(t, "interfaces[0].ipv4.enabeld", fe.Path)
	assert.Equal(t, 5, fe.Line)
	assert.Equal(t, "line 4: interfaces[0].ipv4.adress: interface eth0: unknown field `adress`, did you mean \"address\"?", list.Unwrap()[0].Error())
}

func TestParseInvalidYAML(t *testing.T) {
	_, err := Parse([]byte("interfaces: [\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "invalid YAML")
}

// gen renders yaml and returns the named file's content.
func genFile(t *testing.T, yaml, name string) string {
	t.Helper()
	files, err := Generate([]byte(yaml), Options{})
	require.NoError(t, err)
	for _, f := range files {
		if f.Name == name {
			return string(f.Content)
		}
	}
	t.Fatalf("no file %s in output", name)
	return ""
}

func TestGenerateFeatures(t *testing.T) {
	t.Run("profile-name and uuid from name", func(t *testing.T) {
		got := genFile(t, "interfaces:\n- {name: eth0, profile-name: uplink}\n", "uplink.nmconnection")
		assert.Contains(t, got, "id=uplink\ninterface-name=eth0\n")
		assert.Contains(t, got, "uuid=dfd202f5-562f-5f07-8f2a-a7717756fb70\n")
	})
	t.Run("numeric bond aliases and option rules", func(t *testing.T) {
		got := genFile(t, `
interfaces:
- name: bond0
  type: bond
  link-aggregation:
    mode: 4
    options: {lacp_rate: 1, xmit_hash_policy: "2", arp_interval: 0, arp_ip_target: 192.0.2.1, arp_missed_max: 2, use_carrier: true, all_slaves_active: delivered}
    port: [eth0]
    ports-config: [{name: eth0, priority: 10, queue-id: 0}]
`, "bond0.nmconnection")
		assert.Contains(t, got, "[bond]\nall_slaves_active=1\narp_interval=0\nlacp_rate=fast\nmode=802.3ad\nuse_carrier=1\nxmit_hash_policy=layer2+3\n\n")
		port := genFile(t, "interfaces:\n- {name: bond0, type: bond, link-aggregation: {mode: 1, ports: [eth0], ports-config: [{name: eth0, priority: 10}]}}\n", "eth0.nmconnection")
		assert.Contains(t, port, "slave-type=bond\ntype=802-3-ethernet\nuuid=dfd202f5-562f-5f07-8f2a-a7717756fb70\n\n[bond-port]\nprio=10\n")
	})
	t.Run("controller field", func(t *testing.T) {
		got := genFile(t, "interfaces:\n- {name: br0, type: linux-bridge}\n- {name: eth0, controller: br0}\n", "eth0.nmconnection")
		assert.Contains(t, got, "master=br0\nslave-type=bridge\n")
		assert.True(t, strings.HasSuffix(got, "[bridge-port]\n"), got)
	})
	t.Run("vlan flags and protocol", func(t *testing.T) {
		got := genFile(t, "interfaces:\n- {name: v10, type: vlan, vlan: {base-iface: eth0, id: 10, reorder-headers: false, loose-binding: true, protocol: 802.1ad, registration-protocol: mvrp}}\n", "v10.nmconnection")
		assert.Contains(t, got, "[vlan]\nflags=12\nid=10\nparent=eth0\nprotocol=802.1ad\n")
	})
	t.Run("route sorting over ten routes and normalisation", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("interfaces:\n- {name: eth0, ipv4: {enabled: true, address: [{ip: 10.0.0.2, prefix-length: 8}]}}\nroutes:\n  config:\n")
		for i := 11; i >= 0; i-- {
			b.WriteString("  - {destination: 192.0." + strconv.Itoa(i) + ".77/24, next-hop-address: 10.0.0.1, next-hop-interface: eth0, metric: -1}\n")
		}
		// equal on the sort key (metric is not part of it): removed
		b.WriteString("  - {destination: 192.0.0.0/24, next-hop-address: 10.0.0.1, next-hop-interface: eth0, metric: 5}\n")
		// weight is part of the key: kept
		b.WriteString("  - {destination: 192.0.0.0/24, next-hop-address: 10.0.0.1, next-hop-interface: eth0, metric: 5, weight: 1}\n")
		got := genFile(t, b.String(), "eth0.nmconnection")
		// destinations compare as strings: 192.0.1.0 < 192.0.10.0 < 192.0.2.0; keys sort bytewise
		assert.Contains(t, got, "route0=192.0.0.0/24,10.0.0.1,0\nroute0_options=table=254\nroute1=192.0.0.0/24,10.0.0.1,5\nroute10=192.0.7.0/24,10.0.0.1,0\n")
		assert.Contains(t, got, "route1_options=table=254,weight=1\nroute2=192.0.1.0/24,10.0.0.1,0\nroute2_options=table=254\nroute3=192.0.10.0/24,10.0.0.1,0\n")
		assert.Contains(t, got, "route12=192.0.9.0/24,10.0.0.1,0\n")
		assert.NotContains(t, got, "route13")
	})
	t.Run("static interface preferred for DNS over earlier DHCP", func(t *testing.T) {
		y := `
interfaces:
- {name: eth0, ipv4: {enabled: true, dhcp: true}}
- {name: eth1, ipv4: {enabled: true, address: [{ip: 192.0.2.1, prefix-length: 24}]}}
dns-resolver: {config: {server: [192.0.2.53]}}
`
		assert.NotContains(t, genFile(t, y, "eth0.nmconnection"), "\ndns")
		assert.Contains(t, genFile(t, y, "eth1.nmconnection"), "dns=192.0.2.53\ndns-priority=40\n")
	})
	t.Run("scoped link-local DNS server picks its interface", func(t *testing.T) {
		y := `
interfaces:
- {name: eth0, ipv6: {enabled: true, address: [{ip: "2001:db8::2", prefix-length: 64}]}}
- {name: eth1, ipv6: {enabled: true, dhcp: true, autoconf: true}}
dns-resolver: {config: {server: ["fe80::1%eth1"]}}
`
		assert.NotContains(t, genFile(t, y, "eth0.nmconnection"), "\ndns")
		assert.Contains(t, genFile(t, y, "eth1.nmconnection"), "dns=fe80::1\ndns-priority=40\n")
	})
	t.Run("dhcp options", func(t *testing.T) {
		got := genFile(t, `
interfaces:
- name: eth0
  ipv4: {enabled: true, dhcp: true, dhcp-client-id: iaid+duid, dhcp-custom-hostname: node1.example.com, dhcp-send-hostname: false, auto-route-table-id: 100, auto-route-metric: 50}
  ipv6: {enabled: true, dhcp: true, autoconf: true, addr-gen-mode: stable-privacy, dhcp-duid: llt, token: "::1", dhcp-custom-hostname: node1}
`, "eth0.nmconnection")
		assert.Contains(t, got, "[ipv4]\ndhcp-client-id=duid\ndhcp-fqdn=node1.example.com\ndhcp-send-hostname=false\ndhcp-timeout=2147483647\nignore-auto-dns=false\nignore-auto-routes=false\nmethod=auto\nnever-default=false\nroute-metric=50\nroute-table=100\n\n")
		assert.Contains(t, got, "[ipv6]\naddr-gen-mode=1\ndhcp-duid=llt\ndhcp-hostname=node1\ndhcp-iaid=mac\ndhcp-send-hostname=true\n")
		assert.Contains(t, got, "ra-timeout=2147483647\ntoken=::1\n")
	})
	t.Run("v4 routes make an address-less interface manual", func(t *testing.T) {
		got := genFile(t, "interfaces:\n- {name: eth0, ipv4: {enabled: true}}\nroutes: {config: [{destination: 198.51.100.0/24, next-hop-interface: eth0}]}\n", "eth0.nmconnection")
		assert.Contains(t, got, "method=manual\nroute0=198.51.100.0/24,,0\n")
	})
	t.Run("ethernet block and accept-all-mac-addresses", func(t *testing.T) {
		got := genFile(t, "interfaces:\n- {name: eth0, accept-all-mac-addresses: false, ethernet: {auto-negotiation: false, speed: 1000, duplex: full}}\n", "eth0.nmconnection")
		assert.True(t, strings.HasSuffix(got, "[ethernet]\naccept-all-mac-addresses=0\nauto-negotiate=false\nduplex=full\nspeed=1000\n"), got)
	})
	t.Run("non-breaking space is a space", func(t *testing.T) {
		got := genFile(t, "interfaces:\n-\u00a0name: eth0\n", "eth0.nmconnection")
		assert.Contains(t, got, "id=eth0\n")
	})
	t.Run("empty document", func(t *testing.T) {
		files, err := Generate(nil, Options{})
		require.NoError(t, err)
		assert.Empty(t, files)
	})
}
