package extiso_test

import (
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/pkg/extiso"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
	"github.com/seed-a052040e/agentiso/pkg/release"
)

func TestSourcesMapTheReleaseAndItsComponents(t *testing.T) {
	rel := &release.Release{
		Pinned: "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("a", 64),
		Components: map[string]string{
			"cli":             "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + strings.Repeat("b", 64),
			"docker-registry": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + strings.Repeat("c", 64),
		},
	}
	srcs, err := extiso.Sources(rel, []string{"registry.redhat.io/redhat/bundle@sha256:" + strings.Repeat("d", 64)})
	require.NoError(t, err)
	assert.Equal(t, []manifests.ImageDigestSource{
		{Source: "quay.io/openshift-release-dev/ocp-release", Mirrors: []string{"localhost:22625/openshift/release-images"}},
		{Source: "quay.io/openshift-release-dev/ocp-v4.0-art-dev", Mirrors: []string{"localhost:22625/openshift/release"}},
		{Source: "registry.redhat.io/redhat/bundle", Mirrors: []string{"localhost:22625/redhat/bundle"}},
	}, srcs)

	var idms struct {
		APIVersion string `json:"apiVersion"`
		Kind       string
		Metadata   struct{ Name string }
		Spec       struct {
			ImageDigestMirrors []struct {
				Source  string
				Mirrors []string
			} `json:"imageDigestMirrors"`
		}
	}
	require.NoError(t, yaml.UnmarshalStrict(extiso.ImageDigestMirrorSetManifest(srcs), &idms))
	assert.Equal(t, "ImageDigestMirrorSet", idms.Kind)
	require.Len(t, idms.Spec.ImageDigestMirrors, 3)
	assert.Equal(t, "localhost:22625/openshift/release", idms.Spec.ImageDigestMirrors[1].Mirrors[0])

	rel.Components["x"] = "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("e", 64)
	_, err = extiso.Sources(rel, nil)
	assert.ErrorContains(t, err, "holds both the release and its components")
}

func TestInternalReleaseImageManifest(t *testing.T) {
	var iri struct {
		APIVersion string `json:"apiVersion"`
		Kind       string
		Metadata   struct{ Name string }
		Spec       struct{ Releases []struct{ Name string } }
	}
	require.NoError(t, yaml.UnmarshalStrict(extiso.InternalReleaseImageManifest("4.21.3", "x86_64"), &iri))
	assert.Equal(t, "machineconfiguration.openshift.io/v1alpha1", iri.APIVersion)
	assert.Equal(t, "InternalReleaseImage", iri.Kind)
	assert.Equal(t, "cluster", iri.Metadata.Name)
	require.Len(t, iri.Spec.Releases, 1)
	assert.Equal(t, "ocp-release-bundle-4.21.3-x86_64", iri.Spec.Releases[0].Name)
	long := extiso.BundleName("4.22.0-0.ci-2026-02-09-204741-test-ci-op-phx0mrh8-latest", "x86_64")
	assert.Len(t, long, 64, "at most 64 characters, as the appliance tags it")
}

func TestRegistryCertServesLocalhostAndAPIInt(t *testing.T) {
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	certPEM, keyPEM, err := extiso.RegistryCert([]string{"api-int.sno.example.com"}, now)
	require.NoError(t, err)
	b, _ := pem.Decode(certPEM)
	require.NotNil(t, b)
	c, err := x509.ParseCertificate(b.Bytes)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(c)
	for _, host := range []string{"localhost", "api-int.sno.example.com", "127.0.0.1"} {
		_, err := c.Verify(x509.VerifyOptions{DNSName: host, Roots: pool, CurrentTime: now.AddDate(9, 0, 0)})
		assert.NoError(t, err, host)
	}
	_, err = c.Verify(x509.VerifyOptions{DNSName: "quay.io", Roots: pool, CurrentTime: now})
	assert.Error(t, err)
	k, _ := pem.Decode(keyPEM)
	require.NotNil(t, k)
	_, err = x509.ParseECPrivateKey(k.Bytes)
	assert.NoError(t, err)
}
