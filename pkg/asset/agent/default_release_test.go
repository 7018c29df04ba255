package agent

import (
	"regexp"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/data"
)

// The pinned default is what hosts pull when the user names no release.
// install-config mirrors are written mirror-by-digest-only, so a tag would
// never be served by them: the pin must be a digest reference.
func TestPinnedDefaultReleaseIsByDigest(t *testing.T) {
	def, err := DefaultRelease()
	require.NoError(t, err)
	ref, err := name.ParseReference(def.PullSpec, name.StrictValidation)
	require.NoError(t, err)
	d, ok := ref.(name.Digest)
	require.True(t, ok, "the pinned default %s is not a digest reference", def.PullSpec)
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, d.DigestStr())
	assert.Equal(t, "quay.io/openshift-release-dev/ocp-release", d.Context().Name())
	assert.Regexp(t, regexp.MustCompile(`^4\.\d+\.\d+$`), def.Version, "an exact x.y.z version")
	assert.Equal(t, "x86_64", def.Arch)
	assert.True(t, def.Default)
}

func TestParsePinnedRelease(t *testing.T) {
	const digest = "quay.io/openshift-release-dev/ocp-release@sha256:3ec3a43ded1decc18134e5677f56037d8929f4442930f5d1156e7a77cdf1b9b3"
	r, err := parsePinnedRelease("4.16.3 x86_64 " + digest + "\n")
	require.NoError(t, err)
	assert.Equal(t, &ReleaseImage{Version: "4.16.3", Arch: "x86_64", PullSpec: digest, Default: true}, r)

	for _, tc := range []struct{ line, want string }{
		// a tag: digest-only mirrors never serve it
		{"4.16.0 x86_64 quay.io/openshift-release-dev/ocp-release:4.16.0-x86_64", "must be a digest reference (repository@sha256:...), not a tag"},
		{"4.16.3 x86_64", `want "<version> <arch> <pull spec>"`},
		{"4.16.3 x86_64 " + digest + " extra", `want "<version> <arch> <pull spec>"`},
		{"4.16.3 x86_64 quay.io/x@sha256:abc", "is not an image reference"},
		{"4.16 x86_64 " + digest, "version \"4.16\" is not an exact x.y.z version"},
		{"4.16.3 amd64 " + digest, "architecture \"amd64\" is not one of"},
	} {
		_, err := parsePinnedRelease(tc.line)
		assert.ErrorContains(t, err, tc.want, tc.line)
	}
}

// The embedded line parses the same way DefaultRelease reads it.
func TestPinnedReleaseFileParses(t *testing.T) {
	_, err := parsePinnedRelease(data.ReleaseImage)
	require.NoError(t, err)
}
