package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

func registerInfraEnvUnit(t *testing.T, files map[string]string) string {
	t.Helper()
	cfg := ignitionFor(t, goldenRelease, files)
	for _, u := range cfg.Systemd.Units {
		if u.Name == "agent-register-infraenv.service" {
			require.NotNil(t, u.Contents)
			return *u.Contents
		}
	}
	t.Fatal("agent-register-infraenv.service missing")
	return ""
}

// TestImageType checks that the ISO tells assisted-service which kind it
// is (IMAGE_TYPE_ISO): minimal for minimalISO: true and for platform
// external (as upstream), full otherwise; bootArtifactsBaseURL alone does
// not make the ISO minimal.
func TestImageType(t *testing.T) {
	icExternal := strings.Replace(testfixture.SNOInstallConfig, "  none: {}\n", "  external:\n    platformName: oci\n    cloudControllerManager: External\n", 1)
	for _, tc := range []struct {
		name, ic, ac, want string
	}{
		{"full", testfixture.SNOInstallConfig, testfixture.AgentConfig, "full-iso"},
		{"bootArtifactsBaseURL only", testfixture.SNOInstallConfig, testfixture.AgentConfig + "bootArtifactsBaseURL: http://10.0.0.1:8080/boot\n", "full-iso"},
		{"minimalISO", testfixture.SNOInstallConfig, testfixture.AgentConfig + "minimalISO: true\n", "minimal-iso"},
		{"external platform", icExternal, testfixture.AgentConfig, "minimal-iso"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unit := registerInfraEnvUnit(t, map[string]string{assetdir.InstallConfig: tc.ic, assetdir.AgentConfig: tc.ac})
			assert.Contains(t, unit, "Environment=IMAGE_TYPE_ISO="+tc.want+"\n")
		})
	}
}

// imageStore is a store on the simple inputs with a synthetic base ISO
// given as --base-iso, nothing looked up.
func imageStore(t *testing.T, dir, base string, r agent.Reporter) *asset.Store {
	t.Helper()
	s := newStore(t, dir, quietLog())
	rel, err := offlineRelease(goldenRelease)
	require.NoError(t, err)
	require.NoError(t, s.Provide(rel))
	require.NoError(t, s.Provide(&agent.ImageOptions{BaseISO: base, Offline: true, Report: r}))
	return s
}

func fetchImage(t *testing.T, s *asset.Store) {
	t.Helper()
	for _, a := range agent.ImageTargets() {
		_, err := s.Fetch(context.Background(), a)
		require.NoError(t, err, "fetch %s", a.Name())
	}
}

func newImageDir(t *testing.T) (dir, base string) {
	t.Helper()
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.InstallConfig), []byte(testfixture.CompactInstallConfig), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.AgentConfig), []byte(testfixture.AgentConfig), 0o644))
	base = filepath.Join(t.TempDir(), "base.iso")
	_, err := testiso.WriteFile(base, testiso.Options{Size: 4 << 20})
	require.NoError(t, err)
	return dir, base
}

// assertEmbedsAgentIgnition checks that the ISO at iso embeds exactly the
// store's agent.ign.
func assertEmbedsAgentIgnition(t *testing.T, s *asset.Store, iso string) {
	t.Helper()
	ign, err := asset.Fetch[*agent.AgentIgnition](context.Background(), s)
	require.NoError(t, err)
	edited, f, err := isoeditor.OpenFile(iso)
	require.NoError(t, err)
	got, err := edited.EmbeddedIgnition()
	f.Close()
	require.NoError(t, err)
	assert.Equal(t, ign.Config, got)
}

