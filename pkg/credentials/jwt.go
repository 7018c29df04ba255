// Package credentials generates and checks the install's secrets: API tokens, signer CAs, admin kubeconfig, kubeadmin password.
package credentials

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"
)

// Personas carried in the auth_scheme claim; assisted-service authorises on it.
const (
	SchemeAgent   = "agentAuth"
	SchemeUser    = "userAuth"
	SchemeWatcher = "watcherAuth"
)

// Errors returned by Verify; wrap-checked with errors.Is.
var (
	ErrMalformedToken = errors.New("malformed token")
	ErrAlgorithm      = errors.New("unexpected signing algorithm")
	ErrSignature      = errors.New("token signature is invalid")
	ErrExpired        = errors.New("the provided authentication token has expired")
)

// Claims is the decoded JWT payload.
type Claims map[string]any

// AuthScheme returns the auth_scheme claim and whether it is a string.
func (c Claims) AuthScheme() (string, bool) {
	v, ok := c["auth_scheme"]
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

// Expiry returns the exp claim when present and numeric.
func (c Claims) Expiry() (time.Time, bool) {
	switch v := c["exp"].(type) {
	case float64:
		return time.Unix(int64(v), 0), true
	case json.Number:
		n, err := v.Int64()
		return time.Unix(n, 0), err == nil
	}
	return time.Time{}, false
}

// jwtHeaderES256 is base64url({"alg":"ES256","typ":"JWT"}).
const jwtHeaderES256 = "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9"

// SignToken encodes claims as a compact ES256 JWT signed with key.
// The signature is the raw 64-byte R||S pair, base64url without padding.
func SignToken(random io.Reader, key *ecdsa.PrivateKey, claims Claims) (string, error) {
	if key == nil || key.Curve != elliptic.P256() {
		return "", errors.New("sign token: key must be an ECDSA P-256 private key")
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("sign token: encode claims: %w", err)
	}
	signing := jwtHeaderES256 + "." + base64.RawURLEncoding.EncodeToString(payload)
	digest := sha256.Sum256([]byte(signing))
	r, s, err := ecdsa.Sign(random, key, digest[:])
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// Verify checks the token's format, that its header says alg ES256, and its
// signature against pub. It returns the claims. It does not look at exp; see VerifyAt.
func Verify(token string, pub *ecdsa.PublicKey) (Claims, error) {
	if pub == nil {
		return nil, errors.New("verify token: no public key")
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%w: want 3 dot-separated parts, got %d", ErrMalformedToken, len(parts))
	}
	hdrRaw, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrMalformedToken, err)
	}
	var hdr struct {
		Alg string `json:"alg"`
	}
	if err := json.Unmarshal(hdrRaw, &hdr); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrMalformedToken, err)
	}
	if hdr.Alg != "ES256" {
		return nil, fmt.Errorf("%w: %q (want ES256)", ErrAlgorithm, hdr.Alg)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return nil, fmt.Errorf("%w: signature must be 64 bytes of base64url", ErrMalformedToken)
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r := new(big.Int).SetBytes(sig[:32])
	s := new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(pub, digest[:], r, s) {
		return nil, ErrSignature
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("%w: payload: %v", ErrMalformedToken, err)
	}
	claims := Claims{}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return nil, fmt.Errorf("%w: payload: %v", ErrMalformedToken, err)
	}
	return claims, nil
}

// VerifyAt is Verify plus an expiry check against now when the token has exp.
func VerifyAt(token string, pub *ecdsa.PublicKey, now time.Time) (Claims, error) {
	c, err := Verify(token, pub)
	if err != nil {
		return nil, err
	}
	if exp, ok := c.Expiry(); ok && !now.Before(exp) {
		return nil, ErrExpired
	}
	return c, nil
}

// EncodePublicKey returns the public key as upstream hands it to
// assisted-service: base64 (standard encoding) of a PEM block of type
// "EC PUBLIC KEY" holding the PKIX DER, so it fits on one env-file line.
func EncodePublicKey(pub *ecdsa.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("encode public key: %w", err)
	}
	p := pem.EncodeToMemory(&pem.Block{Type: "EC PUBLIC KEY", Bytes: der})
	return base64.StdEncoding.EncodeToString(p), nil
}

