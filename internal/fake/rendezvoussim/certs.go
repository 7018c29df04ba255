package rendezvoussim

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/credentials"
)

// NewKubeServerCert signs a serving certificate for the fake API server with
// the kube-apiserver-lb signer, valid for api.<cluster>.<domain>, localhost,
// 127.0.0.1 and ::1 — so the admin kubeconfig's CA bundle trusts it.
func NewKubeServerCert(random io.Reader, signers *credentials.SignerCAs, clusterName, baseDomain string, now time.Time) (tls.Certificate, error) {
	ck, err := credentials.SignLeaf(random, signers.KubeAPIServerLB, credentials.LeafRequest{
		CommonName:  "api." + clusterName + "." + strings.TrimSuffix(baseDomain, "."),
		DNSNames:    []string{"api." + clusterName + "." + strings.TrimSuffix(baseDomain, "."), "localhost"},
		IPs:         []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		Validity:    24 * time.Hour,
	}, now)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("simulator serving certificate: %w", err)
	}
	return ck.TLSCertificate()
}

// ClientCAPool returns a pool holding the admin-kubeconfig signer.
func ClientCAPool(signers *credentials.SignerCAs) (*x509.CertPool, error) {
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM([]byte(signers.AdminKubeconfig.CertPEM)) {
		return nil, fmt.Errorf("simulator: the admin-kubeconfig signer certificate is not valid PEM")
	}
	return p, nil
}
