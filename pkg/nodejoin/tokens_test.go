package nodejoin

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/kubeapi"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// jwt is a token with only an exp claim (unsigned: the monitor only reads
// the claim; the service checks the signature).
func jwt(name string, exp time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"ES256"}`)) + "." + enc([]byte(fmt.Sprintf(`{"exp":%d,"n":%q}`, exp.Unix(), name))) + ".sig"
}

func TestKeptWatcherTokens(t *testing.T) {
	now := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	a, b, expired := jwt("a", now.Add(time.Hour)), jwt("b", now.Add(40*time.Hour)), jwt("c", now.Add(-time.Minute))
	old := []byte(b + "\n" + expired + "\n\n" + a + "\n")
	assert.Equal(t, []string{b, a}, KeptWatcherTokens(old, "new", now, 8), "the expired one is dropped, the order kept")
	assert.Equal(t, []string{a}, KeptWatcherTokens(old, b, now, 8), "the new token is not kept twice")
	assert.Equal(t, []string{b}, KeptWatcherTokens(old, "new", now, 1), "at most max")
	assert.Empty(t, KeptWatcherTokens(nil, "new", now, 8))
	assert.Equal(t, []string{"x", "y"}, WatcherTokens([]byte(" x \n\ny\n")))
}

// Issue 37 item 7: node-image create run again in the same --dir writes a
// new ISO with a new token; a host booted from the earlier ISO answers only
// the earlier token. The monitor reads it with the token that host accepts
// (the newest first, then the kept ones), and keeps to it.
func TestMonitorReadsAHostOfAnEarlierISO(t *testing.T) {
	exp := time.Now().Add(time.Hour)
	newTok, oldTok := jwt("new", exp), jwt("old", exp)
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := r.Header.Get(rendezvous.WatcherHeader)
		seen = append(seen, tok)
		if tok != oldTok {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code":401,"reason":"The provided authentication token is not valid"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"id":"f55e7c6b-17c5-45ca-af9e-026246a30176","kind":"AddHostsCluster","name":"ostest","status":"adding-hosts"}]`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	p := filepath.Join(dir, filepath.FromSlash(assetdir.NodeWatcherToken))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(t, os.WriteFile(p, []byte(newTok+"\n"+oldTok+"\n"), 0o600))
	agent, err := agentsFromDir(context.Background(), MonitorRequest{Dir: dir, AgentURL: func(string) string { return srv.URL + rendezvous.APIPath }, RequestTimeout: 5 * time.Second}, noSecret{})
	require.NoError(t, err)
	api, err := agent("192.168.111.31")
	require.NoError(t, err)
	for range 2 {
		cs, err := api.ListClusters(context.Background())
		require.NoError(t, err)
		require.Len(t, cs, 1)
		assert.Equal(t, "ostest", cs[0].Name)
	}
	assert.Equal(t, []string{newTok, oldTok, oldTok}, seen, "the newest token first, then the earlier ISO's, kept once it worked")

	// With no token the host takes, its refusal comes through.
	require.NoError(t, os.WriteFile(p, []byte(newTok+"\n"), 0o600))
	agent, err = agentsFromDir(context.Background(), MonitorRequest{Dir: dir, AgentURL: func(string) string { return srv.URL + rendezvous.APIPath }, RequestTimeout: 5 * time.Second}, noSecret{})
	require.NoError(t, err)
	api, err = agent("192.168.111.31")
	require.NoError(t, err)
	_, err = api.ListClusters(context.Background())
	var se *rendezvous.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 401, se.StatusCode)
}

// noSecret is a cluster without the agent-auth-token secret.
type noSecret struct{}

func (noSecret) Get(_ context.Context, r kubeapi.Resource, _ any) error {
	return &kubeapi.StatusError{Code: http.StatusNotFound, Verb: "get", Resource: r}
}
