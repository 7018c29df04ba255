package kubeapi

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
)

const kcHead = `apiVersion: v1
clusters:
- name: c
  cluster:
    server: https://api.example.com:6443
`

func TestParseKubeconfigCredentials(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tok"), []byte("sha256~abc\n"), 0o600))
	cfg, err := ParseKubeconfig([]byte(kcHead+`users:
- name: u
  user: {tokenFile: tok}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`), dir, "")
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "tok"), cfg.Rest().BearerTokenFile, "a relative tokenFile is the kubeconfig directory's")
	assert.Equal(t, "https://api.example.com:6443", cfg.Server)

	for name, tc := range map[string]struct{ users, want string }{
		"none":     {"- name: u\n  user: {}\n", "no credentials"},
		"bad cert": {"- name: u\n  user: {client-certificate-data: Zm9v, client-key-data: Zm9v}\n", "client certificate and key"},
		"no user":  {"- name: other\n  user: {token: t}\n", `names user "u", which is not in users[]`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseKubeconfig([]byte(kcHead+"users:\n"+tc.users+"contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"), dir, "")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err = ParseKubeconfig([]byte(strings.Replace(kcHead, "server:", "insecure-skip-tls-verify: true\n    server:", 1)+
		"users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"), dir, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "insecure-skip-tls-verify is refused")
	_, err = ParseKubeconfig([]byte(kcHead+"users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"), dir, "")
	assert.ErrorContains(t, err, "current-context is empty")
	_, err = ParseKubeconfig([]byte(kcHead+"users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"), dir, "y")
	assert.ErrorContains(t, err, `context "y" is not in contexts[]`)
}

func TestResourcePathAndString(t *testing.T) {
	r := Resource{Group: "config.openshift.io", Version: "v1", Resource: "clusterversions", Name: "version"}
	assert.Equal(t, "/apis/config.openshift.io/v1/clusterversions/version", r.Path())
	assert.Equal(t, "clusterversions.config.openshift.io version", r.String())
	s := Resource{Version: "v1", Resource: "secrets", Namespace: "openshift-config", Name: "pull-secret"}
	assert.Equal(t, "/api/v1/namespaces/openshift-config/secrets/pull-secret", s.Path())
	assert.Equal(t, "secrets openshift-config/pull-secret", s.String())
}

func TestClientBoundsTheAnswer(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/nodes":
			big := strings.Repeat("x", MaxAnswerBytes+1)
			_, _ = w.Write([]byte(`{"items":"` + big + `"}`))
		case "/api/v1/namespaces/a/configmaps/slow":
			time.Sleep(2 * time.Second)
		case "/api/v1/namespaces/a/configmaps/evil":
			w.WriteHeader(500)
			_, _ = w.Write([]byte(`{"message":"boom\u001b[2J"}`))
		}
	}))
	defer srv.Close()
	// A generous timeout for the large answer, so that a loaded machine
	// fails on the size, not on the time.
	big := New(testConfig(srv), time.Minute)
	var out map[string]any
	err := big.Get(context.Background(), Resource{Version: "v1", Resource: "nodes"}, &out)
	assert.ErrorContains(t, err, "larger than 32 MiB")
	c := New(testConfig(srv), 500*time.Millisecond)
	err = c.Get(context.Background(), Resource{Version: "v1", Resource: "configmaps", Namespace: "a", Name: "slow"}, &out)
	assert.ErrorContains(t, err, "did not answer within 500ms")
	err = c.Get(context.Background(), Resource{Version: "v1", Resource: "configmaps", Namespace: "a", Name: "evil"}, &out)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "\x1b")
	assert.Contains(t, err.Error(), "HTTP 500")
}

func testConfig(srv *httptest.Server) *Config {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return NewConfig(&rest.Config{Host: srv.URL, BearerToken: "t", TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, "test")
}

// The HTTP client's own timeout (equal to the request's context, so either
// may fire first on a loaded machine) says the same as the context's.
func TestClientTimeoutWhicheverFiresFirst(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { time.Sleep(2 * time.Second) }))
	defer srv.Close()
	c := New(testConfig(srv), 200*time.Millisecond)
	var out map[string]any
	err := c.Get(context.Background(), Resource{Version: "v1", Resource: "configmaps", Namespace: "a", Name: "slow"}, &out)
	assert.ErrorContains(t, err, "did not answer within")
}

// A name read from the cluster (a CSR's) is one path segment: one that
// would climb to another resource is refused before any request.
func TestClientRefusesANameThatIsNoPathSegment(t *testing.T) {
	hit := false
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hit = true }))
	defer srv.Close()
	c := New(testConfig(srv), time.Minute)
	r := Resource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests", Name: "../../../api/v1/namespaces/openshift-config/secrets/pull-secret"}
	err := c.Update(context.Background(), r, "approval", map[string]any{}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "invalid resource name")
	assert.False(t, hit, "nothing was sent")
}
