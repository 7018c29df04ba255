package manifests

import (
	"strings"
	"testing"

	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"

	"github.com/stretchr/testify/assert"
)

// TestRegistriesConfMergesDuplicateSources checks that imageDigestSources
// entries with the same source become one [[registry]] with the union of
// their mirrors, in first-seen order (two registries with the same
// location make containers refuse registries.conf).
func TestRegistriesConfMergesDuplicateSources(t *testing.T) {
	conf := GenerateRegistriesConf([]ImageDigestSource{
		{Source: "quay.io/openshift-release-dev/ocp-release", Mirrors: []string{"m1.example.com/ocp/release"}},
		{Source: "quay.io/openshift-release-dev/ocp-v4.0-art-dev", Mirrors: []string{"m1.example.com/ocp/art"}},
		{Source: "quay.io/openshift-release-dev/ocp-release", Mirrors: []string{"m2.example.com/ocp/release", "m1.example.com/ocp/release"}},
	})
	assert.Equal(t, 2, strings.Count(conf, "[[registry]]"), conf)
	assert.Equal(t, 1, strings.Count(conf, `location = "quay.io/openshift-release-dev/ocp-release"`), conf)
	assert.Equal(t, 1, strings.Count(conf, `location = "m1.example.com/ocp/release"`), conf)
	first := strings.Index(conf, `location = "m1.example.com/ocp/release"`)
	second := strings.Index(conf, `location = "m2.example.com/ocp/release"`)
	art := strings.Index(conf, `location = "quay.io/openshift-release-dev/ocp-v4.0-art-dev"`)
	assert.True(t, first >= 0 && second > first && art > second, "mirrors of the merged source stay together, in first-seen order:\n%s", conf)
}

// TestConflictingSourcePolicy checks that one source cannot be both
// blocked (NeverContactSource) and contacted.
func TestConflictingSourcePolicy(t *testing.T) {
	y := edit(t, testfixture.InstallConfig, "pullSecret:", `imageDigestSources:
- source: quay.io/openshift-release-dev/ocp-release
  mirrors: [m1.example.com/ocp/release]
  sourcePolicy: NeverContactSource
- source: quay.io/openshift-release-dev/ocp-release
  mirrors: [m2.example.com/ocp/release]
pullSecret:`)
	ic, lines := decodeT[InstallConfig](t, assetdir.InstallConfig, y)
	ic.SetDefaults()
	assertErrs(t, ValidateInstallConfig(ic, lines),
		`install-config.yaml:23: imageDigestSources[1].sourcePolicy: Invalid value: "": conflicts with imageDigestSources[0] (NeverContactSource) for the same source quay.io/openshift-release-dev/ocp-release; give every entry of one source the same sourcePolicy`)
}

func TestGenerateRegistriesConf(t *testing.T) {
	conf := GenerateRegistriesConf([]ImageDigestSource{{Source: "quay.io/openshift-release-dev/ocp-release",
		Mirrors: []string{"mirror.local:5000/ocp/release"}, SourcePolicy: "NeverContactSource"}})
	assert.Contains(t, conf, "[[registry]]\n  location = \"quay.io/openshift-release-dev/ocp-release\"\n  mirror-by-digest-only = true\n  blocked = true\n")
	assert.Contains(t, conf, "[[registry.mirror]]\n    location = \"mirror.local:5000/ocp/release\"\n")
	assert.Equal(t, []string{"quay.io/openshift-release-dev/ocp-release"}, RegistriesConfLocations(conf))
	assert.True(t, MirrorCovers([]ImageDigestSource{{Source: "quay.io/openshift-release-dev/ocp-release"}}, "quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64"))
	assert.True(t, MirrorCovers([]ImageDigestSource{{Source: "quay.io/openshift-release-dev"}}, "quay.io/openshift-release-dev/ocp-release@sha256:abc"))
	assert.False(t, MirrorCovers([]ImageDigestSource{{Source: "quay.io/other"}}, "quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64"))
	assert.Equal(t, DefaultRegistriesConf, GenerateRegistriesConf(nil))
}
