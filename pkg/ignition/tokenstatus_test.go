package ignition

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const tokenStatusScript = "/usr/local/bin/agent-auth-token-status.sh"

// tokenStatusHost runs agent-auth-token-status.sh with the add-nodes.env
// the ISO carries in its environment (as its unit's EnvironmentFile) and a
// clock that reads the next line of clock (Unix seconds; the last one
// repeats). Each sleep keeps the console status as it was then
// (issue.at-sleep-N); the last sleep ends the script.
func tokenStatusHost(t *testing.T, expiry string, clock []string, sleeps int) *scriptHost {
	t.Helper()
	cfg, _ := mustBuild(t, addNodesInput())
	h := newScriptHost(t, cfg)
	h.env = append(h.env, "AUTH_TOKEN_EXPIRY="+expiry)
	require.NoError(t, os.WriteFile(h.path("clock"), []byte(strings.Join(clock, "\n")+"\n"), 0o644))
	state := shellQuoted(h.dir)
	h.fake("date", `for a in "$@"; do
	case "$a" in -d|--date|--date=*) command -p date "$@"; exit ;; esac
done
n=$(grep -c '^date ' `+state+`/calls.log)
total=$(wc -l <`+state+`/clock)
line=$((n - 1 < total ? n - 1 : total))
[ "${line}" -ge 1 ] || line=1
sed -n "${line}p" `+state+`/clock`)
	h.fake("agetty", "")
	h.fake("sleep", `n=$(grep -c '^sleep ' `+state+`/calls.log)
cp `+shellQuoted(h.file("/etc/issue.d/65_token.issue"))+` `+state+`/issue.at-sleep-${n} 2>/dev/null || true
if [ "${n}" -ge `+strconv.Itoa(sleeps)+` ]; then kill -TERM "${PPID}"; fi`)
	return h
}

// The node ISO's tokens expire (AUTH_TOKEN_EXPIRY); once they have, the
// host's own assisted-service refuses its agent, and the console says so
// and what to do, as upstream's agent-auth-token-status.sh
// (openshift/installer data/data/agent/files/usr/local/bin, commit
// 5e705f0f). A clock set back before the expiry (chrony correcting a wrong
// hardware clock) clears it again.
func TestTokenStatusWarnsOnTheConsoleOnceTheTokensExpire(t *testing.T) {
	// 2026-11-27T12:00:00Z is 1795780800.
	h := tokenStatusHost(t, "2026-11-27T12:00:00Z", []string{"1795780700", "1795780801", "1795780700"}, 3)
	out, _ := h.run(tokenStatusScript)
	assert.Contains(t, out, "expire at 2026-11-27T12:00:00Z")

	_, err := os.Stat(h.path("issue.at-sleep-1"))
	assert.True(t, os.IsNotExist(err), "no warning before the expiry:\n%s", out)
	issue, err := os.ReadFile(h.path("issue.at-sleep-2"))
	require.NoError(t, err, "no warning once the tokens expired:\n%s", out)
	assert.Contains(t, string(issue), "The authentication token of this ISO expired at 2026-11-27T12:00:00Z")
	assert.Contains(t, string(issue), `"agentiso node-image create"`, "the fix is on the console")
	assert.Contains(t, string(issue), "boot this host from it")
	_, err = os.Stat(h.path("issue.at-sleep-3"))
	assert.True(t, os.IsNotExist(err), "the warning is cleared when the clock is set back before the expiry:\n%s", out)
}

func TestTokenStatusRefusesAnExpiryThatIsNoDate(t *testing.T) {
	h := tokenStatusHost(t, "in two days", []string{"1795780700"}, 1)
	out, err := h.run(tokenStatusScript)
	require.Error(t, err)
	assert.Contains(t, out, `AUTH_TOKEN_EXPIRY "in two days" in /etc/assisted/add-nodes.env is not a date`)
	assert.NotContains(t, h.calls(), "sleep ")
}
