package nodejoin

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func csrPEM(t *testing.T, cn string, dns []string, ips []string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: []string{"system:nodes"}}, DNSNames: dns}
	for _, ip := range ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func obj(name, user, signer string, req []byte, approved bool) csrObject {
	var o csrObject
	o.Metadata.Name, o.Spec.Username, o.Spec.SignerName, o.Spec.Request = name, user, signer, req
	if approved {
		o.Status.Conditions = append(o.Status.Conditions, struct {
			Type string `json:"type"`
		}{"Approved"})
	}
	return o
}

func TestMatchCSR(t *testing.T) {
	hosts := []JoiningHost{{Name: "worker-1", IP: "192.168.111.31"}}
	for name, tc := range map[string]struct {
		o    csrObject
		ok   bool
		want string
	}{
		"client":           {obj("c1", bootstrapperUser, clientSigner, csrPEM(t, "system:node:worker-1", nil, nil), false), true, ""},
		"serving":          {obj("s1", "system:node:worker-1", servingSigner, csrPEM(t, "system:node:worker-1", []string{"worker-1"}, []string{"192.168.111.31"}), false), true, ""},
		"approved already": {obj("c2", bootstrapperUser, clientSigner, csrPEM(t, "system:node:worker-1", nil, nil), true), false, "not pending"},
		"other node":       {obj("c3", bootstrapperUser, clientSigner, csrPEM(t, "system:node:worker-7", nil, nil), false), false, "node worker-7 is not one of the hosts being added"},
		"foreign IP":       {obj("s2", "system:node:worker-1", servingSigner, csrPEM(t, "system:node:worker-1", nil, []string{"10.9.9.9"}), false), false, "it asks for IP 10.9.9.9, which is not worker-1's (192.168.111.31)"},
		"foreign name":     {obj("s3", "system:node:worker-1", servingSigner, csrPEM(t, "system:node:worker-1", []string{"evil.example.com"}, nil), false), false, "it asks for the name evil.example.com"},
		"wrong requester":  {obj("c4", "system:serviceaccount:default:x", clientSigner, csrPEM(t, "system:node:worker-1", nil, nil), false), false, "not as a joining node's"},
		"not a node":       {obj("c5", bootstrapperUser, clientSigner, csrPEM(t, "admin", nil, nil), false), false, `its subject "admin" names no node`},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := parseCSR(tc.o)
			require.NoError(t, err)
			h, ok, why := MatchCSR(c, hosts)
			assert.Equal(t, tc.ok, ok, why)
			if tc.ok {
				assert.Equal(t, hosts[0], h)
			} else {
				assert.Contains(t, why, tc.want)
			}
		})
	}
	_, err := parseCSR(obj("bad", bootstrapperUser, clientSigner, []byte("nope"), false))
	assert.ErrorContains(t, err, "csr bad: spec.request holds no PEM block")
}
