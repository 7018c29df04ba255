// Package releasepolicy is agentiso's supported-release policy: one table, by OpenShift minor release, of what the real assisted-service and agent-installer client of that release expect from the ISO (authentication, two-node fencing, hardware requirements, how the install's release is matched, the roles a host added at day 2 may have), and the refusal of releases below the floor.
package releasepolicy

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Minor is an OpenShift minor release, e.g. 4.20.
type Minor struct{ Major, Minor int }

func (m Minor) String() string { return fmt.Sprintf("%d.%d", m.Major, m.Minor) }

// Less reports whether m is older than o.
func (m Minor) Less(o Minor) bool {
	return m.Major < o.Major || (m.Major == o.Major && m.Minor < o.Minor)
}

// Branch is the openshift/assisted-service branch of m ("release-4.20").
func (m Minor) Branch() string { return "release-" + m.String() }

// Floor is the oldest release agentiso supports (4.16, an EUS release);
// releases between Floor and NewestChecked that have no rule (4.17) are
// refused too (see Supported).
func Floor() Minor { return ruleSet[0].Minor }

// Supported says which releases agentiso supports, from the rules: "4.16
// and 4.18 and later".
func Supported() string {
	start := lastRun()
	var parts []string
	for _, r := range ruleSet[:start] {
		parts = append(parts, r.Minor.String())
	}
	parts = append(parts, ruleSet[start].Minor.String()+" and later")
	return strings.Join(parts, " and ")
}

// lastRun is the index in ruleSet of the first rule of the last run of
// consecutive minors (4.18 ... 4.23), which is open-ended ("and later").
func lastRun() int {
	start := len(ruleSet) - 1
	for start > 0 && ruleSet[start-1].Minor.Major == ruleSet[start].Minor.Major && ruleSet[start-1].Minor.Minor+1 == ruleSet[start].Minor.Minor {
		start--
	}
	return start
}

// Refused are the releases between Floor and NewestChecked that have no
// rules and are refused (4.17).
func Refused() []Minor {
	var out []Minor
	for i := 1; i < len(ruleSet); i++ {
		prev, cur := ruleSet[i-1].Minor, ruleSet[i].Minor
		for m := prev.Minor + 1; prev.Major == cur.Major && m < cur.Minor; m++ {
			out = append(out, Minor{cur.Major, m})
		}
	}
	return out
}

// instead says what to use in place of a refused release: "4.16 or a
// 4.18 or later release".
func instead() string {
	start := lastRun()
	var parts []string
	for _, r := range ruleSet[:start] {
		parts = append(parts, r.Minor.String())
	}
	parts = append(parts, "a "+ruleSet[start].Minor.String()+" or later release")
	return strings.Join(parts, " or ")
}

// NewestChecked is the newest release branch agentiso was checked against
// (openshift/assisted-service release-4.23; master behaves the same).
func NewestChecked() Minor { return ruleSet[len(ruleSet)-1].Minor }

// ParseMinor reads the major and minor numbers of an OpenShift version:
// "4.20", "4.20.3", "4.21.0-rc.1", "4.22.0-0.nightly-2026-01-01-000000".
func ParseMinor(version string) (Minor, error) {
	f := strings.SplitN(version, ".", 3)
	if len(f) < 2 {
		return Minor{}, fmt.Errorf("OpenShift version %q is not major.minor[.patch]", version)
	}
	minor := f[1]
	if len(f) == 2 {
		// "4.20-rc" is no version; "4.20" is.
		if i := strings.IndexAny(minor, "-+"); i >= 0 {
			return Minor{}, fmt.Errorf("OpenShift version %q is not major.minor[.patch]", version)
		}
	}
	ma, err1 := strconv.Atoi(f[0])
	mi, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil || ma < 0 || mi < 0 || f[0] != strconv.Itoa(ma) || minor != strconv.Itoa(mi) {
		return Minor{}, fmt.Errorf("OpenShift version %q is not major.minor[.patch]", version)
	}
	return Minor{ma, mi}, nil
}

// releaseVersionRE is a release's own version: x.y.z with no leading
// zeros, an optional pre-release (rc.1, ec.2, 0.nightly-..., okd-scos.ec.3)
// and build part, as semantic versioning and OpenShift's release names
// spell them.
var releaseVersionRE = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// CheckReleaseVersion checks that version names one release, x.y.z (the
// Name: line of its release.txt, what `oc adm release info` says), not a
// minor such as 4.20.
func CheckReleaseVersion(version string) error {
	if !releaseVersionRE.MatchString(version) {
		return fmt.Errorf("%q is not a release's version: give its full version, x.y.z (e.g. 4.20.3, or 4.21.0-rc.1), as the Name: line of its release.txt says", version)
	}
	return nil
}

