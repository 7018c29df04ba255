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
