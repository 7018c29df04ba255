//go:build e2elive

package live

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/credentials"
	"github.com/seed-a052040e/agentiso/test/live/mirror"
)

// defaultLiveBranches are the branches TestLive runs when
// AGENTISO_LIVE_UPSTREAM is unset: in the ci set the lab's release only (its
// payload is 4.20.0, as the tests' and the demo's release; its build is the
// upstream oracle's too), in the full set also the newest branch of
// test/upstream/upstream.lock. A fresh CI machine's build of a second branch
// costs 10 to 16 minutes (docs/e2e.md "Cost"); make e2e-live-matrix runs
// every branch.
var defaultLiveBranches = map[string][]string{
	setCI:   {"release-4.20"},
	setFull: {"release-4.20", "release-4.23"},
}

// liveBranches are the branches whose real components TestLive runs its
// scenarios against (AGENTISO_LIVE_UPSTREAM, default defaultLiveBranches).
// The project's own stand-ins of assisted-service, its client and the agent
// are gone: "standins" is refused with that reason.
func liveBranches(t *testing.T) []string {
	v := strings.TrimSpace(os.Getenv("AGENTISO_LIVE_UPSTREAM"))
	if v == "" {
		return defaultLiveBranches[liveSet(t)]
	}
	if v == "standins" {
		t.Fatal("AGENTISO_LIVE_UPSTREAM=standins: the lab's stand-ins of assisted-service, agent-installer-client and the agent were removed; the lab runs the real ones of a release-X.Y branch (docs/e2e.md)")
	}
	return strings.Fields(v)
}

// The scenario sets (AGENTISO_LIVE_SET). "ci", the default, is what fits
// .ci/run's time (docs/e2e.md "Cost"): every scenario on the first branch
// but tag-only-release (agentiso pins every release it writes by digest and
// refuses a tag it cannot look up, so that control only proves the lab's
// mirror check, which missing-ca's first pull proves too), the three
// negative controls whose cause only stops the flow late,
// serve-boot and serve-boot-negative, and the generic ISO's
// (unconfigured-config-image, about 12 minutes); the SNO scenario on the
// others. "full" is every scenario on every
// branch.
const (
	setCI   = "ci"
	setFull = "full"
)

// ciFirstBranch and ciOtherBranches are the ci set's scenarios.
var (
	ciFirstBranch = map[string]bool{
		"sno-bond-static-proxy": true, "two-hosts-dhcp": true,
		"negative/missing-ca": true, "negative/token-claim-name": true,
	}
	ciOtherBranches = map[string]bool{"sno-bond-static-proxy": true}
)

// liveSet is AGENTISO_LIVE_SET (default ci).
func liveSet(t *testing.T) string {
	switch v := os.Getenv("AGENTISO_LIVE_SET"); v {
	case "", setCI:
		return setCI
	case setFull:
		return setFull
	default:
		t.Fatalf("AGENTISO_LIVE_SET=%q: want %q (what .ci/run runs) or %q (every scenario on every branch)", v, setCI, setFull)
		return ""
	}
}

var branchRE = regexp.MustCompile(`^release-(\d+)\.(\d+)$`)

// branchVersion is the lab payload's version for a branch: release-4.NN
// gives 4.NN.0, which the real service of 4.18-4.21 matches exactly against
// RELEASE_IMAGES (4.22+ match by URL).
func branchVersion(branch string) (string, error) {
	m := branchRE.FindStringSubmatch(branch)
	if m == nil {
		return "", fmt.Errorf("branch %q: the lab knows the release version of release-X.Y branches only", branch)
	}
	return m[1] + "." + m[2] + ".0", nil
}

