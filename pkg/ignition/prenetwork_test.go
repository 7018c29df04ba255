package ignition

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/data"
)

// preNetworkEnv is a scratch machine for pre-network-manager-config.sh: a
// fake /sys/class/net, a network directory and a target directory.
type preNetworkEnv struct {
	t                  *testing.T
	sys, network, dest string
}

func newPreNetworkEnv(t *testing.T, nics map[string]string) *preNetworkEnv {
	t.Helper()
	dir := t.TempDir()
	e := &preNetworkEnv{t: t, sys: filepath.Join(dir, "sys"), network: filepath.Join(dir, "network"), dest: filepath.Join(dir, "dest")}
	nics["lo"] = "00:00:00:00:00:00"
	for name, mac := range nics {
		require.NoError(t, os.MkdirAll(filepath.Join(e.sys, name), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(e.sys, name, "address"), []byte(mac+"\n"), 0o644))
	}
	require.NoError(t, os.MkdirAll(e.network, 0o755))
	return e
}

func (e *preNetworkEnv) host(n string, files map[string]string) {
	dir := filepath.Join(e.network, n)
	require.NoError(e.t, os.MkdirAll(dir, 0o755))
	for name, body := range files {
		require.NoError(e.t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600))
	}
}

func (e *preNetworkEnv) run() (string, error) {
	bash := requireTool(e.t, "bash")
	script, err := fs.ReadFile(data.Agent(), "network/files"+PreNetworkScript)
	require.NoError(e.t, err)
	p := filepath.Join(e.t.TempDir(), "pre-network-manager-config.sh")
	require.NoError(e.t, os.WriteFile(p, script, 0o755))
	cmd := exec.Command(bash, p)
	cmd.Env = append(os.Environ(),
		"PRE_NM_NETWORK_DIR="+e.network,
		"PRE_NM_SYS_CLASS_NET="+e.sys,
		"PRE_NM_TARGET_DIR="+e.dest)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (e *preNetworkEnv) installed() map[string]string {
	out := map[string]string{}
	entries, err := os.ReadDir(e.dest)
	if os.IsNotExist(err) {
		return out
	}
	require.NoError(e.t, err)
	for _, en := range entries {
		b, err := os.ReadFile(filepath.Join(e.dest, en.Name()))
		require.NoError(e.t, err)
		out[en.Name()] = string(b)
		st, err := os.Stat(filepath.Join(e.dest, en.Name()))
		require.NoError(e.t, err)
		assert.Equal(e.t, fs.FileMode(0o600), st.Mode().Perm(), en.Name())
	}
	return out
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestPreNetworkScriptRenamesToKernelNames(t *testing.T) {
	e := newPreNetworkEnv(t, map[string]string{
		"enp1s0":        "52:54:00:aa:00:01",
		"enp0s20f0u1u2": "52:54:00:aa:00:02",
	})
	e.host("host0", map[string]string{
		"mac_interface.ini":     "52:54:00:AA:00:01=eth0\n52:54:00:aa:00:02=eth1",
		"eth0.nmconnection":     "[connection]\nid=eth0\ninterface-name=eth0\ntype=ethernet\n",
		"eth1.nmconnection":     "[connection]\nid=eth1\ninterface-name=eth1\ntype=ethernet\n",
		"eth1.100.nmconnection": "[connection]\nid=eth1.100\ninterface-name=eth1.100\ntype=vlan\n\n[vlan]\nid=100\nparent=eth1\n",
		"bond0.nmconnection":    "[connection]\nid=bond0\ninterface-name=bond0\ntype=bond\n\n[bond]\nprimary=eth0\nmode=active-backup\n",
	})
	// Another host's directory must be ignored.
	e.host("host1", map[string]string{
		"mac_interface.ini": "52:54:00:bb:00:01=eth0",
		"eth0.nmconnection": "[connection]\nid=eth0\ninterface-name=eth0\n",
	})
	require.NoError(t, os.MkdirAll(e.dest, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.dest, "default_connection.nmconnection"), []byte("x"), 0o600))

	out, err := e.run()
	require.NoError(t, err, out)
	got := e.installed()
	assert.Equal(t, []string{"bond0.nmconnection", "enp0s20f0u1.100.nmconnection", "enp0s20f0u1u2.nmconnection", "enp1s0.nmconnection"}, keys(got), out)
	assert.Equal(t, "[connection]\nid=enp1s0\ninterface-name=enp1s0\ntype=ethernet\n", got["enp1s0.nmconnection"])
	assert.Equal(t, "[connection]\nid=enp0s20f0u1u2\ninterface-name=enp0s20f0u1u2\ntype=ethernet\n", got["enp0s20f0u1u2.nmconnection"])
	// The VLAN name is trimmed to the kernel's 15 characters; its parent
	// keeps the full kernel name.
	assert.Equal(t, "[connection]\nid=enp0s20f0u1.100\ninterface-name=enp0s20f0u1.100\ntype=vlan\n\n[vlan]\nid=100\nparent=enp0s20f0u1u2\n", got["enp0s20f0u1.100.nmconnection"])
	assert.Equal(t, "[connection]\nid=bond0\ninterface-name=bond0\ntype=bond\n\n[bond]\nprimary=enp1s0\nmode=active-backup\n", got["bond0.nmconnection"])
}

func TestPreNetworkScriptSwappedNames(t *testing.T) {
	// Logical eth0 is kernel eth1 and the other way round: each value is
	// rewritten once.
	e := newPreNetworkEnv(t, map[string]string{"eth0": "52:54:00:aa:00:02", "eth1": "52:54:00:aa:00:01"})
	e.host("host0", map[string]string{
		"mac_interface.ini": "52:54:00:aa:00:01=eth0\n52:54:00:aa:00:02=eth1\n",
		"eth0.nmconnection": "[connection]\nid=eth0\ninterface-name=eth0\n",
		"eth1.nmconnection": "[connection]\nid=eth1\ninterface-name=eth1\n",
	})
	out, err := e.run()
	require.NoError(t, err, out)
	got := e.installed()
	assert.Equal(t, "[connection]\nid=eth1\ninterface-name=eth1\n", got["eth1.nmconnection"], "logical eth0 lands on kernel eth1")
	assert.Equal(t, "[connection]\nid=eth0\ninterface-name=eth0\n", got["eth0.nmconnection"])
}

func TestPreNetworkScriptNoMatch(t *testing.T) {
	e := newPreNetworkEnv(t, map[string]string{"enp1s0": "52:54:00:cc:00:01"})
	e.host("host0", map[string]string{
		"mac_interface.ini": "52:54:00:aa:00:01=eth0",
		"eth0.nmconnection": "[connection]\nid=eth0\n",
	})
	require.NoError(t, os.MkdirAll(e.dest, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.dest, "keep.nmconnection"), []byte("x"), 0o600))
	out, err := e.run()
	require.NoError(t, err, out)
	assert.Contains(t, out, "No matching host directories found")
	assert.Equal(t, []string{"keep.nmconnection"}, keys(e.installed()))
}

func TestPreNetworkScriptNoNetworkDir(t *testing.T) {
	e := newPreNetworkEnv(t, map[string]string{"enp1s0": "52:54:00:cc:00:01"})
	require.NoError(t, os.RemoveAll(e.network))
	out, err := e.run()
	require.NoError(t, err, out)
	assert.Contains(t, out, "No static network configuration")
}

func TestPreNetworkScriptNameCollision(t *testing.T) {
	// Two matching directories that both carry bond0 cannot be merged.
	e := newPreNetworkEnv(t, map[string]string{"enp1s0": "52:54:00:aa:00:01", "enp2s0": "52:54:00:aa:00:02"})
	e.host("host0", map[string]string{
		"mac_interface.ini":  "52:54:00:aa:00:01=eth0",
		"bond0.nmconnection": "[connection]\nid=bond0\n",
	})
	e.host("host1", map[string]string{
		"mac_interface.ini":  "52:54:00:aa:00:02=eth0",
		"bond0.nmconnection": "[connection]\nid=bond0\n",
	})
	out, err := e.run()
	require.Error(t, err)
	assert.Contains(t, out, "connection file name bond0.nmconnection is already in use")
	assert.Empty(t, e.installed(), "nothing is installed on error")
}
