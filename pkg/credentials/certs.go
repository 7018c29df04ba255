package credentials

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"time"
)

// Validity of the signer CAs and of the admin client certificate.
const TenYears = 10 * 365 * 24 * time.Hour

// Signer CA common names, as the cluster expects them.
const (
	AdminKubeconfigSignerName             = "admin-kubeconfig-signer"
	KubeAPIServerLBSignerName             = "kube-apiserver-lb-signer"
	KubeAPIServerLocalhostSignerName      = "kube-apiserver-localhost-signer"
	KubeAPIServerServiceNetworkSignerName = "kube-apiserver-service-network-signer"
)

// CertKey is a certificate and its private key, both PEM. KeyPEM is secret.
type CertKey struct {
	CertPEM string `json:"certPEM"`
	KeyPEM  string `json:"keyPEM"`
}

// Parse decodes the certificate and its key.
func (c CertKey) Parse() (*x509.Certificate, crypto.Signer, error) {
	blk, _ := pem.Decode([]byte(c.CertPEM))
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, nil, errors.New("certificate: no CERTIFICATE PEM block")
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("certificate: %w", err)
	}
	kb, _ := pem.Decode([]byte(c.KeyPEM))
	if kb == nil {
		return nil, nil, errors.New("private key: no PEM block")
	}
	var key crypto.Signer
	switch kb.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(kb.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(kb.Bytes)
	default:
		var k any
		k, err = x509.ParsePKCS8PrivateKey(kb.Bytes)
		if err == nil {
			s, ok := k.(crypto.Signer)
			if !ok {
				return nil, nil, errors.New("private key: unsupported type")
			}
			key = s
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("private key: %w", err)
	}
	return cert, key, nil
}

// TLSCertificate returns the pair as a tls.Certificate.
func (c CertKey) TLSCertificate() (tls.Certificate, error) {
	return tls.X509KeyPair([]byte(c.CertPEM), []byte(c.KeyPEM))
}

// SignerCAs are the four self-signed CAs generated on the workstation and
// shipped to node zero, so the cluster it builds trusts the admin kubeconfig.
type SignerCAs struct {
	AdminKubeconfig             CertKey `json:"adminKubeconfigSigner"`
	KubeAPIServerLB             CertKey `json:"kubeAPIServerLBSigner"`
	KubeAPIServerLocalhost      CertKey `json:"kubeAPIServerLocalhostSigner"`
	KubeAPIServerServiceNetwork CertKey `json:"kubeAPIServerServiceNetworkSigner"`
}

// GenerateSignerCAs creates the four CAs (RSA 2048, CN=<name>, OU=openshift,
// valid ten years from now).
func GenerateSignerCAs(random io.Reader, now time.Time) (*SignerCAs, error) {
	s := &SignerCAs{}
	for _, c := range []struct {
		name string
		dst  *CertKey
	}{
		{AdminKubeconfigSignerName, &s.AdminKubeconfig},
		{KubeAPIServerLBSignerName, &s.KubeAPIServerLB},
		{KubeAPIServerLocalhostSignerName, &s.KubeAPIServerLocalhost},
		{KubeAPIServerServiceNetworkSignerName, &s.KubeAPIServerServiceNetwork},
	} {
		ck, err := NewSelfSignedCA(random, c.name, now, TenYears)
		if err != nil {
			return nil, err
		}
		*c.dst = *ck
	}
	return s, nil
}

// ServerCABundle is kube-apiserver-complete-server-ca-bundle: the localhost,
// service-network and LB signer certificates concatenated, in that order.
func (s *SignerCAs) ServerCABundle() []byte {
	var b []byte
	b = append(b, s.KubeAPIServerLocalhost.CertPEM...)
	b = append(b, s.KubeAPIServerServiceNetwork.CertPEM...)
	b = append(b, s.KubeAPIServerLB.CertPEM...)
	return b
}

func serial(random io.Reader) (*big.Int, error) {
	n, err := randInt(random, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("certificate serial: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

func newRSAKey(random io.Reader) (*rsa.PrivateKey, []byte, error) {
	k, err := rsa.GenerateKey(random, 2048)
	if err != nil {
		return nil, nil, fmt.Errorf("generate RSA key: %w", err)
	}
	return k, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), nil
}

// NewSelfSignedCA creates a self-signed CA with CN=name, OU=openshift.
func NewSelfSignedCA(random io.Reader, name string, now time.Time, validity time.Duration) (*CertKey, error) {
	key, keyPEM, err := newRSAKey(random)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	sn, err := serial(random)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: name, OrganizationalUnit: []string{"openshift"}},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(random, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("%s: create certificate: %w", name, err)
	}
	return &CertKey{CertPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), KeyPEM: string(keyPEM)}, nil
}

// LeafRequest describes a certificate to sign with a CA.
type LeafRequest struct {
	CommonName   string
	Organization []string
	DNSNames     []string
	IPs          []net.IP
	ExtKeyUsage  []x509.ExtKeyUsage
	Validity     time.Duration
}

// SignLeaf creates a new RSA key and a certificate for it signed by ca.
func SignLeaf(random io.Reader, ca CertKey, req LeafRequest, now time.Time) (*CertKey, error) {
	caCert, caKey, err := ca.Parse()
	if err != nil {
		return nil, fmt.Errorf("signing CA: %w", err)
	}
	key, keyPEM, err := newRSAKey(random)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.CommonName, err)
	}
	sn, err := serial(random)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: req.CommonName, Organization: req.Organization},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(req.Validity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  req.ExtKeyUsage,
		DNSNames:     req.DNSNames,
		IPAddresses:  req.IPs,
	}
	der, err := x509.CreateCertificate(random, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("%s: create certificate: %w", req.CommonName, err)
	}
	return &CertKey{CertPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), KeyPEM: string(keyPEM)}, nil
}

// AdminClientCert signs the system:admin client certificate (O=system:masters,
// server+client auth, ten years) with the admin-kubeconfig signer.
func AdminClientCert(random io.Reader, signers *SignerCAs, now time.Time) (*CertKey, error) {
	return SignLeaf(random, signers.AdminKubeconfig, LeafRequest{
		CommonName:   "system:admin",
		Organization: []string{"system:masters"},
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		Validity:     TenYears,
	}, now)
}

// ensure ecdsa keys satisfy crypto.Signer in CertKey.Parse.
var _ crypto.Signer = (*ecdsa.PrivateKey)(nil)
