package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/credentials"
)

// The REST URL is the one given, else the simulator's recorded address,
// else the rendezvous IP's (IPv6 bracketed); the watcher token verifies
// against the directory's key.
func TestReadWaitInputs(t *testing.T) {
	dir := waitDevDir(t)
	in, err := agent.ReadWaitInputs(dir, "", "")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", in.RendezvousIP)
	assert.True(t, strings.HasPrefix(in.RESTURL, "http://127.0.0.1:"), in.RESTURL)
	assert.Equal(t, filepath.Join(dir, filepath.FromSlash(assetdir.DevSim)), in.RESTURLSource)
	pub, err := in.Auth.ECPublicKey()
	require.NoError(t, err)
	c, err := credentials.Verify(in.Auth.WatcherAuthToken, pub)
	require.NoError(t, err)
	assert.Equal(t, credentials.Claims{"auth_scheme": "watcherAuth"}, c)

	in, err = agent.ReadWaitInputs(dir, "http://[fd00::5]:8090/api/assisted-install/v2", "$AGENTISO_RENDEZVOUS_URL")
	require.NoError(t, err)
	assert.Equal(t, "http://[fd00::5]:8090/api/assisted-install/v2", in.RESTURL)
	assert.Equal(t, "$AGENTISO_RENDEZVOUS_URL", in.RESTURLSource)

	require.NoError(t, os.Remove(filepath.Join(dir, filepath.FromSlash(assetdir.DevSim))))
	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.RendezvousIP), []byte("fd00::0005\n"), 0o644))
	in, err = agent.ReadWaitInputs(dir, "", "")
	require.NoError(t, err)
	assert.Equal(t, "http://[fd00::5]:8090/api/assisted-install/v2", in.RESTURL)
	assert.Empty(t, in.RESTURLSource)

	_, err = agent.ReadWaitInputs(dir, "http://bad host/", "--rendezvous-url")
	assert.ErrorContains(t, err, "rendezvous URL from --rendezvous-url: ")
}

func TestReadWaitInputsErrors(t *testing.T) {
	dir := waitDevDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.State), []byte(`{"version":1,"assets":{}}`), 0o600))
	_, err := agent.ReadWaitInputs(dir, "", "")
	assert.ErrorContains(t, err, `cannot read the install's API tokens (written by create image): `)
	assert.ErrorContains(t, err, `state.json does not hold what create image records there (create the image again)`)
	assert.NotContains(t, err.Error(), "AuthConfig", "no internal asset name")
	assert.NotContains(t, err.Error(), "Agent Auth Config", "no internal asset name")

	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.RendezvousIP), []byte("not-an-ip"), 0o644))
	_, err = agent.ReadWaitInputs(dir, "", "")
	assert.ErrorContains(t, err, `"not-an-ip" is not an IP address`)
	assert.False(t, errors.Is(err, os.ErrNotExist))
}

// A state file that exists but cannot be read is reported as unreadable,
// with the reason, not as if the asset were missing.
func TestReadWaitInputsCorruptStateSaysUnreadable(t *testing.T) {
	dir := waitDevDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.State), []byte(`{"version":1,"assets":`), 0o600))
	_, err := agent.ReadWaitInputs(dir, "", "")
	require.Error(t, err)
	assert.ErrorContains(t, err, "unreadable")
	assert.NotContains(t, err.Error(), "is missing")
}
