package ocmirror_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/pkg/manifests"
	"github.com/seed-a052040e/agentiso/pkg/ocmirror"
)

// The files as oc-mirror v2 writes them (openshift/oc-mirror
// docs/features/cluster-resources.md and internal/pkg/clusterresources:
// mirror sets as "---"-separated documents, one per category).
var workspace = map[string]string{
	"working-dir/cluster-resources/idms-oc-mirror.yaml": `---
apiVersion: config.openshift.io/v1
kind: ImageDigestMirrorSet
metadata:
  name: idms-release-0
spec:
  imageDigestMirrors:
  - mirrors:
    - registry.example.com:8443/openshift/release
    source: quay.io/openshift-release-dev/ocp-v4.0-art-dev
  - mirrors:
    - registry.example.com:8443/openshift/release-images
    source: quay.io/openshift-release-dev/ocp-release
status: {}
---
apiVersion: config.openshift.io/v1
kind: ImageDigestMirrorSet
metadata:
  name: idms-operator-0
spec:
  imageDigestMirrors:
  - mirrors:
    - registry.example.com:8443/redhat
    source: registry.redhat.io/redhat
`,
	"working-dir/cluster-resources/itms-oc-mirror.yaml": `---
apiVersion: config.openshift.io/v1
kind: ImageTagMirrorSet
metadata:
  name: itms-generic-0
spec:
  imageTagMirrors:
  - mirrors:
    - registry.example.com:8443/redhat/redhat-operator-index
    source: registry.redhat.io/redhat/redhat-operator-index
`,
	"working-dir/cluster-resources/cs-redhat-operator-index-v4-21.yaml": `apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: cs-redhat-operator-index-v4-21
  namespace: openshift-marketplace
spec:
  image: registry.example.com:8443/redhat/redhat-operator-index:v4.21
  sourceType: grpc
`,
	"working-dir/cluster-resources/cc-redhat-operator-index-v4-21.yaml": `apiVersion: olm.operatorframework.io/v1
kind: ClusterCatalog
metadata:
  name: cc-redhat-operator-index-v4-21
spec:
  source:
    type: Image
    image:
      ref: registry.example.com:8443/redhat/redhat-operator-index:v4.21
`,
	"working-dir/cluster-resources/signature-configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: mirrored-release-signatures
  namespace: openshift-config-managed
  labels:
    release.openshift.io/verification-signatures: ""
binaryData:
  sha256-0123456789abcdef-1: AAAA
`,
	"working-dir/cluster-resources/signature-configmap.json": `{"apiVersion":"v1","kind":"ConfigMap"}`,
}

func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	return dir
}

func TestReadWorkspace(t *testing.T) {
	dir := write(t, workspace)
	for _, given := range []string{dir, filepath.Join(dir, "working-dir"), filepath.Join(dir, "working-dir", "cluster-resources")} {
		r, err := ocmirror.Read(given)
		require.NoError(t, err, given)
		assert.Equal(t, filepath.Join(dir, "working-dir", "cluster-resources"), r.Dir)
		assert.Equal(t, []manifests.ImageDigestSource{
			{Source: "quay.io/openshift-release-dev/ocp-v4.0-art-dev", Mirrors: []string{"registry.example.com:8443/openshift/release"}},
			{Source: "quay.io/openshift-release-dev/ocp-release", Mirrors: []string{"registry.example.com:8443/openshift/release-images"}},
			{Source: "registry.redhat.io/redhat", Mirrors: []string{"registry.example.com:8443/redhat"}},
		}, r.DigestSources)
		var kinds, names []string
		for _, m := range r.Manifests {
			var h struct{ Kind string }
			require.NoError(t, yaml.Unmarshal(m.Contents, &h))
			kinds = append(kinds, h.Kind)
			names = append(names, m.FileName)
		}
		assert.Equal(t, []string{"ClusterCatalog", "CatalogSource", "ImageTagMirrorSet", "ConfigMap"}, kinds, "every other resource, the JSON twin skipped")
		assert.Equal(t, []string{"oc-mirror-cc-redhat-operator-index-v4-21-0.yaml", "oc-mirror-cs-redhat-operator-index-v4-21-0.yaml",
			"oc-mirror-itms-oc-mirror-0.yaml", "oc-mirror-signature-configmap-0.yaml"}, names)
	}
}

func TestBadResourcesAreRefused(t *testing.T) {
	for name, c := range map[string]struct{ file, content, err string }{
		"unknown kind":         {"x.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n", `kind "Secret" is not one oc-mirror writes`},
		"wrong apiVersion":     {"x.yaml", "apiVersion: operator.openshift.io/v1alpha1\nkind: ImageDigestMirrorSet\nmetadata:\n  name: i\n", `want "config.openshift.io/v1"`},
		"configmap elsewhere":  {"x.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: default\n", "openshift-config-managed"},
		"idms typo":            {"idms-oc-mirror.yaml", "apiVersion: config.openshift.io/v1\nkind: ImageDigestMirrorSet\nmetadata:\n  name: i\nspec:\n  imageDigestMirrors:\n  - sourse: a.io/b\n    mirrors: [m.io/b]\n", "sourse"},
		"idms without mirrors": {"idms-oc-mirror.yaml", "apiVersion: config.openshift.io/v1\nkind: ImageDigestMirrorSet\nmetadata:\n  name: i\nspec:\n  imageDigestMirrors:\n  - source: a.io/b\n", "no mirrors"},
		"idms by digest":       {"idms-oc-mirror.yaml", "apiVersion: config.openshift.io/v1\nkind: ImageDigestMirrorSet\nmetadata:\n  name: i\nspec:\n  imageDigestMirrors:\n  - source: a.io/b@sha256:00\n    mirrors: [m.io/b]\n", "not a registry or repository"},
		"bad policy":           {"idms-oc-mirror.yaml", "apiVersion: config.openshift.io/v1\nkind: ImageDigestMirrorSet\nmetadata:\n  name: i\nspec:\n  imageDigestMirrors:\n  - source: a.io/b\n    mirrors: [m.io/b]\n    mirrorSourcePolicy: Sometimes\n", "mirrorSourcePolicy"},
		"not yaml":             {"notes.txt", "hello", "not a YAML file"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := write(t, map[string]string{"cluster-resources/" + c.file: c.content})
			_, err := ocmirror.Read(dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.err)
			assert.Contains(t, err.Error(), c.file, "the error names the file")
		})
	}
	_, err := ocmirror.Read(t.TempDir())
	assert.ErrorContains(t, err, "no oc-mirror cluster resources: expected")
	big := write(t, map[string]string{"cluster-resources/idms-oc-mirror.yaml": "# " + strings.Repeat("x", ocmirror.MaxFileBytes)})
	_, err = ocmirror.Read(big)
	assert.ErrorContains(t, err, "larger than")
}

// The files are outside input: whatever is accepted names repositories
// and has mirrors; nothing panics.
func FuzzParseFile(f *testing.F) {
	for _, c := range workspace {
		f.Add([]byte(c))
	}
	f.Add([]byte("apiVersion: config.openshift.io/v1\nkind: ImageDigestMirrorSet\nmetadata:\n  name: i\nspec:\n  imageDigestMirrors: []\n"))
	f.Add([]byte("---\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ocmirror.ParseFile("/cr/idms-oc-mirror.yaml", data)
		if err != nil {
			return
		}
		for _, s := range r.DigestSources {
			assert.NotEmpty(t, s.Source)
			assert.NotEmpty(t, s.Mirrors)
			assert.NotContains(t, s.Source, "@")
		}
		for _, m := range r.Manifests {
			assert.True(t, strings.HasPrefix(m.FileName, "oc-mirror-idms-oc-mirror-"))
			assert.NotContains(t, m.FileName, "/")
		}
	})
}
