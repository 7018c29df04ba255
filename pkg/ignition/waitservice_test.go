package ignition

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const waitServiceScript = "/usr/local/bin/wait-for-assisted-service.sh"

// TestWaitForAssistedServiceSaysWhatTheServiceAnswered: a service that
// answers with an error (here release-4.20's answer to a token whose claim
// is misnamed, pkg/auth/agent_local_authz_handler.go: HTTP 500 "malformed
// auth_scheme claim") is not "not up yet": the script prints the status and
// the service's message, once per change, instead of waiting in silence.
func TestWaitForAssistedServiceSaysWhatTheServiceAnswered(t *testing.T) {
	cfg, _ := mustBuild(t, haInput())
	h := newScriptHost(t, cfg)
	h.env = append(h.env, strings.Split(strings.TrimSpace(h.read(RendezvousEnvPath)), "\n")...)
	require.NoError(t, os.WriteFile(h.path("answers"), []byte(strings.Join([]string{
		"000", // not listening yet
		"000",
		`500 {"code":500,"href":"","id":500,"kind":"Error","reason":"malformed auth_scheme claim"}`,
		`500 {"code":500,"href":"","id":500,"kind":"Error","reason":"malformed auth_scheme claim"}`,
		`401 {"code":401,"reason":"failed to validate token"}`,
		"200 []",
	}, "\n")+"\n"), 0o644))
	// curl answers the next line: a status (000: connection refused) and a
	// body, with --write-out's status last, as the real one does.
	h.fake("curl", `state=`+shellQuoted(h.dir)+`
n=$(cat "${state}/n" 2>/dev/null || echo 0); n=$((n + 1)); echo "${n}" >"${state}/n"
line=$(sed -n "${n}p" "${state}/answers")
code=${line%% *}; body=${line#* }; [ "${body}" = "${line}" ] && body=""
writeout=""; fail=""
while [ $# -gt 0 ]; do
	case "$1" in
	--write-out) writeout=$2; shift ;;
	--fail) fail=1 ;;
	esac
	shift
done
if [ "${code}" = 000 ]; then echo "curl: (7) Failed to connect" >&2; printf '%b' "${writeout//%\{http_code\}/000}"; exit 7; fi
printf '%s' "${body}"
printf '%b' "${writeout//%\{http_code\}/${code}}"
[ -n "${fail}" ] && [ "${code}" -ge 400 ] && exit 22
exit 0`)
	h.fake("sleep", "")
	out, err := h.run(waitServiceScript)
	require.NoError(t, err, out)
	assert.Equal(t, 1, strings.Count(out, "malformed auth_scheme claim"), "printed once while it stays the same:\n%s", out)
	assert.Contains(t, out, "answered HTTP 500")
	assert.Contains(t, out, "answered HTTP 401")
	assert.Contains(t, out, "failed to validate token")
	assert.Contains(t, out, "Waiting for assisted-service at")
	assert.True(t, strings.HasSuffix(strings.TrimSpace(out), "assisted-service is up"), out)
}

// TestStartAgentSaysWhatTheServiceAnswered: start-agent.sh waits for the
// infra-env as wait-for-assisted-service.sh waits for the service: an error
// answer is printed with the service's message, once per change, and an
// empty list is "Waiting for the infra-env"; then the agent is started for
// the first infra-env.
func TestStartAgentSaysWhatTheServiceAnswered(t *testing.T) {
	cfg, _ := mustBuild(t, haInput())
	h := newScriptHost(t, cfg)
	h.env = append(h.env, strings.Split(strings.TrimSpace(h.read(RendezvousEnvPath)), "\n")...)
	const ie = "6a3f9b2e-1c4d-4e5f-8a9b-0c1d2e3f4a5b"
	require.NoError(t, os.WriteFile(h.path("answers"), []byte(strings.Join([]string{
		"000",
		`401 {"code":401,"reason":"failed to validate token"}`,
		`401 {"code":401,"reason":"failed to validate token"}`,
		"200 []",
		`200 [{"id":"` + ie + `","name":"x"}]`,
	}, "\n")+"\n"), 0o644))
	h.fake("curl", `state=`+shellQuoted(h.dir)+`
n=$(cat "${state}/n" 2>/dev/null || echo 0); n=$((n + 1)); echo "${n}" >"${state}/n"
line=$(sed -n "${n}p" "${state}/answers")
code=${line%% *}; body=${line#* }; [ "${body}" = "${line}" ] && body=""
writeout=""
while [ $# -gt 0 ]; do
	case "$1" in
	--write-out) writeout=$2; shift ;;
	esac
	shift
done
if [ "${code}" = 000 ]; then echo "curl: (7) Failed to connect" >&2; printf '%b' "${writeout//%\{http_code\}/000}"; exit 7; fi
printf '%s' "${body}"
printf '%b' "${writeout//%\{http_code\}/${code}}"
exit 0`)
	h.fake("sleep", "")
	h.write("/usr/local/bin/release-image.sh", "image_for() { echo \"quay.io/lab/agent@sha256:1 ($1)\"; }\n", 0o644)
	h.write("/usr/local/bin/agent", "#!/bin/bash\necho \"agent $*\"\n", 0o755)
	out, err := h.run("/usr/local/bin/start-agent.sh")
	require.NoError(t, err, out)
	assert.Contains(t, out, "Waiting for assisted-service at")
	assert.Equal(t, 1, strings.Count(out, "answered HTTP 401: {\"code\":401,\"reason\":\"failed to validate token\"}"), "printed once while it stays the same:\n%s", out)
	assert.Contains(t, out, "Waiting for the infra-env to be registered at")
	assert.Contains(t, out, "Starting the agent for infra-env "+ie)
	assert.Contains(t, out, "agent --url ")
	assert.Contains(t, out, "--infra-env-id "+ie+" --agent-version quay.io/lab/agent@sha256:1 (agent-installer-node-agent) --insecure=true")
}