// Auth is how the rendezvous host's assisted-service authenticates the
// agent, the installer client and the user.
type Auth string

// AuthAgentInstallerLocal: AUTH_TYPE=agent-installer-local; ECDSA-signed
// JWTs whose only claim is auth_scheme (agentAuth, userAuth, watcherAuth);
// the agent-installer client reads the user token from USER_AUTH_TOKEN.
// assisted-service release-4.18 ... release-4.23 and master:
// pkg/auth/authenticator.go (TypeAgentLocal), pkg/auth/agent_local_authz_handler.go
// (claims["auth_scheme"]), cmd/agentbasedinstaller/client/main.go
// (envconfig USER_AUTH_TOKEN).
const AuthAgentInstallerLocal Auth = "agent-installer-local"

// AuthNone: AUTH_TYPE=none and no key or token in the ISO, as the 4.16
// installer wrote it. assisted-service release-4.16 (upstream 5c16119a):
// pkg/auth/authenticator.go knows only none, rhsso and local (no
// agent-installer-local); its agent-installer client
// (cmd/agentbasedinstaller/client/main.go) reads no token and sends no
// auth header, and the local authenticator refuses every user call
// (local_authenticator.go AuthUserAuth), so none is the only type under
// which the 4.16 client can register the cluster. openshift/installer
// switched the ISO to agent-installer-local in the 4.17 cycle
// (openshift/installer#8108 "AGENT-870: Update AUTH_TYPE", after
// AGENT-875/876 added the agent and client tokens in #8393, #8395).
const AuthNone Auth = "none"

// Tokens reports whether the ISO carries the ECDSA public key and the
// agent, user and watcher tokens for this authentication.
func (a Auth) Tokens() bool { return a != AuthNone }

// Fencing is what a release's service and client do with two-node
// fencing credentials (the per-release rules are applied in pkg/manifests
// and pkg/ignition).
type Fencing string

const (
	// FencingNone: neither the service nor the client knows fencing
	// (release-4.18 ... release-4.20: no "fencing" in internal/ nor
	// cmd/agentbasedinstaller); two control-plane replicas need an arbiter.
	FencingNone Fencing = "none"
	// FencingServiceOnly: the service requires fencing credentials for a
	// two-node cluster, the client has no fencing code (release-4.21).
	FencingServiceOnly Fencing = "service only"
	// FencingHostnameFile: the client reads the fencing credentials from
	// the hostname-keyed file only (release-4.22).
	FencingHostnameFile Fencing = "hostname-keyed file"
	// FencingPerHostMAC: the client reads the per-host, MAC-keyed files
	// (release-4.23 and master).
	FencingPerHostMAC Fencing = "per-host MAC-keyed files"
)

// Match is how the installer client and the service find the entry of
// RELEASE_IMAGES that the ClusterImageSet names.
type Match string

const (
	// MatchVersion: the client reads the version of the ClusterImageSet's
	// spec.releaseImage from the payload (oc adm release info, through
	// OPENSHIFT_INSTALL_RELEASE_IMAGE_MIRROR) and registers the cluster
	// with it; the service takes the RELEASE_IMAGES entry whose version is
	// exactly that x.y.z (release-4.18 ... release-4.21:
	// cmd/agentbasedinstaller/register.go getReleaseVersionAndCpuArch,
	// internal/versions/rest_api_versions.go GetReleaseImage).
	MatchVersion Match = "version"
	// MatchURL: the client registers the cluster with the ClusterImageSet's
	// spec.releaseImage as ocp_release_image, and the service takes the
	// RELEASE_IMAGES entry whose url is that exact string (release-4.22,
	// release-4.23, master: CreateClusterParams with models.ReleaseImage
	// URL, internal/bminventory/inventory.go getReleaseImage ->
	// GetReleaseImageByURL "url = ?").
	MatchURL Match = "url"
)

// Role is one role's minimum hardware (assisted-service's
// data/default_hw_requirements.json).
type Role struct {
	CPUCores int
	RAMMiB   int
	DiskGB   int
}

// Hardware is a release's default HW_VALIDATOR_REQUIREMENTS, per role;
// a zero Arbiter means the release's default names no arbiter.
type Hardware struct {
	Master, Arbiter, Worker, SNO Role
}

