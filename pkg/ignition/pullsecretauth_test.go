package ignition

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const labMirrorConf = "[[registry]]\n  location = \"quay.io/openshift-release-dev/ocp-release\"\n  mirror-by-digest-only = true\n\n  [[registry.mirror]]\n    location = \"192.168.112.1:5000/openshift-release-dev/ocp-release\"\n\n[[registry]]\n  location = \"quay.io/openshift-release-dev/ocp-v4.0-art-dev\"\n  mirror-by-digest-only = true\n\n  [[registry.mirror]]\n    location = \"192.168.112.1:5000/openshift-release-dev/ocp-v4.0-art-dev\"\n"

func authInput(version, pullSecret string) *Input {
	return &Input{
		ReleaseImage:   "quay.io/openshift-release-dev/ocp-release@sha256:" + "ab",
		ReleaseVersion: version,
		RegistriesConf: []byte(labMirrorConf),
		PullSecret:     pullSecret,
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

var payloadComponents = map[string]string{
	"agent-installer-node-agent":   "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:01",
	"agent-installer-orchestrator": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:02",
	"agent-installer-csr-approver": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:03",
}

// The live lab's case (release-4.20): a mirror whose registry is not in
// the pull secret.
func TestCheckPullSecretAuthMirrorMissing(t *testing.T) {
	in := authInput("4.20.3", `{"auths":{"quay.io":{"auth":"`+b64("u:p")+`"}}}`)
	miss, err := CheckPullSecretAuth(in, payloadComponents)
	require.NoError(t, err)
	require.Len(t, miss, 1)
	assert.Equal(t, "192.168.112.1:5000/openshift-release-dev/ocp-release", miss[0].Registry)
	assert.Contains(t, miss[0].For, "OPENSHIFT_INSTALL_RELEASE_IMAGE_MIRROR")
	assert.Equal(t, "192.168.112.1:5000/openshift-release-dev/ocp-release@sha256:ab", miss[0].Image)

	// 4.18 and 4.19 name the host only.
	in.ReleaseVersion = "4.19.1"
	miss, err = CheckPullSecretAuth(in, payloadComponents)
	require.NoError(t, err)
	require.Len(t, miss, 1)
	assert.Equal(t, "192.168.112.1:5000", miss[0].Registry)
}

func TestCheckPullSecretAuthAccepted(t *testing.T) {
	for name, tc := range map[string]struct{ version, secret string }{
		"host entry 4.20":           {"4.20.3", `{"auths":{"192.168.112.1:5000":{"auth":"` + b64("u:p") + `"}}}`},
		"host entry 4.18":           {"4.18.1", `{"auths":{"192.168.112.1:5000":{"auth":"` + b64("u:p") + `"}}}`},
		"path prefix 4.20":          {"4.20.3", `{"auths":{"192.168.112.1:5000/openshift-release-dev":{"auth":"` + b64("u:p") + `"}}}`},
		"anonymous empty auth 4.21": {"4.21.0", `{"auths":{"192.168.112.1:5000":{"auth":""}}}`},
		"no version: newest rule":   {"", `{"auths":{"192.168.112.1:5000/openshift-release-dev/ocp-release":{"auth":"` + b64("u:p") + `"}}}`},
	} {
		t.Run(name, func(t *testing.T) {
			miss, err := CheckPullSecretAuth(authInput(tc.version, tc.secret), payloadComponents)
			require.NoError(t, err)
			assert.Empty(t, miss)
		})
	}
}

// release-4.18/4.19 match the host only: a path key does not count.
func TestCheckPullSecretAuthPathKeyBefore420(t *testing.T) {
	in := authInput("4.19.5", `{"auths":{"192.168.112.1:5000/openshift-release-dev":{"auth":"`+b64("u:p")+`"}}}`)
	miss, err := CheckPullSecretAuth(in, nil)
	require.NoError(t, err)
	require.Len(t, miss, 1)
	assert.Equal(t, "192.168.112.1:5000", miss[0].Registry)
}

// Without a mirror, PUBLIC_CONTAINER_REGISTRIES is quay.io: a release and
// components from another registry need entries.
func TestCheckPullSecretAuthNoMirrorPrivateRelease(t *testing.T) {
	in := &Input{ReleaseImage: "registry.example.com/ocp/release:4.20.3", ReleaseVersion: "4.20.3",
		PullSecret: `{"auths":{"quay.io":{"auth":"` + b64("u:p") + `"}}}`}
	comps := map[string]string{"agent-installer-node-agent": "registry.example.com/ocp/art@sha256:01"}
	miss, err := CheckPullSecretAuth(in, comps)
	require.NoError(t, err)
	require.Len(t, miss, 2)
	assert.Equal(t, "registry.example.com/ocp/art", miss[0].Registry)
	assert.Contains(t, miss[0].For, "AGENT_DOCKER_IMAGE")
	assert.Equal(t, "registry.example.com/ocp/release", miss[1].Registry)
	assert.Contains(t, miss[1].For, "RELEASE_IMAGES")

	in.ReleaseImage = "quay.io/openshift-release-dev/ocp-release:4.20.3"
	miss, err = CheckPullSecretAuth(in, nil)
	require.NoError(t, err)
	assert.Empty(t, miss)
}

func TestCheckPullSecretAuthEntryRules(t *testing.T) {
	for name, entry := range map[string]string{
		"not a string": `{"auth":5}`,
		"not base64":   `{"auth":"%%%"}`,
		"no colon":     `{"auth":"` + b64("useronly") + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := CheckPullSecretAuth(authInput("4.20.3", `{"auths":{"192.168.112.1:5000":`+entry+`}}`), nil)
			var pe *PullSecretAuthError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "192.168.112.1:5000", pe.Registry)
		})
	}
}

func TestRegistryOfImage(t *testing.T) {
	assert.Equal(t, "docker.io/library/busybox", registryOfImage("busybox:1", true))
	assert.Equal(t, "docker.io", registryOfImage("busybox:1", false))
	assert.Equal(t, "localhost:5000/a/b", registryOfImage("localhost:5000/a/b@sha256:00", true))
	assert.True(t, registryCovered("docker.io", map[string]bool{"https://index.docker.io/v1/": true}, false))
	assert.True(t, registryCovered("registry.stage.redhat.io/x", map[string]bool{}, true))
}
