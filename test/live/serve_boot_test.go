//go:build e2elive

package live

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/redfishsim"
	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
)

// The serve-boot scenario boots the hosts only through `agentiso serve` and
// `agentiso boot`: the test gives QEMU no ISO. Each host has a BMC of its
// own (internal/fake/redfishsim) on the bridge; when agentiso boot inserts the
// served ISO's URL, sets the one-time CD boot and powers the system on, the
// emulator starts the host's QEMU guest with its CD drive on that URL
// (QEMU's curl block driver, Debian's qemu-block-extra), so the ISO
// reaches the guest through agentiso serve's range requests, as a BMC's
// virtual media reads it.
const (
	serveListen = BridgeIP + ":8080"
	bmcUser     = "root"
	bmcPass     = "calvin-Lab"
)

// serveBootInstallConfig is twoInstallConfig with the hosts' BMCs: one
// with its virtual media under the Manager, one under the System.
func serveBootInstallConfig(bmcs []string) string {
	hosts := "    provisioningNetwork: Disabled\n    hosts:\n"
	for i, a := range bmcs {
		hosts += fmt.Sprintf("      - name: master-%d\n        role: master\n        bootMACAddress: 52:54:00:bb:00:0%d\n        bmc:\n          address: %s\n          username: %s\n          password: %s\n",
			i, i+1, a, bmcUser, bmcPass)
	}
	return strings.Replace(twoInstallConfig, "    ingressVIPs: [192.168.111.4]\n", "    ingressVIPs: [192.168.111.4]\n"+hosts, 1)
}

// bmcAddr is the listen address of host i's BMC.
func bmcAddr(i int) string { return fmt.Sprintf("%s:%d", BridgeIP, 8001+i) }

// serveBootScenarios declares, through liveScenarios' run, the serve-boot
// scenario and its negative controls (both in the full set only: the ci
// set's time is spent).
func serveBootScenarios(l *lab, run func(name string, f func(t *testing.T))) {
	run("serve-boot-negative", func(t *testing.T) { serveBootNegative(t, l) })
	// The three masters of twoInstallConfig, all booted through their
	// BMCs, up to the install call.
	run("serve-boot", func(t *testing.T) {
		requireQemuCurl(t)
		var addrs []string
		sc := scenario{
			name:        "serve-boot",
			agentConfig: threeAgentConfig,
			dns:         clusterDNS("192.168.111.5", "192.168.111.4"),
			deadline:    24 * time.Minute,
			boot:        serveAndBoot,
		}
		for i := range 3 {
			addrs = append(addrs, fmt.Sprintf("redfish-virtualmedia+http://%s/redfish/v1/Systems/master-%d", bmcAddr(i), i))
			name, mac, ip := fmt.Sprintf("master-%d", i), fmt.Sprintf("52:54:00:bb:00:0%d", i+1), fmt.Sprintf("192.168.111.%d", 80+i)
			sc.hosts = append(sc.hosts, host{name: name, macs: []string{mac}, ip: ip, nodeZero: i == 0})
			sc.dhcp = append(sc.dhcp, DHCPHost{MAC: mac, IP: ip, Hostname: name})
		}
		sc.installConfig = serveBootInstallConfig(addrs)
		res, err := l.run(t, sc)
		require.NoError(t, err)
		t.Logf("mirror manifest/blob requests: %d", len(res.pulls))
	})
}

// threeAgentConfig is twoAgentConfig with the third master.
const threeAgentConfig = twoAgentConfig + `  - hostname: master-2
    role: master
    interfaces:
      - name: eno1
        macAddress: 52:54:00:bb:00:03
`

// requireQemuCurl skips (fails in CI) without QEMU's curl block driver.
func requireQemuCurl(t *testing.T) {
	t.Helper()
	out, _ := exec.Command("qemu-system-x86_64", "-drive", "help").CombinedOutput()
	_, err := os.Stat("/usr/lib/x86_64-linux-gnu/qemu/block-curl.so")
	if err != nil && !bytes.Contains(out, []byte("http")) {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI=true but QEMU's curl block driver is missing (hack/redfish-deps.sh installs qemu-block-extra)")
		}
		t.Skip("QEMU's curl block driver is missing (hack/redfish-deps.sh installs qemu-block-extra)")
	}
}

