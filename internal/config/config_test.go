package config

import (
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type testFlags struct {
	release string
	offline bool
	timeout time.Duration
	level   string
}

func newTestFlags(t *testing.T, args ...string) (*pflag.FlagSet, *testFlags) {
	t.Helper()
	v := &testFlags{}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.StringVar(&v.release, "release-image", "", "")
	fs.BoolVar(&v.offline, "offline", false, "")
	fs.DurationVar(&v.timeout, "timeout", 0, "")
	fs.StringVar(&v.level, "log-level", "info", "")
	require.NoError(t, fs.Parse(args))
	return fs, v
}

func bySetting(ss []Setting) map[string]Setting {
	m := map[string]Setting{}
	for _, s := range ss {
		m[s.Key] = s
	}
	return m
}

func TestEnvVar(t *testing.T) {
	assert.Equal(t, "AGENTISO_RELEASE_IMAGE", EnvVar("release-image"))
	assert.Equal(t, "AGENTISO_BASE_ISO_SHA256", EnvVar("base-iso-sha256"))
	assert.Equal(t, "AGENTISO_DIR", EnvVar("dir"))
}

func TestFlagBeatsEnvBeatsDefault(t *testing.T) {
	t.Setenv("AGENTISO_RELEASE_IMAGE", "from-env")
	t.Setenv("AGENTISO_OFFLINE", "true")
	t.Setenv("AGENTISO_TIMEOUT", "")
	fs, v := newTestFlags(t, "--release-image", "from-flag")
	settings, err := mustNew(t, nil).Apply(fs)
	require.NoError(t, err)

	assert.Equal(t, "from-flag", v.release)
	assert.True(t, v.offline)
	assert.Equal(t, time.Duration(0), v.timeout, "an empty variable counts as unset")
	assert.Equal(t, "info", v.level)

	s := bySetting(settings)
	assert.Equal(t, Setting{Key: "release-image", Value: "from-flag", Source: FromFlag, Origin: "--release-image"}, s["release-image"])
	assert.Equal(t, Setting{Key: "offline", Value: "true", Source: FromEnv, Origin: "$AGENTISO_OFFLINE"}, s["offline"])
	assert.Equal(t, Setting{Key: "timeout", Value: "0s", Source: FromDefault, Origin: "default"}, s["timeout"])
	assert.Equal(t, Setting{Key: "log-level", Value: "info", Source: FromDefault, Origin: "default"}, s["log-level"])
}

func TestResolveChangesNothing(t *testing.T) {
	t.Setenv("AGENTISO_RELEASE_IMAGE", "from-env")
	fs, v := newTestFlags(t)
	settings, err := mustNew(t, nil).Resolve(fs)
	require.NoError(t, err)
	assert.Equal(t, "from-env", bySetting(settings)["release-image"].Value)
	assert.Empty(t, v.release)
	assert.False(t, fs.Changed("release-image"))
}

func TestBadEnvValueNamesTheVariable(t *testing.T) {
	t.Setenv("AGENTISO_OFFLINE", "maybe")
	fs, _ := newTestFlags(t)
	_, err := mustNew(t, nil).Apply(fs)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `$AGENTISO_OFFLINE: invalid value "maybe" for --offline`)

	t.Setenv("AGENTISO_OFFLINE", "")
	t.Setenv("AGENTISO_TIMEOUT", "90")
	fs, _ = newTestFlags(t)
	_, err = mustNew(t, nil).Apply(fs)
	assert.ErrorContains(t, err, `$AGENTISO_TIMEOUT: invalid value "90" for --timeout`)
}

func mustNew(t *testing.T, f *File) *Layers {
	t.Helper()
	l, err := New(f)
	require.NoError(t, err)
	return l
}

func TestUnknownEnv(t *testing.T) {
	env := []string{"PATH=/bin", "AGENTISO_RELASE_IMAGE=x", "AGENTISO_OFFLINE=true", "AGENTISO_CONFIG=/etc/a.yaml", "AGENTISO_OFFLINE_=1", "XAGENTISO_Y=1", "AGENTISO_EMPTY="}
	assert.Equal(t, []IgnoredEnv{{Name: "AGENTISO_OFFLINE_", DidYouMean: "AGENTISO_OFFLINE"}, {Name: "AGENTISO_RELASE_IMAGE", DidYouMean: "AGENTISO_RELEASE_IMAGE"}},
		UnknownEnv(env, []string{"release-image", "offline"}))
	// Close to nothing (another tool's variable): listed, with no suggestion.
	assert.Equal(t, []IgnoredEnv{{Name: "AGENTISO_TESTSCRIPT_WORKDIR"}}, UnknownEnv([]string{"AGENTISO_TESTSCRIPT_WORKDIR=/tmp"}, []string{"offline"}))
	// $AGENTISO_CONFIG is the config file's, and is suggested too.
	assert.Equal(t, []IgnoredEnv{{Name: "AGENTISO_CONFG", DidYouMean: "AGENTISO_CONFIG"}}, UnknownEnv([]string{"AGENTISO_CONFG=a.yaml"}, []string{"offline"}))
}
