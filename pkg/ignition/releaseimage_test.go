package ignition

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const releaseDownloadScript = "/usr/local/bin/release-image-download.sh"

// serviceRecord is one entry of a service record file.
type serviceRecord struct {
	Timestamp    string `json:"timestamp"`
	Phase        string `json:"phase"`
	Stage        string `json:"stage"`
	Result       string `json:"result"`
	ErrorMessage string `json:"errorMessage"`
}

func (h *scriptHost) records(service string) []serviceRecord {
	h.t.Helper()
	b := h.read("/var/log/openshift/" + service + ".json")
	require.NotEmpty(h.t, b, "no service records for %s", service)
	var out []serviceRecord
	require.NoError(h.t, json.Unmarshal([]byte(b), &out), b)
	for _, r := range out {
		assert.Regexp(h.t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`, r.Timestamp)
	}
	return out
}

// phases renders records as "phase[/stage][=result]" words.
func phases(rs []serviceRecord) string {
	var out []string
	for _, r := range rs {
		s := r.Phase
		if r.Stage != "" {
			s += "/" + r.Stage
		}
		if r.Result != "" {
			s += "=" + r.Result
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// releaseHost runs release-image-download.sh as assisted-service-pod's
// ExecStartPre would: podman fails the first pullFailures pulls, the image
// is built for imageArch and the host is hostArch (uname -m). Each sleep
// keeps a copy of the console status file.
func releaseHost(t *testing.T, pullFailures int, exists bool, imageArch, hostArch string) *scriptHost {
	t.Helper()
	cfg, _ := mustBuild(t, snoInput())
	h := newScriptHost(t, cfg)
	h.write("/proc/self/cgroup", "0::/system.slice/assisted-service-pod.service\n", 0o644)
	state := shellQuoted(h.dir)
	existsExit := "1"
	if exists {
		existsExit = "0"
	}
	h.fake("podman", `case "$1" in
image) exit `+existsExit+` ;;
pull)
	n=$(grep -c '^podman pull ' `+state+`/calls.log)
	if [ "${n}" -le `+strconv.Itoa(pullFailures)+` ]; then
		echo "Trying to pull quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64..." >&2
		echo "Error: initializing source docker://quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64: pinging container registry quay.io: Get \"https://quay.io/v2/\": dial tcp: lookup quay.io: no such host" >&2
		exit 125
	fi
	echo 0f1e2d3c4b5a
	;;
inspect) printf '[{"Id":"0f1e","Architecture":"%s","Os":"linux"}]\n' `+shellQuoted(imageArch)+` ;;
*) exit 125 ;;
esac`)
	h.fake("uname", "echo "+shellQuoted(hostArch))
	h.fake("agetty", "")
	h.fake("journalctl", `printf '%s\n' "Pulling the release image" "podman said no" "exiting"`)
	h.fake("sleep", `n=$(grep -c '^sleep ' `+state+`/calls.log)
cp `+shellQuoted(h.file("/etc/issue.d/50_release-image.issue"))+` `+state+`/issue.at-sleep-${n} 2>/dev/null || true`)
	return h
}

func TestReleaseImageDownloadTellsTheConsoleWhyThePullFails(t *testing.T) {
	h := releaseHost(t, 2, false, "amd64", "x86_64")
	out, err := h.run(releaseDownloadScript)
	require.NoError(t, err, out)
	assert.Equal(t, 3, strings.Count(h.calls(), "podman pull --quiet quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64\n"))

	issue, err := os.ReadFile(h.path("issue.at-sleep-1"))
	require.NoError(t, err, "no console status while the pull fails:\n%s", out)
	assert.Contains(t, string(issue), "Unable to pull the OpenShift release image quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64, retrying:")
	assert.Contains(t, string(issue), "lookup quay.io: no such host", "podman's reason is on the console")
	assert.NotContains(t, string(issue), "Trying to pull")
	assert.Empty(t, h.read("/etc/issue.d/50_release-image.issue"), "the console status is cleared once the pull works")

	rs := h.records("assisted-service-pod")
	assert.Equal(t, "service start, stage start/pull-release-image, stage end/pull-release-image=failure, "+
		"stage start/pull-release-image, stage end/pull-release-image=success, "+
		"stage start/release-image-architecture, stage end/release-image-architecture=success, service end=success", phases(rs))
	assert.Contains(t, rs[2].ErrorMessage, "attempt 1: Error: initializing source")
}

// The whole podman error reaches the journal (the script's output), as
// podman's own stderr does upstream: containers/image puts the reason that
// matters in the middle of a long message (here the mirror's x509 failure,
// the usual one in an air gap without the CA), past the console's cut.
func TestReleaseImageDownloadJournalsPodmansWholeError(t *testing.T) {
	h := releaseHost(t, 1, false, "amd64", "x86_64")
	digest := "sha256:" + strings.Repeat("7", 64)
	long := `Error: initializing source docker://quay.io/openshift-release-dev/ocp-release@` + digest +
		`: (Mirrors also failed: [mirror.example:5000/openshift-release-dev/ocp-release@` + digest +
		`: pinging container registry mirror.example:5000: Get "https://mirror.example:5000/v2/": tls: failed to verify certificate: x509: certificate signed by unknown authority]): quay.io/openshift-release-dev/ocp-release@` + digest +
		`: pinging container registry quay.io: Get "https://quay.io/v2/": dial tcp: lookup quay.io: no such host`
	require.Greater(t, strings.Index(long, "x509"), 300)
	state := shellQuoted(h.dir)
	h.fake("podman", `case "$1" in
image) exit 1 ;;
pull)
	if [ "$(grep -c '^podman pull ' `+state+`/calls.log)" -le 1 ]; then
		echo `+shellQuoted(long)+` >&2
		exit 125
	fi
	echo 0f1e2d3c4b5a ;;
inspect) printf '[{"Id":"0f1e","Architecture":"amd64","Os":"linux"}]\n' ;;
*) exit 125 ;;
esac`)
	out, err := h.run(releaseDownloadScript)
	require.NoError(t, err, out)
	assert.Contains(t, out, long, "podman's whole error is in the journal")
}

