package ocmirror_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/pkg/ocmirror"
	"github.com/seed-a052040e/agentiso/pkg/regstore"
)

// embeddedPlan is what an extended ISO's registry serves: a catalog by
// tag, an additional image, the release and the update graph image.
func embeddedPlan(t *testing.T) (*regstore.Plan, v1.Hash) {
	t.Helper()
	p := regstore.NewPlan()
	var catalog v1.Hash
	for i, im := range []struct{ repo, tag string }{
		{"redhat/redhat-operator-index", "v4.21"},
		{"ubi9/ubi", "latest"},
		{"openshift/release-images", "4.21.3-x86_64"},
		{"openshift/graph-image", "latest"},
	} {
		img, err := mutate.AppendLayers(empty.Image, static.NewLayer([]byte{byte(i)}, types.DockerLayer))
		require.NoError(t, err)
		require.NoError(t, p.Add(context.Background(), im.repo, im.tag, img))
		if i == 0 {
			catalog, err = img.Digest()
			require.NoError(t, err)
		}
	}
	return p, catalog
}

func readResources(t *testing.T, files map[string]string) *ocmirror.Resources {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "working-dir", "cluster-resources")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for n, c := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644))
	}
	r, err := ocmirror.Read(filepath.Dir(filepath.Dir(dir)))
	require.NoError(t, err)
	return r
}

func byName(t *testing.T, ms []ocmirror.Manifest) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, m := range ms {
		var obj map[string]any
		require.NoError(t, yaml.Unmarshal(m.Contents, &obj), m.FileName)
		out[m.FileName] = obj
	}
	return out
}

