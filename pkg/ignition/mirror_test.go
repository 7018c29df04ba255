package ignition

import (
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// defaultRegistriesConf is what the caller passes when install-config has
// no imageDigestSources (pkg/manifests.DefaultRegistriesConf).
const defaultRegistriesConf = "unqualified-search-registries = []\n\nshort-name-mode = \"\"\n"

func TestTrustBundleWithoutMirrors(t *testing.T) {
	// additionalTrustBundle alone (a proxy's or an internal CA): the host
	// trusts it, the containers keep the whole host store, and nothing is
	// treated as mirrored.
	in := snoInput()
	in.RegistriesConf = []byte(defaultRegistriesConf)
	in.CABundle = testPEM("CERTIFICATE", 900)
	cfg, _ := mustBuild(t, in)

	ca, ok := fileContents(t, cfg, CABundlePath)
	require.True(t, ok, "the bundle goes to the host trust anchors")
	assert.Equal(t, string(in.CABundle), string(ca))
	_, ok = fileContents(t, cfg, RegistriesPath)
	assert.False(t, ok, "no registries.conf without a mirror")
	for _, name := range []string{"assisted-service.service", "agent-register-cluster.service"} {
		u, ok := unitContents(cfg, name)
		require.True(t, ok)
		assert.NotContains(t, u, "/etc/containers", name)
		assert.NotContains(t, u, CABundlePath, "%s must not replace the containers' trust store with the user bundle alone", name)
		assert.Contains(t, u, " "+defaultCABundle+" ", name)
	}
	env := envMap(t, mustFile(t, cfg, "/usr/local/share/assisted-service/assisted-service.env"))
	assert.Equal(t, "quay.io", env["PUBLIC_CONTAINER_REGISTRIES"])
	assert.Equal(t, "", env["OPENSHIFT_INSTALL_RELEASE_IMAGE_MIRROR"])
}

func mustFile(t *testing.T, cfg types.Config, p string) []byte {
	t.Helper()
	b, ok := fileContents(t, cfg, p)
	require.True(t, ok, p)
	return b
}

func TestMirrorSettingsComeFromRegistriesConf(t *testing.T) {
	// The caller passes only registries.conf: the release mirror and the
	// public registries follow from it, as upstream derives them.
	in := disconnectedInput()
	in.ReleaseImageMirror = ""
	in.PublicContainerRegistries = nil
	cfg, _ := mustBuild(t, in)
	env := envMap(t, mustFile(t, cfg, "/usr/local/share/assisted-service/assisted-service.env"))
	want := "mirror.example.com:5000/ocp/release@sha256:" + strings.Repeat("ab", 32)
	assert.Equal(t, want, env["OPENSHIFT_INSTALL_RELEASE_IMAGE_MIRROR"])
	assert.Equal(t, "quay.io", env["PUBLIC_CONTAINER_REGISTRIES"], "the mirrored sources' registries")
	u, _ := unitContents(cfg, "agent-register-cluster.service")
	assert.Contains(t, u, "Environment=OPENSHIFT_INSTALL_RELEASE_IMAGE_MIRROR="+want+"\n")
}

func TestRegistriesConfIsValidTOML(t *testing.T) {
	// BurntSushi/toml is a test-only dependency: it checks that what the
	// hosts' containers/image reads is TOML at all.
	cfg, _ := mustBuild(t, disconnectedInput())
	reg := mustFile(t, cfg, RegistriesPath)
	var parsed struct {
		Registry []struct {
			Location string
			Mirror   []struct{ Location string }
		}
	}
	_, err := toml.Decode(string(reg), &parsed)
	require.NoError(t, err)
	require.Len(t, parsed.Registry, 2)
	assert.Equal(t, "mirror.example.com:5000/ocp/release", parsed.Registry[0].Mirror[0].Location)

	// Mirror locations the hosts could not use are refused before they
	// reach the ISO, naming the field.
	for _, bad := range []string{"mirror.example.com:5000/ocp release", "mirror.example.com\x00/x", "mirror.example.com/x\"\ny = 1", "Mirror.Example.com/X"} {
		in := disconnectedInput()
		in.RegistriesConf = []byte("[[registry]]\nlocation = \"quay.io/openshift-release-dev/ocp-release\"\n[[registry.mirror]]\nlocation = " + tomlQuote(bad) + "\n")
		_, _, err := Build(in)
		if assert.Error(t, err, "%q", bad) {
			assert.Contains(t, err.Error(), "RegistriesConf")
		}
	}
}

// tomlQuote writes s as a TOML basic string.
func tomlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 0x20:
			b.WriteString(`\u00` + string("0123456789abcdef"[r>>4]) + string("0123456789abcdef"[r&15]))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// The live lab (docs/e2e.md, no-registry-extended-iso) found it: with an
// embedded payload the mirror is the hosts' own registry, whose
// certificate agentiso makes; the user's additionalTrustBundle (the CA of
// the registry the ISO was built from) alone as the containers' trust
// store left the service's oc unable to read the release from
// localhost:22625 ("not signed by any CA in the system trust store"). The
// containers get the host store, which holds both: the user's bundle and
// the registry's certificate, anchors extracted before the units start.
func TestEmbeddedPayloadContainersTrustTheLocalRegistry(t *testing.T) {
	in := embeddedPayloadInput()
	in.CABundle = testPEM("CERTIFICATE", 900)
	cfg, _ := mustBuild(t, in)
	assert.Equal(t, string(in.CABundle), string(mustFile(t, cfg, CABundlePath)), "the user's bundle is still a host anchor")
	assert.Equal(t, string(in.Payload.CertPEM), string(mustFile(t, cfg, PayloadTrustPath)), "and so is the registry's certificate")
	for _, name := range []string{"assisted-service.service", "agent-register-cluster.service", "apply-host-config.service"} {
		u, ok := unitContents(cfg, name)
		require.True(t, ok, name)
		if !strings.Contains(u, "tls-ca-bundle.pem") {
			continue
		}
		assert.NotContains(t, u, CABundlePath+":", "%s must not replace the containers' trust store with the user bundle alone", name)
		assert.Contains(t, u, " "+defaultCABundle+" ", name)
	}
	reg, ok := unitContents(cfg, PayloadUnit)
	require.True(t, ok)
	assert.Contains(t, reg, "update-ca-trust extract", "the anchors are extracted before the units that pull start")
}