// serveAndBoot starts agentiso serve on the asset directory and one
// Redfish BMC emulator per host, runs agentiso boot, and returns the
// guests the emulators started.
func serveAndBoot(ctx context.Context, t *testing.T, l *lab, nw *Network, dir string, vcs []VMConfig) (map[string]*VM, error) {
	serveLog, err := os.Create(filepath.Join(dir, "serve.log"))
	require.NoError(t, err)
	serve := exec.CommandContext(ctx, l.bin, "serve", "--dir", dir, "--listen", serveListen)
	serve.Stdout, serve.Stderr = serveLog, serveLog
	serve.Cancel = func() error { return serve.Process.Signal(os.Interrupt) }
	serve.WaitDelay = 10 * time.Second
	require.NoError(t, serve.Start())
	serveDone := make(chan error, 1)
	go func() { serveDone <- serve.Wait() }()
	t.Cleanup(func() {
		_ = serve.Process.Signal(os.Interrupt)
		select {
		case <-serveDone:
		case <-time.After(15 * time.Second):
			_ = serve.Process.Kill()
		}
		serveLog.Close()
	})
	if err := waitHTTP(ctx, "http://"+serveListen+"/agent.x86_64.iso.sha256", 2*time.Minute); err != nil {
		b, _ := os.ReadFile(serveLog.Name())
		return nil, fmt.Errorf("agentiso serve did not come up: %v\n%s", err, b)
	}

	var mu sync.Mutex
	vms := map[string]*VM{}
	var bootErr error
	for i, vc := range vcs {
		bmc := redfishsim.New(redfishsim.Options{
			Username: bmcUser, Password: bmcPass,
			Systems: []redfishsim.System{{ID: vc.Name, MediaUnderSystem: i == 1}},
			OnBoot: func(id, image string) {
				mu.Lock()
				defer mu.Unlock()
				if image == "" {
					bootErr = fmt.Errorf("%s powered on without the one-time CD boot", id)
					return
				}
				if vms[id] != nil {
					bootErr = fmt.Errorf("%s booted twice", id)
					return
				}
				c := vc
				// QEMU reads the CD from the URL (curl block driver) with
				// a generous timeout and 4 MiB range reads, as a BMC would.
				c.ISO = image + ",file.timeout=120,file.readahead=4194304"
				vm, err := StartVM(ctx, nw, dir, c)
				if err != nil {
					bootErr = fmt.Errorf("%s: start the guest: %w", id, err)
					return
				}
				vms[id] = vm
			},
		})
		ln, err := net.Listen("tcp", bmcAddr(i))
		require.NoError(t, err)
		hs := &http.Server{Handler: bmc, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = hs.Serve(ln) }()
		t.Cleanup(func() { _ = hs.Close() })
	}

	out, err := exec.CommandContext(ctx, l.bin, "boot", "--dir", dir, "--url", "http://"+serveListen).CombinedOutput()
	t.Logf("agentiso boot:\n%s", out)
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		return vms, fmt.Errorf("agentiso boot: %w\n%s", err, out)
	}
	if bootErr != nil {
		return vms, bootErr
	}
	for _, want := range []string{
		"host master-0: powering on", "host master-1: powering on", "host master-2: powering on",
		"CD at /redfish/v1/Managers/BMC-master-0/VirtualMedia/Cd under the Manager",
		"CD at /redfish/v1/Systems/master-1/VirtualMedia/Cd under the System",
		"every host is booting from agent.x86_64.iso",
	} {
		if !bytes.Contains(out, []byte(want)) {
			return vms, fmt.Errorf("agentiso boot did not say %q", want)
		}
	}
	if strings.Contains(string(out), bmcPass) {
		return vms, fmt.Errorf("agentiso boot printed the BMC password")
	}
	if len(vms) != len(vcs) {
		return vms, fmt.Errorf("%d of %d hosts were powered on from the CD", len(vms), len(vcs))
	}
	// The guests' CDs read the ISO through agentiso serve.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, _ := os.ReadFile(serveLog.Name())
		if bytes.Count(b, []byte("GET /agent.x86_64.iso status=206")) >= 10 {
			break
		}
		if time.Now().After(deadline) {
			return vms, fmt.Errorf("the guests did not read the ISO through agentiso serve:\n%s", Tail(b, 20))
		}
		time.Sleep(2 * time.Second)
	}
	return vms, nil
}

