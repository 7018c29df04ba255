package credentials

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAuthConfigTokens(t *testing.T) {
	ac, err := GenerateAuthConfig(rand.Reader)
	require.NoError(t, err)
	pub, err := ac.ECPublicKey()
	require.NoError(t, err)

	for tok, want := range map[string]string{
		ac.AgentAuthToken:   "agentAuth",
		ac.UserAuthToken:    "userAuth",
		ac.WatcherAuthToken: "watcherAuth",
	} {
		c, err := Verify(tok, pub)
		require.NoError(t, err)
		assert.Equal(t, Claims{"auth_scheme": want}, c, "install tokens carry only auth_scheme")
		s, ok := c.AuthScheme()
		assert.True(t, ok)
		assert.Equal(t, want, s)
		hdr, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[0])
		require.NoError(t, err)
		assert.JSONEq(t, `{"alg":"ES256","typ":"JWT"}`, string(hdr))
	}

	// Public key as handed to assisted-service: base64 of an "EC PUBLIC KEY" PEM.
	p, err := ac.PublicKeyPEM()
	require.NoError(t, err)
	blk, _ := pem.Decode(p)
	require.NotNil(t, blk)
	assert.Equal(t, "EC PUBLIC KEY", blk.Type)
	assert.NotContains(t, ac.PublicKey, "\n")

	// The private key round-trips and matches.
	priv, err := ParsePrivateKey(ac.PrivateKey)
	require.NoError(t, err)
	assert.True(t, priv.PublicKey.Equal(pub))

	// JSON keys the asset state relies on.
	b, err := json.Marshal(ac)
	require.NoError(t, err)
	for _, k := range []string{`"publicKey"`, `"privateKey"`, `"agentAuthToken"`, `"userAuthToken"`, `"watcherAuthToken"`} {
		assert.Contains(t, string(b), k)
	}
	var back AuthConfig
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, *ac, back)
}

