package testminiso

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

// An edited test ISO carries the Ignition config and kernel arguments
// given, and no temporary base is left beside it (only the ISO and the
// .sha256 isoeditor writes with it).
func TestMakeEdited(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "agent.iso")
	cfg := []byte(`{"ignition":{"version":"3.2.0"}}`)
	require.NoError(t, Make(context.Background(), p, MakeOptions{Options: testiso.Options{Size: 4 << 20, EmbedAreaSize: 256 << 10},
		Ignition: cfg, Kargs: []string{"console=ttyS0"}}))
	iso, f, err := isoeditor.OpenFile(p)
	require.NoError(t, err)
	defer f.Close()
	got, err := iso.EmbeddedIgnition()
	require.NoError(t, err)
	assert.Equal(t, cfg, got)
	k, err := iso.Kargs()
	require.NoError(t, err)
	assert.Contains(t, k, "console=ttyS0")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"agent.iso", "agent.iso.sha256"}, names)
}

// MakeFromFlags parses the sizes and reads the Ignition file, naming the
// flag of what it could not.
func TestMakeFromFlags(t *testing.T) {
	dir := t.TempDir()
	ign := filepath.Join(dir, "config.ign")
	require.NoError(t, os.WriteFile(ign, []byte(`{"ignition":{"version":"3.2.0"}}`), 0o644))
	p := filepath.Join(dir, "agent.iso")
	require.NoError(t, MakeFromFlags(context.Background(), p, Flags{Size: "4MiB", EmbedArea: "256KiB", IgnitionFile: ign}))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, int64(4<<20), fi.Size())
	iso, f, err := isoeditor.OpenFile(p)
	require.NoError(t, err)
	defer f.Close()
	got, err := iso.EmbeddedIgnition()
	require.NoError(t, err)
	assert.JSONEq(t, `{"ignition":{"version":"3.2.0"}}`, string(got))

	for _, tc := range []struct {
		flags Flags
		want  string
	}{
		{Flags{Size: "lots", EmbedArea: "256KiB"}, "--size: "},
		{Flags{Size: "4MiB", EmbedArea: "some"}, "--embed-area: "},
		{Flags{Size: "4MiB", EmbedArea: "256KiB", IgnitionFile: dir + "/no"}, "--ignition: "},
	} {
		assert.ErrorContains(t, MakeFromFlags(context.Background(), filepath.Join(dir, "x.iso"), tc.flags), tc.want)
	}
}
