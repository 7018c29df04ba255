package agent_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

func storeWithout(t *testing.T, files map[string]string, provide ...asset.Asset) (*asset.Store, string) {
	t.Helper()
	return storeWithoutOn(t, asset.NewStore, files, provide...)
}

// storeWithoutOn is storeWithout with the store opened by open (newStore
// for the package's credentials, when the test does not look at the state).
func storeWithoutOn(t *testing.T, open func(string, *slog.Logger) (*asset.Store, error), files map[string]string, provide ...asset.Asset) (*asset.Store, string) {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	s, err := open(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	for _, a := range provide {
		require.NoError(t, s.Provide(a))
	}
	return s, dir
}

// TestNoReleaseIsAnError: agentiso pins no default release; a build that
// needs one and was given none fails, naming every way to give one, where
// the digest is found and the floor, and writes nothing.
func TestNoReleaseIsAnError(t *testing.T) {
	s, dir := storeWithout(t, map[string]string{assetdir.InstallConfig: testfixture.SNOInstallConfig, assetdir.AgentConfig: testfixture.AgentConfig})
	_, err := s.Fetch(context.Background(), &agent.AgentManifests{})
	require.Error(t, err)
	assert.True(t, errors.Is(err, agent.ErrNoRelease), err.Error())
	for _, want := range []string{"no OpenShift release given", "agentiso pins no default release", "--release-image",
		"$AGENTISO_RELEASE_IMAGE", "release-image: in the config file", "cluster-manifests/cluster-image-set.yaml",
		`"Pull From:" line of the release's release.txt`, "`openshift-install version`", "OpenShift 4.16 and 4.18 and later"} {
		assert.Contains(t, err.Error(), want)
	}
	// --release-version and --offline alone do not name a release either.
	s, _ = storeWithout(t, map[string]string{assetdir.InstallConfig: testfixture.SNOInstallConfig, assetdir.AgentConfig: testfixture.AgentConfig},
		&agent.ReleaseOptions{Version: "4.20.0", Offline: true})
	_, err = s.Fetch(context.Background(), &agent.AgentIgnition{})
	assert.True(t, errors.Is(err, agent.ErrNoRelease))
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{assetdir.InstallConfig, assetdir.AgentConfig}, names, "nothing written")
}

// TestReleaseFromClusterImageSet: without --release-image, the release is
// the one the user's ClusterImageSet names (with --release-version and
// --offline), and it says so.
func TestReleaseFromClusterImageSet(t *testing.T) {
	spec := "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("5", 64)
	cis := "apiVersion: hive.openshift.io/v1\nkind: ClusterImageSet\nmetadata:\n  name: openshift-4.20.0\nspec:\n  releaseImage: " + spec + "\n"
	files := map[string]string{assetdir.InstallConfig: testfixture.SNOInstallConfig, assetdir.AgentConfig: testfixture.AgentConfig, assetdir.ClusterImageSet: cis}
	s, _ := storeWithout(t, files, &agent.ReleaseOptions{Version: "4.20.0", Offline: true})
	ri := fetchT(t, s, &agent.ReleaseImage{})
	assert.Equal(t, spec, ri.PullSpec)
	assert.Equal(t, assetdir.ClusterImageSet+":6", ri.Origin)
	p := fetchT(t, s, &agent.ReleasePayload{})
	assert.Equal(t, "4.20.0", p.Version)
	assert.Equal(t, spec, p.Pinned)
	m := fetchT(t, s, &agent.AgentManifests{})
	assert.Equal(t, spec, m.ClusterImageSet.Spec.ReleaseImage)

	// Offline, the ClusterImageSet's digest still needs its version.
	s, _ = storeWithout(t, files, &agent.ReleaseOptions{Offline: true})
	_, err := s.Fetch(context.Background(), &agent.ReleasePayload{})
	assert.ErrorContains(t, err, "--offline needs --release-version")

	// --release-image wins; a ClusterImageSet naming another release is
	// then an error that says how to install that one.
	other, err := agent.OfflineRelease("quay.io/openshift-release-dev/ocp-release@sha256:"+strings.Repeat("6", 64), "4.20.1")
	require.NoError(t, err)
	s, _ = storeWithout(t, files, other)
	_, err = s.Fetch(context.Background(), &agent.AgentManifests{})
	assert.ErrorContains(t, err, "pass --release-image "+spec+" to install that one instead")
}
