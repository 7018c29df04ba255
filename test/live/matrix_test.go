//go:build e2elive

package live

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/test/live/mirror"
)

// TestLiveMatrix runs one SNO scenario (static bond, mirror, no proxy)
// against the real assisted-service, client and agent of every branch of
// the upstream lock file (hack/build-upstream.sh --list, or
// AGENTISO_LIVE_MATRIX_BRANCHES) and writes the table into docs/e2e.md
// (AGENTISO_LIVE_MATRIX_DOC, default docs/e2e.md of this clone). A branch
// agentiso accepts must pass, and one it refuses needs no run: otherwise
// agentiso's release policy and the table disagree, and the test fails.
func TestLiveMatrix(t *testing.T) {
	if os.Getenv("AGENTISO_LIVE_MATRIX") == "" {
		t.Skip("make e2e-live-matrix runs it (AGENTISO_LIVE_MATRIX=1)")
	}
	requireTool(t, "qemu-system-x86_64")
	fixture, bin := fixture(t), agentisoBin(t)
	sb, err := mirror.BuildStandin(context.Background(), t.TempDir(), "amd64")
	require.NoError(t, err, "build the stand-in binary")
	branches := strings.Fields(os.Getenv("AGENTISO_LIVE_MATRIX_BRANCHES"))
	if len(branches) == 0 {
		branches = strings.Fields(scriptOutput(t, "build-upstream.sh", "--list"))
	}
	var rows []matrixRow
	for _, branch := range branches {
		row := matrixRow{branch: branch}
		t.Run(branch, func(t *testing.T) {
			start := time.Now()
			version, err := branchVersion(branch)
			if err != nil {
				row.result, row.said = "not run", err.Error()
				return
			}
			if msg, ok := agentisoRefuses(t, bin, version); ok {
				row.result, row.said = "agentiso refuses "+version, msg
				return
			}
			l := &lab{fixture: fixture, bin: bin, standin: sb, kvm: os.Getenv("AGENTISO_E2E_ACCEL") == "kvm",
				budgetEnd: time.Now().Add(30 * time.Minute), version: version}
			dir, berr := buildUpstream(repoRoot(t), branch)
			if berr != nil {
				row.result, row.said = "build failed", berr.Error()
				t.Errorf("%s: agentiso accepts %s but its upstream build failed: %v", branch, version, berr)
				return
			}
			up, err := mirror.NewUpstreamLayers(mirror.Upstream{Dir: dir, ServiceBase: scriptPath(t, "build-live-image-base.sh", "service"),
				AgentBase: scriptPath(t, "build-live-image-base.sh", "agent")})
			require.NoError(t, err)
			l.up = up
			row.commit = up.BuildInfo["assisted-service.upstream"]
			sc := scenario{name: "matrix-sno-" + branch, installConfig: snoInstallConfig, agentConfig: snoAgentConfig,
				dns: clusterDNS("192.168.111.80", "192.168.111.80"), deadline: 14 * time.Minute,
				hosts: []host{{name: "sno-live", macs: []string{"52:54:00:aa:00:01", "52:54:00:aa:00:02"}, iface: "bond0", kind: "bond", ip: "192.168.111.80", nodeZero: true}}}
			_, err = l.run(t, sc)
			if err != nil {
				row.result, row.said = "fails", firstLine(err)
				t.Errorf("%s: agentiso accepts %s but the real components refuse it: %v", branch, version, err)
				return
			}
			row.result, row.said = fmt.Sprintf("passes (%s)", time.Since(start).Round(time.Second)), "hosts registered and validated, install accepted (202), cluster preparing-for-installation"
		})
		if row.result == "" {
			row.result, row.said = "lab error", "the lab itself failed (see the test log)"
		}
		rows = append(rows, row)
	}
	doc := os.Getenv("AGENTISO_LIVE_MATRIX_DOC")
	if doc == "" {
		doc = filepath.Join(repoRoot(t), "docs", "e2e.md")
	}
	require.NoError(t, writeMatrix(doc, rows, time.Now()))
	t.Logf("matrix written to %s", doc)
}

// buildUpstream runs hack/build-upstream.sh BRANCH and returns its directory.
func buildUpstream(root, branch string) (string, error) {
	cmd := exec.Command("bash", filepath.Join(root, "hack", "build-upstream.sh"), branch)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/build-upstream.sh %s: %w: %s", branch, err, lastLines(stderr.String(), 3))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// scriptOutput runs a hack/ script and returns its whole stdout.
func scriptOutput(t *testing.T, script string, args ...string) string {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(repoRoot(t), "hack", script)}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "hack/%s %s", script, strings.Join(args, " "))
	return string(out)
}

// agentisoRefuses asks agentiso whether it builds an ISO for version
// (its release policy), on the matrix's SNO inputs with a release by digest.
func agentisoRefuses(t *testing.T, bin, version string) (string, bool) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{"install-config.yaml": snoInstallConfig, "agent-config.yaml": snoAgentConfig} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	release := "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("0", 64)
	out, err := exec.Command(bin, "create", "ignition", "--dir", dir, "--offline", "--release-image", release, "--release-version", version).CombinedOutput()
	if err == nil {
		return "", false
	}
	return firstLine(fmt.Errorf("%s", strings.TrimSpace(string(out)))), true
}