// Day2 is which roles a host added to an installed cluster (node-image
// create, nodes-config.yaml's hosts[].role) may have on a release: the
// role reaches the host's own assisted-service through the ISO's host
// configuration (/etc/assisted/hostconfig/<host>/role, applied by the
// agent-installer client's apply-host-config with the host update call).
// A worker (or no role) is always allowed.
//
// The upstream node-joiner (openshift/installer) checks a host's role
// with the install's check, in every workflow (pkg/asset/agent/agentconfig
// agenthosts.go validateRoles: master or worker; arbiter too in the later
// versions that know arbiter hosts) and writes it to the host
// configuration as is; its add-nodes Ignition counts every host as a
// worker (pkg/asset/agent/image/ignition.go, the addnodes case), a count
// only the install's start-cluster-installation reads. What decides is the
// host's own assisted-service:
//
//   - master: internal/host/hostutil/host_utils.go IsRoleValid takes it
//     for a day-2 host on every branch (release-4.16 ... release-4.23 and
//     master); internal/host/common.go updateRole then sets the day-2
//     host's machine-config pool to master, so that
//     GetIgnitionEndpointAndCert asks the cluster's machine-config server
//     for the master pool (the imported endpoint's path joined with
//     "master": .../config/worker/master, served as pool master).
//   - arbiter: IsRoleValid takes it from release-4.19, but
//     internal/bminventory/inventory.go updateHostRole refuses it on
//     release-4.19 and release-4.20 for a cluster without an OpenShift
//     version, which an imported cluster is (cmd/agentbasedinstaller
//     import.go sends name, API DNS name and cluster ID only; 4.20 also
//     wants platform baremetal); from release-4.21 the check is
//     common.ValidateClusterSupportsArbiterHosts, which passes every
//     day-2 (AddHostsCluster) cluster, and TNA_CLUSTERS_SUPPORT (which the
//     ISO sets) defaults to true.
type Day2 struct {
	// ControlPlane allows role master.
	ControlPlane bool
	// Arbiter allows role arbiter.
	Arbiter bool
}

// Allows reports whether a day-2 host may have role ("" is the default,
// worker).
func (d Day2) Allows(role string) bool {
	switch role {
	case "", "worker":
		return true
	case "master":
		return d.ControlPlane
	case "arbiter":
		return d.Arbiter
	}
	return false
}

// Day2Since is the release from which on every release takes day-2 hosts
// with role, the release to upgrade a cluster to (4.18 for master, though
// 4.16 takes it too: 4.17 is refused); false when none does.
func Day2Since(role string) (Minor, bool) {
	for _, r := range ruleSet[lastRun():] {
		if r.Day2.Allows(role) {
			return r.Minor, true
		}
	}
	return Minor{}, false
}

// Rule is what one OpenShift minor release's assisted-service and
// agent-installer client expect.
type Rule struct {
	Minor    Minor
	Auth     Auth
	Fencing  Fencing
	Match    Match
	Hardware Hardware
	Day2     Day2
}

// Branch is the assisted-service branch the rule was read from.
func (r Rule) Branch() string { return r.Minor.Branch() }

var (
	master  = Role{CPUCores: 4, RAMMiB: 16384, DiskGB: 100}
	worker  = Role{CPUCores: 2, RAMMiB: 8192, DiskGB: 100}
	sno8    = Role{CPUCores: 8, RAMMiB: 16384, DiskGB: 100}
	sno4    = Role{CPUCores: 4, RAMMiB: 16384, DiskGB: 100}
	arb100  = Role{CPUCores: 2, RAMMiB: 8192, DiskGB: 100}
	arb50   = Role{CPUCores: 2, RAMMiB: 8192, DiskGB: 50}
	hw418   = Hardware{Master: master, Worker: worker, SNO: sno8}
	hw420   = Hardware{Master: master, Arbiter: arb100, Worker: worker, SNO: sno8}
	hw422   = Hardware{Master: master, Arbiter: arb50, Worker: worker, SNO: sno4}
	cpDay2  = Day2{ControlPlane: true}
	allDay2 = Day2{ControlPlane: true, Arbiter: true}
	v4      = func(m int) Minor { return Minor{4, m} }
	ruleSet = []Rule{
		// release-4.16: AUTH_TYPE=none; no fencing in internal/ nor
		// cmd/agentbasedinstaller; register.go reads the release's version
		// (getReleaseVersionAndCpuArch); data/default_hw_requirements.json
		// as 4.18 (no arbiter); IsRoleValid takes master for a day-2 host.
		{Minor: v4(16), Auth: AuthNone, Fencing: FencingNone, Match: MatchVersion, Hardware: hw418, Day2: cpDay2},
		// release-4.17 has no rule: it is refused (UnsupportedError).
		// data/default_hw_requirements.json: 4.18 and 4.19 name no arbiter;
		// 4.20 and 4.21 add it (100 GB disk); 4.22 lowers its disk to 50 GB
		// and single-node to 4 cores ({"version":"4.22","match_type":"min_version"}).
		{Minor: v4(18), Auth: AuthAgentInstallerLocal, Fencing: FencingNone, Match: MatchVersion, Hardware: hw418, Day2: cpDay2},
		{Minor: v4(19), Auth: AuthAgentInstallerLocal, Fencing: FencingNone, Match: MatchVersion, Hardware: hw418, Day2: cpDay2},
		{Minor: v4(20), Auth: AuthAgentInstallerLocal, Fencing: FencingNone, Match: MatchVersion, Hardware: hw420, Day2: cpDay2},
		{Minor: v4(21), Auth: AuthAgentInstallerLocal, Fencing: FencingServiceOnly, Match: MatchVersion, Hardware: hw420, Day2: allDay2},
		{Minor: v4(22), Auth: AuthAgentInstallerLocal, Fencing: FencingHostnameFile, Match: MatchURL, Hardware: hw422, Day2: allDay2},
		{Minor: v4(23), Auth: AuthAgentInstallerLocal, Fencing: FencingPerHostMAC, Match: MatchURL, Hardware: hw422, Day2: allDay2},
	}
)

