package ignition

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// containerImagesHost fakes a host whose release image is already pulled
// and whose payload lists the components given (podman run <release>
// image NAME prints NAME's pull spec).
func containerImagesHost(t *testing.T, components ...string) *scriptHost {
	t.Helper()
	cfg, _ := mustBuild(t, snoInput())
	h := newScriptHost(t, cfg)
	h.write("/proc/self/cgroup", "0::/system.slice/assisted-service-pod.service\n", 0o644)
	h.fake("uname", "echo x86_64")
	h.fake("agetty", "")
	h.fake("podman", `case "$1" in
image) exit 0 ;;
inspect)
	case "$*" in
	*.Digest*) echo sha256:`+strings.Repeat("c", 64)+` ;;
	*) echo '[{"Architecture":"amd64"}]' ;;
	esac ;;
run)
	name="${*: -1}"
	case " `+strings.Join(components, " ")+` " in
	*" ${name} "*) echo "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:${name}" ;;
	*) echo "error: no image tag \"${name}\" exists in the release image" >&2; exit 1 ;;
	esac ;;
*) exit 125 ;;
esac`)
	return h
}

func TestGetContainerImagesWritesEveryComponent(t *testing.T) {
	h := containerImagesHost(t, "agent-installer-api-server", "agent-installer-csr-approver",
		"agent-installer-orchestrator", "agent-installer-node-agent", "agent-installer-utils")
	out, err := h.run("/usr/local/bin/get-container-images.sh")
	require.NoError(t, err, out)
	env := envMap(t, []byte(h.read("/usr/local/share/assisted-service/agent-images.env")))
	const art = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:"
	assert.Equal(t, map[string]string{
		"SERVICE_IMAGE":               art + "agent-installer-api-server",
		"CONTROLLER_IMAGE":            art + "agent-installer-csr-approver",
		"INSTALLER_IMAGE":             art + "agent-installer-orchestrator",
		"AGENT_DOCKER_IMAGE":          art + "agent-installer-node-agent",
		"AGENT_INSTALLER_UTILS_IMAGE": art + "agent-installer-utils",
	}, env)
	// The components come from the release by digest.
	assert.Contains(t, h.calls(), "podman run --quiet --rm --net=none quay.io/openshift-release-dev/ocp-release@sha256:"+strings.Repeat("c", 64)+" image agent-installer-utils")

	// A payload without the utils image still installs (nothing here runs
	// it); the others are required.
	h = containerImagesHost(t, "agent-installer-api-server", "agent-installer-csr-approver",
		"agent-installer-orchestrator", "agent-installer-node-agent")
	out, err = h.run("/usr/local/bin/get-container-images.sh")
	require.NoError(t, err, out)
	env = envMap(t, []byte(h.read("/usr/local/share/assisted-service/agent-images.env")))
	assert.Equal(t, "", env["AGENT_INSTALLER_UTILS_IMAGE"])
	assert.Equal(t, art+"agent-installer-api-server", env["SERVICE_IMAGE"])

	h = containerImagesHost(t, "agent-installer-csr-approver", "agent-installer-orchestrator", "agent-installer-node-agent", "agent-installer-utils")
	out, err = h.run("/usr/local/bin/get-container-images.sh")
	require.Error(t, err, out)
	assert.Empty(t, h.read("/usr/local/share/assisted-service/agent-images.env"))
}
