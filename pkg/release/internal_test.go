package release

import (
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCandidatesLongestPrefixAndMerge(t *testing.T) {
	ms := mergeMirrors([]Mirror{
		{Source: "quay.io/openshift-release-dev", Mirrors: []string{"m.local/all"}},
		{Source: "quay.io/openshift-release-dev/ocp-release", Mirrors: []string{"m.local/rel", "b.local/rel"}, DigestOnly: true},
		{Source: "quay.io/openshift-release-dev/ocp-release/", Mirrors: []string{"b.local/rel", "c.local/rel/"}, Blocked: true},
	})
	require.Len(t, ms, 2)
	assert.Equal(t, []string{"m.local/rel", "b.local/rel", "c.local/rel"}, ms[1].Mirrors)
	assert.True(t, ms[1].Blocked && ms[1].DigestOnly)

	dg := "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	ref, err := name.ParseReference("quay.io/openshift-release-dev/ocp-release@" + dg)
	require.NoError(t, err)
	var locs []string
	for _, a := range candidates(ms, ref) {
		locs = append(locs, a.Location+"|"+a.Skipped)
	}
	assert.Equal(t, []string{"m.local/rel@" + dg + "|", "b.local/rel@" + dg + "|", "c.local/rel@" + dg + "|",
		"quay.io/openshift-release-dev/ocp-release@" + dg + "|blocked: sourcePolicy NeverContactSource"}, locs)

	// A sibling repository only matches the namespace rule; a repository
	// whose name merely starts with the source does not match it.
	ref, _ = name.ParseReference("quay.io/openshift-release-dev/ocp-release-nightly:4.19")
	as := candidates(ms, ref)
	require.Len(t, as, 2)
	assert.Equal(t, "m.local/all/ocp-release-nightly:4.19", as[0].Location)
	assert.Empty(t, as[0].Skipped, "not digest-only: a tag may use it")
}

func TestPullSecretLookup(t *testing.T) {
	ps, err := parsePullSecret([]byte(`{"auths":{"https://index.docker.io/v1/":{"auth":"YTpi"},"quay.io":{"username":"q","password":"p"},"quay.io/openshift-release-dev":{"auth":"cjpz"}}}`))
	require.NoError(t, err)
	k, c := ps.lookup("quay.io/openshift-release-dev/ocp-release")
	assert.Equal(t, "quay.io/openshift-release-dev", k)
	assert.Equal(t, "r", c.Username)
	k, c = ps.lookup("quay.io/other/x")
	assert.Equal(t, "quay.io", k)
	assert.Equal(t, "q", c.Username)
	k, _ = ps.lookup("index.docker.io/library/busybox")
	assert.Equal(t, "index.docker.io", k)
	k, _ = ps.lookup("quay.iox/a")
	assert.Empty(t, k)

	_, err = parsePullSecret([]byte(`{"auths":{"x":{"auth":"!!"}}}`))
	assert.ErrorContains(t, err, `auths["x"].auth is not base64`)

	// An auth that is base64 but not user:password is an error only when
	// the registry it is for is contacted (issue 21 item 11): another
	// registry's entry must not stop a pull, nor a run that pulls nothing.
	ps, err = parsePullSecret([]byte(`{"auths":{"x.example.com":{"auth":"YWJj"},"quay.io":{"auth":"cjpz"}}}`))
	require.NoError(t, err)
	_, err = ps.Resolve(mustRepo(t, "x.example.com/a/b"))
	assert.ErrorContains(t, err, `pull secret auths["x.example.com"].auth does not decode to user:password`)
	a, err := ps.Resolve(mustRepo(t, "quay.io/a/b"))
	require.NoError(t, err)
	got, err := a.Authorization()
	require.NoError(t, err)
	assert.Equal(t, "r", got.Username)
	a, err = ps.Resolve(mustRepo(t, "registry.example.org/a/b"))
	require.NoError(t, err)
	assert.Equal(t, authn.Anonymous, a)
}

func mustRepo(t *testing.T, s string) name.Repository {
	t.Helper()
	r, err := name.NewRepository(s)
	require.NoError(t, err)
	return r
}

// A tag whose repository is mirrored by digest only and whose source may
// not be contacted can be looked up nowhere: said, with both reasons; a
// digest, a reachable source or a mirror that takes tags can.
func TestLookupRefused(t *testing.T) {
	blocked := []Mirror{{Source: "quay.io/openshift-release-dev/ocp-release", Mirrors: []string{"mirror.example:5000/ocp/release"}, DigestOnly: true, Blocked: true}}
	why := LookupRefused(blocked, "quay.io/openshift-release-dev/ocp-release:4.20.3-x86_64")
	assert.Contains(t, why, "mirror.example:5000/ocp/release:4.20.3-x86_64: mirror-by-digest-only")
	assert.Contains(t, why, "quay.io/openshift-release-dev/ocp-release:4.20.3-x86_64: blocked: sourcePolicy NeverContactSource")
	assert.Empty(t, LookupRefused(blocked, "quay.io/openshift-release-dev/ocp-release@sha256:"+strings.Repeat("a", 64)))
	open := []Mirror{{Source: "quay.io/openshift-release-dev/ocp-release", Mirrors: []string{"mirror.example:5000/ocp/release"}, DigestOnly: true}}
	assert.Empty(t, LookupRefused(open, "quay.io/openshift-release-dev/ocp-release:4.20.3-x86_64"), "the source answers tags")
	assert.Empty(t, LookupRefused(blocked, "registry.example/other:1"), "not mirrored")
	assert.Empty(t, LookupRefused(blocked, "not a reference ::"), "the reference's own error is said elsewhere")
}