func TestReleaseImageDownloadChecksTheArchitecture(t *testing.T) {
	h := releaseHost(t, 0, true, "arm64", "x86_64")
	out, err := h.run(releaseDownloadScript)
	require.Error(t, err, "a release for another architecture must fail:\n%s", out)
	assert.NotContains(t, h.calls(), "podman pull", "the image is there already")
	issue := h.read("/etc/issue.d/50_release-image.issue")
	assert.Contains(t, issue, "is for architecture arm64, but this host is amd64")
	rs := h.records("assisted-service-pod")
	assert.Equal(t, "service start, stage start/pull-release-image, stage end/pull-release-image=success, "+
		"stage start/release-image-architecture, stage end/release-image-architecture=failure, service end=failure", phases(rs))
	last := rs[len(rs)-1]
	assert.Contains(t, last.ErrorMessage, "exit status 1")
	assert.Contains(t, last.ErrorMessage, "podman said no", "the unit's last journal lines are kept")

	for _, tc := range []struct{ image, host string }{{"arm64", "aarch64"}, {"ppc64le", "ppc64le"}, {"s390x", "s390x"}, {"amd64", "x86_64"}} {
		h := releaseHost(t, 0, true, tc.image, tc.host)
		// A status left by an earlier run (killed while retrying) goes
		// once the image is there.
		h.write("/etc/issue.d/50_release-image.issue", "Unable to pull the OpenShift release image\n", 0o644)
		out, err := h.run(releaseDownloadScript)
		require.NoError(t, err, "%s image on a %s host:\n%s", tc.image, tc.host, out)
		assert.Empty(t, h.read("/etc/issue.d/50_release-image.issue"))
	}
}

func TestServiceRecordsOutsideAUnit(t *testing.T) {
	// Run by hand (no service in the cgroup), the records are kept under
	// the script's name; a stage left open when the script fails is closed
	// as a failure.
	cfg, _ := mustBuild(t, snoInput())
	h := newScriptHost(t, cfg)
	h.write("/proc/self/cgroup", "0::/user.slice/user-0.slice/session-1.scope\n", 0o644)
	h.write("/usr/local/bin/try.sh", "#!/bin/bash\nset -e\nsource \"${AGENT_ROOT}/usr/local/bin/bootstrap-service-record.sh\"\n"+
		"record_service_stage_start one\nrecord_service_stage_success\nrecord_service_stage_start two\nfalse\n", 0o755)
	out, err := h.run("/usr/local/bin/try.sh")
	require.Error(t, err, out)
	rs := h.records("try")
	assert.Equal(t, "service start, stage start/one, stage end/one=success, stage start/two, stage end/two=failure, service end=failure", phases(rs))
	assert.Equal(t, "exit status 1", rs[len(rs)-1].ErrorMessage)

	// A record file that cannot be written never fails the script.
	h.write("/usr/local/bin/ok.sh", "#!/bin/bash\nset -eu\nsource \"${AGENT_ROOT}/usr/local/bin/bootstrap-service-record.sh\"\nrecord_service_stage_start one\nrecord_service_stage_success\necho done\n", 0o755)
	require.NoError(t, os.RemoveAll(h.file("/var/log/openshift")))
	require.NoError(t, os.WriteFile(filepath.Join(h.file("/var/log"), "openshift"), []byte("not a directory"), 0o644))
	out, err = h.run("/usr/local/bin/ok.sh")
	require.NoError(t, err, out)
	assert.Contains(t, out, "done")
}

func TestServiceRecordsStayBounded(t *testing.T) {
	// A unit that fails and restarts for hours (agent.service restarts
	// every 3 seconds) must not fill the live system's memory: past 1 MiB
	// the record file is moved to <service>.json.1 and a new one starts.
	cfg, _ := mustBuild(t, snoInput())
	h := newScriptHost(t, cfg)
	h.write("/proc/self/cgroup", "0::/system.slice/agent.service\n", 0o644)
	big := `[` + strings.Repeat(`{"timestamp":"2026-11-24T12:00:00Z","phase":"service start"},`, 20000) + `{"phase":"last"}]`
	require.Greater(t, len(big), 1<<20)
	h.write("/var/log/openshift/agent.json", big, 0o644)
	h.write("/usr/local/bin/ok.sh", "#!/bin/bash\nsource \"${AGENT_ROOT}/usr/local/bin/bootstrap-service-record.sh\"\n", 0o755)
	out, err := h.run("/usr/local/bin/ok.sh")
	require.NoError(t, err, out)
	assert.Equal(t, big, h.read("/var/log/openshift/agent.json.1"))
	assert.Equal(t, "service start, service end=success", phases(h.records("agent")))
}
