package data

import (
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAgentLayout(t *testing.T) {
	agent := Agent()
	for _, dir := range []string{"files", "systemd/units", "network/files"} {
		st, err := fs.Stat(agent, dir)
		require.NoError(t, err, dir)
		assert.True(t, st.IsDir(), dir)
	}
	units, err := fs.ReadDir(agent, "systemd/units")
	require.NoError(t, err)
	require.NotEmpty(t, units)
	for _, u := range units {
		name := strings.TrimSuffix(u.Name(), ".template")
		if u.IsDir() {
			assert.True(t, strings.HasSuffix(name, ".d"), "unit directory %s must be a drop-in directory X.d", u.Name())
			continue
		}
		switch path.Ext(name) {
		case ".service", ".timer", ".path", ".target", ".socket":
		default:
			t.Errorf("systemd/units/%s is not a unit file", u.Name())
		}
	}
	// Every embedded script is a bash script.
	err = fs.WalkDir(agent, ".", func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() || !strings.Contains(p, "/bin/") {
			return nil
		}
		b, err := fs.ReadFile(agent, p)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(b), "#!/bin/bash\n"), p)
		return nil
	})
	require.NoError(t, err)
}
