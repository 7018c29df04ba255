package agent

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

// auth/ from an earlier run without the state that holds its keys: the
// guard stops, saying what to do, unless new credentials are asked for.
func TestGuardCredentials(t *testing.T) {
	dir := t.TempDir()
	s, err := asset.NewStore(dir, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.NoError(t, GuardCredentials(s, false), "nothing in auth/: nothing to guard")

	require.NoError(t, os.MkdirAll(filepath.Join(dir, "auth"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.Kubeconfig), []byte("x"), 0o600))
	err = GuardCredentials(s, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "auth/ holds the credentials of an earlier run ("+assetdir.Kubeconfig+")")
	assert.Contains(t, err.Error(), "--regenerate-credentials")
	assert.Contains(t, err.Error(), "Nothing was changed.")
	assert.NoError(t, GuardCredentials(s, true))
}

// The template is written once, 0644 like every input, and never over the
// user's own agent-config.yaml.
func TestWriteAgentConfigTemplate(t *testing.T) {
	dir := t.TempDir()
	c, err := WriteAgentConfigTemplate(dir)
	require.NoError(t, err)
	require.Len(t, c.Files, 1)
	assert.Equal(t, assetdir.AgentConfig, c.Files[0].Path)
	assert.Len(t, c.Files[0].SHA256, 64)
	fi, err := os.Stat(filepath.Join(dir, assetdir.AgentConfig))
	require.NoError(t, err)
	assert.Equal(t, c.Files[0].Size, fi.Size())
	assert.Equal(t, c.Files[0].Mode, fmt.Sprintf("%04o", fi.Mode().Perm()))
	_, err = WriteAgentConfigTemplate(dir)
	assert.ErrorContains(t, err, "already exists; agentiso never overwrites your inputs")
}