// scriptPath runs a hack/ script and returns the last line of its stdout.
func scriptPath(t *testing.T, script string, args ...string) string {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(repoRoot(t), "hack", script)}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "hack/%s %s", script, strings.Join(args, " "))
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// upstreamLayers builds (or finds) the real components of branch and the
// images' Debian base, and makes their layers.
func upstreamLayers(t *testing.T, branch string) *mirror.UpstreamLayers {
	t.Helper()
	bases := map[string]string{}
	for _, profile := range []string{"service", "agent"} {
		if bases[profile] = os.Getenv("AGENTISO_LIVE_IMAGE_BASE_" + strings.ToUpper(profile)); bases[profile] == "" {
			bases[profile] = scriptPath(t, "build-live-image-base.sh", profile)
		}
	}
	dir := os.Getenv("AGENTISO_LIVE_UPSTREAM_DIR")
	if dir == "" {
		dir = scriptPath(t, "build-upstream.sh", branch)
	}
	up, err := mirror.NewUpstreamLayers(mirror.Upstream{Dir: dir, ServiceBase: bases["service"], AgentBase: bases["agent"]})
	require.NoError(t, err)
	if b := up.BuildInfo["branch"]; b != branch {
		t.Fatalf("%s was built from %q, not %s (AGENTISO_LIVE_UPSTREAM_DIR names one branch's build)", dir, b, branch)
	}
	return up
}

// labDiskGiB is the size of each guest's sparse installation disk.
const labDiskGiB = 40

// labRequirements are what the guests offer (2 vCPUs, 1792 MiB or more, a
// 40 GiB disk): the real service's hardware validations are lowered to
// them through the ISO's own requirements script. ntp-synced is disabled:
// the lab has no NTP server, and the hosts' chrony never syncs.
var labRequirements = Requirements{CPUCores: 2, RAMMiB: 1024, DiskGB: 20, DisabledValidations: []string{"ntp-synced"}}

// nodeZeroMemoryMiB is node zero's memory with the real components
// (AGENTISO_LIVE_MEMORY_NODE0, default 3072).
func nodeZeroMemoryMiB() int {
	var m int
	if _, err := fmt.Sscan(os.Getenv("AGENTISO_LIVE_MEMORY_NODE0"), &m); err == nil && m >= 1024 {
		return m
	}
	return 3072
}

// upstreamFatal are what the real programs print when they refuse, for
// good, what the ISO gave them (their units retry forever):
// agent-installer-client registerInfraEnv on NMStateConfig labels that are
// not the InfraEnv's selector (release-4.20
// cmd/agentbasedinstaller/register.go), assisted-service on installer
// arguments outside its allow-list (pkg/validations/validations.go) and on
// a token without the auth_scheme claim (pkg/auth/agent_local_authz_handler.go).
var upstreamFatal = []string{
	"infraenv and nmstateconfig labels do not match",
	"found unexpected flag",
	"malformed auth_scheme claim",
}

// renameTokenClaim returns an ISO edit that replaces the three tokens of the
// ISO (agentiso's state in dir) by tokens signed with the same key whose
// persona sits in a claim named auth_schema instead of auth_scheme.
func renameTokenClaim(dir string) (func(string, []byte) ([]byte, error), error) {
	s, err := asset.NewStore(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	var ac agent.AuthConfig
	if ok, err := s.LoadFromState(&ac); err != nil || !ok {
		return nil, fmt.Errorf("%s: no %s in agentiso's state: %v", dir, ac.Name(), err)
	}
	key, err := credentials.ParsePrivateKey(ac.PrivateKey)
	if err != nil {
		return nil, err
	}
	swap := map[string]string{}
	for tok, scheme := range map[string]string{ac.AgentAuthToken: credentials.SchemeAgent, ac.UserAuthToken: credentials.SchemeUser, ac.WatcherAuthToken: credentials.SchemeWatcher} {
		if swap[tok], err = credentials.SignToken(rand.Reader, key, credentials.Claims{"auth_schema": scheme}); err != nil {
			return nil, err
		}
	}
	return func(_ string, data []byte) ([]byte, error) {
		for old, tok := range swap {
			data = bytes.ReplaceAll(data, []byte(old), []byte(tok))
		}
		return data, nil
	}, nil
}

// realExtraTime is what each scenario's deadline grows by with the real
// components: pulling and unpacking their images under TCG.
const realExtraTime = 20 * time.Minute

// vmUUID is a guest's SMBIOS system UUID, derived from its name and MACs
// as real machines have one each: the real agent takes its host ID from it.
func vmUUID(name string, macs []string) string {
	h := sha256.Sum256([]byte(name + "," + strings.Join(macs, ",")))
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// slowStartUnits pull the real images as part of their start; the lab gives
// them labStartTimeout instead of upstream's 500 s.
var slowStartUnits = []string{"assisted-service-pod.service", "assisted-service-db.service", "assisted-service.service"}

const labStartTimeout = "30min"