// The cluster resources of a disk-to-mirror run name the registry
// oc-mirror pushed to (under its destination's namespace): for a
// registry-less install they name the embedded registry instead, each
// image under the embedded repository its path ends in, and what the
// registry does not serve is left out and named.
func TestEmbeddedManifests(t *testing.T) {
	p, catalog := embeddedPlan(t)
	r := readResources(t, map[string]string{
		"itms-oc-mirror.yaml": `apiVersion: config.openshift.io/v1
kind: ImageTagMirrorSet
metadata:
  name: itms-generic-0
spec:
  imageTagMirrors:
  - mirrors:
    - mirror.example.com:5000/disconnected/ubi9/ubi
    source: registry.access.redhat.com/ubi9/ubi
  - mirrors:
    - mirror.example.com:5000/disconnected/other/thing
    source: quay.io/other/thing
  - mirrors:
    - mirror.example.com:5000/disconnected/redhat
    mirrorSourcePolicy: NeverContactSource
    source: registry.redhat.io/redhat
status: {}
---
apiVersion: config.openshift.io/v1
kind: ImageTagMirrorSet
metadata:
  name: itms-none-0
spec:
  imageTagMirrors:
  - mirrors:
    - mirror.example.com:5000/disconnected/none/at-all
    source: quay.io/none/at-all
`,
		"cs-redhat-operator-index-v4-21.yaml": `apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: cs-redhat-operator-index-v4-21
  namespace: openshift-marketplace
  annotations:
    createdBy: oc-mirror v2
spec:
  image: mirror.example.com:5000/disconnected/redhat/redhat-operator-index:v4.21
  sourceType: grpc
  priority: 10
status: {}
`,
		"cs-redhat-operator-index-digest.yaml": `apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: cs-redhat-operator-index-digest
  namespace: openshift-marketplace
spec:
  image: mirror.example.com:5000/redhat/redhat-operator-index@` + catalog.String() + `
  sourceType: grpc
`,
		"cs-redhat-operator-index-v4-20.yaml": `apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: cs-redhat-operator-index-v4-20
  namespace: openshift-marketplace
spec:
  image: mirror.example.com:5000/redhat/redhat-operator-index:v4.20
  sourceType: grpc
`,
		"cs-community-operator-index-v4-21.yaml": `apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: cs-community-operator-index-v4-21
  namespace: openshift-marketplace
spec:
  image: mirror.example.com:5000/redhat/community-operator-index:v4.21
  sourceType: grpc
`,
		"cc-redhat-operator-index-v4-21.yaml": `apiVersion: olm.operatorframework.io/v1
kind: ClusterCatalog
metadata:
  name: cc-redhat-operator-index-v4-21
spec:
  source:
    image:
      ref: mirror.example.com:5000/disconnected/redhat/redhat-operator-index:v4.21
    type: Image
`,
		"updateService.yaml": `apiVersion: updateservice.operator.openshift.io/v1
kind: UpdateService
metadata:
  name: update-service-oc-mirror
spec:
  graphDataImage: mirror.example.com:5000/disconnected/openshift/graph-image:latest
  releases: mirror.example.com:5000/disconnected/openshift/release-images
  replicas: 2
`,
		"signature-configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: mirrored-release-signatures
  namespace: openshift-config-managed
binaryData:
  sha256-00-1: b3duZXI=
`,
	})
	out, unserved, err := r.EmbeddedManifests(p, "localhost:22625")
	require.NoError(t, err)
	got := byName(t, out)
	assert.ElementsMatch(t, []string{
		"oc-mirror-itms-oc-mirror-0.yaml",
		"oc-mirror-cs-redhat-operator-index-v4-21-0.yaml",
		"oc-mirror-cs-redhat-operator-index-digest-0.yaml",
		"oc-mirror-cc-redhat-operator-index-v4-21-0.yaml",
		"oc-mirror-updateService-0.yaml",
		"oc-mirror-signature-configmap-0.yaml",
	}, keys(got))

	assert.Equal(t, []any{
		map[string]any{"source": "registry.access.redhat.com/ubi9/ubi", "mirrors": []any{"localhost:22625/ubi9/ubi"}},
		map[string]any{"source": "registry.redhat.io/redhat", "mirrors": []any{"localhost:22625/redhat"}, "mirrorSourcePolicy": "NeverContactSource"},
	}, got["oc-mirror-itms-oc-mirror-0.yaml"]["spec"].(map[string]any)["imageTagMirrors"])
	assert.Equal(t, "itms-generic-0", got["oc-mirror-itms-oc-mirror-0.yaml"]["metadata"].(map[string]any)["name"])

	cs := got["oc-mirror-cs-redhat-operator-index-v4-21-0.yaml"]
	assert.Equal(t, map[string]any{"image": "localhost:22625/redhat/redhat-operator-index:v4.21", "sourceType": "grpc", "priority": float64(10)}, cs["spec"])
	assert.Equal(t, map[string]any{"createdBy": "oc-mirror v2"}, cs["metadata"].(map[string]any)["annotations"], "the rest of the resource is kept")
	assert.Equal(t, "localhost:22625/redhat/redhat-operator-index@"+catalog.String(),
		got["oc-mirror-cs-redhat-operator-index-digest-0.yaml"]["spec"].(map[string]any)["image"])
	assert.Equal(t, "localhost:22625/redhat/redhat-operator-index:v4.21",
		got["oc-mirror-cc-redhat-operator-index-v4-21-0.yaml"]["spec"].(map[string]any)["source"].(map[string]any)["image"].(map[string]any)["ref"])
	us := got["oc-mirror-updateService-0.yaml"]["spec"].(map[string]any)
	assert.Equal(t, "localhost:22625/openshift/graph-image:latest", us["graphDataImage"])
	assert.Equal(t, "localhost:22625/openshift/release-images", us["releases"])
	for _, m := range out {
		if m.FileName == "oc-mirror-signature-configmap-0.yaml" {
			assert.Contains(t, string(m.Contents), "sha256-00-1: b3duZXI=", "the signatures are kept as they are")
		}
	}

	var names []string
	for _, u := range unserved {
		names = append(names, u.String())
	}
	assert.ElementsMatch(t, []string{
		"ImageTagMirrorSet itms-generic-0 (oc-mirror-itms-oc-mirror-0.yaml): quay.io/other/thing",
		"ImageTagMirrorSet itms-none-0 (oc-mirror-itms-oc-mirror-1.yaml): quay.io/none/at-all",
		"CatalogSource cs-redhat-operator-index-v4-20 (oc-mirror-cs-redhat-operator-index-v4-20-0.yaml): mirror.example.com:5000/redhat/redhat-operator-index:v4.20",
		"CatalogSource cs-community-operator-index-v4-21 (oc-mirror-cs-community-operator-index-v4-21-0.yaml): mirror.example.com:5000/redhat/community-operator-index:v4.21",
	}, names)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A resource that is not what oc-mirror writes is an error naming it, not
// a resource silently left out.
func TestEmbeddedManifestsBadResource(t *testing.T) {
	p, _ := embeddedPlan(t)
	for name, doc := range map[string]string{
		"no image": `apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: cs-x
spec:
  sourceType: grpc
`,
		"not a reference": `apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: cs-x
spec:
  image: "Not/A:Reference:at all"
`,
		"image not a string": `apiVersion: olm.operatorframework.io/v1
kind: ClusterCatalog
metadata:
  name: cc-x
spec:
  source:
    image: 3
`,
		"bad mirror": `apiVersion: config.openshift.io/v1
kind: ImageTagMirrorSet
metadata:
  name: itms-x
spec:
  imageTagMirrors:
  - source: quay.io/a/b
    mirrors:
    - "has space/x"
`,
		"no entries": `apiVersion: config.openshift.io/v1
kind: ImageTagMirrorSet
metadata:
  name: itms-x
spec: {}
`,
	} {
		t.Run(name, func(t *testing.T) {
			r := readResources(t, map[string]string{"x.yaml": doc})
			_, _, err := r.EmbeddedManifests(p, "localhost:22625")
			require.Error(t, err)
			assert.Contains(t, err.Error(), "oc-mirror-x-0.yaml")
		})
	}
}
