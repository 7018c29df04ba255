package ignition

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const setHostnameScript = "/usr/local/bin/set-hostname.sh"

// hostnameHost is a host whose only NIC has the MAC of the first entry in
// the ISO's /etc/assisted/hostnames; it returns the host and the name that
// entry gives. hostnamectl fails its first failures calls the way a
// systemd-hostnamed that does not answer makes it fail, then succeeds.
func hostnameHost(t *testing.T, failures int) (*scriptHost, string) {
	t.Helper()
	cfg, _ := mustBuild(t, haInput())
	h := newScriptHost(t, cfg)
	entries, err := os.ReadDir(h.file(HostnamesDir))
	require.NoError(t, err)
	require.NotEmpty(t, entries, "the HA input names its hosts")
	mac := entries[0].Name()
	name := strings.TrimSpace(h.read(filepath.Join(HostnamesDir, mac)))
	require.NotEmpty(t, name)
	h.fake("ip", `echo '[{"ifname":"lo","address":"00:00:00:00:00:00"},{"ifname":"enp1s0","address":"`+strings.ToUpper(mac)+`"}]'`)
	h.fake("hostnamectl", `n=$(grep -c '^hostnamectl ' `+shellQuoted(h.path("calls.log"))+`)
if [ "${n}" -le `+strconv.Itoa(failures)+` ]; then echo "Could not set pretty hostname: Connection timed out" >&2; exit 1; fi`)
	h.fake("hostname", "")
	h.fake("sleep", "")
	return h, name
}

func TestSetHostnameRetriesAHostnamedThatDoesNotAnswer(t *testing.T) {
	// The lab's serve-boot run of 28 Nov 2026: on a starved host the first
	// hostnamectl timed out and failed the unit.
	h, name := hostnameHost(t, 2)
	out, err := h.run(setHostnameScript)
	require.NoError(t, err, out)
	assert.Contains(t, out, "Setting hostname to "+name)
	assert.Contains(t, out, "attempt 2 of 6")
	assert.Equal(t, strings.Repeat("hostnamectl set-hostname "+name+"\n", 3), grepLines(h.calls(), "hostnamectl "))
	assert.Equal(t, "sleep 5\nsleep 5\n", grepLines(h.calls(), "sleep "))
	assert.Empty(t, grepLines(h.calls(), "hostname "), "hostnamectl answered: no fallback")
	assert.Empty(t, h.read("/etc/hostname"))
}

func TestSetHostnameWithoutHostnamed(t *testing.T) {
	h, name := hostnameHost(t, 9)
	h.env = append(h.env, "SET_HOSTNAME_TRIES=3", "SET_HOSTNAME_PAUSE=1")
	out, err := h.run(setHostnameScript)
	require.NoError(t, err, out)
	assert.Contains(t, out, "systemd-hostnamed did not answer")
	assert.Equal(t, strings.Repeat("hostnamectl set-hostname "+name+"\n", 3), grepLines(h.calls(), "hostnamectl "))
	assert.Equal(t, "sleep 1\nsleep 1\n", grepLines(h.calls(), "sleep "), "no pause after the last try")
	assert.Equal(t, "hostname "+name+"\n", grepLines(h.calls(), "hostname "))
	assert.Equal(t, name+"\n", h.read("/etc/hostname"))
	fi, err := os.Stat(h.file("/etc/hostname"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	left, err := filepath.Glob(h.file("/etc/.hostname.*"))
	require.NoError(t, err)
	assert.Empty(t, left, "no temporary file left")
}

func TestSetHostnameFailsWhenNothingCanSetIt(t *testing.T) {
	h, _ := hostnameHost(t, 9)
	h.env = append(h.env, "SET_HOSTNAME_TRIES=1")
	h.fake("hostname", "echo 'hostname: you must be root to change the host name' >&2; exit 1")
	out, err := h.run(setHostnameScript)
	require.Error(t, err, "the unit must fail when the hostname could not be set at all:\n%s", out)
}

func TestSetHostnameForAnUnknownHost(t *testing.T) {
	h, _ := hostnameHost(t, 0)
	h.fake("ip", `echo '[{"ifname":"enp1s0","address":"52:54:00:ff:ff:ff"}]'`)
	out, err := h.run(setHostnameScript)
	require.NoError(t, err, out)
	assert.Contains(t, out, "No hostname configured for this host's MAC addresses")
	assert.Empty(t, grepLines(h.calls(), "hostnamectl "))
}

// grepLines returns the lines of s that start with prefix, each ending in a
// newline.
func grepLines(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
