package agent_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/internal/fake/testiso/testminiso"
	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

// minimalDir is an asset directory whose agent-config asks for a minimal
// ISO, and a base ISO carrying real minimal-ISO data.
func minimalDir(t *testing.T, ac string) (dir, base string, res *testminiso.Result) {
	t.Helper()
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.InstallConfig), []byte(testfixture.CompactInstallConfig), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.AgentConfig), []byte(ac), 0o644))
	base = filepath.Join(t.TempDir(), "base.iso")
	res, err := testminiso.WriteFile(base, testiso.Options{Size: 6 << 20})
	require.NoError(t, err)
	return dir, base, res
}

// create image with minimalISO: true writes the minimal ISO (the agent
// config in its own area, the rootfs URL in its kernel arguments) and the
// base's root file system beside it, each with a checksum.
func TestMinimalAgentISO(t *testing.T) {
	dir, base, res := minimalDir(t, testfixture.AgentConfig+"minimalISO: true\nbootArtifactsBaseURL: http://10.0.0.1:8080/boot/\n")
	s := imageStore(t, dir, base, agent.Reporter{})
	fetchImage(t, s)
	require.NoError(t, s.Persist(context.Background(), agent.ImageTargets()...))
	iso, err := asset.Fetch[*agent.AgentISO](context.Background(), s)
	require.NoError(t, err)
	assert.True(t, iso.Minimal)
	const url = "http://10.0.0.1:8080/boot/agent.x86_64-rootfs.img"
	assert.Equal(t, url, iso.RootfsURL)

	out := filepath.Join(dir, "agent.x86_64.iso")
	info, err := isoeditor.FileInfo(out)
	require.NoError(t, err)
	assert.True(t, info.Minimal)
	assert.Equal(t, url, info.RootfsURL)
	assert.Equal(t, int64(len(res.MinimalBytes)), info.Size)
	require.NotNil(t, info.Kargs)
	assert.NotContains(t, info.Kargs.Current, "coreos.liveiso=")
	assertEmbedsAgentIgnition(t, s, out)

	rootfs := filepath.Join(dir, "boot-artifacts", "agent.x86_64-rootfs.img")
	b, err := os.ReadFile(rootfs)
	require.NoError(t, err)
	baseBytes, err := os.ReadFile(base)
	require.NoError(t, err)
	e := res.Full.Files[isoeditor.RootfsPath]
	assert.Equal(t, baseBytes[e.Offset:e.Offset+e.Size], b)
	sum := sha256.Sum256(b)
	sidecar, err := os.ReadFile(rootfs + ".sha256")
	require.NoError(t, err)
	assert.Equal(t, hex.EncodeToString(sum[:])+"  agent.x86_64-rootfs.img\n", string(sidecar))
	fi, err := os.Stat(rootfs)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
}

func TestMinimalAgentISOErrors(t *testing.T) {
	t.Run("no bootArtifactsBaseURL with a --base-iso", func(t *testing.T) {
		dir, base, _ := minimalDir(t, testfixture.AgentConfig+"minimalISO: true\n")
		s := imageStore(t, dir, base, agent.Reporter{})
		_, err := s.Fetch(context.Background(), &agent.AgentISO{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "agent-config.yaml:4: bootArtifactsBaseURL: Required value: agent-config.yaml:4: minimalISO: true asks for a minimal ISO")
		assert.Contains(t, err.Error(), "is not the release's stream ISO")
	})
	t.Run("base without miniso.dat", func(t *testing.T) {
		dir, _, _ := minimalDir(t, testfixture.AgentConfig+"minimalISO: true\nbootArtifactsBaseURL: http://10.0.0.1/boot\n")
		base := filepath.Join(t.TempDir(), "plain.iso")
		_, err := testiso.WriteFile(base, testiso.Options{Size: 4 << 20})
		require.NoError(t, err)
		s := imageStore(t, dir, base, agent.Reporter{})
		_, err = s.Fetch(context.Background(), &agent.AgentISO{})
		require.ErrorIs(t, err, isoeditor.ErrNoMinisoData)
		assert.Contains(t, err.Error(), "agentiso builds the minimal ISO from the base ISO's coreos/miniso.dat")
	})
}
