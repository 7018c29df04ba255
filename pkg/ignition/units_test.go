package ignition

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// systemdDefaultEnvironment parses the DefaultEnvironment= lines of a
// system.conf drop-in the way systemd does: each value is split into words
// (double quotes group, a backslash escapes the next character inside
// them), then specifiers are resolved, where only "%%" is valid in
// system.conf (it has no unit to name). It returns KEY -> value.
func systemdDefaultEnvironment(conf string) (map[string]string, error) {
	out := map[string]string{}
	for n, line := range strings.Split(conf, "\n") {
		v, ok := strings.CutPrefix(line, "DefaultEnvironment=")
		if !ok {
			continue
		}
		var words []string
		var cur strings.Builder
		inQuote, inWord := false, false
		for i := 0; i < len(v); i++ {
			c := v[i]
			switch {
			case c == '"':
				inQuote = !inQuote
				inWord = true
			case c == '\\':
				if i+1 >= len(v) {
					return nil, fmt.Errorf("line %d: trailing backslash", n+1)
				}
				i++
				switch v[i] {
				case '\\', '"', '\'':
					cur.WriteByte(v[i])
				default:
					return nil, fmt.Errorf("line %d: escape \\%c would be interpreted", n+1, v[i])
				}
				inWord = true
			case (c == ' ' || c == '\t') && !inQuote:
				if inWord {
					words = append(words, cur.String())
					cur.Reset()
					inWord = false
				}
			default:
				cur.WriteByte(c)
				inWord = true
			}
		}
		if inQuote {
			return nil, fmt.Errorf("line %d: unterminated quote", n+1)
		}
		if inWord {
			words = append(words, cur.String())
		}
		for _, w := range words {
			var res strings.Builder
			for i := 0; i < len(w); i++ {
				if w[i] != '%' {
					res.WriteByte(w[i])
					continue
				}
				if i+1 < len(w) && w[i+1] == '%' {
					res.WriteByte('%')
					i++
					continue
				}
				return nil, fmt.Errorf("line %d: failed to resolve specifiers in %q", n+1, w)
			}
			k, val, ok := strings.Cut(res.String(), "=")
			if !ok {
				return nil, fmt.Errorf("line %d: %q is not KEY=value", n+1, res.String())
			}
			out[k] = val
		}
	}
	return out, nil
}

func TestDefaultEnvironmentParser(t *testing.T) {
	// The model itself: it must refuse what systemd refuses.
	for _, bad := range []string{
		`DefaultEnvironment="A=%40"`,
		`DefaultEnvironment="A=x\"`,
		`DefaultEnvironment="A=x\n"`,
	} {
		_, err := systemdDefaultEnvironment(bad)
		assert.Error(t, err, bad)
	}
	env, err := systemdDefaultEnvironment(`DefaultEnvironment="A=%%40\\" B=c`)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"A": `%40\`, "B": "c"}, env)
}

func TestProxyEnvironmentSurvivesSystemdParsing(t *testing.T) {
	for _, px := range []Proxy{
		{HTTPProxy: "http://user%40corp:p%23ss@proxy.example.com:3128", HTTPSProxy: "http://u:p%25@proxy.example.com:3129"},
		{HTTPProxy: `http://proxy.example.com:3128\`, HTTPSProxy: `http://dom\user:x@proxy.example.com:3128/`, NoProxy: `.example.com,%h,a\b`},
	} {
		in := haInput()
		in.Proxy = &px
		in.MachineNetworks = nil
		cfg, _ := mustBuild(t, in)
		b, ok := fileContents(t, cfg, "/etc/systemd/system.conf.d/10-default-env.conf")
		require.True(t, ok)
		env, err := systemdDefaultEnvironment(string(b))
		require.NoError(t, err, "rendered:\n%s", b)
		assert.Equal(t, px.HTTPProxy, env["HTTP_PROXY"])
		assert.Equal(t, px.HTTPSProxy, env["HTTPS_PROXY"])
		if px.NoProxy != "" {
			assert.Equal(t, px.NoProxy, env["NO_PROXY"])
		}
	}
	in := haInput()
	in.Proxy = &Proxy{HTTPProxy: "http://proxy.example.com:3128\x1b[2J"}
	_, _, err := Build(in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Proxy.HTTPProxy")
}

