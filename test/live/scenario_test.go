//go:build e2elive

package live

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/test/live/mirror"
)

// mirrorListen is where the lab's registry listens: the bridge address.
const mirrorListen = BridgeIP + ":5000"

// scenario is one lab run: inputs, hosts and what must hold.
type scenario struct {
	name          string
	installConfig string
	agentConfig   string
	hosts         []host // hosts[0] is node zero
	dhcp          []DHCPHost
	noCA          bool // leave additionalTrustBundle out (negative control)
	byTag         bool // give agentiso the release by tag (negative control)
	proxy         bool
	partial       bool                   // not every host boots: the install cannot start
	bootOnly      bool                   // stop once the hosts are up and agent.service runs from the mirror's images
	tamper        func(iso string) error // edits the agent ISO before the boot
}

// result is what a run observed.
type result struct {
	reports map[string]*Report
	pulls   []mirror.Pull
	waitFor string
}

// lab holds what every scenario shares.
type lab struct {
	bin, fixture, standin string
	kvm                   bool
}

// indent prefixes every line of s with n spaces.
func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return pad + strings.Join(lines, "\n"+pad) + "\n"
}

// mirrorInputs appends the mirror's trust bundle, imageDigestSources and
// (optionally) a proxy to an install-config.
func mirrorInputs(ic string, m *mirror.Mirror, withCA bool, proxyURL string) string {
	var b strings.Builder
	b.WriteString(ic)
	if withCA {
		b.WriteString("additionalTrustBundle: |\n")
		b.WriteString(indent(string(m.CACertPEM), 2))
	}
	b.WriteString("imageDigestSources:\n")
	for _, s := range m.ImageDigestSources {
		fmt.Fprintf(&b, "  - source: %s\n    mirrors:\n", s.Source)
		for _, mr := range s.Mirrors {
			fmt.Fprintf(&b, "      - %s\n", mr)
		}
	}
	if proxyURL != "" {
		fmt.Fprintf(&b, "proxy:\n  httpProxy: %s\n  httpsProxy: %s\n", proxyURL, proxyURL)
	}
	return b.String()
}

