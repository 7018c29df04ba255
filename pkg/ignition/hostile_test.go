package ignition

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostilePayloads try to run "touch MARK" in whatever reads the value: a
// bash that sources or runs the file, or systemd resolving specifiers.
var hostilePayloads = []string{
	"$(touch MARK)",
	"$(touch${IFS}MARK)",
	"`touch MARK`",
	"x;touch MARK",
	"x'$(touch MARK)'",
	`x"$(touch MARK)"`,
	"x\ntouch MARK",
	"x touch MARK",
	`x\`,
	"%n",
}

// hostileFields sets every user-controlled Input field that reaches a file
// of the live ISO.
var hostileFields = []struct {
	name string
	set  func(in *Input, v string)
}{
	{"ClusterName", func(in *Input, v string) { in.ClusterName = v }},
	{"BaseDomain", func(in *Input, v string) { in.BaseDomain = v }},
	{"ReleaseImage", func(in *Input, v string) { in.ReleaseImage = "quay.io/openshift-release-dev/ocp-release:4.19.3" + v }},
	{"ReleaseImageMirror", func(in *Input, v string) { in.ReleaseImageMirror = "mirror.example.com:5000/ocp/release:4.19" + v }},
	{"ReleaseVersion", func(in *Input, v string) { in.ReleaseVersion = "4.19.3" + v }},
	{"InfraEnvID", func(in *Input, v string) { in.InfraEnvID = testInfraEnv + v }},
	{"PublicContainerRegistries", func(in *Input, v string) { in.PublicContainerRegistries = []string{"mirror.example.com" + v} }},
	{"OSImages", func(in *Input, v string) { in.OSImages[0].URL = "https://example.com/rhcos.iso" + v }},
	{"OSImages", func(in *Input, v string) { in.OSImages[0].Version = "9.6" + v }},
	{"Proxy.HTTPProxy", func(in *Input, v string) { in.Proxy = &Proxy{HTTPProxy: "http://proxy.example.com:3128/" + v} }},
	{"Proxy.NoProxy", func(in *Input, v string) { in.Proxy = &Proxy{HTTPProxy: "http://p:3128", NoProxy: ".example.com" + v} }},
	{"NTPSources", func(in *Input, v string) { in.NTPSources = []string{"ntp.example.com" + v} }},
	{"DisabledHostValidations", func(in *Input, v string) { in.DisabledHostValidations = []string{"ntp-synced" + v} }},
	{"Hosts[0].Hostname", func(in *Input, v string) { in.Hosts[0].Hostname = "master-0" + v }},
	{"Auth.UserToken", func(in *Input, v string) { in.Auth.UserToken = testJWT("userAuth") + v }},
	{"Auth.AgentToken", func(in *Input, v string) { in.Auth.AgentToken = testJWT("agentAuth") + v }},
	{"Auth.WatcherToken", func(in *Input, v string) { in.Auth.WatcherToken = testJWT("watcherAuth") + v }},
}

// TestHostileValuesNeverExecute renders the config with each payload in
// each field. Build must either refuse the value, naming the field, or
// write it so that nothing executes: the rendered scripts pass bash -n,
// a bash that sources every env file and the sourced scripts creates no
// MARK, and the proxy drop-in parses back to the exact value.
func TestHostileValuesNeverExecute(t *testing.T) {
	bash := requireTool(t, "bash")
	for _, f := range hostileFields {
		for _, payload := range hostilePayloads {
			in := snoInput()
			f.set(&in, payload)
			cfg, _, err := Build(in)
			if err != nil {
				assert.Contains(t, err.Error(), f.name, "%s=%q: the error must name the field", f.name, payload)
				continue
			}
			dir := t.TempDir()
			var sourced []string
			for _, file := range cfg.Storage.Files {
				body, _ := fileContents(t, cfg, file.Path)
				p := filepath.Join(dir, "root", file.Path)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, body, 0o600))
				switch {
				case strings.HasSuffix(file.Path, ".env") || file.Path == "/usr/local/bin/release-image.sh":
					sourced = append(sourced, p)
				case strings.HasPrefix(file.Path, "/usr/local/bin/"):
					out, err := exec.Command(bash, "-n", p).CombinedOutput()
					assert.NoError(t, err, "%s=%q: bash -n %s: %s", f.name, payload, file.Path, out)
				}
			}
			require.NotEmpty(t, sourced)
			script := "set -a\n"
			for _, p := range sourced {
				script += ". " + shellQuoted(p) + " 2>/dev/null\n"
			}
			cmd := exec.Command(bash, "--noprofile", "--norc", "-c", script)
			cmd.Dir = dir
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "IFS= \t\n"}
			_ = cmd.Run()
			_, statErr := os.Stat(filepath.Join(dir, "MARK"))
			assert.True(t, os.IsNotExist(statErr), "%s=%q: sourcing the env files executed the payload", f.name, payload)

			if conf, ok := fileContents(t, cfg, "/etc/systemd/system.conf.d/10-default-env.conf"); ok && in.Proxy != nil {
				env, err := systemdDefaultEnvironment(string(conf))
				if assert.NoError(t, err, "%s=%q", f.name, payload) {
					assert.Equal(t, in.Proxy.HTTPProxy, env["HTTP_PROXY"])
				}
			}
		}
	}
}

func TestReleaseImageIsShellQuotedInScripts(t *testing.T) {
	cfg, _ := mustBuild(t, snoInput())
	for _, p := range []string{"/usr/local/bin/release-image.sh", "/usr/local/bin/release-image-download.sh"} {
		body, ok := fileContents(t, cfg, p)
		require.True(t, ok, p)
		assert.Contains(t, string(body), "\nRELEASE_IMAGE='quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64'\n", p)
	}
}

func TestValidateImageReference(t *testing.T) {
	for _, ok := range []string{
		"quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64",
		"quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("ab", 32),
		"mirror.example.com:5000/ocp/release:4.19",
		"localhost/agentiso-probe:latest",
		"[fd00::1]:5000/ocp/release:4.19",
	} {
		assert.NoError(t, ValidateImageReference(ok), ok)
	}
	for _, bad := range []string{
		"", " quay.io/a/b:1", "quay.io/x/y:4.19.0-x86_64$(touch${IFS}/tmp/x)", "quay.io/x/y:1`id`",
		"ocp-release:4.19", "quay.io/x/y", "quay.io/X/y:1", "quay.io/x/y:1;id", "quay.io/x/y:1\nid",
	} {
		assert.Error(t, ValidateImageReference(bad), bad)
	}
}
