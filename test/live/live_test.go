//go:build e2elive

package live

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/releasepolicy"
	"github.com/seed-a052040e/agentiso/test/live/mirror"
)

// Environment:
//
//	AGENTISO_LIVE_FIXTURE  live fixture ISO (default: hack/build-live-fixture.sh builds or finds it)
//	AGENTISO_LIVE_BIN      agentiso binary (default: built into a temp dir)
//	AGENTISO_E2E_ACCEL     tcg (default) or kvm
//	AGENTISO_LIVE_MEMORY   MiB per VM (default 1792)
//	AGENTISO_LIVE_CPUS     vCPUs per VM (default 2)
//	AGENTISO_LIVE_BUDGET   time for all scenarios of all branches together (default 55m)
//	AGENTISO_LIVE_KEEP     keep the work directories (consoles, ISOs) for inspection
//	AGENTISO_LIVE_UPSTREAM the upstream branches whose real assisted-service,
//	                       agent-installer-client and agent the scenarios run
//	                       (TestLive/<branch>/<scenario>), space-separated;
//	                       default "release-4.20" (ci set) or
//	                       "release-4.20 release-4.23" (full set)
//	AGENTISO_LIVE_SET      ci (default: what .ci/run runs) or full (every
//	                       scenario on every branch)
//	AGENTISO_LIVE_UPSTREAM_DIR  a directory laid out as hack/build-upstream.sh's
//	                       cache (for one branch: its BUILDINFO names it); default:
//	                       hack/build-upstream.sh BRANCH builds or finds it
//	AGENTISO_LIVE_IMAGE_BASE_SERVICE, AGENTISO_LIVE_IMAGE_BASE_AGENT  the images'
//	                       Debian root file systems (default: hack/build-live-image-base.sh
//	                       service|agent builds or finds them)

func TestMain(m *testing.M) {
	if !InNetns() && os.Getenv("AGENTISO_LIVE_FIXTURE_ONLY") == "" {
		// Everything (bridge, taps, QEMU, dnsmasq, the registry, agentiso
		// wait-for) runs in a network namespace of its own.
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Minute)
		code, err := ReexecInNetns(ctx)
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, "live lab:", err)
			if os.Getenv("CI") == "" && !isRoot() {
				fmt.Fprintln(os.Stderr, "live lab: skipped (needs root for its network namespace)")
				os.Exit(0)
			}
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func isRoot() bool { return os.Geteuid() == 0 }

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// requireTool fails under CI=true and skips elsewhere when a host tool is missing.
func requireTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI=true but %s is missing (hack/live-deps.sh installs it)", name)
		}
		t.Skipf("%s not installed (hack/live-deps.sh)", name)
	}
}

func fixture(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("AGENTISO_LIVE_FIXTURE"); p != "" {
		require.FileExists(t, p, "AGENTISO_LIVE_FIXTURE")
		return p
	}
	out, err := exec.Command("bash", filepath.Join(repoRoot(t), "hack", "build-live-fixture.sh")).Output()
	require.NoError(t, err, "hack/build-live-fixture.sh")
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

func agentisoBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("AGENTISO_LIVE_BIN"); p != "" {
		return p
	}
	bin := filepath.Join(t.TempDir(), "agentiso")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/agentiso")
	cmd.Dir = repoRoot(t)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

func workDir(t *testing.T) string {
	t.Helper()
	if os.Getenv("AGENTISO_LIVE_KEEP") != "" {
		d, err := os.MkdirTemp("", "agentiso-live-"+strings.ReplaceAll(t.Name(), "/", "_")+"-")
		require.NoError(t, err)
		t.Logf("work directory kept: %s", d)
		return d
	}
	return t.TempDir()
}

// budget bounds all scenarios together (default 40 minutes), below make
// e2e-live's LIVE_TIMEOUT, so that a lab that hangs fails with its own
// messages instead of go test's timeout panic.
func budget() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("AGENTISO_LIVE_BUDGET")); err == nil && d > 0 {
		return d
	}
	return 55 * time.Minute
}

// cpus is the number of vCPUs per VM: TCG runs each on a host thread of its own.
func cpus() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("AGENTISO_LIVE_CPUS"), &n); err == nil && n >= 1 {
		return n
	}
	return 2
}

