package serve

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// SelfSigned is a generated serving certificate.
type SelfSigned struct {
	Cert tls.Certificate
	// PEM is the certificate (not the key), to give to a BMC or a client
	// that should trust it.
	PEM []byte
	// Fingerprint is the SHA-256 of the certificate's DER, hex.
	Fingerprint string
}

// GenerateCert makes a self-signed ECDSA P-256 certificate valid for the
// given host names and IP addresses, for valid from now.
func GenerateCert(hosts []string, valid time.Duration) (*SelfSigned, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "agentiso serve"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(valid),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tpl.IPAddresses = append(tpl.IPAddresses, ip)
		} else if h != "" {
			tpl.DNSNames = append(tpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("create certificate: %w", err)
	}
	return &SelfSigned{
		Cert:        tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		PEM:         pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Fingerprint: sha256Hex(der),
	}, nil
}

// TLSConfig is the server side TLS configuration for cert: TLS 1.2 or
// later (BMC firmware rarely speaks 1.3).
func TLSConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}
