package upstream

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseEnvFile(t *testing.T) {
	e, err := ParseEnvFile([]byte("# c\nA=1\n\n  B=x=y \"q\"\nA=2\nEMPTY=\n"), "f.env")
	require.NoError(t, err)
	assert.Equal(t, []string{"A=2", `B=x=y "q"`, "EMPTY="}, e.Environ())
	v, ok := e.Get("EMPTY")
	assert.True(t, ok)
	assert.Empty(t, v)

	_, err = ParseEnvFile([]byte("A=1\nBARE\n"), "f.env")
	assert.ErrorContains(t, err, "f.env:2: no '='")
	_, err = ParseEnvFile([]byte("=1\n"), "f.env")
	assert.ErrorContains(t, err, "f.env:1: bad variable name")
}

func TestEnvMergeKeepsOrderLaterWins(t *testing.T) {
	var a, b Env
	a.Set("X", "1")
	a.Set("Y", "2")
	b.Set("Z", "3")
	b.Set("X", "4")
	a.Merge(b)
	assert.Equal(t, []string{"X=4", "Y=2", "Z=3"}, a.Environ())
	assert.Equal(t, []string{"X", "Y", "Z"}, a.Keys())
}

func TestUnitEnvironment(t *testing.T) {
	e, err := UnitEnvironment("[Service]\nEnvironment=PODMAN_SYSTEMD_UNIT=%n\nEnvironment=OPENSHIFT_INSTALL_RELEASE_IMAGE_MIRROR=\nEnvironmentFile=/etc/x.env\n", "u.service")
	require.NoError(t, err)
	assert.Equal(t, []string{"PODMAN_SYSTEMD_UNIT=%n", "OPENSHIFT_INSTALL_RELEASE_IMAGE_MIRROR="}, e.Environ())
	_, err = UnitEnvironment("Environment=\"A=1\" B=2\n", "u.service")
	assert.ErrorContains(t, err, "u.service:1: quoted or multiple")
}

func TestPodman(t *testing.T) {
	iso := &ISO{Units: map[string]string{"s.service": "[Service]\nEnvironmentFile=/a.env\nEnvironmentFile=-/b.env\n" +
		"ExecStartPre=/usr/bin/podman pull x\n" +
		"ExecStart=/usr/bin/podman run --net host --env-file=/x.env --env-file /y.env -e K=V --env SERVICE_BASE_URL --env=USER_AUTH_TOKEN img /bin/client sub\n"}}
	pr, err := iso.Podman("s.service")
	require.NoError(t, err)
	assert.Equal(t, []string{"/x.env", "/y.env"}, pr.EnvFiles)
	assert.Equal(t, []string{"K=V"}, pr.Set.Environ())
	assert.Equal(t, []string{"SERVICE_BASE_URL", "USER_AUTH_TOKEN"}, pr.Pass)
	files, err := iso.UnitEnvFiles("s.service")
	require.NoError(t, err)
	assert.Equal(t, []string{"/a.env", "-/b.env"}, files)

	_, err = iso.Podman("missing.service")
	assert.ErrorContains(t, err, "no unit missing.service")
	iso.Units["bad.service"] = "ExecStart=/usr/bin/podman run --env-file"
	_, err = iso.Podman("bad.service")
	assert.ErrorContains(t, err, "--env-file without a value")
}

func FuzzParseEnvFile(f *testing.F) {
	f.Add("A=1\n# x\nB=2=3\n")
	f.Add("BARE\n")
	f.Fuzz(func(t *testing.T, in string) {
		e, err := ParseEnvFile([]byte(in), "f")
		if err != nil {
			return
		}
		for _, kv := range e.Environ() {
			k, _, ok := strings.Cut(kv, "=")
			if !ok || k == "" || strings.ContainsAny(k, " \t\n") {
				t.Fatalf("accepted a bad setting %q", kv)
			}
		}
	})
}
