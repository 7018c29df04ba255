package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testSchema = Schema{
	Keys:    []string{"base-iso", "log-level", "offline", "release-image", "timeout"},
	Refused: map[string]string{"config": "a config file cannot name another one"},
}

func TestParse(t *testing.T) {
	f, err := Parse("c.yaml", []byte("# site settings\nrelease-image: quay.io/a/b@sha256:1\noffline: true\ntimeout: 90m\nbase-iso: ''\n"), testSchema)
	require.NoError(t, err)
	assert.Equal(t, []string{"base-iso", "offline", "release-image", "timeout"}, f.Keys())
	assert.Equal(t, "true", f.values["offline"])
	assert.Equal(t, "", f.values["base-iso"])
	assert.Equal(t, 2, f.Line("release-image"))
	assert.Equal(t, 0, f.Line("log-level"))

	for _, empty := range []string{"", "# nothing yet\n", "---\n", "~\n"} {
		f, err := Parse("c.yaml", []byte(empty), testSchema)
		require.NoError(t, err, "%q", empty)
		assert.Empty(t, f.Keys())
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"unknown key", "release-image: x\nrelase-image: y\n",
			`config file c.yaml:2: relase-image: Unknown field: not a flag of any agentiso command, did you mean "release-image"?`},
		{"unknown key, nothing close", "colour: blue\n", `config file c.yaml:1: colour: Unknown field: not a flag of any agentiso command`},
		{"refused key", "config: other.yaml\n", `config file c.yaml:1: config: Forbidden: a config file cannot name another one`},
		{"bad YAML", "offline: true\nrelease-image: a: b\n", `config file c.yaml:2: not valid YAML: mapping values are not allowed in this context`},
		{"not a mapping", "- offline\n", `config file c.yaml:1: expected a YAML mapping`},
		{"two documents", "offline: true\n---\noffline: false\n", `config file c.yaml:2: holds more than one YAML document`},
		{"list value", "release-image:\n- a\n", `config file c.yaml:2: release-image: Invalid value: must be a single value`},
		{"no value", "base-iso:\n", `config file c.yaml:1: base-iso: Required value: the key has no value`},
		{"repeated key", "offline: true\noffline: false\n", `config file c.yaml:2: offline: Duplicate value: the key is already set on line 1`},
		{"several problems", "colour: blue\noffline: [true]\n", "config file c.yaml: 2 problems found:\n  - c.yaml:1: colour: Unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(tc.in), testSchema)
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "got %q\nwant prefix %q", err, tc.want)
		})
	}
}

func TestLocate(t *testing.T) {
	t.Setenv("AGENTISO_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", "/xdg")
	loc, err := Locate("", false)
	require.NoError(t, err)
	assert.Equal(t, Location{Path: "/xdg/agentiso/config.yaml", Origin: "default"}, loc)

	t.Setenv("AGENTISO_CONFIG", "/etc/agentiso.yaml")
	loc, err = Locate("", false)
	require.NoError(t, err)
	assert.Equal(t, Location{Path: "/etc/agentiso.yaml", Origin: "$AGENTISO_CONFIG", Required: true}, loc)

	loc, err = Locate("site.yaml", true)
	require.NoError(t, err)
	assert.Equal(t, Location{Path: "site.yaml", Origin: "--config", Required: true}, loc)

	_, err = Locate("", true)
	assert.EqualError(t, err, "--config needs a file name")
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")
	f, err := Load(Location{Path: missing, Origin: "default"}, testSchema)
	require.NoError(t, err, "a missing default file is no file")
	assert.Nil(t, f)

	_, err = Load(Location{Path: missing, Origin: "--config", Required: true}, testSchema)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "config file (from --config): open "+missing+": no such file or directory")

	_, err = Load(Location{Path: dir, Origin: "default"}, testSchema)
	assert.ErrorContains(t, err, "not a regular file", "an existing default path must be a file")

	big := filepath.Join(dir, "big.yaml")
	require.NoError(t, os.WriteFile(big, []byte("# "+strings.Repeat("x", MaxFileSize)+"\n"), 0o644))
	_, err = Load(Location{Path: big, Origin: "--config", Required: true}, testSchema)
	assert.ErrorContains(t, err, "is larger than 4 MiB")

	ok := filepath.Join(dir, "ok.yaml")
	require.NoError(t, os.WriteFile(ok, []byte("offline: true\n"), 0o644))
	f, err = Load(Location{Path: ok, Origin: "--config", Required: true}, testSchema)
	require.NoError(t, err)
	assert.Equal(t, []string{"offline"}, f.Keys())
}

func TestFlagBeatsEnvBeatsFileBeatsDefault(t *testing.T) {
	f, err := Parse("/etc/a.yaml", []byte("release-image: from-file\noffline: true\ntimeout: 2h\nlog-level: debug\n"), testSchema)
	require.NoError(t, err)
	t.Setenv("AGENTISO_TIMEOUT", "3h")
	t.Setenv("AGENTISO_LOG_LEVEL", "warn")
	fs, v := newTestFlags(t, "--log-level", "error")
	settings, err := mustNew(t, f).Apply(fs)
	require.NoError(t, err)

	assert.Equal(t, "from-file", v.release)
	assert.True(t, v.offline)
	assert.Equal(t, 3*time.Hour, v.timeout)
	assert.Equal(t, "error", v.level)
	s := bySetting(settings)
	assert.Equal(t, Setting{Key: "release-image", Value: "from-file", Source: FromFile, Origin: "/etc/a.yaml:1"}, s["release-image"])
	assert.Equal(t, Setting{Key: "offline", Value: "true", Source: FromFile, Origin: "/etc/a.yaml:2"}, s["offline"])
	assert.Equal(t, Setting{Key: "timeout", Value: "3h", Source: FromEnv, Origin: "$AGENTISO_TIMEOUT"}, s["timeout"])
	assert.Equal(t, Setting{Key: "log-level", Value: "error", Source: FromFlag, Origin: "--log-level"}, s["log-level"])

	// a file value the flag refuses names the file and line
	f, err = Parse("/etc/a.yaml", []byte("\noffline: maybe\n"), testSchema)
	require.NoError(t, err)
	fs, _ = newTestFlags(t)
	_, err = mustNew(t, f).Apply(fs)
	assert.ErrorContains(t, err, `/etc/a.yaml:2: invalid value "maybe" for --offline`)
}

// FuzzParse: any bytes give a File or an error naming the file, never a
// panic; a File holds only valid keys, each with its line.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "release-image: x\n", "offline: true\ntimeout: 1h\n", "colour: blue\n",
		"a: [\n", "- x\n", "offline: &a true\nbase-iso: *a\n", "? [a]\n: b\n", "x: {y: z}\n", "---\n---\n"} {
		f.Add([]byte(s))
	}
	valid := map[string]bool{}
	for _, k := range testSchema.Keys {
		valid[k] = true
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.yaml", data, testSchema)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "config file fuzz.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, k := range file.Keys() {
			if !valid[k] || file.Line(k) <= 0 {
				t.Fatalf("key %q (line %d) accepted", k, file.Line(k))
			}
		}
	})
}
