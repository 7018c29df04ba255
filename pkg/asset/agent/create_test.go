package agent_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

// createStore is the store of a create command on dir, the release given
// by digest (offline); its log lines go to the returned buffer.
func createStore(t *testing.T, dir string) (*asset.Store, *slog.Logger, *bytes.Buffer) {
	t.Helper()
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := asset.NewStore(dir, log)
	require.NoError(t, err)
	rel, err := offlineRelease(goldenRelease)
	require.NoError(t, err)
	require.NoError(t, s.Provide(rel))
	return s, log, &logged
}

// create ignition writes agent.ign (0600) and auth/, saying where; a second
// run with auth/ but without the state that holds its keys is refused.
func TestCreateIgnition(t *testing.T) {
	dir, _ := newImageDir(t)
	s, log, logged := createStore(t, dir)
	require.NoError(t, agent.CreateIgnition(context.Background(), s, log, nil, false))
	fi, err := os.Stat(filepath.Join(dir, assetdir.AgentIgnition))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.FileExists(t, filepath.Join(dir, assetdir.Kubeconfig))
	for _, line := range []string{"The rendezvous host IP (node0 IP) is ", "Ignition: ", "Created " + filepath.Join(dir, assetdir.AgentIgnition)} {
		assert.Contains(t, logged.String(), line)
	}

	require.NoError(t, os.Remove(filepath.Join(dir, assetdir.State)))
	s, log, _ = createStore(t, dir)
	err = agent.CreateIgnition(context.Background(), s, log, nil, false)
	assert.ErrorContains(t, err, "auth/ holds the credentials of an earlier run")
}

// create cluster-manifests writes the manifests and the mirror config and
// names both directories.
func TestCreateClusterManifests(t *testing.T) {
	dir, _ := newImageDir(t)
	s, log, logged := createStore(t, dir)
	require.NoError(t, agent.CreateClusterManifests(context.Background(), s, log, false))
	assert.FileExists(t, filepath.Join(dir, "cluster-manifests", "agent-cluster-install.yaml"))
	assert.Contains(t, logged.String(), "Manifests created in: "+filepath.Join(dir, assetdir.ClusterManifestsDir)+" and "+filepath.Join(dir, assetdir.MirrorDir))
	assert.NotContains(t, logged.String(), "Hub manifests")
}

// create image and create pxe-files build from the base ISO and say what
// they wrote; without bootArtifactsBaseURL an iPXE script of an earlier
// run is named as left behind.
func TestCreateImageAndPXEFiles(t *testing.T) {
	dir, base := newImageDir(t)
	s, log, logged := createStore(t, dir)
	require.NoError(t, agent.CreateImage(context.Background(), s, log, &agent.ImageOptions{BaseISO: base, Offline: true}, false))
	assert.FileExists(t, filepath.Join(dir, "agent.x86_64.iso"))
	assert.Contains(t, logged.String(), "Generated ISO at "+filepath.Join(dir, "agent.x86_64.iso"))
	assert.Contains(t, logged.String(), "readable only by you (0600)")

	stale := filepath.Join(dir, "boot-artifacts", "agent.x86_64.ipxe")
	require.NoError(t, os.MkdirAll(filepath.Dir(stale), 0o755))
	require.NoError(t, os.WriteFile(stale, []byte("#!ipxe\n"), 0o644))
	s, log, logged = createStore(t, dir)
	require.NoError(t, agent.CreatePXEFiles(context.Background(), s, log, &agent.ImageOptions{BaseISO: base, Offline: true}, false))
	assert.FileExists(t, filepath.Join(dir, "boot-artifacts", "agent.x86_64-initrd.img"))
	assert.Contains(t, logged.String(), "PXE boot artifacts created in "+filepath.Join(dir, assetdir.BootArtifactsDir))
	assert.Contains(t, logged.String(), "The iPXE script "+stale+" is from an earlier run")
}

// OpenStore provides the release the command line asked for, with its
// origin; a pull spec that is none is refused; without an image, the
// options alone (for the ClusterImageSet's release).
func TestOpenStore(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	digest := "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("a", 64)
	s, err := agent.OpenStore(t.TempDir(), log, agent.ReleaseRequest{Image: digest, Version: "4.19.0", Offline: true, Origin: "$AGENTISO_RELEASE_IMAGE"})
	require.NoError(t, err)
	rel, err := asset.Fetch[*agent.ReleaseImage](context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, agent.ReleaseImage{PullSpec: digest, Version: "4.19.0", Offline: true, Origin: "$AGENTISO_RELEASE_IMAGE"}, *rel)

	_, err = agent.OpenStore(t.TempDir(), log, agent.ReleaseRequest{Image: "not a pull spec"})
	assert.ErrorContains(t, err, `release image "not a pull spec" is not an image pull spec`)

	s, err = agent.OpenStore(t.TempDir(), log, agent.ReleaseRequest{Version: "4.19.0", Offline: true})
	require.NoError(t, err)
	o, err := asset.Fetch[*agent.ReleaseOptions](context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, agent.ReleaseOptions{Version: "4.19.0", Offline: true}, *o)
	_, err = asset.Fetch[*agent.ReleaseImage](context.Background(), s)
	assert.ErrorIs(t, err, agent.ErrNoRelease, "no ClusterImageSet either")
}