func memoryMiB() int {
	var m int
	if _, err := fmt.Sscan(os.Getenv("AGENTISO_LIVE_MEMORY"), &m); err == nil && m >= 1024 {
		return m
	}
	return 1792
}

// host is what a scenario expects of one VM.
type host struct {
	name     string
	macs     []string
	iface    string // interface that must hold ip ("bond0", "bond0.111", or "" for the NIC with macs[0])
	kind     string // link kind of iface ("bond", "vlan", "")
	ip       string
	nodeZero bool
}

// waitReport polls a VM's console until cond accepts its newest report, the
// guest dies, or the deadline passes. It returns the newest report seen.
func waitReport(ctx context.Context, vm *VM, cond func(*Report) bool) (*Report, error) {
	var last *Report
	for {
		if f := InitrdFailure(vm.Read()); f != "" {
			return nil, fmt.Errorf("%s: the live initramfs failed: %s", vm.Name, f)
		}
		reports, err := ParseReports(vm.ReadReports())
		if err != nil {
			return last, fmt.Errorf("%s: %w", vm.Name, err)
		}
		if r := Last(reports); r != nil {
			last = r
			if cond(r) {
				return r, nil
			}
		}
		if vm.Exited() {
			return last, fmt.Errorf("%s: QEMU exited", vm.Name)
		}
		select {
		case <-ctx.Done():
			if last == nil {
				return nil, fmt.Errorf("%s: no complete report on the console before the deadline", vm.Name)
			}
			return last, fmt.Errorf("%s: deadline passed", vm.Name)
		case <-time.After(5 * time.Second):
		}
	}
}

// unitDone reports whether u ran to success: active, or a oneshot that
// finished (inactive after having been started is not visible here, so
// only active/exited and active/running count).
func unitDone(r *Report, u string) bool {
	s, ok := r.Units[u]
	return ok && s.Active == "active"
}

func linkNames(r *Report) []string {
	var out []string
	for _, l := range r.Links {
		out = append(out, fmt.Sprintf("%s(%s,%s,master=%s)", l.Name, l.MAC, l.Kind(), l.Master))
	}
	return out
}

const sshKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGqSD39lBCzJKKW6OKTsxkQCW+GbT/f+OhO9xZLMB4i7 admin@laptop"

const snoInstallConfig = `apiVersion: v1
metadata:
  name: live
baseDomain: lab.test
controlPlane:
  name: master
  replicas: 1
compute:
  - name: worker
    replicas: 0
networking:
  networkType: OVNKubernetes
  machineNetwork:
    - cidr: 192.168.111.0/24
platform:
  none: {}
pullSecret: '{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}'
sshKey: ` + sshKey + "\n"

const snoAgentConfig = `apiVersion: v1beta1
kind: AgentConfig
metadata:
  name: live
rendezvousIP: 192.168.111.80
hosts:
  - hostname: sno-live
    role: master
    interfaces:
      - name: eno1
        macAddress: 52:54:00:aa:00:01
      - name: eno2
        macAddress: 52:54:00:aa:00:02
    networkConfig:
      interfaces:
        - name: eno1
          type: ethernet
          state: up
          mac-address: 52:54:00:aa:00:01
        - name: eno2
          type: ethernet
          state: up
          mac-address: 52:54:00:aa:00:02
        - name: bond0
          type: bond
          state: up
          ipv4:
            enabled: true
            dhcp: false
            address:
              - ip: 192.168.111.80
                prefix-length: 24
          ipv6:
            enabled: false
          link-aggregation:
            mode: active-backup
            options:
              miimon: "100"
            port:
              - eno1
              - eno2
      dns-resolver:
        config:
          server:
            - 192.168.111.1
      routes:
        config:
          - destination: 0.0.0.0/0
            next-hop-address: 192.168.111.1
            next-hop-interface: bond0
`

