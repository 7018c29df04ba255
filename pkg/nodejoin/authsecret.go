package nodejoin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/credentials"
	"github.com/seed-a052040e/agentiso/pkg/kubeapi"
)

// The node ISO's tokens in the cluster, as upstream's node-joiner keeps
// them: the secret openshift-config/agent-auth-token with the three tokens
// and the base64 PEM public key that verifies them, annotated with
// updatedAt and expiresAt (openshift/installer
// pkg/asset/agent/gencrypto/authconfig.go, commit a189a7d3, and its test
// of the three-token secret, agentAuthToken, userAuthToken,
// watcherAuthToken; docs/user/agent/authentication-authorization.md,
// commit fdc62fc1). `oc adm node-image monitor` (the node-joiner's
// monitor-add-nodes) reads its token from there.

// AuthTokenSecret is openshift-config/agent-auth-token.
var AuthTokenSecret = kubeapi.Resource{Version: "v1", Resource: "secrets", Namespace: "openshift-config", Name: "agent-auth-token"}

// The secret's data keys.
const (
	authKeyAgent   = "agentAuthToken"
	authKeyUser    = "userAuthToken"
	authKeyWatcher = "watcherAuthToken"
	authKeyPublic  = "authTokenPublicKey"
)

// authTokenReuse: tokens in the secret with more than this left are used
// for a new ISO instead of new ones, as upstream (expiry minus 24 hours).
const authTokenReuse = 24 * time.Hour

// Writer is the installed cluster's API with the writes node-image create
// makes (the auth token secret).
type Writer interface {
	API
	Create(ctx context.Context, r kubeapi.Resource, body, out any) error
	Update(ctx context.Context, r kubeapi.Resource, sub string, body, out any) error
}

// AuthTokens are a node ISO's tokens: the three personas' and the public
// key (base64 PEM, EC_PUBLIC_KEY_PEM) that verifies them, and when they
// expire.
type AuthTokens struct {
	PublicKey, Agent, User, Watcher string
	Expiry                          time.Time
}

type secretObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		ResourceVersion string            `json:"resourceVersion,omitempty"`
		Annotations     map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	Type string            `json:"type,omitempty"`
	Data map[string][]byte `json:"data"`
}

// StoreAuthTokens keeps fresh (the tokens just made for a new ISO) in the
// cluster's agent-auth-token secret, as upstream's node-joiner does:
// created when absent; when it holds tokens that stay valid more than 24
// hours after now, those are returned to be used instead (reused true: the
// ISOs made within a day share them, and the secret is left as it is);
// otherwise it is updated with fresh. Tokens the hosts could not take (a
// secret of an older node-joiner with the agent token only, a token another
// key signed, or of the wrong persona) are replaced. A refused permission
// is an error naming it.
func StoreAuthTokens(ctx context.Context, w Writer, fresh AuthTokens, now time.Time) (use AuthTokens, reused bool, err error) {
	fail := func(err error) error {
		return fmt.Errorf("secret %s/%s (where oc adm node-image monitor reads the node ISO's tokens, as oc adm node-image create keeps them there): %w",
			AuthTokenSecret.Namespace, AuthTokenSecret.Name, err)
	}
	var cur secretObject
	err = w.Get(ctx, AuthTokenSecret, &cur)
	switch {
	case kubeapi.IsNotFound(err):
		s := newAuthSecret(fresh)
		s.Metadata.Annotations = map[string]string{"updatedAt": "", "expiresAt": fresh.Expiry.UTC().Format(time.RFC3339)}
		coll := AuthTokenSecret
		coll.Name = ""
		if err := w.Create(ctx, coll, s, nil); err != nil {
			return AuthTokens{}, false, fail(err)
		}
		return fresh, false, nil
	case err != nil:
		return AuthTokens{}, false, fail(err)
	}
	if old, ok := storedTokens(cur.Data); ok && now.Add(authTokenReuse).Before(old.Expiry) {
		return old, true, nil
	}
	s := newAuthSecret(fresh)
	s.Metadata.ResourceVersion = cur.Metadata.ResourceVersion
	s.Metadata.Annotations = cur.Metadata.Annotations
	if s.Metadata.Annotations == nil {
		s.Metadata.Annotations = map[string]string{}
	}
	s.Metadata.Annotations["updatedAt"] = now.UTC().Format(time.RFC3339)
	s.Metadata.Annotations["expiresAt"] = fresh.Expiry.UTC().Format(time.RFC3339)
	for k, v := range cur.Data {
		if _, ours := s.Data[k]; !ours {
			s.Data[k] = v
		}
	}
	if err := w.Update(ctx, AuthTokenSecret, "", s, nil); err != nil {
		return AuthTokens{}, false, fail(err)
	}
	return fresh, false, nil
}

func newAuthSecret(t AuthTokens) secretObject {
	var s secretObject
	s.APIVersion, s.Kind, s.Type = "v1", "Secret", "Opaque"
	s.Metadata.Name, s.Metadata.Namespace = AuthTokenSecret.Name, AuthTokenSecret.Namespace
	s.Data = map[string][]byte{authKeyAgent: []byte(t.Agent), authKeyUser: []byte(t.User), authKeyWatcher: []byte(t.Watcher), authKeyPublic: []byte(t.PublicKey)}
	return s
}

// storedTokens are the secret's tokens when a node ISO can use them: the
// three personas' (auth_scheme agentAuth, userAuth, watcherAuth, as the
// hosts' assisted-service authorizes them: pkg/auth/agent_local_authz_handler.go,
// release-4.20), each signed by the secret's public key, expiring together.
func storedTokens(data map[string][]byte) (AuthTokens, bool) {
	t := AuthTokens{PublicKey: string(data[authKeyPublic]), Agent: string(data[authKeyAgent]), User: string(data[authKeyUser]), Watcher: string(data[authKeyWatcher])}
	pub, err := credentials.ParsePublicKey(t.PublicKey)
	if err != nil {
		return AuthTokens{}, false
	}
	for _, c := range []struct{ tok, scheme string }{{t.Agent, credentials.SchemeAgent}, {t.User, credentials.SchemeUser}, {t.Watcher, credentials.SchemeWatcher}} {
		claims, err := credentials.Verify(c.tok, pub)
		if err != nil {
			return AuthTokens{}, false
		}
		s, _ := claims.AuthScheme()
		exp, ok := claims.Expiry()
		if s != c.scheme || !ok || (!t.Expiry.IsZero() && !exp.Equal(t.Expiry)) {
			return AuthTokens{}, false
		}
		t.Expiry = exp.UTC()
	}
	return t, true
}

// ErrNoStoredWatcherToken: the cluster's agent-auth-token secret holds no
// watcher token.
var ErrNoStoredWatcherToken = errors.New("no watcherAuthToken")

// StoredWatcherToken is the watcher token of the cluster's agent-auth-token
// secret, which `oc adm node-image create` (and node-image create) keep
// there: the token upstream's monitor reads the hosts' assisted-service
// with.
func StoredWatcherToken(ctx context.Context, api API) (string, error) {
	var s secretObject
	if err := api.Get(ctx, AuthTokenSecret, &s); err != nil {
		return "", err
	}
	tok := string(s.Data[authKeyWatcher])
	if tok == "" {
		return "", fmt.Errorf("secret %s/%s has %w (written by a node-joiner older than OpenShift 4.18, whose tokens have no personas)", AuthTokenSecret.Namespace, AuthTokenSecret.Name, ErrNoStoredWatcherToken)
	}
	return tok, nil
}
