package ignition_test

// Every podman command the agent ISO runs, checked twice: statically
// against the flags podman 4.3 (RHCOS 9, Debian bookworm) accepts and the
// flag combinations it refuses, and, where podman is installed (always in
// CI: hack/install-deps.sh installs it), by running each command for real
// against a throw-away local image in a private container store.

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	v32 "github.com/coreos/ignition/v2/config/v3_2"
	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/ignition"
)

// renderedConfig is one agent ISO Ignition config under test.
type renderedConfig struct {
	name string
	cfg  types.Config
}

// renderedConfigs returns the configs of the test fixtures and of every
// bundled example (rendered through the asset graph as `agentiso create
// ignition` does).
func renderedConfigs(t *testing.T) []renderedConfig {
	t.Helper()
	var out []renderedConfig
	fx := ignition.FixtureInputs()
	names := make([]string, 0, len(fx))
	for n := range fx {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		cfg, _, err := ignition.Build(fx[n])
		require.NoError(t, err, n)
		out = append(out, renderedConfig{"fixture-" + n, cfg})
	}
	examples, err := filepath.Glob("../../examples/*")
	require.NoError(t, err)
	require.NotEmpty(t, examples)
	for _, ex := range examples {
		out = append(out, renderedConfig{"example-" + filepath.Base(ex), renderExample(t, ex)})
	}
	return out
}

func renderExample(t *testing.T, src string) types.Config {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
	s, err := asset.NewStore(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	// agentiso pins no default release: a made-up digest of a supported
	// release, given offline with its version.
	rel, err := agent.OfflineRelease("quay.io/openshift-release-dev/ocp-release@sha256:4200000000000000000000000000000000000000000000000000000000000000", "4.20.0")
	require.NoError(t, err)
	require.NoError(t, s.Provide(rel))
	a, err := s.Fetch(context.Background(), &agent.AgentIgnition{})
	require.NoError(t, err, src)
	cfg, rpt, err := v32.Parse(a.(*agent.AgentIgnition).Config)
	require.NoError(t, err, rpt.String())
	return cfg
}

// decodeFile returns the decoded contents of an Ignition file entry.
func decodeFile(t *testing.T, f types.File) []byte {
	t.Helper()
	res := []types.Resource{f.Contents}
	if f.Contents.Source == nil {
		res = f.Append
	}
	var out []byte
	for _, r := range res {
		require.NotNil(t, r.Source, f.Path)
		src := *r.Source
		comma := strings.IndexByte(src, ',')
		require.Positive(t, comma, f.Path)
		raw, err := base64.StdEncoding.DecodeString(src[comma+1:])
		require.NoError(t, err, f.Path)
		if r.Compression != nil && *r.Compression == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(raw))
			require.NoError(t, err, f.Path)
			raw, err = io.ReadAll(zr)
			require.NoError(t, err, f.Path)
		}
		out = append(out, raw...)
	}
	return out
}

// podmanCall is one podman invocation found in a unit or a script.
type podmanCall struct {
	unit string   // the unit holding the line, "" for a script
	key  string   // "ExecStart", "ExecStartPre", ... or the script path
	args []string // the words after "podman"; script variables are kept as "$..."
}

func (c podmanCall) where() string {
	if c.unit != "" {
		return c.unit + " " + c.key
	}
	return c.key
}

func (c podmanCall) String() string { return c.where() + ": podman " + strings.Join(c.args, " ") }

var execKeyRE = regexp.MustCompile(`^(Exec[A-Za-z]+)=[-@:+!|]*(.*)$`)

// unitExecLines returns a unit's Exec*= lines as key and words.
func unitExecLines(t *testing.T, unit, body string) (keys []string, words [][]string) {
	t.Helper()
	for _, line := range strings.Split(body, "\n") {
		m := execKeyRE.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		w, rest, err := splitWords(m[2], false)
		require.NoError(t, err, "%s: %s", unit, line)
		require.Empty(t, rest, "%s: %s", unit, line)
		keys = append(keys, m[1])
		words = append(words, w)
	}
	return keys, words
}

// podmanScriptRE finds podman used as a command in a shell line.
var podmanScriptRE = regexp.MustCompile(`(?:^|[\s;|&!(])podman\s`)

