package isoeditor

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
)

// FileIgnition and FileKargs read an ISO file the way iso ignition show
// and iso kargs show do: a pristine ISO has no config (an error naming
// the file), its kargs are its defaults; an edited one has the config and
// the appended arguments, its defaults unchanged.
func TestFileIgnitionAndKargs(t *testing.T) {
	base, _ := makeISO(t, testiso.Options{Size: 8 << 20})
	_, err := FileIgnition(base)
	assert.ErrorIs(t, err, ErrNoIgnition)
	assert.ErrorContains(t, err, base+": ")
	defaults, err := FileKargs(base, true)
	require.NoError(t, err)
	k, err := FileKargs(base, false)
	require.NoError(t, err)
	assert.Equal(t, defaults, k)

	edited := filepath.Join(t.TempDir(), "agent.iso")
	_, err = editOnce(base, edited, WriteOptions{})
	require.NoError(t, err)
	cfg, err := FileIgnition(edited)
	require.NoError(t, err)
	assert.Equal(t, testConfig, string(cfg))
	k, err = FileKargs(edited, false)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(k, " console=ttyS0"), k)
	d, err := FileKargs(edited, true)
	require.NoError(t, err)
	assert.Equal(t, defaults, d)

	noKargs, _ := makeISO(t, testiso.Options{Size: 8 << 20, OmitKargsJSON: true})
	_, err = FileKargs(noKargs, true)
	assert.ErrorIs(t, err, ErrNoKargs)
	assert.ErrorContains(t, err, noKargs+": ")
	_, err = FileIgnition(filepath.Join(t.TempDir(), "missing.iso"))
	assert.ErrorContains(t, err, "missing.iso")
}
