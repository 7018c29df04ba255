package release

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
)

// pullSecret is a parsed Docker/containers auth file ({"auths": {...}}).
type pullSecret struct {
	entries map[string]authn.AuthConfig // normalised key -> credentials
	// invalid holds the entries whose auth is not user:password: an error
	// only when their registry is contacted (Resolve), as a registry that
	// is never contacted never reads them.
	invalid map[string]error
}

type authEntry struct {
	Auth          string `json:"auth"`
	Username      string `json:"username"`
	Password      string `json:"password"`
	IdentityToken string `json:"identitytoken"`
}

// parsePullSecret reads the pull secret; an empty secret means anonymous
// pulls everywhere.
func parsePullSecret(b []byte) (*pullSecret, error) {
	ps := &pullSecret{entries: map[string]authn.AuthConfig{}, invalid: map[string]error{}}
	if len(strings.TrimSpace(string(b))) == 0 {
		return ps, nil
	}
	var doc struct {
		Auths map[string]authEntry `json:"auths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("pull secret is not valid JSON: %w", err)
	}
	for key, e := range doc.Auths {
		cfg := authn.AuthConfig{Username: e.Username, Password: e.Password, IdentityToken: e.IdentityToken}
		if e.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(e.Auth)
			if err != nil {
				return nil, fmt.Errorf("pull secret auths[%q].auth is not base64: %w", key, err)
			}
			u, p, ok := strings.Cut(string(raw), ":")
			if !ok {
				ps.invalid[normaliseAuthKey(key)] = fmt.Errorf("pull secret auths[%q].auth does not decode to user:password; fix that entry to contact %s", key, key)
			} else {
				cfg.Username, cfg.Password = u, p
			}
		}
		ps.entries[normaliseAuthKey(key)] = cfg
	}
	return ps, nil
}

// normaliseAuthKey turns "https://quay.io/v1/" into "quay.io" and maps
// Docker Hub's aliases to one name.
func normaliseAuthKey(k string) string {
	k = strings.TrimSpace(k)
	k = strings.TrimPrefix(strings.TrimPrefix(k, "https://"), "http://")
	k = strings.TrimSuffix(k, "/")
	k = strings.TrimSuffix(k, "/v1")
	k = strings.TrimSuffix(k, "/v2")
	host, rest, _ := strings.Cut(k, "/")
	switch host {
	case "index.docker.io", "registry-1.docker.io", "docker.io":
		host = "index.docker.io"
	}
	if rest != "" {
		return host + "/" + rest
	}
	return host
}

// lookup finds the most specific entry for repo ("host/path"): a
// namespace-scoped key (host/ns) wins over the bare host, as containers'
// auth.json resolution does. It returns the matching key, "" for none.
func (ps *pullSecret) lookup(repo string) (string, authn.AuthConfig) {
	repo = normaliseAuthKey(repo)
	best := ""
	var cfg authn.AuthConfig
	for k, c := range ps.entries {
		if matches(k, repo) && len(k) > len(best) {
			best, cfg = k, c
		}
	}
	return best, cfg
}

// Resolve implements authn.Keychain.
func (ps *pullSecret) Resolve(r authn.Resource) (authn.Authenticator, error) {
	key, cfg := ps.lookup(r.String())
	if key == "" {
		return authn.Anonymous, nil
	}
	if err := ps.invalid[key]; err != nil {
		return nil, err
	}
	return authn.FromConfig(cfg), nil
}
