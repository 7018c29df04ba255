package bmcboot

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sushyToolsSystem is the fake system the emulator is given.
const sushyToolsSystem = "27946b59-9e44-4fa7-8e91-f3527a1ef094"

// TestBootAgainstSushyTools runs agentiso boot against sushy-tools'
// emulator (openstack/sushy-tools, the reference Redfish emulator of
// Metal3's and ironic's CI), with its fake system driver and basic
// authentication: the agent ISO, then the generic ISO with its config image
// in the emulator's second slot, the eject of both, and a wrong password.
// sushy-tools is on PyPI only, which this project's machines do not reach,
// and not in Debian: the test runs when AGENTISO_SUSHY_TOOLS names a
// checkout of it (its Python dependencies are Debian's python3-flask,
// -requests, -tenacity, -bcrypt, -webob, -pbr), and is skipped otherwise
// (docs/serve-boot.md "Tested against").
func TestBootAgainstSushyTools(t *testing.T) {
	src := os.Getenv("AGENTISO_SUSHY_TOOLS")
	if src == "" {
		t.Skip("AGENTISO_SUSHY_TOOLS is not set: the sushy-tools cross-check needs a checkout of openstack/sushy-tools (PyPI is not reachable here; docs/serve-boot.md)")
	}
	py, err := exec.LookPath("/usr/bin/python3")
	require.NoError(t, err)
	work := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	// The htpasswd line: bcrypt, as sushy-tools' auth reads it.
	hash, err := exec.Command(py, "-c", `import bcrypt; print("admin:"+bcrypt.hashpw(b"pw-sushy", bcrypt.gensalt(rounds=5)).decode())`).Output()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(work, "htpasswd"), hash, 0o600))
	conf := fmt.Sprintf(`SUSHY_EMULATOR_LISTEN_IP = '127.0.0.1'
SUSHY_EMULATOR_LISTEN_PORT = %d
SUSHY_EMULATOR_NO_MEMOIZE = True
SUSHY_EMULATOR_FAKE_DRIVER = True
SUSHY_EMULATOR_AUTH_FILE = %q
SUSHY_EMULATOR_FAKE_SYSTEMS = [{'uuid': %q, 'name': 'fake', 'power_state': 'Off', 'external_notifier': False, 'nics': [{'mac': '52:54:00:aa:00:01', 'ip': '192.168.111.20'}]}]
`, port, filepath.Join(work, "htpasswd"), sushyToolsSystem)
	require.NoError(t, os.WriteFile(filepath.Join(work, "sushy.conf"), []byte(conf), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	emu := exec.CommandContext(ctx, py, "-m", "sushy_tools.emulator.main", "--config", filepath.Join(work, "sushy.conf"))
	emu.Dir = src
	emu.Env = append(os.Environ(), "PYTHONPATH="+src, "PBR_VERSION=0.0.0")
	logf, err := os.Create(filepath.Join(work, "emulator.log"))
	require.NoError(t, err)
	emu.Stdout, emu.Stderr = logf, logf
	require.NoError(t, emu.Start())
	t.Cleanup(func() {
		_ = emu.Process.Kill()
		_ = emu.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(work, "emulator.log"))
			t.Logf("sushy-tools log:\n%s", b)
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	sys := "/redfish/v1/Systems/" + sushyToolsSystem
	get := func(p string) map[string]any {
		req, err := http.NewRequest(http.MethodGet, base+p, nil)
		require.NoError(t, err)
		req.SetBasicAuth("admin", "pw-sushy")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		var v map[string]any
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&v) != nil {
			return nil
		}
		return v
	}
	require.Eventually(t, func() bool { return get(sys) != nil }, 30*time.Second, 200*time.Millisecond, "sushy-tools did not start")

	addr := "redfish-virtualmedia+" + base + sys
	dir := writeDir(t, []hostSpec{{"master-0", "52:54:00:aa:00:01", addr, "admin", "pw-sushy"}})
	url := serveDir(t, dir)
	res, err := Run(ctx, Options{Dir: dir, URL: url})
	require.NoError(t, err)
	assert.Equal(t, "Sushy Emulator (BMC Joo Janta 200, firmware 1.00)", res.Hosts[0].Vendor)
	assert.Equal(t, sys+"/VirtualMedia/Cd", res.Hosts[0].VirtualMedia)
	assert.Equal(t, "System", res.Hosts[0].VirtualMediaUnder)
	assert.Equal(t, "Cd", get(sys)["Boot"].(map[string]any)["BootSourceOverrideTarget"])
	assert.Equal(t, url+"/agent.x86_64.iso", get(sys + "/VirtualMedia/Cd")["Image"])
	// sushy-tools applies a power change 1 to 11 s later, as hardware does.
	assert.Eventually(t, func() bool { return get(sys)["PowerState"] == "On" }, 20*time.Second, 250*time.Millisecond)

	// The generic ISO and its config image, in the emulator's Floppy slot.
	gen := writeDir(t, []hostSpec{{"master-0", "52:54:00:aa:00:01", addr, "admin", "pw-sushy"}})
	for _, f := range []string{"agent.x86_64.iso", "agent.x86_64.iso.sha256"} {
		require.NoError(t, os.Remove(filepath.Join(gen, f)))
	}
	writeISO(t, gen, "agent-unconfigured.x86_64.iso")
	writeISO(t, gen, "agentconfig.noarch.iso")
	gurl := serveDir(t, gen)
	res, err = Run(ctx, Options{Dir: gen, URL: gurl, ConfigImage: true})
	require.NoError(t, err)
	assert.Equal(t, sys+"/VirtualMedia/Floppy", res.Hosts[0].ConfigMedia)
	assert.True(t, res.Hosts[0].Ejected, "the agent ISO was ejected first")
	assert.Equal(t, gurl+"/agent-unconfigured.x86_64.iso", get(sys + "/VirtualMedia/Cd")["Image"])
	assert.Equal(t, gurl+"/agentconfig.noarch.iso", get(sys + "/VirtualMedia/Floppy")["Image"])

	res, err = Run(ctx, Options{Dir: gen, Eject: true})
	require.NoError(t, err)
	assert.Equal(t, gurl+"/agentconfig.noarch.iso", res.Hosts[0].EjectedConfig)
	for _, slot := range []string{"Cd", "Floppy"} {
		assert.Equal(t, false, get(sys + "/VirtualMedia/" + slot)["Inserted"], slot)
	}

	// A wrong password: the BMC's own 401 message, at once.
	bad := writeDir(t, []hostSpec{{"master-0", "52:54:00:aa:00:01", addr, "admin", "wrong"}})
	start := time.Now()
	_, err = Run(ctx, Options{Dir: bad, URL: serveDir(t, bad)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "HTTP 401 Unauthorized: Incorrect username or password (check bmc.username and bmc.password)")
	assert.Less(t, time.Since(start), 5*time.Second)
}