// run plays one scenario and returns the first check that failed.
func (l *lab) run(t *testing.T, sc scenario) (*result, error) {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("%s: %s", sc.name, time.Since(start).Round(time.Second)) }()
	dir := workDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 28*time.Minute)
	defer cancel()
	net, err := SetupNetwork(ctx)
	require.NoError(t, err)
	defer net.Close()

	m, err := mirror.Start(ctx, mirror.Options{Listen: mirrorListen, StandinBinary: l.standin})
	require.NoError(t, err, "start the mirror registry")
	defer m.Close()

	proxyURL := ""
	if sc.proxy {
		p, err := StartProxy(ctx, BridgeIP+":3128", "lab@user", "pa%ss")
		require.NoError(t, err)
		defer p.Close()
		proxyURL = "http://lab%40user:pa%25ss@" + p.Addr
	}
	release := m.ReleaseImage
	if sc.byTag {
		release = m.ReleaseTag
	}
	files := map[string]string{
		"install-config.yaml": mirrorInputs(sc.installConfig, m, !sc.noCA, proxyURL),
		"agent-config.yaml":   sc.agentConfig,
	}
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	// --offline: agentiso itself never contacts a registry here; a release by
	// digest then needs its version.
	args := []string{"create", "image", "--dir", dir, "--offline", "--base-iso", l.fixture,
		"--release-image", release, "--release-version", m.Version}
	out, err := exec.CommandContext(ctx, l.bin, args...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("agentiso %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	iso := filepath.Join(dir, "agent.x86_64.iso")
	if sc.tamper != nil {
		require.NoError(t, sc.tamper(iso))
	}
	if len(sc.dhcp) > 0 {
		d, err := StartDnsmasq(ctx, dir, sc.dhcp)
		require.NoError(t, err)
		defer d.Close()
	}
	vms := map[string]*VM{}
	for _, h := range sc.hosts {
		vm, err := StartVM(ctx, net, dir, VMConfig{Name: h.name, ISO: iso, MACs: h.macs, MemoryMiB: memoryMiB(), CPUs: cpus(), KVM: l.kvm, Timeout: 27 * time.Minute})
		require.NoError(t, err)
		defer vm.Stop()
		vms[h.name] = vm
	}
	res := &result{reports: map[string]*Report{}}
	// fatalPull finds, on any host, a failed pull that retrying cannot cure.
	fatalPull := func() error {
		for _, h := range sc.hosts {
			if e, ok := FirstFatal(PullErrors(vms[h.name].ReadJournal())); ok {
				return fmt.Errorf("%s: a pull failed for good: %s:\n%s", h.name, e.Kind, e.Line)
			}
		}
		return nil
	}
	fail := func(err error) (*result, error) {
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %v", sc.name, err)
		for _, h := range sc.hosts {
			vm := vms[h.name]
			if r := res.reports[h.name]; r != nil && len(r.Broken()) > 0 {
				fmt.Fprintf(&b, "\n--- %s: failed units ---\n%s", h.name, r.FailedSummary())
			}
			if p := JournalProblems(vm.ReadJournal(), 40); len(p) > 0 {
				fmt.Fprintf(&b, "\n--- %s: problems in the journal (%s), first %d ---\n%s\n", h.name, vm.Journal, len(p), strings.Join(p, "\n"))
			}
			fmt.Fprintf(&b, "\n--- %s console (%s), last 3 KiB ---\n%s", h.name, vm.Console, Tail(vm.Read(), 3072))
		}
		res.pulls = m.Pulls()
		return res, errors.New(b.String())
	}

	// 1. Node zero starts the installation; every host comes up as
	// configured. A unit that fails or restarts ends the wait at once.
	nz := sc.hosts[0]
	for _, h := range sc.hosts {
		r, err := waitReport(ctx, vms[h.name], func(r *Report) bool {
			res.reports[h.name] = r
			if len(r.Broken()) > 0 || fatalPull() != nil {
				return true
			}
			if sc.bootOnly {
				return bootDone(r, h)
			}
			if h.nodeZero && !sc.partial {
				return installStarted(r)
			}
			if h.nodeZero {
				return unitDone(r, "assisted-service.service") && unitDone(r, "agent.service") && r.Hostname == h.name
			}
			return unitDone(r, "agent.service") && r.Hostname == h.name
		})
		if r != nil {
			res.reports[h.name] = r
		}
		if err != nil {
			return fail(err)
		}
		if err := fatalPull(); err != nil {
			return fail(err)
		}
		if sc.bootOnly {
			if err := checkHostErr(r, h, bootUnitsAgent()); err != nil {
				return fail(err)
			}
			for _, u := range bootUnitsAgent() {
				if slices.Contains(r.Broken(), u) {
					return fail(fmt.Errorf("%s: unit %s failed or restarted", h.name, u))
				}
			}
			continue
		}
		if broken := r.Broken(); len(broken) > 0 {
			return fail(fmt.Errorf("%s: units failed or restarted: %s", h.name, strings.Join(broken, ", ")))
		}
		if err := checkHostErr(r, h, hostUnits(h, !sc.partial)); err != nil {
			return fail(err)
		}
	}

	// 2. Every image came from the mirror, by digest.
	res.pulls = m.Pulls()
	if err := checkPulls(res.pulls); err != nil {
		return fail(err)
	}

	if sc.bootOnly {
		return res, nil
	}

	// 3. wait-for, from the test machine against node zero, sees the hosts
	// and the installation, and gives up as documented (exit 5) since the
	// stand-ins never finish bootstrap.
	wctx, wcancel := context.WithTimeout(ctx, 3*time.Minute)
	defer wcancel()
	wout, werr := exec.CommandContext(wctx, l.bin, "wait-for", "bootstrap-complete", "--dir", dir, "--timeout", "90s").CombinedOutput()
	res.waitFor = string(wout)
	var exit *exec.ExitError
	if !errors.As(werr, &exit) || exit.ExitCode() != 5 {
		return fail(fmt.Errorf("agentiso wait-for bootstrap-complete: want exit code 5 after its timeout, got %v:\n%s", werr, wout))
	}
	for _, h := range sc.hosts {
		if !strings.Contains(res.waitFor, h.name) {
			return fail(fmt.Errorf("wait-for never showed host %s:\n%s", h.name, wout))
		}
	}
	if !sc.partial && !strings.Contains(res.waitFor, "installing") {
		return fail(fmt.Errorf("wait-for never showed the installation:\n%s", wout))
	}
	_ = nz
	return res, nil
}

// bootUnitsAgent are the units that must run on every host before any
// agent-installer container: the image-less ones and agent.service, which
// pulls the release and agent images from the mirror.
func bootUnitsAgent() []string { return append(append([]string{}, bootUnits...), "agent.service") }

// bootDone: the host is up as configured and agent.service runs; or a
// unit of bootUnitsAgent broke (the checks then say which).
func bootDone(r *Report, h host) bool {
	for _, u := range bootUnitsAgent() {
		if slices.Contains(r.Broken(), u) {
			return true
		}
		if !unitDone(r, u) {
			return false
		}
	}
	if r.Hostname != h.name || r.Node0 != h.nodeZero {
		return false
	}
	// agent.service is running only after extract-agent.sh pulled the agent image
	return r.Units["agent.service"].Sub == "running"
}

// installStarted: start-cluster-installation.service reports the install
// it triggered (POST .../actions/install answered 202).
func installStarted(r *Report) bool {
	for _, l := range r.Logs["start-cluster-installation.service"] {
		if strings.Contains(l, "Cluster installation in progress") {
			return true
		}
	}
	return false
}

// hostUnits are the units that must be active on h.
func hostUnits(h host, install bool) []string {
	units := append([]string{}, bootUnits...)
	units = append(units, "agent.service")
	if h.nodeZero {
		units = append(units, "assisted-service-pod.service", "assisted-service-db.service", "assisted-service.service",
			"agent-register-cluster.service", "agent-register-infraenv.service")
		if install {
			units = append(units, "apply-host-config.service", "start-cluster-installation.service")
		}
	}
	return units
}

// checkHostErr is checkHost returning an error.
func checkHostErr(r *Report, h host, units []string) error {
	if r.Hostname != h.name {
		return fmt.Errorf("%s: hostname is %q (set-hostname.service)", h.name, r.Hostname)
	}
	var link *Link
	if h.iface == "" {
		link = r.LinkByMAC(h.macs[0])
	} else {
		link = r.LinkByName(h.iface)
	}
	if link == nil {
		return fmt.Errorf("%s: NetworkManager did not bring up %q; interfaces: %v", h.name, h.iface, linkNames(r))
	}
	if link.Kind() != h.kind {
		return fmt.Errorf("%s: %s is of kind %q, want %q", h.name, link.Name, link.Kind(), h.kind)
	}
	if !link.HasAddr(h.ip, PrefixLen) {
		return fmt.Errorf("%s: %s does not hold %s/%d: %+v", h.name, link.Name, h.ip, PrefixLen, link.Addrs)
	}
	if h.kind == "bond" {
		for _, mac := range h.macs {
			ok := false
			for _, l := range r.Links {
				if l.HasMAC(mac) && l.Master == h.iface {
					ok = true
				}
			}
			if !ok {
				return fmt.Errorf("%s: the NIC with MAC %s is not a port of %s; interfaces: %v", h.name, mac, h.iface, linkNames(r))
			}
		}
	}
	if r.Node0 != h.nodeZero {
		return fmt.Errorf("%s: node zero is %v, want %v (node-zero.service)", h.name, r.Node0, h.nodeZero)
	}
	for _, u := range units {
		if !unitDone(r, u) {
			return fmt.Errorf("%s: unit %s is %+v, want active; its log: %q", h.name, u, r.Units[u], r.Logs[u])
		}
	}
	return nil
}

// checkPulls: the hosts pulled only by digest, and every pull succeeded.
func checkPulls(pulls []mirror.Pull) error {
	var manifests int
	for _, p := range pulls {
		if p.Kind != "manifests" {
			continue
		}
		manifests++
		if !p.ByDigest() {
			return fmt.Errorf("the mirror was asked for a tag: %s", p)
		}
		if p.Status >= 400 {
			return fmt.Errorf("a pull from the mirror failed: %s", p)
		}
	}
	if manifests == 0 {
		return errors.New("no host pulled anything from the mirror")
	}
	return nil
}