// podmanCalls returns every podman invocation of cfg's units and scripts.
func podmanCalls(t *testing.T, cfg types.Config) []podmanCall {
	t.Helper()
	var calls []podmanCall
	for _, u := range cfg.Systemd.Units {
		if u.Contents == nil {
			continue
		}
		keys, words := unitExecLines(t, u.Name, *u.Contents)
		for i, w := range words {
			if len(w) > 0 && (w[0] == "/usr/bin/podman" || w[0] == "podman") {
				calls = append(calls, podmanCall{unit: u.Name, key: keys[i], args: w[1:]})
			}
		}
	}
	for _, f := range cfg.Storage.Files {
		if !strings.HasPrefix(f.Path, "/usr/local/bin/") {
			continue
		}
		body := strings.ReplaceAll(string(decodeFile(t, f)), "\\\n", " ")
		for _, line := range strings.Split(body, "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "#") {
				continue
			}
			for _, loc := range podmanScriptRE.FindAllStringIndex(line, -1) {
				rest := line[loc[1]:]
				w, _, err := splitWords(rest, true)
				require.NoError(t, err, "%s: %s", f.Path, line)
				calls = append(calls, podmanCall{key: f.Path, args: w})
			}
		}
	}
	return calls
}

// redirectionRE matches a shell redirection at a word start: 2>&1,
// >/dev/null, 2>>"$log", < file.
var redirectionRE = regexp.MustCompile(`^[0-9]*(?:>>|>|<)(?:&[0-9-]+|\s*(?:"[^"]*"|'[^']*'|[^\s;|&)]+))`)

