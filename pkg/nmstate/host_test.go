package nmstate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readVector(t *testing.T, name, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata/vectors", name, file))
	require.NoError(t, err)
	return b
}

func TestHostFiles(t *testing.T) {
	in := readVector(t, "26-bond-bridge-vlan-nested", "input.yml")
	ifaces := []HostInterface{{Name: "eth2", MACAddress: "80:32:53:4f:cf:d6"}, {Name: "eth1", MACAddress: "F8:75:A4:A4:00:FE"}}
	files, err := HostFiles(3, in, ifaces)
	require.NoError(t, err)
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
		assert.Equal(t, 0o600, f.Mode, f.Path)
	}
	assert.Equal(t, []string{
		"/etc/assisted/network/host3/br0.nmconnection",
		"/etc/assisted/network/host3/br29.nmconnection",
		"/etc/assisted/network/host3/bond0.nmconnection",
		"/etc/assisted/network/host3/eth1.nmconnection",
		"/etc/assisted/network/host3/eth2.nmconnection",
		"/etc/assisted/network/host3/vlan29.nmconnection",
		"/etc/assisted/network/host3/mac_interface.ini",
	}, paths)
	assert.Equal(t, string(readVector(t, "26-bond-bridge-vlan-nested", "installer/eth1.nmconnection")), string(files[3].Contents))
	// Sorted bytewise, no trailing newline (the assisted-service fixture).
	assert.Equal(t, "80:32:53:4f:cf:d6=eth2\nF8:75:A4:A4:00:FE=eth1", string(files[6].Contents))
}

func TestHostFilesErrors(t *testing.T) {
	good := readVector(t, "01-static-ipv4", "input.yml")
	eth0 := []HostInterface{{Name: "eth0", MACAddress: "52:54:01:aa:aa:a1"}}
	tests := []struct {
		name   string
		yaml   []byte
		ifaces []HostInterface
		want   string
	}{
		{"no interfaces", good, nil, "at least one interface"},
		{"bad mac", good, []HostInterface{{Name: "eth0", MACAddress: "52:54"}}, `interfaces[0].macAddress: "52:54" is not a MAC address`},
		{"empty name", good, []HostInterface{{MACAddress: "52:54:01:aa:aa:a1"}}, "interfaces[0].name: empty"},
		{"dup mac", good, []HostInterface{{Name: "eth0", MACAddress: "52:54:01:aa:aa:a1"}, {Name: "eth1", MACAddress: "52:54:01:AA:AA:A1"}}, "MACs and interface names of a host must be unique"},
		{"dup name", good, []HostInterface{{Name: "eth0", MACAddress: "52:54:01:aa:aa:a1"}, {Name: "eth0", MACAddress: "52:54:01:aa:aa:a2"}}, `interfaces[1].name: "eth0" is also used by interfaces[0]`},
		{"invalid yaml", readVector(t, "80-invalid-unknown-field", "input.yml"), eth0, "unknown field `adress`"},
		{"empty output", []byte("interfaces: []\n"), eth0, "no NetworkManager connection"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := HostFiles(0, tt.yaml, tt.ifaces)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestMACInterfaceINI(t *testing.T) {
	assert.Equal(t, "", string(MACInterfaceINI(nil)))
	// Lines sorted bytewise (digits before letters), MAC case kept.
	assert.Equal(t, "80:32:53:4f:cf:d6=eth1\nF8:75:A4:A4:00:FE=eth0",
		string(MACInterfaceINI([]HostInterface{{"eth0", "F8:75:A4:A4:00:FE"}, {"eth1", "80:32:53:4f:cf:d6"}})))
}
