package rendezvous

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBaseURL(t *testing.T) {
	assert.Equal(t, "http://192.168.111.80:8090/api/assisted-install/v2", BaseURL("192.168.111.80"))
	assert.Equal(t, "http://[fd2e:6f44:5dd8::50]:8090/api/assisted-install/v2", BaseURL("fd2e:6f44:5dd8::50"))
}

func TestClientRequestsAndErrors(t *testing.T) {
	var got []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r)
		switch r.URL.Path {
		case "/api/assisted-install/v2/events":
			_, _ = w.Write([]byte(`[{"severity":"info","message":"m","event_time":"2026-01-01T00:00:00Z","infra_env_id":"ie"}]`))
		case "/api/assisted-install/v2/clusters":
			w.WriteHeader(403)
			_, _ = w.Write([]byte(`{"code":403,"message":"authClaim agentAuth is unauthorized to access"}`))
		case "/api/assisted-install/v2/clusters/c1":
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"kind":"Error","id":404,"href":"x","code":"404","reason":"cluster c1 can not be found"}`))
		case "/api/assisted-install/v2/infra-envs":
			_, _ = w.Write([]byte(`not json`))
		case "/api/assisted-install/v2/clusters/slow":
			time.Sleep(200 * time.Millisecond)
		}
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL+APIPath+"/", "the-watcher-token", 50*time.Millisecond, nil)
	require.NoError(t, err)
	ctx := context.Background()

	evs, err := c.ListEvents(ctx, "ie")
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, "m", evs[0].Message)
	assert.Equal(t, "infra_env_id=ie", got[0].URL.RawQuery)
	assert.Equal(t, "the-watcher-token", got[0].Header.Get(WatcherHeader))
	assert.Empty(t, got[0].Header.Get("Authorization"))
	assert.Empty(t, got[0].Header.Get("X-Secret-Key"))

	_, err = c.ListClusters(ctx)
	var se *StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 403, se.StatusCode)
	assert.Equal(t, "authClaim agentAuth is unauthorized to access", se.Message)

	_, err = c.GetCluster(ctx, "c1")
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "cluster c1 can not be found", se.Message)

	_, err = c.ListInfraEnvs(ctx)
	assert.ErrorContains(t, err, "decode answer")

	_, err = c.GetCluster(ctx, "slow")
	assert.ErrorIs(t, err, context.DeadlineExceeded, "per-request timeout")

	_, err = NewClient("ftp://x", "t", 0, nil)
	assert.Error(t, err)
	_, err = NewClient(srv.URL, "", 0, nil)
	assert.Error(t, err)
}

// A redirect to another host must never carry the watcher token there:
// cross-host redirects from the rendezvous API are refused outright, while a
// same-host redirect still works and keeps the token.
func TestClientRefusesCrossHostRedirects(t *testing.T) {
	var otherHits []http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits = append(otherHits, r.Header.Clone())
		_, _ = w.Write([]byte(`[]`))
	}))
	defer other.Close()
	var sameHostToken string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case APIPath + "/events":
			http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
		case APIPath + "/clusters":
			http.Redirect(w, r, APIPath+"/clusters-moved", http.StatusTemporaryRedirect)
		case APIPath + "/clusters-moved":
			sameHostToken = r.Header.Get(WatcherHeader)
			_, _ = w.Write([]byte(`[]`))
		}
	}))
	defer api.Close()
	c, err := NewClient(api.URL+APIPath, "the-watcher-token", time.Second, nil)
	require.NoError(t, err)

	_, err = c.ListEvents(context.Background(), "ie")
	require.Error(t, err)
	assert.ErrorContains(t, err, "redirect")
	assert.Empty(t, otherHits, "the other host must never be contacted")

	_, err = c.ListClusters(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "the-watcher-token", sameHostToken)

	// A caller-supplied http.Client gets the same protection.
	c, err = NewClient(api.URL+APIPath, "the-watcher-token", time.Second, &http.Client{})
	require.NoError(t, err)
	_, err = c.ListEvents(context.Background(), "ie")
	require.Error(t, err)
	assert.Empty(t, otherHits)
}