// The ISO is resolved through the graph like any asset, but written only
// by Persist: streamed, with the Ignition config of the AgentIgnition asset.
func TestAgentISOIsWrittenByPersist(t *testing.T) {
	dir, base := newImageDir(t)
	var progress []string
	s := imageStore(t, dir, base, agent.Reporter{WriteProgress: func(name string) (func(done, total int64), func(bool)) {
		return func(done, total int64) {
				if done == total {
					progress = append(progress, fmt.Sprintf("%s %d", name, done))
				}
			}, func(ok bool) {
				progress = append(progress, fmt.Sprintf("finished %t", ok))
			}
	}})
	fetchImage(t, s)
	iso, err := asset.Fetch[*agent.AgentISO](context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, "agent.x86_64.iso", iso.File)
	assert.Equal(t, base, iso.Base)
	assert.Nil(t, iso.Result())
	assert.NoFileExists(t, filepath.Join(dir, iso.File), "fetching writes nothing")

	require.NoError(t, s.Persist(context.Background(), agent.ImageTargets()...))
	out := filepath.Join(dir, "agent.x86_64.iso")
	require.NotNil(t, iso.Result())
	assert.Equal(t, []string{fmt.Sprintf("agent.x86_64.iso %d", iso.Result().Size), "finished true"}, progress)
	assert.Equal(t, out, iso.Result().Path)
	fi, err := os.Stat(out)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	sum, err := os.ReadFile(out + ".sha256")
	require.NoError(t, err)
	assert.Equal(t, iso.Result().SHA256+"  agent.x86_64.iso\n", string(sum))
	for _, f := range []string{assetdir.Kubeconfig, assetdir.KubeadminPassword, assetdir.RendezvousIP} {
		assert.FileExists(t, filepath.Join(dir, f))
	}

	assertEmbedsAgentIgnition(t, s, out)

	// The image assets stand for one run: none is kept in the state, and
	// the next run writes the ISO again.
	st, err := os.ReadFile(filepath.Join(dir, assetdir.State))
	require.NoError(t, err)
	for _, name := range []string{(&agent.AgentISO{}).Name(), (&agent.BaseISO{}).Name(), (&agent.ImageOptions{}).Name()} {
		assert.NotContains(t, string(st), `"`+name+`"`)
	}
	require.NoError(t, os.Remove(out))
	s = imageStore(t, dir, base, agent.Reporter{})
	fetchImage(t, s)
	require.NoError(t, s.Persist(context.Background(), agent.ImageTargets()...))
	assert.FileExists(t, out)
}

// A run that fails while writing the new ISO, or after it (saving the
// state), leaves the previous ISO, its checksum, auth/ and the state as
// they were, and no temporary file.
func TestAgentISOFailedWriteKeepsThePreviousOne(t *testing.T) {
	dir, base := newImageDir(t)
	s := imageStore(t, dir, base, agent.Reporter{})
	fetchImage(t, s)
	require.NoError(t, s.Persist(context.Background(), agent.ImageTargets()...))
	keep := []string{"agent.x86_64.iso", "agent.x86_64.iso.sha256", assetdir.Kubeconfig, assetdir.KubeadminPassword, assetdir.State}
	before := map[string][]byte{}
	for _, f := range keep {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		before[f] = b
	}
	check := func(t *testing.T, skip string) {
		t.Helper()
		for _, f := range keep {
			if f == skip {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, f))
			require.NoError(t, err)
			assert.Equal(t, before[f], b, f)
		}
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			assert.NotContains(t, e.Name(), ".tmp", "temporary file left behind")
		}
	}
	// New credentials each time, so auth/ would change if written.
	creds := func(s *asset.Store) {
		s.Forget((&agent.AuthConfig{}).Name(), (&agent.SignerCAs{}).Name(), (&agent.KubeadminPassword{}).Name())
	}

	t.Run("interrupted write", func(t *testing.T) {
		s := imageStore(t, dir, base, agent.Reporter{})
		creds(s)
		fetchImage(t, s)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.ErrorIs(t, s.Persist(ctx, agent.ImageTargets()...), context.Canceled)
		check(t, "")
	})
	t.Run("state not saved", func(t *testing.T) {
		s := imageStore(t, dir, base, agent.Reporter{})
		creds(s)
		fetchImage(t, s)
		// The state file becomes a directory: saving it fails after the new
		// ISO is staged and the new credentials are written.
		state := filepath.Join(dir, assetdir.State)
		require.NoError(t, os.Rename(state, state+".saved"))
		require.NoError(t, os.Mkdir(state, 0o700))
		err := s.Persist(context.Background(), agent.ImageTargets()...)
		require.Error(t, err)
		assert.True(t, strings.Contains(err.Error(), "save state"), err.Error())
		check(t, assetdir.State)
		require.NoError(t, os.Remove(state))
		require.NoError(t, os.Rename(state+".saved", state))
		check(t, "")
	})
}