// The two-host scenario: a three-master cluster of which two hosts boot
// (the rules allow no two-host topology but the arbiter's): both register with node zero, found
// through the rendezvous IP that dnsmasq hands node zero; the install
// cannot start without the third host, so the scenario stops at
// registration.
const twoInstallConfig = `apiVersion: v1
metadata:
  name: live
baseDomain: lab.test
controlPlane:
  name: master
  replicas: 3
compute:
  - name: worker
    replicas: 0
networking:
  networkType: OVNKubernetes
  machineNetwork:
    - cidr: 192.168.111.0/24
platform:
  baremetal:
    apiVIPs: [192.168.111.5]
    ingressVIPs: [192.168.111.4]
pullSecret: '{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}'
sshKey: ` + sshKey + "\n"

const twoAgentConfig = `apiVersion: v1beta1
kind: AgentConfig
metadata:
  name: live
rendezvousIP: 192.168.111.80
hosts:
  - hostname: master-0
    role: master
    interfaces:
      - name: eno1
        macAddress: 52:54:00:bb:00:01
  - hostname: master-1
    role: master
    interfaces:
      - name: eno1
        macAddress: 52:54:00:bb:00:02
`

// bootUnits are the units that need no container image: they must succeed
// on every host.
var bootUnits = []string{
	"coreos-update-ca-trust.service",
	"NetworkManager.service",
	"set-hostname.service",
	"node-zero.service",
	"selinux.service",
	"chrony.service",
}

func TestLive(t *testing.T) {
	requireTool(t, "qemu-system-x86_64")
	requireTool(t, "ip")
	fixture, bin := fixture(t), agentisoBin(t)
	sb, err := mirror.BuildStandin(context.Background(), t.TempDir(), "amd64")
	require.NoError(t, err, "build the stand-in binary")
	// One budget for every branch's scenarios together: what .ci/run can give.
	budgetEnd := time.Now().Add(budget())
	newLab := func() *lab {
		return &lab{fixture: fixture, bin: bin, standin: sb, kvm: os.Getenv("AGENTISO_E2E_ACCEL") == "kvm", budgetEnd: budgetEnd, version: "4.20.0"}
	}
	branches, set := liveBranches(t), liveSet(t)
	for i, branch := range branches {
		t.Run(branch, func(t *testing.T) {
			l := newLab()
			v, err := branchVersion(branch)
			require.NoError(t, err)
			l.version, l.up = v, upstreamLayers(t, branch)
			only := ciOtherBranches
			if i == 0 {
				only = ciFirstBranch
			}
			if set == setFull {
				only = nil
			}
			liveScenarios(t, l, only)
		})
	}
}

