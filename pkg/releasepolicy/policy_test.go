package releasepolicy_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/releasepolicy"
)

func TestParseMinor(t *testing.T) {
	for in, want := range map[string]releasepolicy.Minor{
		"4.20": {4, 20}, "4.20.3": {4, 20}, "4.21.0-rc.1": {4, 21}, "4.22.0-0.nightly-2026-01-01-000000": {4, 22}, "5.0.0": {5, 0},
	} {
		got, err := releasepolicy.ParseMinor(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "4", "4.x.1", "v4.20.0", "4.20-rc", "04.20.1", "4.020.1", "-4.20.1", "4.+20.1"} {
		_, err := releasepolicy.ParseMinor(in)
		assert.Error(t, err, in)
	}
}

func TestFloorRefusesOlderReleases(t *testing.T) {
	for _, v := range []string{"4.17.0", "4.17.9", "4.15.2", "4.12.0", "3.11.0"} {
		_, err := releasepolicy.For(v)
		var ue *releasepolicy.UnsupportedError
		require.True(t, errors.As(err, &ue), v)
		assert.Contains(t, err.Error(), "OpenShift "+v+" is not supported", "names the release")
		assert.Contains(t, err.Error(), "supports OpenShift 4.16 and 4.18 and later", "names what is supported")
		assert.Contains(t, err.Error(), "use 4.16 or a 4.18 or later release (--release-image", "says what to use instead")
	}
	_, err := releasepolicy.For("4.17.9")
	assert.ErrorContains(t, err, "infra_env_id")
	assert.ErrorContains(t, err, "AGENT_AUTH_TOKEN")
	_, err = releasepolicy.For("4.15.2")
	assert.ErrorContains(t, err, "older than 4.16")
	assert.Equal(t, releasepolicy.Minor{Major: 4, Minor: 16}, releasepolicy.Floor())
	assert.Equal(t, "4.16 and 4.18 and later", releasepolicy.Supported())
	assert.Equal(t, []releasepolicy.Minor{{Major: 4, Minor: 17}}, releasepolicy.Refused())
}

// 4.16 (EUS) is supported with what its installer wrote: AUTH_TYPE=none,
// the only authenticator its agent-installer client works with (assisted-service
// release-4.16: pkg/auth/authenticator.go knows none, rhsso and local; its
// client sends no token, and local refuses every user call).
func TestRelease416(t *testing.T) {
	for _, v := range []string{"4.16.0", "4.16.3", "4.16.45"} {
		s, err := releasepolicy.For(v)
		require.NoError(t, err, v)
		assert.False(t, s.Newer, v)
		assert.Equal(t, releasepolicy.Minor{Major: 4, Minor: 16}, s.Minor, v)
		assert.Equal(t, releasepolicy.AuthNone, s.Auth, v)
		assert.False(t, s.Auth.Tokens(), v)
		assert.Equal(t, releasepolicy.FencingNone, s.Fencing, v)
		assert.Equal(t, releasepolicy.MatchVersion, s.Match, v)
		assert.Zero(t, s.Hardware.Arbiter, "4.16's default names no arbiter")
		assert.Equal(t, releasepolicy.Role{CPUCores: 8, RAMMiB: 16384, DiskGB: 100}, s.Hardware.SNO, v)
		assert.True(t, s.Day2.Allows("master"), v)
		assert.False(t, s.Day2.Allows("arbiter"), v)
	}
	assert.True(t, releasepolicy.AuthAgentInstallerLocal.Tokens())
	assert.Equal(t, "release-4.16", releasepolicy.Rules()[0].Branch())
}

// The table as read from openshift/assisted-service release-4.18 ...
// release-4.23 (cmd/agentbasedinstaller, internal/versions, pkg/auth,
// data/default_hw_requirements.json).
func TestRulesPerRelease(t *testing.T) {
	type row struct {
		fencing releasepolicy.Fencing
		match   releasepolicy.Match
		arbiter int // arbiter disk GB, 0 when the default names no arbiter
		sno     int // single-node CPU cores
	}
	want := map[string]row{
		"4.18.0": {releasepolicy.FencingNone, releasepolicy.MatchVersion, 0, 8},
		"4.19.2": {releasepolicy.FencingNone, releasepolicy.MatchVersion, 0, 8},
		"4.20.0": {releasepolicy.FencingNone, releasepolicy.MatchVersion, 100, 8},
		"4.21.4": {releasepolicy.FencingServiceOnly, releasepolicy.MatchVersion, 100, 8},
		"4.22.1": {releasepolicy.FencingHostnameFile, releasepolicy.MatchURL, 50, 4},
		"4.23.0": {releasepolicy.FencingPerHostMAC, releasepolicy.MatchURL, 50, 4},
	}
	for v, w := range want {
		s, err := releasepolicy.For(v)
		require.NoError(t, err, v)
		assert.False(t, s.Newer, v)
		assert.Empty(t, s.Warning(), v)
		assert.Equal(t, releasepolicy.AuthAgentInstallerLocal, s.Auth, v)
		assert.True(t, s.Auth.Tokens(), v)
		assert.Equal(t, w.fencing, s.Fencing, v)
		assert.Equal(t, w.match, s.Match, v)
		assert.Equal(t, w.arbiter, s.Hardware.Arbiter.DiskGB, v)
		assert.Equal(t, w.sno, s.Hardware.SNO.CPUCores, v)
		assert.Equal(t, releasepolicy.Role{CPUCores: 4, RAMMiB: 16384, DiskGB: 100}, s.Hardware.Master, v)
		assert.Equal(t, releasepolicy.Role{CPUCores: 2, RAMMiB: 8192, DiskGB: 100}, s.Hardware.Worker, v)
	}
	assert.Len(t, releasepolicy.Rules(), len(want)+1, "one row per branch release-4.16, release-4.18 ... release-4.23")
	assert.Equal(t, releasepolicy.Minor{Major: 4, Minor: 23}, releasepolicy.NewestChecked())
	assert.Equal(t, "release-4.20", releasepolicy.Rules()[3].Branch())
}

func TestNewerReleaseWarns(t *testing.T) {
	s, err := releasepolicy.For("4.24.0-ec.1")
	require.NoError(t, err)
	assert.True(t, s.Newer)
	assert.Equal(t, releasepolicy.Minor{Major: 4, Minor: 23}, s.Minor, "rules of the newest checked release")
	assert.Equal(t, releasepolicy.MatchURL, s.Match)
	assert.Contains(t, s.Warning(), "OpenShift 4.24.0-ec.1 is newer than the newest release this agentiso was checked against (assisted-service release-4.23)")
}

func TestRulesIsACopy(t *testing.T) {
	r := releasepolicy.Rules()
	r[1].Match = "changed"
	s, err := releasepolicy.For("4.18.1")
	require.NoError(t, err)
	assert.Equal(t, releasepolicy.MatchVersion, s.Match)
}

func FuzzParseMinor(f *testing.F) {
	for _, s := range []string{"4.20.3", "4.21.0-rc.1", "", "4", "99999999999999999999.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		m, err := releasepolicy.ParseMinor(v)
		if err != nil {
			return
		}
		if m.Major < 0 || m.Minor < 0 {
			t.Fatalf("%q parsed to %v", v, m)
		}
		_, _ = releasepolicy.For(v)
	})
}