// splitWords splits s into words as systemd (and, for plain words, bash)
// do: whitespace separates, single and double quotes group, a backslash
// escapes the next character. With shell set, an unquoted ; | & ) or #
// at a word start ends the command and is returned in rest; $(...) and
// ${...} stay inside the word verbatim, and redirections are dropped.
func splitWords(s string, shell bool) (words []string, rest string, err error) {
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if shell && !inWord {
			if m := redirectionRE.FindString(s[i:]); m != "" {
				i += len(m) - 1
				continue
			}
		}
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, "", fmt.Errorf("unterminated single quote in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, "", fmt.Errorf("unterminated double quote in %q", s)
			}
			inWord = true
		case shell && c == '$' && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{'):
			open, closing := s[i+1], byte(')')
			if open == '{' {
				closing = '}'
			}
			depth := 0
			j := i + 1
			for ; j < len(s); j++ {
				if s[j] == open {
					depth++
				} else if s[j] == closing {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if j >= len(s) {
				return nil, "", fmt.Errorf("unterminated $%c in %q", open, s)
			}
			cur.WriteString(s[i : j+1])
			i = j
			inWord = true
		case shell && strings.IndexByte(";|&)", c) >= 0, shell && c == '#' && !inWord:
			flush()
			return words, s[i:], nil
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words, "", nil
}

// podmanFlags lists, per subcommand, the flags the agent ISO may use and
// whether each takes a value. All exist in podman 4.3 (the real-podman test
// checks them against `podman <subcommand> --help`).
var podmanFlags = map[string]map[string]bool{
	"run": {
		"--net": true, "--network": true, "--rm": false, "--restart": true, "--pod-id-file": true,
		"--replace": false, "--name": true, "-v": true, "--volume": true, "--env": true, "-e": true,
		"--env-file": true, "--user": true, "-u": true, "--cidfile": true, "--cgroups": true,
		"--log-driver": true, "--sdnotify": true, "-d": false, "--detach": false, "--privileged": false,
		"--quiet": false, "-q": false, "--pull": true, "--entrypoint": true, "--security-opt": true,
	},
	"pod create":       {"--infra-conmon-pidfile": true, "--pod-id-file": true, "--name": true, "--replace": false, "--infra": true},
	"pod start":        {"--pod-id-file": true},
	"pod stop":         {"--pod-id-file": true, "--ignore": false, "--time": true, "-t": true},
	"pod rm":           {"--pod-id-file": true, "--ignore": false, "--force": false, "-f": false},
	"stop":             {"--ignore": false, "--cidfile": true, "--time": true, "-t": true},
	"rm":               {"--force": false, "-f": false, "--ignore": false, "--cidfile": true},
	"pull":             {"--quiet": false, "-q": false},
	"image exists":     {},
	"container exists": {},
	"inspect":          {"--format": true, "-f": true, "--type": true},
	"ps":               {"--all": false, "-a": false},
	"exec":             {"--user": true, "-u": true, "--env": true, "-e": true},
}

// singleValued flags must not be given twice in one command.
var singleValued = map[string]bool{
	"--name": true, "--cidfile": true, "--pod-id-file": true, "--restart": true, "--net": true,
	"--network": true, "--user": true, "--log-driver": true, "--sdnotify": true, "--cgroups": true,
	"--infra-conmon-pidfile": true, "--pull": true,
}

// parsedCall is a podman call split into subcommand, flags and positionals.
type parsedCall struct {
	sub         string
	flags       []flagValue
	positionals []string
}

type flagValue struct{ name, value string }

func (p parsedCall) values(names ...string) []string {
	var out []string
	for _, f := range p.flags {
		for _, n := range names {
			if f.name == n {
				out = append(out, f.value)
			}
		}
	}
	return out
}

// parsePodman parses one call against podmanFlags; the error names the
// first unknown flag or missing value.
func parsePodman(args []string) (parsedCall, error) {
	var p parsedCall
	if len(args) == 0 {
		return p, fmt.Errorf("podman without a subcommand")
	}
	p.sub, args = args[0], args[1:]
	if (p.sub == "pod" || p.sub == "image" || p.sub == "container") && len(args) > 0 {
		p.sub, args = p.sub+" "+args[0], args[1:]
	}
	known, ok := podmanFlags[p.sub]
	if !ok {
		return p, fmt.Errorf("subcommand %q is not in the table of checked podman subcommands", p.sub)
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			// run stops at the image and exec at the container; the rest
			// is the command run in the container.
			p.positionals = append(p.positionals, args[i:]...)
			if p.sub != "run" && p.sub != "exec" {
				p.positionals = nil
				for _, r := range args[i:] {
					if strings.HasPrefix(r, "-") {
						return p, fmt.Errorf("flag %s after an argument", r)
					}
					p.positionals = append(p.positionals, r)
				}
			}
			break
		}
		name, value, hasValue := strings.Cut(a, "=")
		takes, ok := known[name]
		if !ok {
			return p, fmt.Errorf("podman %s: unknown flag %s", p.sub, name)
		}
		if takes && !hasValue {
			if i+1 >= len(args) {
				return p, fmt.Errorf("podman %s: flag %s needs a value", p.sub, name)
			}
			i++
			value = args[i]
		}
		p.flags = append(p.flags, flagValue{name, value})
	}
	return p, nil
}

// checkCall returns the problems of one call on its own.
func checkCall(c podmanCall) []string {
	p, err := parsePodman(c.args)
	if err != nil {
		return []string{c.String() + ": " + err.Error()}
	}
	var probs []string
	seen := map[string]int{}
	for _, f := range p.flags {
		seen[f.name]++
		if singleValued[f.name] && seen[f.name] == 2 {
			probs = append(probs, fmt.Sprintf("%s: %s given more than once", c, f.name))
		}
	}
	if p.sub == "run" {
		restart := p.values("--restart")
		if len(p.values("--rm")) > 0 && len(restart) > 0 && restart[len(restart)-1] != "no" && restart[len(restart)-1] != "" {
			probs = append(probs, c.String()+": --rm conflicts with --restart (podman exits 125)")
		}
		if len(p.positionals) == 0 {
			probs = append(probs, c.String()+": no image")
		}
	}
	return probs
}

// checkConfig returns every static podman problem of a config.
func checkConfig(t *testing.T, cfg types.Config) []string {
	t.Helper()
	var probs []string
	calls := podmanCalls(t, cfg)
	names := map[string]string{}
	for _, c := range calls {
		probs = append(probs, checkCall(c)...)
		p, err := parsePodman(c.args)
		if err != nil || p.sub != "run" || c.unit == "" {
			continue
		}
		for _, n := range p.values("--name") {
			if other, dup := names[n]; dup && other != c.unit {
				probs = append(probs, fmt.Sprintf("%s: container name %s is also used by %s", c, n, other))
			}
			names[n] = c.unit
		}
		// podman refuses to write a --cidfile that exists, so a unit
		// that may start twice must remove it first.
		for _, cid := range p.values("--cidfile") {
			if !unitRemovesFirst(t, cfg, c.unit, cid) {
				probs = append(probs, fmt.Sprintf("%s: --cidfile %s is not removed by an ExecStartPre rm -f, so a restart fails", c, cid))
			}
		}
	}
	return probs
}

func unitRemovesFirst(t *testing.T, cfg types.Config, unit, file string) bool {
	for _, u := range cfg.Systemd.Units {
		if u.Name != unit || u.Contents == nil {
			continue
		}
		keys, words := unitExecLines(t, u.Name, *u.Contents)
		for i, w := range words {
			if keys[i] != "ExecStartPre" || len(w) < 3 || path.Base(w[0]) != "rm" || w[1] != "-f" {
				continue
			}
			for _, a := range w[2:] {
				if a == file {
					return true
				}
			}
		}
	}
	return false
}

// oldApplyHostConfig is the apply-host-config.service that stopped every
// installation: --rm together with --restart.
const oldApplyHostConfig = `[Unit]
Description=Apply the configured role and installation disk to each host
[Service]
Type=oneshot
EnvironmentFile=/usr/local/share/assisted-service/agent-images.env
ExecStartPre=/usr/bin/mkdir -p %t/agent-installer /etc/assisted/hostconfig
ExecStart=/usr/bin/podman run --net host --restart=on-failure:10 --rm --pod-id-file=%t/assisted-service-pod.pod-id --replace --name=apply-host-config -v /etc/assisted/hostconfig:/etc/assisted/hostconfig -v %t/agent-installer:/var/run/agent-installer:z --env SERVICE_BASE_URL --env INFRA_ENV_ID --env WORKFLOW_TYPE --env USER_AUTH_TOKEN ${SERVICE_IMAGE} /usr/local/bin/agent-installer-client configure
`

// withUnit returns a copy of cfg with the unit's contents replaced.
func withUnit(cfg types.Config, name, contents string) types.Config {
	out := cfg
	out.Systemd.Units = append([]types.Unit(nil), cfg.Systemd.Units...)
	for i := range out.Systemd.Units {
		if out.Systemd.Units[i].Name == name {
			c := contents
			out.Systemd.Units[i].Contents = &c
		}
	}
	return out
}

func TestPodmanInvocationsStatic(t *testing.T) {
	for _, rc := range renderedConfigs(t) {
		t.Run(rc.name, func(t *testing.T) {
			calls := podmanCalls(t, rc.cfg)
			// The walk must see the pod, both containers and the scripts.
			var units, scripts int
			for _, c := range calls {
				if c.unit != "" {
					units++
				} else {
					scripts++
				}
			}
			assert.GreaterOrEqual(t, units, 10, "podman calls found in units")
			assert.GreaterOrEqual(t, scripts, 4, "podman calls found in scripts")
			assert.Empty(t, checkConfig(t, rc.cfg))
		})
	}
	t.Run("the old --rm --restart unit is caught", func(t *testing.T) {
		cfg, _, err := ignition.Build(ignition.FixtureInputs()["sno"])
		require.NoError(t, err)
		probs := checkConfig(t, withUnit(cfg, "apply-host-config.service", oldApplyHostConfig))
		require.NotEmpty(t, probs)
		assert.Contains(t, strings.Join(probs, "\n"), "--rm conflicts with --restart")
	})
	t.Run("checker", func(t *testing.T) {
		for _, tc := range []struct {
			args, want string
		}{
			{"run --bogus img", "unknown flag --bogus"},
			{"run --name a --name=b img", "--name given more than once"},
			{"run --rm --restart always img", "--rm conflicts with --restart"},
			{"run --rm", "no image"},
			{"pod start --pod-id-file", "needs a value"},
			{"image exists img --quiet", "flag --quiet after an argument"},
		} {
			w, _, err := splitWords(tc.args, false)
			require.NoError(t, err)
			assert.Contains(t, strings.Join(checkCall(podmanCall{key: "t", args: w}), "\n"), tc.want, tc.args)
		}
		assert.Empty(t, checkCall(podmanCall{key: "t", args: []string{"run", "--rm", "--restart=no", "img"}}))
		// Redirections in scripts are not podman's arguments.
		w, rest, err := splitWords(`pull --quiet "${IMG}" 2>&1 >/dev/null 2>>"$log x" < in); do`, true)
		require.NoError(t, err)
		assert.Equal(t, []string{"pull", "--quiet", "${IMG}"}, w)
		assert.Equal(t, "); do", rest)
	})
}

// optionErrorRE matches podman's messages for flags it refuses.
var optionErrorRE = regexp.MustCompile(`(?i)unknown (shorthand )?flag|conflicts with|invalid argument|flag needs an argument|mutually exclusive|if any flags in the group|cannot be used (together|with)|invalid config provided|unrecognized|accepts (at most|between)|requires at least`)

// environmentErrorRE matches the failures expected in the sandbox after
// podman accepted the command: the empty image has nothing to execute,
// this machine has no journald, the scratch host lacks files RHCOS has,
// and nothing listens for a registry on loopback.
var environmentErrorRE = regexp.MustCompile(`(?i)OCI (runtime|permission)|crun:|runc:|failed to initialize journal|executable file not found|starting some containers|no such container|no container with|no such pod|no pod with|pinging container registry|connection refused|initializing source|image not known`)

// podmanSandbox runs podman against a private store holding one empty
// local image.
type podmanSandbox struct {
	t       *testing.T
	podman  string
	dir     string
	global  []string
	env     []string
	image   string
	version string
}

const probeImage = "localhost/agentiso-probe:latest"

func newPodmanSandbox(t *testing.T) *podmanSandbox {
	t.Helper()
	podman := requireCITool(t, "podman")
	requireCITool(t, "catatonit", "/usr/libexec/podman/catatonit", "/usr/bin/catatonit")
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "" {
			t.Skip("running the rendered podman commands needs root (the units run as root); skipped outside CI")
		}
		t.Fatal("running the rendered podman commands needs root, but CI is set and the tests do not run as root")
	}
	// podman refuses a runroot longer than 50 characters, which
	// t.TempDir's paths are.
	dir, err := os.MkdirTemp("", "agentiso-podman-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := &podmanSandbox{t: t, podman: podman, dir: dir, image: probeImage}
	s.global = []string{
		"--root", filepath.Join(dir, "storage"), "--runroot", filepath.Join(dir, "runroot"),
		"--storage-driver", "vfs", "--cgroup-manager", "cgroupfs", "--events-backend", "file",
	}
	conf := filepath.Join(dir, "containers.conf")
	require.NoError(t, os.WriteFile(conf, []byte("[engine]\ninfra_image = \"\"\n"), 0o644))
	reg := filepath.Join(dir, "registries.conf")
	require.NoError(t, os.WriteFile(reg, []byte("unqualified-search-registries = []\n"), 0o644))
	s.env = append(os.Environ(), "CONTAINERS_CONF="+conf, "CONTAINERS_REGISTRIES_CONF="+reg)
	t.Cleanup(func() { // runs before the RemoveAll above
		// Pod infra containers mount a tmpfs under runroot: remove them
		// before the directory goes.
		_, _ = s.run(nil, "pod", "rm", "--all", "--force")
		_, _ = s.run(nil, "rm", "--all", "--force")
	})
	empty := filepath.Join(dir, "empty.tar")
	require.NoError(t, exec.Command("tar", "-cf", empty, "--files-from", "/dev/null").Run())
	// assisted-service.service runs the image's own command.
	out, err := s.run(nil, "import", "--change", `CMD ["/assisted-service"]`, empty, probeImage)
	require.NoError(t, err, "podman import: %s", out)
	v, err := s.run(nil, "version", "--format", "{{.Client.Version}}")
	require.NoError(t, err, v)
	s.version = strings.TrimSpace(v)
	return s
}

func (s *podmanSandbox) run(env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.podman, append(append([]string(nil), s.global...), args...)...)
	cmd.Env = append(append([]string(nil), s.env...), env...)
	cmd.Dir = s.dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func requireCITool(t *testing.T, name string, candidates ...string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c
		}
	}
	if os.Getenv("CI") == "" {
		t.Skipf("%s not found; run hack/install-deps.sh (the test is required when CI is set)", name)
	}
	t.Fatalf("%s not found but CI is set; hack/install-deps.sh must install it", name)
	return ""
}