func TestVerifyRejects(t *testing.T) {
	ac, err := GenerateAuthConfig(rand.Reader)
	require.NoError(t, err)
	pub, err := ac.ECPublicKey()
	require.NoError(t, err)

	other, err := GenerateAuthConfig(rand.Reader)
	require.NoError(t, err)
	_, err = Verify(other.WatcherAuthToken, pub)
	assert.ErrorIs(t, err, ErrSignature, "token from another key")

	parts := strings.Split(ac.WatcherAuthToken, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"auth_scheme":"userAuth"}`)) + "." + parts[2]
	_, err = Verify(tampered, pub)
	assert.ErrorIs(t, err, ErrSignature, "tampered payload")

	noneHdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	_, err = Verify(noneHdr+"."+parts[1]+".", pub)
	assert.ErrorIs(t, err, ErrAlgorithm)
	hsHdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	_, err = Verify(hsHdr+"."+parts[1]+"."+parts[2], pub)
	assert.ErrorIs(t, err, ErrAlgorithm)

	for _, bad := range []string{"", "a.b", "a.b.c.d", parts[0] + "." + parts[1] + ".!!", parts[0] + "." + parts[1] + "." + parts[2][:10]} {
		_, err = Verify(bad, pub)
		assert.ErrorIs(t, err, ErrMalformedToken, "token %q", bad)
	}
}

func TestExpiry(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	ac, err := NewAuthConfig(rand.Reader, key, exp)
	require.NoError(t, err)
	assert.Equal(t, "2030-01-02T03:04:05Z", ac.AuthTokenExpiry)
	_, err = VerifyAt(ac.AgentAuthToken, &key.PublicKey, exp.Add(-time.Second))
	require.NoError(t, err)
	_, err = VerifyAt(ac.AgentAuthToken, &key.PublicKey, exp)
	assert.ErrorIs(t, err, ErrExpired)
}

func TestKubeconfigChainsToSigner(t *testing.T) {
	now := time.Now()
	cas, err := GenerateSignerCAs(rand.Reader, now)
	require.NoError(t, err)
	for name, ck := range map[string]CertKey{
		AdminKubeconfigSignerName:             cas.AdminKubeconfig,
		KubeAPIServerLBSignerName:             cas.KubeAPIServerLB,
		KubeAPIServerLocalhostSignerName:      cas.KubeAPIServerLocalhost,
		KubeAPIServerServiceNetworkSignerName: cas.KubeAPIServerServiceNetwork,
	} {
		c, _, err := ck.Parse()
		require.NoError(t, err)
		assert.Equal(t, name, c.Subject.CommonName)
		assert.Equal(t, []string{"openshift"}, c.Subject.OrganizationalUnit)
		assert.True(t, c.IsCA)
		assert.WithinDuration(t, now.Add(TenYears), c.NotAfter, time.Minute)
	}

	kc, err := GenerateAdminKubeconfig(rand.Reader, cas, "ocp", "example.com.", now)
	require.NoError(t, err)
	raw, err := kc.Marshal()
	require.NoError(t, err)

	parsed, err := ParseKubeconfig(raw)
	require.NoError(t, err)
	cl, u, err := parsed.Current()
	require.NoError(t, err)
	assert.Equal(t, "https://api.ocp.example.com:6443", cl.Server)
	assert.Equal(t, "ocp", parsed.Clusters[0].Name)
	assert.Equal(t, "admin", parsed.CurrentContext)
	assert.Equal(t, cas.ServerCABundle(), cl.CertificateAuthorityData)
	assert.Equal(t, 3, strings.Count(string(cl.CertificateAuthorityData), "BEGIN CERTIFICATE"))

	blk, _ := pem.Decode(u.ClientCertificateData)
	require.NotNil(t, blk)
	client, err := x509.ParseCertificate(blk.Bytes)
	require.NoError(t, err)
	assert.Equal(t, "system:admin", client.Subject.CommonName)
	assert.Equal(t, []string{"system:masters"}, client.Subject.Organization)

	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM([]byte(cas.AdminKubeconfig.CertPEM)))
	_, err = client.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	require.NoError(t, err, "client cert chains to admin-kubeconfig-signer")

	wrong := x509.NewCertPool()
	require.True(t, wrong.AppendCertsFromPEM(cl.CertificateAuthorityData))
	_, err = client.Verify(x509.VerifyOptions{Roots: wrong, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	assert.Error(t, err, "client cert is not signed by the server CAs")

	_, _, err = parsed.TLSConfig()
	require.NoError(t, err)

	b, err := json.Marshal(cas)
	require.NoError(t, err)
	var back SignerCAs
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, *cas, back)
}

func TestKubeconfigCurrentErrors(t *testing.T) {
	for _, y := range []string{
		"apiVersion: v1\nkind: Config\n",
		"current-context: x\n",
		"current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n",
		"current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: https://x}}]\n",
	} {
		k, err := ParseKubeconfig([]byte(y))
		require.NoError(t, err)
		_, _, err = k.Current()
		assert.Error(t, err, y)
	}
}

var passwordRE = regexp.MustCompile(`^[a-km-zA-NP-Z2-9]{5}-[a-km-zA-NP-Z2-9]{5}-[a-km-zA-NP-Z2-9]{5}-[a-km-zA-NP-Z2-9]{5}$`)

func TestKubeadminPassword(t *testing.T) {
	seen := map[string]bool{}
	for range 3 {
		p, err := GenerateKubeadminPassword(rand.Reader)
		require.NoError(t, err)
		assert.Regexp(t, passwordRE, p.Password)
		assert.True(t, p.Check(p.Password))
		assert.False(t, p.Check(p.Password+"x"))
		assert.True(t, strings.HasPrefix(p.Hash, "$2a$10$"), "bcrypt cost 10: %s", p.Hash)
		seen[p.Password] = true
	}
	assert.Len(t, seen, 3)
}

func FuzzVerify(f *testing.F) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(f, err)
	good, err := SignToken(rand.Reader, key, Claims{"auth_scheme": "watcherAuth"})
	require.NoError(f, err)
	f.Add(good)
	f.Add("")
	f.Add("a.b.c")
	f.Add(strings.Replace(good, ".", "..", 1))
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := Verify(tok, &key.PublicKey)
		if err != nil {
			assert.Nil(t, c)
			return
		}
		// Anything accepted must be byte-identical in header+payload to a token we signed
		// (the fuzzer cannot forge a signature) — and carries our claims.
		assert.Equal(t, strings.Split(good, ".")[:2], strings.Split(tok, ".")[:2])
	})
}

func FuzzParseKubeconfig(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: Config\ncurrent-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: https://x}}]\nusers: [{name: u, user: {}}]\n"))
	f.Add([]byte("{}"))
	f.Add([]byte("clusters: 5"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := ParseKubeconfig(data)
		if err != nil {
			return
		}
		cl, u, err := k.Current()
		if err == nil {
			assert.NotEmpty(t, cl.Server)
			assert.NotNil(t, u)
		}
		// Re-encoding and re-parsing keeps the resolved server.
		out, err := k.Marshal()
		require.NoError(t, err)
		k2, err := ParseKubeconfig(out)
		require.NoError(t, err)
		assert.Equal(t, k.CurrentContext, k2.CurrentContext)
		assert.Equal(t, len(k.Clusters), len(k2.Clusters))
	})
}