// unitKeys returns every value of key in a unit's text.
func unitKeys(body, key string) []string {
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key+"="); ok {
			out = append(out, v)
		}
	}
	return out
}

func TestDatabaseMayTakeLongAndServiceRecovers(t *testing.T) {
	cfg, _ := mustBuild(t, snoInput())
	db, ok := unitContents(cfg, "assisted-service-db.service")
	require.True(t, ok)
	// The database unit is the first to run the service image, so its
	// start includes pulling it: upstream allows 500 seconds.
	assert.Equal(t, []string{"500"}, unitKeys(db, "TimeoutStartSec"))
	assert.Equal(t, []string{"on-failure"}, unitKeys(db, "Restart"))
	assert.Equal(t, []string{"0"}, unitKeys(db, "StartLimitIntervalSec"), "the database must never hit the start limit")

	svc, ok := unitContents(cfg, "assisted-service.service")
	require.True(t, ok)
	// A slow or failed database start must not fail assisted-service for
	// good: it waits for it (After=) without Requires=, and keeps
	// restarting until the database answers.
	assert.Empty(t, unitKeys(svc, "Requires"), "assisted-service must not Require= the database")
	assert.Contains(t, strings.Join(unitKeys(svc, "Wants"), " "), "assisted-service-db.service")
	assert.Contains(t, strings.Join(unitKeys(svc, "After"), " "), "assisted-service-db.service")
	assert.Equal(t, []string{"on-failure"}, unitKeys(svc, "Restart"))
	assert.Equal(t, []string{"0"}, unitKeys(svc, "StartLimitIntervalSec"))
	assert.NotEmpty(t, unitKeys(svc, "RestartSec"))
}

func TestMultipathdEnabled(t *testing.T) {
	for _, fx := range fixtures {
		cfg, _ := mustBuild(t, fx.input())
		found := false
		for _, u := range cfg.Systemd.Units {
			if u.Name == "multipathd.service" {
				found = true
				require.NotNil(t, u.Enabled, fx.name)
				assert.True(t, *u.Enabled, fx.name)
				assert.Nil(t, u.Contents, "%s: multipathd.service is RHCOS's own unit; only enable it", fx.name)
			}
		}
		assert.True(t, found, "%s: multipathd.service is not enabled", fx.name)
	}
}

func TestSecretsOnTheLiveISOAreRootOnly(t *testing.T) {
	// Every reader of these files runs as root: systemd (EnvironmentFile=),
	// the root scripts in /usr/local/bin, and podman (--env-file, and the
	// agent-installer-client container that also reads the 0600 ZTP
	// manifests from the same mount tree).
	cfg, _ := mustBuild(t, haInput())
	want := map[string]bool{RendezvousEnvPath: false, "/etc/assisted/hostconfig/master-0/" + IgnitionOverrideFile: false}
	for _, m := range haInput().ExtraManifests {
		want[ExtraManifestsDir+"/"+m.FileName] = false
	}
	for _, f := range cfg.Storage.Files {
		if _, ok := want[f.Path]; ok {
			want[f.Path] = true
			assert.Equal(t, 0o600, *f.Mode, "%s holds secrets (JWTs, Secrets, Ignition with credentials)", f.Path)
		}
	}
	for p, seen := range want {
		assert.True(t, seen, "%s not in the config", p)
	}
	for _, d := range cfg.Storage.Directories {
		if d.Path == ExtraManifestsDir {
			assert.Equal(t, 0o700, *d.Mode, d.Path)
		}
	}
}