// realCall is one rendered call made runnable in the sandbox: systemd
// specifiers expanded, images replaced by the probe image and host paths
// moved under the sandbox's copy of the config's files.
func (s *podmanSandbox) realCall(root, runDir string, c podmanCall) []string {
	unitName := c.unit
	spec := strings.NewReplacer("%t", runDir, "%n", unitName, "%N", strings.TrimSuffix(unitName, path.Ext(unitName)), "%%", "%")
	p, err := parsePodman(c.args)
	require.NoError(s.t, err, c.String())
	pathFlags := map[string]bool{"-v": true, "--volume": true, "--env-file": true, "--cidfile": true, "--pod-id-file": true, "--infra-conmon-pidfile": true}
	hostPath := func(v string) string {
		v = spec.Replace(v)
		if !strings.HasPrefix(v, "/") || strings.HasPrefix(v, s.dir) {
			return v
		}
		return filepath.Join(root, v)
	}
	args := strings.Fields(p.sub)
	for _, f := range p.flags {
		v := f.value
		if pathFlags[f.name] {
			if f.name == "-v" || f.name == "--volume" {
				src, rest, _ := strings.Cut(v, ":")
				src = hostPath(src)
				if _, err := os.Stat(src); os.IsNotExist(err) {
					// Present on RHCOS or created by an ExecStartPre.
					if strings.Contains(path.Base(src), ".") {
						require.NoError(s.t, os.MkdirAll(filepath.Dir(src), 0o755))
						require.NoError(s.t, os.WriteFile(src, nil, 0o644))
					} else {
						require.NoError(s.t, os.MkdirAll(src, 0o755))
					}
				}
				v = src + ":" + rest
			} else {
				v = hostPath(v)
			}
		} else {
			v = spec.Replace(v)
		}
		if v == "" && !strings.Contains(strings.Join(c.args, " "), f.name+"=") {
			args = append(args, f.name)
		} else {
			args = append(args, f.name+"="+v)
		}
	}
	for i, a := range p.positionals {
		if strings.Contains(a, "$") && (i == 0 || (p.sub != "run" && p.sub != "exec")) {
			a = s.image
		}
		args = append(args, spec.Replace(a))
	}
	return args
}

