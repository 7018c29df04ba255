package agent_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

// ignitionFor builds the agent Ignition config of the inputs with the
// release pull spec given, and returns it decoded.
func ignitionFor(t *testing.T, release string, files map[string]string) types.Config {
	t.Helper()
	s, _ := store(t, files)
	rel, err := offlineRelease(release)
	require.NoError(t, err)
	require.NoError(t, s.Provide(rel))
	a, err := asset.Fetch[*agent.AgentIgnition](context.Background(), s)
	require.NoError(t, err)
	var cfg types.Config
	require.NoError(t, json.Unmarshal(a.Config, &cfg))
	return cfg
}

// ignitionFile returns the decoded contents of the file at path.
func ignitionFile(t *testing.T, cfg types.Config, path string) []byte {
	t.Helper()
	decode := func(r types.Resource) []byte {
		require.NotNil(t, r.Source, path)
		_, payload, ok := strings.Cut(*r.Source, ";base64,")
		require.True(t, ok, "%s: not a base64 data URL", path)
		b, err := base64.StdEncoding.DecodeString(payload)
		require.NoError(t, err)
		if r.Compression != nil && *r.Compression == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			require.NoError(t, err)
			b, err = io.ReadAll(zr)
			require.NoError(t, err)
		}
		return b
	}
	for _, f := range cfg.Storage.Files {
		if f.Path != path {
			continue
		}
		if f.Contents.Source != nil {
			return decode(f.Contents)
		}
		var out []byte
		for _, a := range f.Append {
			out = append(out, decode(a)...)
		}
		return out
	}
	require.Failf(t, "missing file", "%s is not in the Ignition config", path)
	return nil
}

type hwRole struct {
	CPUCores   int `json:"cpu_cores"`
	RAMMiB     int `json:"ram_mib"`
	DiskSizeGB int `json:"disk_size_gb"`
}

type hwRequirements struct {
	Version string  `json:"version"`
	Master  *hwRole `json:"master"`
	Arbiter *hwRole `json:"arbiter"`
	Worker  *hwRole `json:"worker"`
	SNO     *hwRole `json:"sno"`
}

// runHWRequirements runs the ISO's configure-assisted-hw-requirements.sh
// against the ISO's own assisted-service.env, in a scratch root, and
// returns the requirements it wrote.
func runHWRequirements(t *testing.T, cfg types.Config, internalReleaseImage bool) []hwRequirements {
	t.Helper()
	const (
		script = "/usr/local/bin/configure-assisted-hw-requirements.sh"
		env    = "/usr/local/share/assisted-service/assisted-service.env"
	)
	root := t.TempDir()
	for _, p := range []string{script, env} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, p), ignitionFile(t, cfg, p), 0o755))
	}
	if internalReleaseImage {
		p := filepath.Join(root, "etc/assisted/extra-manifests/internalreleaseimage.yaml")
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("kind: InternalReleaseImage\n"), 0o644))
	}
	cmd := exec.Command("bash", filepath.Join(root, script))
	cmd.Env = append(os.Environ(), "AGENT_ROOT="+root)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	b, err := os.ReadFile(filepath.Join(root, env))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "HW_VALIDATOR_REQUIREMENTS="); ok {
			var reqs []hwRequirements
			require.NoError(t, json.Unmarshal([]byte(v), &reqs), "%s", v)
			return reqs
		}
	}
	require.Fail(t, "HW_VALIDATOR_REQUIREMENTS missing", "%s", b)
	return nil
}

// TestHardwareRequirementsFollowRelease checks the minimum host hardware
// the live ISO gives assisted-service: a single-node cluster needs 8 cores
// before OpenShift 4.22 and 4 from 4.22 on (as assisted-service's own
// defaults); the release version comes from the release image.
func TestHardwareRequirementsFollowRelease(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("bash is needed to run the ISO's scripts: %v", err)
	}
	inputs := map[string]string{assetdir.InstallConfig: testfixture.SNOInstallConfig, assetdir.AgentConfig: testfixture.AgentConfig}
	for _, tc := range []struct {
		release  string
		snoCores int
	}{
		{"quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64", 8},
		{"quay.io/openshift-release-dev/ocp-release:4.21.3-x86_64", 8},
		{"quay.io/openshift-release-dev/ocp-release:4.22.0-x86_64", 4},
		{"quay.io/openshift-release-dev/ocp-release:5.0.1-x86_64", 4},
	} {
		t.Run(tc.release, func(t *testing.T) {
			reqs := runHWRequirements(t, ignitionFor(t, tc.release, inputs), false)
			require.Len(t, reqs, 1)
			r := reqs[0]
			assert.Equal(t, "default", r.Version)
			require.NotNil(t, r.SNO)
			assert.Equal(t, tc.snoCores, r.SNO.CPUCores, "sno cpu_cores")
			assert.Equal(t, 16384, r.SNO.RAMMiB)
			assert.Equal(t, 100, r.SNO.DiskSizeGB)
			require.NotNil(t, r.Master)
			assert.Equal(t, 4, r.Master.CPUCores)
		})
	}
}

// TestHardwareRequirementsDisks checks the disk sizes per role, as
// upstream: an internal release image (no registry) raises the control
// plane and single-node disks to 220 GB; arbiter (50 GB) and worker
// (100 GB) disks do not change.
func TestHardwareRequirementsDisks(t *testing.T) {
	inputs := map[string]string{assetdir.InstallConfig: testfixture.SNOInstallConfig, assetdir.AgentConfig: testfixture.AgentConfig}
	cfg := ignitionFor(t, "quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64", inputs)
	for _, tc := range []struct {
		iri                          bool
		master, sno, arbiter, worker int
	}{
		{false, 100, 100, 50, 100},
		{true, 220, 220, 50, 100},
	} {
		reqs := runHWRequirements(t, cfg, tc.iri)
		require.Len(t, reqs, 1)
		r := reqs[0]
		require.True(t, r.Master != nil && r.SNO != nil && r.Arbiter != nil && r.Worker != nil, "every role present: %+v", r)
		assert.Equal(t, tc.master, r.Master.DiskSizeGB, "master, internal release image %v", tc.iri)
		assert.Equal(t, tc.sno, r.SNO.DiskSizeGB, "sno, internal release image %v", tc.iri)
		assert.Equal(t, tc.arbiter, r.Arbiter.DiskSizeGB, "arbiter, internal release image %v", tc.iri)
		assert.Equal(t, tc.worker, r.Worker.DiskSizeGB, "worker, internal release image %v", tc.iri)
	}
}