// The roles a day-2 host may have (node-image create), per release: the
// upstream node-joiner passes master and arbiter through to the host's
// configuration; assisted-service takes master for a day-2 host on every
// branch, and arbiter for a host of an imported cluster from release-4.21.
func TestDay2RolesPerRelease(t *testing.T) {
	for v, want := range map[string][2]bool{ // {master, arbiter}
		"4.16.3": {true, false}, "4.18.0": {true, false}, "4.19.2": {true, false}, "4.20.3": {true, false},
		"4.21.0": {true, true}, "4.22.1": {true, true}, "4.23.0": {true, true}, "4.24.0-ec.1": {true, true},
	} {
		s, err := releasepolicy.For(v)
		require.NoError(t, err, v)
		assert.True(t, s.Day2.Allows(""), v)
		assert.True(t, s.Day2.Allows("worker"), v)
		assert.Equal(t, want[0], s.Day2.Allows("master"), v)
		assert.Equal(t, want[1], s.Day2.Allows("arbiter"), v)
		assert.False(t, s.Day2.Allows("bootstrap"), v)
		assert.False(t, s.Day2.Allows("auto-assign"), v)
	}
	for role, want := range map[string]releasepolicy.Minor{"worker": {Major: 4, Minor: 18}, "master": {Major: 4, Minor: 18}, "arbiter": {Major: 4, Minor: 21}} {
		got, ok := releasepolicy.Day2Since(role)
		require.True(t, ok, role)
		assert.Equal(t, want, got, role)
	}
	_, ok := releasepolicy.Day2Since("bootstrap")
	assert.False(t, ok)
}

// A release's own version is x.y.z, with an optional pre-release and build
// part (nightlies, candidates, OKD): --release-version names one release,
// never a minor.
func TestCheckReleaseVersion(t *testing.T) {
	for _, ok := range []string{"4.20.3", "4.16.0", "4.21.0-rc.1", "4.20.0-ec.2", "4.20.0-0.nightly-2026-10-01-123456", "4.20.0-okd-scos.ec.3", "4.19.10+build.5", "5.0.0"} {
		assert.NoError(t, releasepolicy.CheckReleaseVersion(ok), ok)
	}
	for _, bad := range []string{"4.20", "4", "", "4.20.", "4.20.x", "v4.20.3", "4.20.3.1", "04.20.3", "4.020.3", "4.20.03", "4.20.3-", "4.20.3 ", " 4.20.3", "4.20.3-rc 1", "4.20.3\n", "4.20.3-rc..1"} {
		err := releasepolicy.CheckReleaseVersion(bad)
		if assert.Error(t, err, "%q", bad) {
			assert.Contains(t, err.Error(), "x.y.z")
		}
	}
}

func FuzzCheckReleaseVersion(f *testing.F) {
	for _, s := range []string{"4.20.3", "4.20", "4.20.0-rc.1", "4.20.0+x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if releasepolicy.CheckReleaseVersion(s) == nil {
			if _, err := releasepolicy.ParseMinor(s); err != nil {
				t.Fatalf("%q passes as a release version but has no minor: %v", s, err)
			}
		}
	})
}
