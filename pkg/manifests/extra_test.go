package manifests

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplitManifests(t *testing.T) {
	docs, err := SplitManifests("openshift/a.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"))
	require.NoError(t, err)
	require.Len(t, docs, 2)
	assert.Equal(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n", string(docs[1]))
	_, err = SplitManifests("openshift/a.yaml", []byte("kind: ConfigMap\n"))
	assert.EqualError(t, err, "openshift/a.yaml:1: every document needs apiVersion, kind and metadata.name")
}