// liveScenarios runs the scenarios of only on l (nil: every scenario); the
// others are skipped, each with one line that says how to run it.
func liveScenarios(t *testing.T, l *lab, only map[string]bool) {
	seen := map[string]bool{}
	defer func() {
		for name := range only {
			if !seen[name] {
				t.Errorf("the scenario set names %q, which is no scenario", name)
			}
		}
	}()
	run := func(name string, f func(t *testing.T)) {
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			if only != nil && !only[name] {
				t.Skipf("not in the ci set (AGENTISO_LIVE_SET=full runs it; docs/e2e.md \"Cost\")")
			}
			f(t)
		})
	}
	sno := scenario{
		name:          "sno-bond-static-proxy",
		installConfig: snoInstallConfig,
		agentConfig:   snoAgentConfig,
		proxy:         true,
		dns:           clusterDNS("192.168.111.80", "192.168.111.80"),
		hosts: []host{{name: "sno-live", macs: []string{"52:54:00:aa:00:01", "52:54:00:aa:00:02"},
			iface: "bond0", kind: "bond", ip: "192.168.111.80", nodeZero: true}},
	}
	// Negative controls boot the same host (on the bridge, without a proxy)
	// and must fail with a clear message.
	control := func(name string) scenario {
		sc := sno
		sc.name, sc.proxy, sc.deadline = name, false, 10*time.Minute
		return sc
	}

	// SNO, static IPv4 on a bond, mirror + CA, through a proxy whose URL
	// carries percent-encoded credentials, up to the install.
	run("sno-bond-static-proxy", func(t *testing.T) {
		res, err := l.run(t, sno)
		require.NoError(t, err)
		t.Logf("mirror manifest/blob requests: %d, proxied requests: %d", len(res.pulls), len(res.proxied))
	})
	// Two of three masters, DHCP from dnsmasq: the second host finds node
	// zero through the rendezvous IP; both register; the install must not
	// start without the third.
	run("two-hosts-dhcp", func(t *testing.T) {
		sc := scenario{
			name:          "two-hosts-dhcp",
			installConfig: twoInstallConfig,
			agentConfig:   twoAgentConfig,
			partial:       true,
			dns:           clusterDNS("192.168.111.5", "192.168.111.4"),
			hosts: []host{
				{name: "master-0", macs: []string{"52:54:00:bb:00:01"}, ip: "192.168.111.80", nodeZero: true},
				{name: "master-1", macs: []string{"52:54:00:bb:00:02"}, ip: "192.168.111.81"},
			},
			dhcp: []DHCPHost{
				{MAC: "52:54:00:bb:00:01", IP: "192.168.111.80", Hostname: "master-0"},
				{MAC: "52:54:00:bb:00:02", IP: "192.168.111.81", Hostname: "master-1"},
			},
			deadline: 16 * time.Minute,
		}
		res, err := l.run(t, sc)
		require.NoError(t, err)
		t.Logf("mirror manifest/blob requests: %d", len(res.pulls))
	})
	// The generic ISO (docs/unconfigured.md): the same SNO host (no proxy)
	// boots an ISO without any cluster in it and waits; a corrupted config
	// image and another cluster's are refused with a journal line; its own
	// brings it to the same state as sno-bond-static-proxy, up to the
	// install.
	// Full set only: ~12 minutes with the real components (docs/e2e.md).
	run("unconfigured-config-image", func(t *testing.T) {
		sc := sno
		sc.name, sc.proxy, sc.unconfigured, sc.deadline = "unconfigured-config-image", false, true, 16*time.Minute
		// The lab's ntp-synced lowering (LowerRequirements) edits
		// assisted-service.env, which the config image carries.
		sc.agentConfig += "disabledHostValidations:\n  - ntp-synced\n"
		res, err := l.run(t, sc)
		require.NoError(t, err)
		t.Logf("mirror manifest/blob requests: %d", len(res.pulls))
	})
	// issue 10, item 1: podman refuses --rm together with --restart, so
	// apply-host-config fails and the install never starts.
	run("negative/apply-host-config-rm", func(t *testing.T) {
		sc := control("negative-rm-restart")
		sc.deadline = 12 * time.Minute
		sc.tamper = func(iso, _ string, _ *mirror.Mirror) error {
			return EditUnit(iso, "apply-host-config.service", AddPodmanFlag("--rm"))
		}
		_, err := l.run(t, sc)
		require.Error(t, err, "apply-host-config with podman run --rm --restart passed the lab")
		require.ErrorContains(t, err, "apply-host-config.service")
		require.ErrorContains(t, err, "the --rm option conflicts with --restart", "podman's own error is printed")
		t.Logf("detected: %v", firstLine(err))
	})
	run("negative/missing-ca", func(t *testing.T) {
		sc := control("negative-missing-ca")
		sc.bootOnly, sc.noCA = true, true
		_, err := l.run(t, sc)
		require.Error(t, err, "hosts without the mirror's CA passed the lab")
		require.ErrorContains(t, err, "x509")
		t.Logf("detected: %v", firstLine(err))
	})
	// issue 10, item 2: a release by tag is never looked up on
	// mirror-by-digest-only mirrors. agentiso pins the digest itself, so the
	// control puts the tag back into every file of the ISO.
	run("negative/tag-only-release", func(t *testing.T) {
		sc := control("negative-tag-only")
		sc.bootOnly = true
		sc.tamper = func(iso, _ string, m *mirror.Mirror) error {
			return EditFiles(iso, ReplaceAll(m.ReleaseImage, m.ReleaseTag))
		}
		_, err := l.run(t, sc)
		require.Error(t, err, "hosts pulling the release by tag passed the lab")
		require.ErrorContains(t, err, "never went to the mirror")
		require.ErrorContains(t, err, mirror.SourceReleaseRepo+":", "the error names the tag reference")
		t.Logf("detected: %v", firstLine(err))
	})
	// The hosts booted only through agentiso serve + boot and a Redfish
	// BMC emulator per host (serve_boot_test.go).
	serveBootScenarios(l, run)
	// No registry at all: the extended ISO carries the release and every
	// host serves it (noregistry_test.go; issue 36).
	noRegistryScenarios(l, run)
	// Negative controls only the real components can see (issue 20, item
	// 6): each is written into the built ISO, past agentiso's own checks.
	run("negative/nmstateconfig-extra-label", func(t *testing.T) {
		sc := control("negative-nmstate-label")
		sc.tamper = func(iso, _ string, _ *mirror.Mirror) error {
			return EditFiles(iso, AddNMStateConfigLabel("lab.agentiso.io/extra", "yes"))
		}
		_, err := l.run(t, sc)
		require.Error(t, err, "an NMStateConfig whose labels are not the InfraEnv's selector passed the real client")
		require.ErrorContains(t, err, "infraenv and nmstateconfig labels do not match", "agent-installer-client's own error is printed")
		t.Logf("detected: %v", firstLine(err))
	})
	run("negative/installer-args-flag", func(t *testing.T) {
		sc := control("negative-installer-args")
		sc.agentConfig = strings.Replace(snoAgentConfig, "    role: master\n", "    role: master\n    installerArgs: [\"--append-karg\", \"nosmt\"]\n", 1)
		sc.tamper = func(iso, _ string, _ *mirror.Mirror) error {
			return EditFiles(iso, SetInstallerArgs("--frobnicate-disk"))
		}
		_, err := l.run(t, sc)
		require.Error(t, err, "installer arguments outside assisted-service's allow-list passed the real service")
		require.ErrorContains(t, err, "found unexpected flag --frobnicate-disk", "assisted-service's own error is printed")
		t.Logf("detected: %v", firstLine(err))
	})
	// Day 2 (issue 25): a worker booted from node-image create's ISO; its
	// own assisted-service imports the installed cluster and starts the
	// host's install.
	run("add-nodes", func(t *testing.T) {
		sc := scenario{
			name:        "add-nodes",
			addNodes:    true,
			nodesConfig: addNodesConfig(addNodesHost, ""),
			hosts:       []host{addNodesHost},
			dns:         clusterDNS(BridgeIP, BridgeIP),
		}
		_, err := l.run(t, sc)
		require.NoError(t, err)
	})
	// Day 2, a control-plane host (role master in nodes-config.yaml): its
	// own assisted-service takes the role, fetches the master pool's
	// Ignition from the machine-config server and starts its install.
	run("add-nodes-master", func(t *testing.T) {
		sc := scenario{
			name:        "add-nodes-master",
			addNodes:    true,
			nodesConfig: addNodesConfig(addNodesMasterHost, "master"),
			dayTwoRole:  "master",
			hosts:       []host{addNodesMasterHost},
			dns:         clusterDNS(BridgeIP, BridgeIP),
		}
		_, err := l.run(t, sc)
		require.NoError(t, err)
	})
	run("negative/token-claim-name", func(t *testing.T) {
		if pol, err := releasepolicy.For(l.version); err == nil && !pol.Auth.Tokens() {
			t.Skipf("OpenShift %s: the ISO writes AUTH_TYPE=%s and no token, so there is no claim to rename", l.version, pol.Auth)
		}
		sc := control("negative-token-claim")
		sc.tamper = func(iso, dir string, _ *mirror.Mirror) error {
			edit, err := renameTokenClaim(dir)
			if err != nil {
				return err
			}
			return EditFiles(iso, edit)
		}
		_, err := l.run(t, sc)
		require.Error(t, err, "tokens without the auth_scheme claim passed the real service")
		require.ErrorContains(t, err, "malformed auth_scheme claim", "assisted-service's own error is printed")
		t.Logf("detected: %v", firstLine(err))
	})
}

// clusterDNS are the cluster's names (metadata.name live, baseDomain
// lab.test): the API and the apps wildcard.
func clusterDNS(api, apps string) map[string]string {
	return map[string]string{"api.live.lab.test": api, "api-int.live.lab.test": api, "apps.live.lab.test": apps}
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