// runConfig runs every podman call of cfg in unit order: the pod first,
// then the containers, then the stop commands; an ExecStartPre rm -f is
// applied to the sandbox. It returns the option errors podman reported.
func (s *podmanSandbox) runConfig(cfg types.Config, seen map[string]bool, only ...string) []string {
	t := s.t
	root := filepath.Join(s.dir, "fs")
	runDir := filepath.Join(s.dir, "run")
	require.NoError(t, os.MkdirAll(runDir, 0o755))
	for _, f := range cfg.Storage.Files {
		p := filepath.Join(root, f.Path)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, decodeFile(t, f), 0o600))
	}
	// Files the live ISO writes at boot before these commands run
	// (set-node-zero.sh, get-container-images.sh).
	for p, body := range map[string]string{
		"/etc/assisted/node0": "# rendezvous host\nBOOTSTRAP_HOST_MAC=52:54:00:00:00:01\n",
		"/usr/local/share/assisted-service/agent-images.env": "SERVICE_IMAGE=" + s.image + "\nCONTROLLER_IMAGE=" + s.image +
			"\nINSTALLER_IMAGE=" + s.image + "\nAGENT_DOCKER_IMAGE=" + s.image + "\n",
	} {
		p = filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	}
	calls := podmanCalls(t, cfg)
	rank := func(c podmanCall) int {
		switch {
		case c.unit == "assisted-service-pod.service" && c.key != "ExecStop" && c.key != "ExecStopPost":
			return 0
		case c.key == "ExecStop" || c.key == "ExecStopPost":
			if c.unit == "assisted-service-pod.service" {
				return 4
			}
			return 3
		case c.unit == "":
			return 2
		}
		return 1
	}
	sort.SliceStable(calls, func(i, j int) bool { return rank(calls[i]) < rank(calls[j]) })
	var probs []string
	started, failed := map[string]bool{}, map[string]bool{}
	for _, c := range calls {
		// A command already run for another config is skipped, except the
		// pod's, which the containers need.
		if len(only) > 0 && c.unit != "assisted-service-pod.service" && !slices.Contains(only, c.unit) {
			continue
		}
		key := c.where() + " " + strings.Join(c.args, " ")
		if seen[key] && c.unit != "assisted-service-pod.service" {
			continue
		}
		seen[key] = true
		if c.unit != "" && !started[c.unit] {
			started[c.unit] = true
			s.applyRemovals(cfg, c.unit, root, runDir)
		}
		args := s.realCall(root, runDir, c)
		start := time.Now()
		out, err := s.run([]string{"SERVICE_BASE_URL=http://127.0.0.1:1/"}, args...)
		t.Logf("%s\n  -> %v (%s) %s", c, err, time.Since(start).Round(time.Millisecond), strings.TrimSpace(out))
		if c.key == "ExecStart" && err != nil {
			failed[c.unit] = true
		}
		switch {
		case failed[c.unit] && (c.key == "ExecStop" || c.key == "ExecStopPost") && strings.Contains(out, "reading CIDFile"):
			// Its container was never created (see ExecStart's failure).
		case optionErrorRE.MatchString(out):
			probs = append(probs, fmt.Sprintf("%s: podman %s refused it: %s", c, s.version, strings.TrimSpace(out)))
		case err != nil && !environmentErrorRE.MatchString(out) && !isExistsCheck(c):
			probs = append(probs, fmt.Sprintf("%s: unexpected failure (%v): %s", c, err, strings.TrimSpace(out)))
		}
	}
	return probs
}

