//go:build e2elive

package live

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testcluster"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/test/live/mirror"
)

// mirrorListen is where the lab's registry listens.
const mirrorListen = MirrorIP + ":5000"

// scenario is one lab run: inputs, hosts and what must hold.
type scenario struct {
	name          string
	installConfig string
	agentConfig   string
	hosts         []host // hosts[0] is node zero
	dhcp          []DHCPHost
	noCA          bool // leave additionalTrustBundle out (negative control)
	proxy         bool
	partial       bool // not every host boots: the install cannot start
	bootOnly      bool // stop once the hosts are up and agent.service runs from the mirror's images
	// unconfigured boots the generic ISO instead of the agent ISO and
	// attaches config images to node zero (unconfigured_test.go).
	unconfigured bool
	// embedPayload builds the extended ISO (create image --embed-payload,
	// the payload with its docker-registry image) and stops the lab's
	// mirror before the boot: the hosts pull only from the registry each
	// starts from the ISO (noregistry_test.go).
	embedPayload bool
	// tamper edits the agent ISO before the boot (negative controls); dir
	// is the scenario's asset directory (agentiso's state).
	tamper func(iso, dir string, m *mirror.Mirror) error
	// deadline bounds the scenario from the first boot (default 14 minutes).
	deadline time.Duration
	// addNodes builds the ISO with node-image create from an installed
	// cluster (addnodes_test.go) instead of create image: every host is
	// its own node zero, imports the cluster and installs itself.
	addNodes bool
	// nodesConfig is nodes-config.yaml (addNodes), and dayTwoRole the role
	// the host must install with ("worker" when empty).
	nodesConfig, dayTwoRole string
	// dns are the names the lab's DNS server on the bridge answers (name ->
	// IPv4, subdomains included): what the real assisted-service's domain
	// validations resolve on the hosts.
	dns map[string]string
	// boot, when set, boots the hosts instead of the test (each VMConfig's
	// ISO is the built agent ISO) and returns them by name
	// (serve_boot_test.go: through agentiso serve + boot and the Redfish
	// emulator).
	boot func(ctx context.Context, t *testing.T, l *lab, net *Network, dir string, vcs []VMConfig) (map[string]*VM, error)
}

// result is what a run observed.
type result struct {
	reports map[string]*Report
	pulls   []mirror.Pull
	proxied []ProxyRequest
	waitFor string
	// transient are the pull errors the scripts recovered from.
	transient int
	// localPulls are the node-local registries' requests (embedPayload),
	// from every host's journal.
	localPulls []RegistryRequest
	// builtPulls is how many of pulls agentiso made while it built the
	// extended ISO (embedPayload), before the mirror was stopped.
	builtPulls int
}

// lab holds what every scenario shares.
type lab struct {
	bin, fixture, standin string
	kvm                   bool
	// version is the lab payload's release version.
	version string
	// up are the real assisted-service, client and agent images.
	up *mirror.UpstreamLayers
	// budgetEnd is when every scenario must be over (AGENTISO_LIVE_BUDGET).
	budgetEnd time.Time
	// registry is the distribution registry binary (registryBinary).
	registry string
}

// indent prefixes every line of s with n spaces.
func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return pad + strings.Join(lines, "\n"+pad) + "\n"
}