// Rules returns the policy table, oldest release first: Floor ...
// NewestChecked.
func Rules() []Rule { return append([]Rule(nil), ruleSet...) }

// Support is the policy's answer for one release version.
type Support struct {
	Rule
	// Version is the release version asked about.
	Version string
	// Newer is true for a release newer than NewestChecked: it gets the
	// rules of NewestChecked, with a warning.
	Newer bool
}

// Warning is non-empty for a release newer than agentiso was checked
// against.
func (s Support) Warning() string {
	if !s.Newer {
		return ""
	}
	return fmt.Sprintf("OpenShift %s is newer than the newest release this agentiso was checked against (assisted-service %s): it is built with the rules of %s (authentication %s, fencing %s, release matched by %s)",
		s.Version, NewestChecked().Branch(), NewestChecked(), s.Auth, s.Fencing, s.Match)
}

// UnsupportedError is a release below Floor, or one without rules between
// Floor and NewestChecked (4.17).
type UnsupportedError struct {
	Version string
	Minor   Minor
}

func (e *UnsupportedError) Error() string {
	why := fmt.Sprintf("it is older than %s, the oldest release agentiso was checked against (assisted-service %s)", Floor(), Floor().Branch())
	if e.Minor == (Minor{4, 17}) {
		why = "its assisted-service requires an infra_env_id claim in every token and its installer client reads AGENT_AUTH_TOKEN, while the ISO writes auth_scheme tokens and USER_AUTH_TOKEN (assisted-service release-4.17); 4.17 is out of Red Hat support"
	} else if !e.Minor.Less(Floor()) {
		why = fmt.Sprintf("agentiso has no rules for it (checked: assisted-service %s)", checkedBranches())
	}
	return fmt.Sprintf("OpenShift %s is not supported: agentiso supports OpenShift %s (%s checked), because %s; use %s (--release-image, with --release-version for --offline)",
		e.Version, Supported(), checkedBranches(), why, instead())
}

// checkedBranches names the branches of the rules: "release-4.16,
// release-4.18 ... release-4.23".
func checkedBranches() string {
	start := lastRun()
	var parts []string
	for _, r := range ruleSet[:start] {
		parts = append(parts, r.Branch())
	}
	return strings.Join(append(parts, ruleSet[start].Branch()+" ... "+NewestChecked().Branch()), ", ")
}

// For returns the rules of release version ("4.20.3"). A release below
// Floor, or without rules before NewestChecked (4.17), is an
// *UnsupportedError; one newer than NewestChecked gets the
// rules of NewestChecked and Newer set.
func For(version string) (Support, error) {
	m, err := ParseMinor(version)
	if err != nil {
		return Support{}, err
	}
	if m.Less(Floor()) {
		return Support{}, &UnsupportedError{Version: version, Minor: m}
	}
	for _, r := range ruleSet {
		if r.Minor == m {
			return Support{Rule: r, Version: version}, nil
		}
	}
	last := ruleSet[len(ruleSet)-1]
	if m.Less(last.Minor) {
		// A release between the rules (4.17).
		return Support{}, &UnsupportedError{Version: version, Minor: m}
	}
	return Support{Rule: last, Version: version, Newer: true}, nil
}
