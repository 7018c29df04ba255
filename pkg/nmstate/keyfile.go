package nmstate

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// sectionOrder is nmstate's fixed keyfile section order.
var sectionOrder = []string{
	"connection", "bond", "bond-port", "bridge", "bridge-port", "ipv4", "ipv6",
	"ovs-bridge", "ovs-port", "ovs-interface", "ovs-patch", "ovs-dpdk",
	"ethernet", "vlan", "vxlan", "sriov", "macvlan", "vrf", "veth", "user", "802-1x",
	"ethtool", "infiniband", "ovs-external-ids", "ovs-other-config", "vpn",
}

type kv struct{ key, value string }

type section struct {
	name string
	keys []kv
}

// set adds or replaces a key; empty values are never written.
func (s *section) set(key, value string) {
	for i := range s.keys {
		if s.keys[i].key == key {
			s.keys[i].value = value
			return
		}
	}
	s.keys = append(s.keys, kv{key, value})
}

type keyfile struct{ sections []*section }

// section returns the named section, creating it in its fixed position.
func (k *keyfile) section(name string) *section {
	for _, s := range k.sections {
		if s.name == name {
			return s
		}
	}
	s := &section{name: name}
	k.sections = append(k.sections, s)
	rank := func(n string) int {
		if i := slices.Index(sectionOrder, n); i >= 0 {
			return i
		}
		return len(sectionOrder)
	}
	slices.SortStableFunc(k.sections, func(a, b *section) int { return rank(a.name) - rank(b.name) })
	return s
}

func (k *keyfile) sortKeys() {
	for _, s := range k.sections {
		slices.SortFunc(s.keys, func(a, b kv) int { return strings.Compare(a.key, b.key) })
	}
}

// bytes renders the keyfile: "[name]" headers, "key=value" lines, one blank
// line between sections, keys with empty values dropped, one final "\n".
func (k *keyfile) bytes() []byte {
	var b bytes.Buffer
	for i, s := range k.sections {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("[" + s.name + "]\n")
		for _, p := range s.keys {
			if p.value == "" {
				continue
			}
			b.WriteString(p.key + "=" + p.value + "\n")
		}
	}
	return b.Bytes()
}

// parseKeyfile reads keyfile text. Blank lines and lines starting with '#'
// or ';' are skipped; keys keep their order.
func parseKeyfile(content []byte) (*keyfile, error) {
	kf := &keyfile{}
	var cur *section
	for i, line := range strings.Split(string(content), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			if !strings.HasSuffix(line, "]") || len(line) < 3 {
				return nil, fmt.Errorf("line %d: malformed section header %q", i+1, line)
			}
			cur = &section{name: line[1 : len(line)-1]}
			kf.sections = append(kf.sections, cur)
		default:
			key, val, ok := strings.Cut(line, "=")
			if !ok {
				return nil, fmt.Errorf("line %d: expected key=value, got %q", i+1, line)
			}
			if cur == nil {
				return nil, fmt.Errorf("line %d: key %q outside any section", i+1, key)
			}
			cur.set(strings.TrimSpace(key), strings.TrimSpace(val))
		}
	}
	return kf, nil
}

// InstallerKeyfile applies the post-processing OpenShift's installer and
// assisted-service give every keyfile before it goes into the ISO: in
// [connection], autoconnect is set to true in place and
// autoconnect-priority=1 is added as the last key; everything else keeps
// its order.
func InstallerKeyfile(content []byte) ([]byte, error) {
	kf, err := parseKeyfile(content)
	if err != nil {
		return nil, err
	}
	var con *section
	for _, s := range kf.sections {
		if s.name == "connection" {
			con = s
			break
		}
	}
	if con == nil {
		return nil, fmt.Errorf("keyfile has no [connection] section")
	}
	con.set("autoconnect", "true")
	con.set("autoconnect-priority", "1")
	return kf.bytes(), nil
}