// isExistsCheck reports a "podman image exists" or "container exists",
// whose failure only answers no.
func isExistsCheck(c podmanCall) bool {
	p, err := parsePodman(c.args)
	return err == nil && strings.HasSuffix(p.sub, " exists")
}

// applyRemovals does what a unit's ExecStartPre rm -f lines do.
func (s *podmanSandbox) applyRemovals(cfg types.Config, unit, root, runDir string) {
	for _, u := range cfg.Systemd.Units {
		if u.Name != unit || u.Contents == nil {
			continue
		}
		spec := strings.NewReplacer("%t", runDir, "%n", unit, "%N", strings.TrimSuffix(unit, path.Ext(unit)))
		keys, words := unitExecLines(s.t, u.Name, *u.Contents)
		for i, w := range words {
			if keys[i] == "ExecStartPre" && len(w) >= 3 && path.Base(w[0]) == "rm" && w[1] == "-f" {
				for _, f := range w[2:] {
					f = spec.Replace(f)
					if !strings.HasPrefix(f, s.dir) {
						f = filepath.Join(root, f)
					}
					require.NoError(s.t, os.RemoveAll(f))
				}
			}
		}
	}
}

func TestPodmanInvocationsRunForReal(t *testing.T) {
	s := newPodmanSandbox(t)
	t.Run("flag table matches podman", func(t *testing.T) {
		for sub, flags := range podmanFlags {
			help, err := s.run(nil, append(strings.Fields(sub), "--help")...)
			require.NoError(t, err, help)
			for f := range flags {
				if f == "--net" {
					f = "--network" // --net is a hidden alias; help lists only --network
				}
				re := regexp.MustCompile(`(^|[\s,])` + regexp.QuoteMeta(f) + `([\s,=]|$)`)
				assert.Regexp(t, re, help, "podman %s %s does not list %s", s.version, sub, f)
			}
		}
	})
	t.Run("the old --rm --restart unit is refused", func(t *testing.T) {
		// podman looks the image up before it checks --rm against
		// --restart: with a missing image it reports only "image not
		// known", which is why the sandbox holds a real (empty) image.
		cfg, _, err := ignition.Build(ignition.FixtureInputs()["sno"])
		require.NoError(t, err)
		probs := s.runConfig(withUnit(cfg, "apply-host-config.service", oldApplyHostConfig), map[string]bool{}, "apply-host-config.service")
		require.NotEmpty(t, probs)
		assert.Contains(t, strings.Join(probs, "\n"), "conflicts with --restart")
	})
	seen := map[string]bool{}
	for _, rc := range renderedConfigs(t) {
		t.Run(rc.name, func(t *testing.T) {
			assert.Empty(t, s.runConfig(rc.cfg, seen))
		})
	}
}