// ParsePublicKey accepts either the base64-wrapped PEM from EncodePublicKey
// or the bare PEM text, and returns the ECDSA P-256 key.
func ParsePublicKey(s string) (*ecdsa.PublicKey, error) {
	data := []byte(strings.TrimSpace(s))
	if !strings.HasPrefix(string(data), "-----BEGIN") {
		dec, err := base64.StdEncoding.DecodeString(string(data))
		if err != nil {
			return nil, fmt.Errorf("parse public key: not PEM and not base64: %w", err)
		}
		data = dec
	}
	blk, _ := pem.Decode(data)
	if blk == nil {
		return nil, errors.New("parse public key: no PEM block found")
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse public key: %w", err)
	}
	ek, ok := k.(*ecdsa.PublicKey)
	if !ok || ek.Curve != elliptic.P256() {
		return nil, errors.New("parse public key: not an ECDSA P-256 key")
	}
	return ek, nil
}

// ParsePrivateKey parses an "EC PRIVATE KEY" (SEC 1) or PKCS#8 PEM block.
func ParsePrivateKey(pemText string) (*ecdsa.PrivateKey, error) {
	blk, _ := pem.Decode([]byte(pemText))
	if blk == nil {
		return nil, errors.New("parse private key: no PEM block found")
	}
	if k, err := x509.ParseECPrivateKey(blk.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse private key: %w", err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, errors.New("parse private key: not an ECDSA key")
	}
	return ek, nil
}

// AuthConfig is the key pair and the three persona tokens of one install.
// It is stored in the asset state so that re-runs keep the same keys.
type AuthConfig struct {
	// PublicKey is base64(PEM "EC PUBLIC KEY"), the EC_PUBLIC_KEY_PEM value of assisted-service.
	PublicKey string `json:"publicKey"`
	// PrivateKey is the PEM "EC PRIVATE KEY" used to sign the tokens. Secret.
	PrivateKey       string `json:"privateKey"`
	AgentAuthToken   string `json:"agentAuthToken"`
	UserAuthToken    string `json:"userAuthToken"`
	WatcherAuthToken string `json:"watcherAuthToken"`
	// AuthTokenExpiry is RFC 3339 when the tokens expire (add-nodes); empty means never.
	AuthTokenExpiry string `json:"authTokenExpiry,omitempty"`
}

// GenerateAuthConfig creates a P-256 key pair and three non-expiring tokens
// whose only claim is auth_scheme (agentAuth, userAuth, watcherAuth).
func GenerateAuthConfig(random io.Reader) (*AuthConfig, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), random)
	if err != nil {
		return nil, fmt.Errorf("generate auth key: %w", err)
	}
	return NewAuthConfig(random, key, time.Time{})
}

// NewAuthConfig signs the three tokens with key. A non-zero expiry adds the
// exp claim (Unix seconds) and sets AuthTokenExpiry.
func NewAuthConfig(random io.Reader, key *ecdsa.PrivateKey, expiry time.Time) (*AuthConfig, error) {
	if random == nil {
		random = rand.Reader
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode auth private key: %w", err)
	}
	pub, err := EncodePublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	ac := &AuthConfig{
		PublicKey:  pub,
		PrivateKey: string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})),
	}
	if !expiry.IsZero() {
		ac.AuthTokenExpiry = expiry.UTC().Format(time.RFC3339)
	}
	for _, t := range []struct {
		scheme string
		dst    *string
	}{{SchemeAgent, &ac.AgentAuthToken}, {SchemeUser, &ac.UserAuthToken}, {SchemeWatcher, &ac.WatcherAuthToken}} {
		c := Claims{"auth_scheme": t.scheme}
		if !expiry.IsZero() {
			c["exp"] = expiry.Unix()
		}
		tok, err := SignToken(random, key, c)
		if err != nil {
			return nil, fmt.Errorf("sign %s token: %w", t.scheme, err)
		}
		*t.dst = tok
	}
	return ac, nil
}

// ECPublicKey parses PublicKey.
func (a *AuthConfig) ECPublicKey() (*ecdsa.PublicKey, error) { return ParsePublicKey(a.PublicKey) }

// PublicKeyPEM returns the bare PEM text of the public key.
func (a *AuthConfig) PublicKeyPEM() ([]byte, error) {
	p, err := base64.StdEncoding.DecodeString(a.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("decode publicKey: %w", err)
	}
	return p, nil
}
