package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/console"
	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

func makeImageDir(t *testing.T) (dir, base string) {
	t.Helper()
	dir = t.TempDir()
	copyDir(t, "../../examples/ha", dir)
	base = filepath.Join(t.TempDir(), "base.iso")
	_, err := testiso.WriteFile(base, testiso.Options{Size: 16 << 20, Dense: true})
	require.NoError(t, err)
	return dir, base
}

// TestCreateImageChangesOnlyEmbedAreas compares the agent ISO with its base
// byte by byte: every difference must lie inside the Ignition embed area or
// a kernel-argument embed area, and the embedded config must be agent.ign.
func TestCreateImageChangesOnlyEmbedAreas(t *testing.T) {
	dir, base := makeImageDir(t)
	var stderr bytes.Buffer
	require.Equal(t, 0, run(withTestRelease("create", "image", "--dir", dir, "--base-iso", base), nil, &bytes.Buffer{}, &stderr), stderr.String())
	require.Equal(t, 0, run(withTestRelease("create", "ignition", "--dir", dir, "--base-iso", base), nil, &bytes.Buffer{}, &stderr), stderr.String())

	out := filepath.Join(dir, "agent.x86_64.iso")
	fi, err := os.Stat(out)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	info, err := isoeditor.FileInfo(base)
	require.NoError(t, err)
	type span struct{ lo, hi int64 }
	allowed := []span{{info.Ignition.Offset, info.Ignition.Offset + info.Ignition.Length}}
	require.NotNil(t, info.Kargs)
	for _, a := range info.Kargs.Areas {
		allowed = append(allowed, span{a.Offset, a.Offset + info.Kargs.Size})
	}
	a, err := os.ReadFile(base)
	require.NoError(t, err)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, len(a), len(b))
	changed := 0
	for i := range a {
		if a[i] == b[i] {
			continue
		}
		changed++
		ok := false
		for _, s := range allowed {
			if int64(i) >= s.lo && int64(i) < s.hi {
				ok = true
			}
		}
		require.True(t, ok, "byte %d changed outside every embed area", i)
	}
	assert.Positive(t, changed)

	iso, f, err := isoeditor.OpenFile(out)
	require.NoError(t, err)
	defer f.Close()
	got, err := iso.EmbeddedIgnition()
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join(dir, "agent.ign"))
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// TestCreateImageCancelledLeavesNothing interrupts the build (as Ctrl-C
// does) and checks no ISO, checksum, temp file or credential is left.
func TestCreateImageCancelledLeavesNothing(t *testing.T) {
	dir, base := makeImageDir(t)
	g := &globals{dir: dir, out: &bytes.Buffer{}, errOut: &bytes.Buffer{}}
	lg, err := console.NewLogger(g.errOut, "info", nil)
	require.NoError(t, err)
	g.log = lg
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := &imageOptions{baseISO: base, release: testReleaseFlags()}
	s, err := openStore(g, o.release)
	require.NoError(t, err)
	err = agent.CreateImage(ctx, s, g.log, o.assetOptions(g), o.regenerate)
	require.ErrorIs(t, err, context.Canceled)
	// And when the interrupt arrives at the ISO write itself.
	s, err = openStore(g, o.release)
	require.NoError(t, err)
	require.NoError(t, s.Provide(o.assetOptions(g)))
	for _, a := range agent.ImageTargets() {
		_, err := s.Fetch(context.Background(), a)
		require.NoError(t, err)
	}
	err = s.Persist(ctx, agent.ImageTargets()...)
	require.ErrorIs(t, err, context.Canceled)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, []string{"agent.x86_64.iso", "agent.x86_64.iso.sha256", "auth", "rendezvousIP"}, e.Name())
		assert.NotContains(t, e.Name(), ".tmp")
	}
}
