package regstore_test

import (
	"path"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/regstore"
)

// Repository and tag names come from the user (extra images) and from
// oc-mirror's output; they become paths of the tree. Whatever is accepted
// stays inside the store and is a name registries accept.
func FuzzValidateRepository(f *testing.F) {
	for _, s := range []string{"openshift/release", "openshift/release-images", "a", "../x", "a//b", "a/./b", "A/b", "a__b/c--d.e", "a/", "/a", "a/..", "x/" + strings.Repeat("y", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, repo string) {
		if regstore.ValidateRepository(repo) != nil {
			return
		}
		p := path.Join(regstore.Root, "repositories", repo, "_manifests")
		require.Equal(t, regstore.Root+"/repositories/"+repo+"/_manifests", p, "the path is the name, unchanged by cleaning")
		for _, c := range strings.Split(repo, "/") {
			assert.NotContains(t, []string{"", ".", ".."}, c)
		}
		_, err := name.NewRepository("registry.example:22625/"+repo, name.StrictValidation)
		assert.NoError(t, err)
	})
}

func FuzzValidateTag(f *testing.F) {
	for _, s := range []string{"4.21.3-x86_64", "4.21.3-x86_64-docker-registry", "sha256-abc", ".x", "-x", "a/b", "..", "", strings.Repeat("t", 129)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tag string) {
		if regstore.ValidateTag(tag) != nil {
			return
		}
		assert.NotContains(t, tag, "/")
		assert.NotEqual(t, "..", tag)
		assert.NotEqual(t, ".", tag)
		_, err := name.NewTag("registry.example:22625/a/b:"+tag, name.StrictValidation)
		assert.NoError(t, err)
	})
}
