package ignition

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/require"
)

// scriptHost runs the shipped scripts, unchanged, with bash against a
// scratch copy of the live ISO's files: every file of the config is
// written under root, which the scripts see as AGENT_ROOT (the prefix
// every path in them carries), and the commands of RHCOS the scripts call
// (curl, podman, sleep, ...) are fakes in bin, first on PATH. Fakes append
// their calls to calls.log.
type scriptHost struct {
	t    *testing.T
	dir  string
	root string
	bin  string
	env  []string
}

func newScriptHost(t *testing.T, cfg types.Config) *scriptHost {
	t.Helper()
	requireTool(t, "bash")
	requireTool(t, "jq")
	dir := t.TempDir()
	h := &scriptHost{t: t, dir: dir, root: filepath.Join(dir, "root"), bin: filepath.Join(dir, "bin")}
	require.NoError(t, os.MkdirAll(h.bin, 0o755))
	for _, f := range cfg.Storage.Files {
		body, _ := fileContents(t, cfg, f.Path)
		p := filepath.Join(h.root, f.Path)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, body, fs.FileMode(*f.Mode)))
	}
	for _, d := range cfg.Storage.Directories {
		require.NoError(t, os.MkdirAll(filepath.Join(h.root, d.Path), 0o755))
	}
	return h
}

// fake installs a bash command named name with the given body.
func (h *scriptHost) fake(name, body string) {
	h.t.Helper()
	script := "#!/bin/bash\nprintf '%s\\n' \"" + name + " $*\" >>" + shellQuoted(h.path("calls.log")) + "\n" + body + "\n"
	require.NoError(h.t, os.WriteFile(filepath.Join(h.bin, name), []byte(script), 0o755))
}

// path returns p inside the host's scratch directory.
func (h *scriptHost) path(p string) string { return filepath.Join(h.dir, p) }

// file returns p (an absolute live-ISO path) under root.
func (h *scriptHost) file(p string) string { return filepath.Join(h.root, p) }

// read returns the contents of the live-ISO path p, "" when absent.
func (h *scriptHost) read(p string) string {
	b, err := os.ReadFile(h.file(p))
	if os.IsNotExist(err) {
		return ""
	}
	require.NoError(h.t, err)
	return string(b)
}

// write writes the live-ISO path p.
func (h *scriptHost) write(p, body string, mode fs.FileMode) {
	h.t.Helper()
	require.NoError(h.t, os.MkdirAll(filepath.Dir(h.file(p)), 0o755))
	require.NoError(h.t, os.WriteFile(h.file(p), []byte(body), mode))
}

// calls returns the fakes' calls, one per line.
func (h *scriptHost) calls() string {
	b, err := os.ReadFile(h.path("calls.log"))
	if os.IsNotExist(err) {
		return ""
	}
	require.NoError(h.t, err)
	return string(b)
}

// run runs the live-ISO script p with args and returns its combined output.
// It fails the test after 5 minutes: a guard against a script that never
// ends, not a measure (under a loaded machine, nice 19, a script of a few
// dozen fake commands took over 2 minutes).
func (h *scriptHost) run(p string, args ...string) (string, error) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout())
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{h.file(p)}, args...)...)
	cmd.Dir = h.dir
	cmd.Env = append([]string{
		"PATH=" + h.bin + ":" + os.Getenv("PATH"),
		"AGENT_ROOT=" + h.root,
		"HOME=" + h.dir,
		"TMPDIR=" + h.dir,
	}, h.env...)
	out, err := cmd.CombinedOutput()
	require.NoError(h.t, ctx.Err(), "%s did not finish:\n%s", p, out)
	return string(out), err
}

// fakeAssistedService installs a curl that answers like assisted-service:
// GET .../clusters with the cluster, GET .../infra-envs/<id>/hosts with the
// next line of responses (the last one repeats), and POST
// .../actions/install with HTTP 202, after which the cluster is installed.
// Every other request answers 404.
func (h *scriptHost) fakeAssistedService(hostResponses []string) {
	h.t.Helper()
	require.NoError(h.t, os.WriteFile(h.path("hosts.responses"), []byte(strings.Join(hostResponses, "\n")+"\n"), 0o644))
	h.fake("curl", `
url="${*: -1}"
method=GET
writeout=""
while [ $# -gt 0 ]; do
	case "$1" in
	--request) method=$2; shift ;;
	--write-out) writeout=$2; shift ;;
	esac
	shift
done
state=`+shellQuoted(h.dir)+`
case "${method} ${url}" in
"GET "*/clusters)
	if [ -f "${state}/installed" ]; then s=installed; else s=ready; fi
	printf '[{"id":"c1","status":"%s"}]\n' "${s}"
	;;
"GET "*/infra-envs/*/hosts)
	n=$(cat "${state}/hosts.count" 2>/dev/null || echo 0)
	total=$(wc -l <"${state}/hosts.responses")
	line=$((n < total ? n + 1 : total))
	echo $((n + 1)) >"${state}/hosts.count"
	sed -n "${line}p" "${state}/hosts.responses"
	;;
"POST "*/actions/install)
	touch "${state}/installed"
	[ -n "${writeout}" ] && printf 202
	;;
*)
	[ -n "${writeout}" ] && printf 404
	exit 22
	;;
esac
`)
}

// hostsJSON returns an infra-env host list with one host per status.
func hostsJSON(statuses ...string) string {
	var parts []string
	for i, s := range statuses {
		parts = append(parts, `{"id":"h`+string(rune('0'+i))+`","status":"`+s+`"}`)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// timeout is run's bound: $SCRIPTHOST_TIMEOUT (to see a hang fail
// fast while developing), else 5 minutes.
func (h *scriptHost) timeout() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("SCRIPTHOST_TIMEOUT")); err == nil && d > 0 {
		return d
	}
	return 5 * time.Minute
}