// mirrorInputs adds the mirror's auth to the pull secret and appends its
// trust bundle, imageDigestSources and (optionally) a proxy to an
// install-config.
func mirrorInputs(ic string, m *mirror.Mirror, withCA bool, proxyURL string) string {
	var b strings.Builder
	// The pull secret holds an auth for the mirror, as a disconnected
	// install's must: assisted-service refuses to register a cluster whose
	// pull secret has no auth for the registry the release is pulled from
	// (release-4.20 internal/cluster/validations/pull_secret_validation.go,
	// "pull secret must contain auth for ..."), and agentiso refuses to build
	// such an ISO. The lab's mirror accepts any.
	ic = strings.Replace(ic, `{"auths":{`, `{"auths":{"`+m.Addr+`":{"auth":"bGFiOm1pcnJvcg=="},`, 1)
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
	vms := map[string]*VM{}
	defer func() {
		// The guests' CPU time says what a scenario costs whatever else
		// the machine was doing (TCG is CPU-bound): docs/e2e.md "Cost".
		var cpu []string
		for name, vm := range vms {
			vm.Stop()
			cpu = append(cpu, fmt.Sprintf("%s %s", name, vm.CPUTime().Round(time.Second)))
		}
		sort.Strings(cpu)
		la, _ := os.ReadFile("/proc/loadavg")
		t.Logf("%s: %s (QEMU CPU time: %s; load average %s)", sc.name, time.Since(start).Round(time.Second),
			strings.Join(cpu, ", "), strings.Join(strings.Fields(string(la))[:min(3, len(strings.Fields(string(la))))], " "))
	}()
	dir := workDir(t)
	deadline := sc.deadline
	if deadline == 0 {
		deadline = 14 * time.Minute
	}
	// Node zero pulls the real service's and agent's images (hundreds of
	// MB, unpacked under TCG) before anything else can happen.
	deadline += realExtraTime
	// The whole TestLive has a budget: a scenario gets at most what is left.
	if left := time.Until(l.budgetEnd) - 3*time.Minute; left < deadline {
		if left < 3*time.Minute {
			t.Fatalf("%s: the live lab's budget (AGENTISO_LIVE_BUDGET) is spent; not started", sc.name)
		}
		deadline = left
	}
	// The build (below) comes first; the deadline counts from here.
	ctx, cancel := context.WithTimeout(context.Background(), deadline+2*time.Minute)
	defer cancel()
	net, err := SetupNetwork(ctx)
	require.NoError(t, err)
	defer net.Close()

	t.Log(l.up.Describe())
	mopts := mirror.Options{Listen: mirrorListen, StandinBinary: l.standin, Version: l.version, Upstream: l.up}
	if sc.embedPayload {
		mopts.RegistryBinary = l.registryBinary(t)
	}
	m, err := mirror.Start(ctx, mopts)
	require.NoError(t, err, "start the mirror registry")
	defer m.Close()

	proxyURL := ""
	var proxy *Proxy
	if sc.proxy {
		proxy, err = StartProxy(ctx, BridgeIP+":3128", proxyUser, proxyPass)
		require.NoError(t, err)
		defer proxy.Close()
		proxyURL = "http://" + url.UserPassword(proxyUser, proxyPass).String() + "@" + proxy.Addr
		require.Contains(t, proxyURL, "%25", "the proxy URL must carry a percent-encoded %")
	}
	release := m.ReleaseImage
	iso := filepath.Join(dir, "agent.x86_64.iso")
	var cdSteps []cdStep
	var clusterID string
	var installed *testcluster.Cluster
	if !sc.addNodes {
		files := map[string]string{
			"install-config.yaml": mirrorInputs(sc.installConfig, m, !sc.noCA, proxyURL),
			"agent-config.yaml":   sc.agentConfig,
		}
		for name, content := range files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
		}
	}
	switch {
	case sc.addNodes:
		if iso, installed, err = l.buildNodeImage(ctx, dir, m, sc.nodesConfig); err != nil {
			return nil, err
		}
		defer installed.Close()
		clusterID = addNodesCluster(m).ClusterID
	case sc.unconfigured:
		if iso, cdSteps, err = l.buildUnconfigured(ctx, dir, m); err != nil {
			return nil, err
		}
	case sc.embedPayload:
		// The extended ISO: agentiso reads the payload through the
		// install-config's mirrors (the lab's, trusted through
		// additionalTrustBundle) and writes it into the ISO. Not
		// --offline: agentiso refuses it with --embed-payload.
		args := []string{"create", "image", "--dir", dir, "--base-iso", l.fixture, "--release-image", release, "--embed-payload"}
		t0 := time.Now()
		out, err := exec.CommandContext(ctx, l.bin, args...).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("agentiso %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		st, err := os.Stat(iso)
		require.NoError(t, err)
		t.Logf("%s: the extended ISO, %d MiB, written in %s:\n%s", sc.name, st.Size()>>20, time.Since(t0).Round(time.Second), out)
	default:
		// --offline: agentiso itself never contacts a registry here; a
		// release by digest then needs its version.
		args := []string{"create", "image", "--dir", dir, "--offline", "--base-iso", l.fixture,
			"--release-image", release, "--release-version", m.Version}
		out, err := exec.CommandContext(ctx, l.bin, args...).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("agentiso %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	lowered, err := LowerRequirements(iso, labRequirements)
	require.NoError(t, err)
	// The units that pull the real images (the database's pulls the
	// service image) have upstream's 500 s to start: under TCG on a
	// loaded machine the pull alone took longer (docs/e2e.md, Cost).
	for _, u := range slowStartUnits {
		require.NoError(t, EditUnit(iso, u, SetStartTimeout(labStartTimeout)))
	}
	t.Logf("%s: lowered for the lab's guests: %s; TimeoutStartSec=%s for %s", sc.name, lowered, labStartTimeout, strings.Join(slowStartUnits, ", "))
	if sc.tamper != nil {
		require.NoError(t, sc.tamper(iso, dir, m))
	}
	// builtPulls are the mirror's requests until the boot: agentiso's own
	// reads of the payload when it built an extended ISO.
	var builtPulls int
	if sc.embedPayload {
		// Nothing but the hosts' own registries may answer from here on.
		builtPulls = len(m.Pulls())
		require.NoError(t, m.Close())
		t.Logf("%s: the lab's mirror %s is stopped: the hosts can reach no registry but their own", sc.name, m.Addr)
	}
	if sc.boot != nil {
		// The lab edited the ISO after agentiso wrote it (above): agentiso
		// serve serves only what matches its .sha256, so the sum follows.
		require.NoError(t, writeISOSum(iso))
	}
	if len(sc.dhcp) > 0 || len(sc.dns) > 0 {
		d, err := StartDnsmasq(ctx, dir, sc.dhcp, sc.dns)
		require.NoError(t, err)
		defer d.Close()
	}
	var vcs []VMConfig
	for _, h := range sc.hosts {
		vc := VMConfig{Name: h.name, ISO: iso, MACs: h.macs, MemoryMiB: memoryMiB(), CPUs: cpus(), KVM: l.kvm, Timeout: deadline + time.Minute,
			ConfigCD: sc.unconfigured}
		// The real service checks the installation disk; node zero
		// also holds the service's images (tmpfs), PostgreSQL and the
		// service.
		vc.DiskGiB, vc.UUID = labDiskGiB, vmUUID(h.name, h.macs)
		if h.nodeZero {
			vc.MemoryMiB = max(vc.MemoryMiB, nodeZeroMemoryMiB())
		}
		vcs = append(vcs, vc)
	}
	if sc.boot != nil {
		booted, err := sc.boot(ctx, t, l, net, dir, vcs)
		for name, vm := range booted {
			defer vm.Stop()
			vms[name] = vm
		}
		if err != nil {
			return nil, err
		}
	} else {
		for _, vc := range vcs {
			vm, err := StartVM(ctx, net, dir, vc)
			require.NoError(t, err)
			defer vm.Stop()
			vms[vc.Name] = vm
		}
	}
	bootStart := time.Now()
	ctx, cancelBoot := context.WithTimeout(ctx, deadline)
	defer cancelBoot()
	res := &result{reports: map[string]*Report{}}
	nz := sc.hosts[0]
	// fatalPull finds, on any host, a failed pull that retrying cannot cure.
	fatalPull := func() error {
		for _, h := range sc.hosts {
			if e, ok := FirstFatal(PullErrors(vms[h.name].ReadJournal())); ok {
				return fmt.Errorf("%s: a pull failed for good: %s:\n%s", h.name, e.Kind, e.Line)
			}
		}
		return nil
	}
	// node zero's assisted-service, asked from the test machine with the
	// user token of agentiso's state.
	var token string
	if sc.addNodes {
		token, err = isoUserToken(iso)
	} else {
		token, err = userToken(dir)
	}
	if err != nil {
		return nil, err
	}
	svc := &ServiceClient{BaseURL: "http://" + nz.ip + ":8090", UserToken: token}
	// fatalLog finds, in any host's journal, a line of the real programs
	// that says the flow cannot go on (upstreamFatal): the units retry
	// forever, so the run ends at once instead of at its deadline.
	fatalLog := func() error {
		for _, h := range sc.hosts {
			if line, ok := FirstLineContaining(vms[h.name].ReadJournal(), upstreamFatal); ok {
				return fmt.Errorf("%s: the real components refused: %s", h.name, line)
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
		if lines := LinesContaining(vms[nz.name].ReadJournal(), []string{"level=error", "level=fatal"}, 30); len(lines) > 0 {
			fmt.Fprintf(&b, "\n--- %s: the real programs' errors (logrus level=error/fatal), last %d ---\n%s\n", nz.name, len(lines), strings.Join(lines, "\n"))
		}
		if !sc.bootOnly {
			dctx, dcancel := context.WithTimeout(context.Background(), 30*time.Second)
			fmt.Fprintf(&b, "\n--- node zero's assisted-service (%s) says ---\n%s", l.up.Describe(), svc.Describe(dctx))
			dcancel()
		}
		res.pulls = m.Pulls()
		return res, errors.New(b.String())
	}
	defer func() {
		for _, h := range sc.hosts {
			for _, e := range PullErrors(vms[h.name].ReadJournal()) {
				if !e.Fatal() {
					res.transient++
				}
			}
		}
		if res.transient > 0 {
			t.Logf("%s: %d pull(s) failed for a while (mirror not answering in time) and were retried by the scripts", sc.name, res.transient)
		}
	}()

	// 0. The generic ISO: the hosts wait for their configuration, refuse
	// the wrong config images and take the right one.
	if len(cdSteps) > 0 {
		for _, h := range sc.hosts {
			if err := attachConfigImages(ctx, t, vms[h.name], sc.staticIP(h), cdSteps); err != nil {
				return fail(err)
			}
		}
	}

	// 1. Node zero starts the installation; every host comes up as
	// configured. A unit that fails or restarts ends the wait at once.
	for _, h := range sc.hosts {
		r, err := waitReport(ctx, vms[h.name], func(r *Report) bool {
			res.reports[h.name] = r
			if len(r.Broken()) > 0 || fatalPull() != nil || fatalLog() != nil {
				return true
			}
			// set-hostname.service ran minutes before agent.service starts:
			// a wrong hostname then stays wrong (the checks say so).
			if unitDone(r, "agent.service") && unitDone(r, "set-hostname.service") && r.Hostname != h.name {
				return true
			}
			if sc.bootOnly {
				return bootDone(r, h)
			}
			// A report reads the unit states before the logs, so it may
			// show the install started with a unit still activating: wait
			// for a report where everything holds.
			for _, u := range sc.units(h) {
				if !unitDone(r, u) {
					return false
				}
			}
			if r.Hostname != h.name {
				return false
			}
			return !h.nodeZero || sc.partial || sc.addNodes || installStarted(r)
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
		if err := fatalLog(); err != nil {
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
		if err := checkHostErr(r, h, sc.units(h)); err != nil {
			return fail(err)
		}
	}

	// 2. Every image came from the mirror, by digest, and the images the
	// units run were among them.
	res.pulls = m.Pulls()
	if sc.embedPayload {
		reqs := map[string][]RegistryRequest{}
		for _, h := range sc.hosts {
			reqs[h.name] = RegistryRequests(vms[h.name].ReadJournal())
			res.localPulls = append(res.localPulls, reqs[h.name]...)
		}
		res.builtPulls = builtPulls
		if err := checkLocalPulls(reqs, res.pulls[builtPulls:], m, sc.bootOnly); err != nil {
			return fail(err)
		}
	} else if err := checkPulls(res.pulls, m, sc.bootOnly); err != nil {
		return fail(err)
	}
	t.Logf("%s: hosts up as configured after %s", sc.name, time.Since(bootStart).Round(time.Second))

	if sc.bootOnly {
		return res, nil
	}

	// 3. Only node zero runs assisted-service.
	for _, h := range sc.hosts[1:] {
		r := res.reports[h.name]
		if s := r.Units["assisted-service.service"]; s.Active == "active" || s.Active == "activating" {
			return fail(fmt.Errorf("%s is not node zero but runs assisted-service.service (%+v)", h.name, s))
		}
		for _, c := range r.Containers {
			if strings.HasPrefix(c, "service ") || strings.HasPrefix(c, "assisted-db ") {
				return fail(fmt.Errorf("%s is not node zero but runs the container %q", h.name, c))
			}
		}
	}

	// 4. From the test machine: every host registered with node zero's
	// assisted-service, and the install endpoint was called (or, with hosts
	// missing, was not).
	var regErr error
	for {
		regErr = nil
		hosts, err := svc.Hosts(ctx)
		if err != nil {
			regErr = err
		} else {
			for _, h := range sc.hosts {
				if err := CheckRegistered(hosts, h.name, h.macs); err != nil {
					regErr = fmt.Errorf("%s: %w", h.name, err)
					break
				}
			}
		}
		if regErr == nil || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
		}
	}
	if regErr != nil {
		return fail(fmt.Errorf("not every host registered with node zero's assisted-service: %w", regErr))
	}
	if sc.addNodes {
		role := cmp.Or(sc.dayTwoRole, "worker")
		if err := checkAddNodeReal(ctx, svc, clusterID, nz, role); err != nil {
			return fail(err)
		}
		if err := checkPoolFetched(installed, role); err != nil {
			return fail(err)
		}
		t.Logf("%s: assisted-service imported cluster %s and installs %s as %s (its day-2 check fetched the %s pool's Ignition)", sc.name, clusterID, nz.name, role, role)
		if err := checkNodeImageMonitor(ctx, l.bin, dir, nz, res); err != nil {
			return fail(err)
		}
		t.Logf("%s: node-image monitor:\n%s", sc.name, res.waitFor)
		return res, nil
	}
	if err := checkInstallReal(ctx, svc, sc.partial); err != nil {
		return fail(err)
	}

	// 5. The proxy: every proxied request carried the credentials the
	// percent-encoded URL names, and the hosts' pulls went through it.
	if proxy != nil {
		res.proxied = proxy.Requests()
		if err := checkProxied(res.proxied, m.Addr); err != nil {
			return fail(err)
		}
	}

	// 6. wait-for, from the test machine against node zero, sees the hosts
	// and the installation, and gives up as documented (exit 5) since the
	// stand-ins never finish bootstrap.
	wctx, wcancel := context.WithTimeout(ctx, 3*time.Minute)
	defer wcancel()
	wout, werr := exec.CommandContext(wctx, l.bin, "wait-for", "bootstrap-complete", "--dir", dir, "--timeout", "40s").CombinedOutput()
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
	if !sc.partial && !strings.Contains(strings.ToLower(res.waitFor), "install") {
		return fail(fmt.Errorf("wait-for never showed the installation:\n%s", wout))
	}
	t.Logf("%s: wait-for bootstrap-complete:\n%s", sc.name, wout)
	return res, nil
}

// The proxy's credentials: both need percent-encoding in a URL.
const (
	proxyUser = "lab@user"
	proxyPass = "pa%ss"
)

// userToken reads the userAuth token agentiso keeps in its state.
func userToken(dir string) (string, error) {
	s, err := asset.NewStore(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		return "", err
	}
	var ac agent.AuthConfig
	ok, err := s.LoadFromState(&ac)
	if err != nil {
		return "", err
	}
	if !ok || ac.UserAuthToken == "" {
		return "", fmt.Errorf("%s: no %s in agentiso's state", dir, ac.Name())
	}
	return ac.UserAuthToken, nil
}

// checkProxied: the proxy saw requests, all with the right credentials,
// and tunnels to the mirror among them (podman's pulls).
func checkProxied(reqs []ProxyRequest, mirrorAddr string) error {
	if len(reqs) == 0 {
		return errors.New("no host used the proxy (HTTP_PROXY/HTTPS_PROXY did not reach the units: a % in the URL not written as %% in 10-default-env.conf makes systemd drop it)")
	}
	toMirror := 0
	for _, r := range reqs {
		if !r.Authorized {
			return fmt.Errorf("the proxy got %s %s without the right credentials (the percent-encoded user or password was mangled)", r.Method, r.Target)
		}
		if r.Method == "CONNECT" && r.Target == mirrorAddr {
			toMirror++
		}
	}
	if toMirror == 0 {
		return fmt.Errorf("no pull went through the proxy to the mirror %s; the proxy saw: %+v", mirrorAddr, reqs)
	}
	return nil
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

// units are the units that must be active on h in the scenario.
func (sc scenario) units(h host) []string {
	if sc.addNodes {
		return addNodesUnits()
	}
	units := hostUnits(h, !sc.partial)
	if sc.embedPayload {
		units = append(units, embeddedRegistryUnit)
	}
	return units
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

// checkPulls: the hosts pulled only by digest, every pull succeeded, and
// the release image and the components the units run (the agent; for the
// whole flow the service image) were pulled.
func checkPulls(pulls []mirror.Pull, m *mirror.Mirror, bootOnly bool) error {
	got := map[string]bool{}
	for _, p := range pulls {
		if p.Kind != "manifests" {
			continue
		}
		if !p.ByDigest() {
			return fmt.Errorf("the mirror was asked for a tag: %s", p)
		}
		if p.Status >= 400 {
			return fmt.Errorf("a pull from the mirror failed: %s", p)
		}
		got[p.Reference] = true
	}
	if len(got) == 0 {
		return errors.New("no host pulled anything from the mirror")
	}
	want := []string{"", "agent-installer-node-agent"}
	if !bootOnly {
		want = append(want, "agent-installer-api-server")
	}
	for _, c := range want {
		var img mirror.Image
		if c == "" {
			img = m.Images[0]
		} else {
			var ok bool
			if img, ok = m.Component(c); !ok {
				return fmt.Errorf("the stand-in payload has no %s", c)
			}
		}
		if !got[img.Digest] {
			name := c
			if name == "" {
				name = "the release image"
			}
			return fmt.Errorf("%s (%s) was never pulled from the mirror", name, img.Digest)
		}
	}
	return nil
}

// checkInstallReal: the real service's event log says the cluster moved to
// the status that follows an accepted install call (start-cluster-
// installation.sh posts it only when the cluster is ready, that is when every
// host passed its validations); with hosts missing it never did.
func checkInstallReal(ctx context.Context, svc *ServiceClient, partial bool) error {
	cls, err := svc.Clusters(ctx)
	if err != nil {
		return err
	}
	if len(cls) != 1 {
		return fmt.Errorf("assisted-service has %d clusters, want 1 (agent-register-cluster)", len(cls))
	}
	events, err := svc.Events(ctx, cls[0].ID)
	if err != nil {
		return err
	}
	ev, ok := InstallEvent(events)
	switch {
	case !partial && !ok:
		return fmt.Errorf("start-cluster-installation.service reported the installation, but assisted-service's events never moved the cluster to %v; cluster %s is %s (%s)", InstallStatuses, cls[0].ID, cls[0].Status, cls[0].StatusInfo)
	case partial && ok:
		return fmt.Errorf("the installation was started without every host: %s %q", ev.EventTime, ev.Message)
	}
	return nil
}

// staticIP is the address h holds from static networking alone (no DHCP
// lease in the scenario for any of its MACs), or "".
func (sc scenario) staticIP(h host) string {
	for _, d := range sc.dhcp {
		for _, mac := range h.macs {
			if strings.EqualFold(d.MAC, mac) {
				return ""
			}
		}
	}
	return h.ip
}
