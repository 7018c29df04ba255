package nmstate

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
)

// HostNetworkDir is where the agent ISO carries per-host static network
// config; the pre-network-manager-config script reads it at boot.
const HostNetworkDir = "/etc/assisted/network"

// HostInterface maps a logical NIC name used in a host's NMState YAML to
// the MAC address of the real NIC (agent-config hosts[].interfaces[] or
// NMStateConfig spec.interfaces[]).
type HostInterface struct {
	Name       string
	MACAddress string
}

// File is one file to place in the image.
type File struct {
	Path     string // absolute path in the image
	Mode     int    // permission bits, e.g. 0o600
	Contents []byte
}

// HostFiles returns the files for /etc/assisted/network/host<index>/: the
// installer-form keyfile of every connection (in nmstatectl gc's order),
// then mac_interface.ini. All are mode 0600. networkYAML is the host's
// NMState YAML; it is parsed and validated strictly. Errors do not name the
// host: the caller adds it.
func HostFiles(index int, networkYAML []byte, ifaces []HostInterface) ([]File, error) {
	if index < 0 {
		return nil, fmt.Errorf("host index %d is negative", index)
	}
	if err := checkInterfaceTable(ifaces); err != nil {
		return nil, err
	}
	kfs, err := Generate(networkYAML, Options{Installer: true})
	if err != nil {
		return nil, err
	}
	if len(kfs) == 0 {
		return nil, errors.New("networkConfig produces no NetworkManager connection (no interface is up or down): define at least one interface")
	}
	dir := path.Join(HostNetworkDir, fmt.Sprintf("host%d", index))
	files := make([]File, 0, len(kfs)+1)
	for _, kf := range kfs {
		if strings.Contains(kf.Name, "/") {
			return nil, fmt.Errorf("connection file name %q contains '/': change the interface name or profile-name", kf.Name)
		}
		files = append(files, File{Path: path.Join(dir, kf.Name), Mode: 0o600, Contents: kf.Content})
	}
	files = append(files, File{Path: path.Join(dir, "mac_interface.ini"), Mode: 0o600, Contents: MACInterfaceINI(ifaces)})
	return files, nil
}

// MACInterfaceINI renders mac_interface.ini: one "<mac>=<name>" line per
// entry (MAC as given), lines sorted bytewise, joined by "\n", with no
// trailing newline.
func MACInterfaceINI(ifaces []HostInterface) []byte {
	lines := make([]string, 0, len(ifaces))
	for _, i := range ifaces {
		lines = append(lines, i.MACAddress+"="+i.Name)
	}
	slices.Sort(lines)
	return []byte(strings.Join(lines, "\n"))
}

// checkInterfaceTable validates a host's interface table.
func checkInterfaceTable(ifaces []HostInterface) error {
	if len(ifaces) == 0 {
		return errors.New("interfaces: at least one interface (name and macAddress) must be defined for each host with networkConfig")
	}
	var errs []error
	names := map[string]int{}
	macs := map[string]int{}
	for i, ifc := range ifaces {
		p := fmt.Sprintf("interfaces[%d]", i)
		switch {
		case ifc.Name == "":
			errs = append(errs, fmt.Errorf("%s.name: empty: give the logical NIC name used in networkConfig", p))
		case strings.ContainsAny(ifc.Name, "=\n/ \t"):
			errs = append(errs, fmt.Errorf("%s.name: %q contains '=', '/', whitespace or a newline: use a plain interface name", p, ifc.Name))
		}
		if !macRE.MatchString(ifc.MACAddress) {
			errs = append(errs, fmt.Errorf("%s.macAddress: %q is not a MAC address: write six hex octets separated by colons, e.g. 52:54:00:12:34:56", p, ifc.MACAddress))
		}
		if j, dup := names[ifc.Name]; dup && ifc.Name != "" {
			errs = append(errs, fmt.Errorf("%s.name: %q is also used by interfaces[%d]: MACs and interface names of a host must be unique", p, ifc.Name, j))
		}
		names[ifc.Name] = i
		m := strings.ToUpper(ifc.MACAddress)
		if j, dup := macs[m]; dup {
			errs = append(errs, fmt.Errorf("%s.macAddress: %s is also used by interfaces[%d]: MACs and interface names of a host must be unique", p, ifc.MACAddress, j))
		}
		macs[m] = i
	}
	return errors.Join(errs...)
}

// UsedNames returns, sorted and deduplicated, every interface name the
// state refers to: interface names, bond and bridge ports, VLAN base
// interfaces and controllers.
func (st *State) UsedNames() []string {
	var out []string
	for _, ifc := range st.Interfaces {
		out = append(out, ifc.Name)
		if ifc.Bond != nil {
			out = append(out, ifc.Bond.Ports...)
		}
		if ifc.Bridge != nil {
			for _, p := range ifc.Bridge.Ports {
				out = append(out, p.Name)
			}
		}
		if ifc.VLAN != nil && ifc.VLAN.BaseIface != "" {
			out = append(out, ifc.VLAN.BaseIface)
		}
		if ifc.Controller != nil && *ifc.Controller != "" {
			out = append(out, *ifc.Controller)
		}
	}
	out = slices.DeleteFunc(out, func(s string) bool { return s == "" })
	slices.Sort(out)
	return slices.Compact(out)
}

// CheckInterfacesUsed checks that every entry of a host's interface table
// names an interface the host's NMState YAML uses (as an interface, a bond
// or bridge port, or a VLAN base); the boot script renames keyfiles and
// references by these names, so an unused name is almost always a typo.
// The error lists the names the YAML does use. Errors do not name the host:
// the caller adds it.
func CheckInterfacesUsed(networkYAML []byte, ifaces []HostInterface) error {
	st, err := Parse(networkYAML)
	if err != nil {
		return fmt.Errorf("networkConfig: %w", err)
	}
	used := st.UsedNames()
	var errs []error
	for i, ifc := range ifaces {
		if _, found := slices.BinarySearch(used, ifc.Name); found {
			continue
		}
		avail := "none"
		if len(used) > 0 {
			avail = strings.Join(used, ", ")
		}
		errs = append(errs, fmt.Errorf("interfaces[%d].name: %q (MAC %s) is not used in networkConfig; names used there: %s: use one of them or fix networkConfig", i, ifc.Name, ifc.MACAddress, avail))
	}
	return errors.Join(errs...)
}
