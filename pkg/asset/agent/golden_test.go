package agent_test

import (
	"context"
	"flag"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

var update = flag.Bool("update", false, "rewrite testdata/*/golden from the current output")

// goldenRelease pins the release so the golden files do not change when the
// build's default release is bumped.
const goldenRelease = "quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64"

// generate runs `create cluster-manifests` on a copy of testdata/<name>
// and returns the asset directory.
func generate(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{assetdir.InstallConfig, assetdir.AgentConfig} {
		b, err := os.ReadFile(filepath.Join("testdata", name, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	s, err := asset.NewStore(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	rel, err := offlineRelease(goldenRelease)
	require.NoError(t, err)
	require.NoError(t, s.Provide(rel))
	targets := agent.ClusterManifestsTargets()
	for _, a := range targets {
		_, err := s.Fetch(context.Background(), a)
		require.NoError(t, err, "fetch %s", a.Name())
	}
	_, err = s.Fetch(context.Background(), &agent.AgentManifests{})
	require.NoError(t, err, "cross-validation of the generated manifests")
	require.NoError(t, s.Persist(context.Background(), targets...))
	return dir
}

// TestGoldenHA generates the ZTP manifests of a typical bare-metal HA
// cluster (3 masters + 2 workers, bonded static networking) and compares
// every file under cluster-manifests/ byte for byte with
// testdata/ha/golden/. Run with -update to rewrite the golden files.
func TestGoldenHA(t *testing.T) {
	dir := generate(t, "ha")
	outDir := filepath.Join(dir, assetdir.ClusterManifestsDir)
	goldenDir := filepath.Join("testdata", "ha", "golden")

	got, err := filepath.Glob(filepath.Join(outDir, "*.yaml"))
	require.NoError(t, err)
	var names []string
	for _, p := range got {
		names = append(names, filepath.Base(p))
	}
	sort.Strings(names)
	require.Equal(t, []string{"agent-cluster-install.yaml", "cluster-deployment.yaml", "cluster-image-set.yaml",
		"infraenv.yaml", "nmstateconfig.yaml", "pull-secret.yaml"}, names)

	if *update {
		require.NoError(t, os.RemoveAll(goldenDir))
		require.NoError(t, os.MkdirAll(goldenDir, 0o755))
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(outDir, n))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(goldenDir, n), b, 0o644))
		}
	}

	want, err := filepath.Glob(filepath.Join(goldenDir, "*.yaml"))
	require.NoError(t, err)
	var wantNames []string
	for _, p := range want {
		wantNames = append(wantNames, filepath.Base(p))
	}
	sort.Strings(wantNames)
	assert.Equal(t, wantNames, names, "golden files without a generated counterpart (or the reverse); run with -update")

	for _, n := range names {
		t.Run(strings.TrimSuffix(n, ".yaml"), func(t *testing.T) {
			gotB, err := os.ReadFile(filepath.Join(outDir, n))
			require.NoError(t, err)
			wantB, err := os.ReadFile(filepath.Join(goldenDir, n))
			require.NoError(t, err, "missing golden file; run go test ./pkg/asset/agent/ -run TestGoldenHA -update")
			assert.Equal(t, string(wantB), string(gotB), "%s differs from the golden file; if the change is intended run with -update", n)
		})
	}

	fi, err := os.Stat(filepath.Join(outDir, "pull-secret.yaml"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm(), "the pull secret must not be readable by others")
}

// TestGoldenHAIdempotent checks that a second run over the same directory
// leaves every generated file byte-identical.
func TestGoldenHAIdempotent(t *testing.T) {
	dir := generate(t, "ha")
	first := readTree(t, dir)
	s, err := asset.NewStore(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	rel, err := offlineRelease(goldenRelease)
	require.NoError(t, err)
	require.NoError(t, s.Provide(rel))
	targets := agent.ClusterManifestsTargets()
	for _, a := range targets {
		_, err := s.Fetch(context.Background(), a)
		require.NoError(t, err)
	}
	require.NoError(t, s.Persist(context.Background(), targets...))
	assert.Equal(t, first, readTree(t, dir))
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return nil
	}))
	return out
}
