package extiso

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/seed-a052040e/agentiso/pkg/manifests"
	"github.com/seed-a052040e/agentiso/pkg/release"
)

// Port is where every host serves the embedded payload (the port upstream
// registered for the InternalReleaseImage registry).
const Port = 22625

// LocalRegistry is the embedded registry as the hosts reach it.
var LocalRegistry = fmt.Sprintf("localhost:%d", Port)

// Sources maps each source repository of the payload to its repository in
// the embedded registry, as mirrors (by digest only): the release's to
// ReleaseRepository, its components' to ComponentRepository, an extra
// image's to its own path. They become the ISO's registries.conf and the
// cluster's ImageDigestMirrorSet.
func Sources(rel *release.Release, extra []string) ([]manifests.ImageDigestSource, error) {
	m := map[string]string{}
	add := func(spec, repo string) error {
		ref, err := name.ParseReference(spec)
		if err != nil {
			return fmt.Errorf("%q: %w", spec, err)
		}
		src := ref.Context().Name()
		if old, ok := m[src]; ok && old != repo {
			return fmt.Errorf("%s holds both the release and its components (%s, %s): not supported", src, old, repo)
		}
		m[src] = repo
		return nil
	}
	if err := add(rel.Pinned, ReleaseRepository); err != nil {
		return nil, err
	}
	for _, spec := range rel.Components {
		if err := add(spec, ComponentRepository); err != nil {
			return nil, err
		}
	}
	for _, spec := range extra {
		ref, err := name.ParseReference(spec)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", spec, err)
		}
		if err := add(spec, ref.Context().RepositoryStr()); err != nil {
			return nil, err
		}
	}
	srcs := make([]string, 0, len(m))
	for s := range m {
		srcs = append(srcs, s)
	}
	sort.Strings(srcs)
	out := make([]manifests.ImageDigestSource, 0, len(srcs))
	for _, s := range srcs {
		out = append(out, manifests.ImageDigestSource{Source: s, Mirrors: []string{LocalRegistry + "/" + m[s]}})
	}
	return out, nil
}

// BundleName is the InternalReleaseImage release name of rel for arch:
// ocp-release-bundle-<version>-<arch>, at most 64 characters (openshift/
// appliance pkg/releasebundle/tag.go).
func BundleName(version, arch string) string {
	s := "ocp-release-bundle-" + version + "-" + arch
	return s[:min(len(s), 64)]
}

// InternalReleaseImageManifest is the cluster manifest that makes the
// Machine Config Operator keep the embedded release
// (/etc/assisted/extra-manifests/internalreleaseimage.yaml upstream).
func InternalReleaseImageManifest(version, arch string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: machineconfiguration.openshift.io/v1alpha1
kind: InternalReleaseImage
metadata:
  name: cluster
spec:
  releases:
  - name: %s
`, BundleName(version, arch)))
}

// ImageDigestMirrorSetManifest is the cluster's mirror set for the
// embedded payload; assisted-service adds the api-int and localhost
// mirrors of every host's registry to it when the InternalReleaseImage is
// present.
func ImageDigestMirrorSetManifest(sources []manifests.ImageDigestSource) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: config.openshift.io/v1\nkind: ImageDigestMirrorSet\nmetadata:\n  name: agent-embedded-payload\nspec:\n  imageDigestMirrors:\n")
	for _, s := range sources {
		fmt.Fprintf(&b, "  - source: %s\n    mirrors:\n", s.Source)
		for _, m := range s.Mirrors {
			fmt.Fprintf(&b, "    - %s\n", m)
		}
	}
	return []byte(b.String())
}

// RegistryCert makes the embedded registry's serving certificate, its own
// CA: ECDSA P-256, valid ten years from now, for localhost, 127.0.0.1,
// ::1 and names (api-int.<cluster>.<domain>).
func RegistryCert(names []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "agent-embedded-payload-registry"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              append([]string{"localhost"}, names...),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	kd, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), nil
}