// writeISOSum rewrites iso's .sha256 (sha256sum's format, as agentiso
// writes it) after the lab edited the ISO.
func writeISOSum(iso string) error {
	f, err := os.Open(iso)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	return os.WriteFile(iso+".sha256", []byte(hex.EncodeToString(h.Sum(nil))+"  "+filepath.Base(iso)+"\n"), 0o644)
}

func waitHTTP(ctx context.Context, url string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodHead, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("HTTP %d", resp.StatusCode)
			}
			return err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// serveBootNegative runs the real agentiso serve and boot against BMC
// emulators that must make boot fail with a clear message, without
// guests: a wrong BMC password (401 naming the host), a stalled BMC (the
// call's timeout), and a media server that ignores range requests.
func serveBootNegative(t *testing.T, l *lab) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	_, err := testiso.WriteFile(filepath.Join(dir, "agent.x86_64.iso"), testiso.Options{Size: 16 << 20})
	require.NoError(t, err)
	iso, err := os.ReadFile(filepath.Join(dir, "agent.x86_64.iso"))
	require.NoError(t, err)
	sum := sha256.Sum256(iso)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.x86_64.iso.sha256"), []byte(hex.EncodeToString(sum[:])+"  agent.x86_64.iso\n"), 0o644))
	bmcs := []string{"redfish-virtualmedia+http://127.0.0.1:8101/redfish/v1/Systems/master-0", "redfish-virtualmedia+http://127.0.0.1:8102/redfish/v1/Systems/master-1"}
	ic := strings.Replace(serveBootInstallConfig(bmcs), `{"auths":{`, `{"auths":{"mirror.lab:5000":{"auth":"bGFiOm1pcnJvcg=="},`, 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "install-config.yaml"), []byte(ic), 0o600))
	for i, o := range []redfishsim.Options{
		{Username: bmcUser, Password: "another-password", Systems: []redfishsim.System{{ID: "master-0"}}},
		{Username: bmcUser, Password: bmcPass, Stall: time.Minute, Systems: []redfishsim.System{{ID: "master-1", MediaUnderSystem: true}}},
	} {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", 8101+i))
		require.NoError(t, err)
		hs := &http.Server{Handler: redfishsim.New(o), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = hs.Serve(ln) }()
		defer hs.Close()
	}
	serve := exec.CommandContext(ctx, l.bin, "serve", "--dir", dir, "--listen", "127.0.0.1:8180")
	var serveOut bytes.Buffer
	serve.Stdout, serve.Stderr = &serveOut, &serveOut
	require.NoError(t, serve.Start())
	defer func() { _ = serve.Process.Signal(os.Interrupt); _ = serve.Wait() }()
	require.NoError(t, waitHTTP(ctx, "http://127.0.0.1:8180/agent.x86_64.iso.sha256", time.Minute), serveOut.String())

	start := time.Now()
	out, err := exec.CommandContext(ctx, l.bin, "boot", "--dir", dir, "--url", "http://127.0.0.1:8180", "--call-timeout", "3s").CombinedOutput()
	t.Logf("agentiso boot (%s):\n%s", time.Since(start).Round(time.Millisecond), out)
	require.Error(t, err)
	require.Contains(t, string(out), "ERROR 2 of 2 host(s) failed:")
	require.Contains(t, string(out), "host master-0: BMC http://127.0.0.1:8101/redfish/v1/Systems/master-0: POST /redfish/v1/SessionService/Sessions: HTTP 401 Unauthorized: ")
	require.Contains(t, string(out), "(check bmc.username and bmc.password)")
	require.Contains(t, string(out), "host master-1: BMC http://127.0.0.1:8102/redfish/v1/Systems/master-1: GET /redfish/v1/Systems/master-1: no answer within 3s (the BMC is unreachable or hung)")
	require.NotContains(t, string(out), bmcPass)
	require.Less(t, time.Since(start), time.Minute)

	plain := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(iso) }), ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:8181")
	require.NoError(t, err)
	go func() { _ = plain.Serve(ln) }()
	defer plain.Close()
	out, err = exec.CommandContext(ctx, l.bin, "boot", "--dir", dir, "--url", "http://127.0.0.1:8181").CombinedOutput()
	t.Logf("agentiso boot against a server without ranges:\n%s", out)
	require.Error(t, err)
	require.Contains(t, string(out), "ignores range requests (it answered 200 with the whole file to Range: bytes=0-0)")
}
