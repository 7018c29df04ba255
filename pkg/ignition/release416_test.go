package ignition

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const serviceEnvPath = "/usr/local/share/assisted-service/assisted-service.env"

// sno416Input is snoInput for OpenShift 4.16 (EUS).
func sno416Input() Input {
	in := snoInput()
	in.ReleaseVersion = "4.16.3"
	return in
}

// An ISO for OpenShift 4.16 is written as the 4.16 installer wrote it:
// AUTH_TYPE=none and no key nor token anywhere (assisted-service
// release-4.16 knows none, rhsso and local; its agent-installer client
// sends no token). Everything else is the same ISO.
func TestRelease416WritesAuthNone(t *testing.T) {
	cfg, _ := mustBuild(t, sno416Input())
	in := sno416Input()

	env, ok := fileContents(t, cfg, serviceEnvPath)
	require.True(t, ok)
	m := envMap(t, env)
	assert.Equal(t, "none", m["AUTH_TYPE"])
	for _, k := range []string{"EC_PUBLIC_KEY_PEM", "USER_AUTH_TOKEN", "WATCHER_AUTH_TOKEN"} {
		_, has := m[k]
		assert.False(t, has, "assisted-service.env of 4.16 has no %s", k)
	}
	assert.Contains(t, m["RELEASE_IMAGES"], `"openshift_version":"4.16"`)

	rv, ok := fileContents(t, cfg, RendezvousEnvPath)
	require.True(t, ok)
	assert.Equal(t, "NODE_ZERO_IP=192.168.111.80\n"+
		"SERVICE_BASE_URL=http://192.168.111.80:8090/\n"+
		"IMAGE_SERVICE_BASE_URL=http://192.168.111.80:8888/\n"+
		"WORKFLOW_TYPE=install\n"+
		"AIUI_APP_API_URL=http://192.168.111.80:8090/\n"+
		"AIUI_URL=http://192.168.111.80:3001/\n", string(rv))

	// No token in any file or unit of the ISO.
	for _, f := range cfg.Storage.Files {
		var b string
		if f.Contents.Source != nil {
			b = string(decodeResource(t, f.Contents))
		}
		for _, a := range f.Append {
			b += string(decodeResource(t, a))
		}
		for _, tok := range []string{in.Auth.AgentToken, in.Auth.UserToken, in.Auth.WatcherToken} {
			assert.NotContains(t, b, tok, f.Path)
		}
		assert.NotContains(t, b, "AUTH_TOKEN=", f.Path)
	}
	for _, u := range []string{"agent-register-cluster.service", "agent-register-infraenv.service", "apply-host-config.service"} {
		c, ok := unitContents(cfg, u)
		require.True(t, ok, u)
		assert.NotContains(t, c, "AUTH_TOKEN", u)
		assert.Contains(t, c, "agent-installer-client", u)
	}

	// 4.18 and later keep agent-installer-local with the tokens.
	cfg, _ = mustBuild(t, snoInput())
	env, _ = fileContents(t, cfg, serviceEnvPath)
	m = envMap(t, env)
	assert.Equal(t, "agent-installer-local", m["AUTH_TYPE"])
	assert.Equal(t, in.Auth.UserToken, m["USER_AUTH_TOKEN"])
	assert.Equal(t, in.Auth.WatcherToken, m["WATCHER_AUTH_TOKEN"])
	assert.NotEmpty(t, m["EC_PUBLIC_KEY_PEM"])
	c, _ := unitContents(cfg, "agent-register-cluster.service")
	assert.Contains(t, c, "--env USER_AUTH_TOKEN")
}

// The add-nodes ISO of a 4.16 cluster: none too, and the import unit
// passes no token.
func TestRelease416AddNodes(t *testing.T) {
	in := addNodesInput()
	in.ReleaseVersion = "4.16.3"
	cfg, _ := mustBuild(t, in)
	env, ok := fileContents(t, cfg, serviceEnvPath)
	require.True(t, ok)
	assert.Equal(t, "none", envMap(t, env)["AUTH_TYPE"])
	c, ok := unitContents(cfg, "agent-import-cluster.service")
	require.True(t, ok)
	assert.NotContains(t, c, "AUTH_TOKEN")
	rv, _ := fileContents(t, cfg, RendezvousEnvPath)
	assert.True(t, strings.Contains(string(rv), "WORKFLOW_TYPE=addnodes\n"))
	assert.NotContains(t, string(rv), "TOKEN")
}

// 4.17 is out of support: Build refuses it with the policy's reason.
func TestRelease417Refused(t *testing.T) {
	in := snoInput()
	in.ReleaseVersion = "4.17.9"
	_, _, err := Build(in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "OpenShift 4.17.9 is not supported")
	assert.Contains(t, err.Error(), "AGENT_AUTH_TOKEN")
}
