package live

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// TestServiceClient reads answers shaped as assisted-service's own (the
// v2 infra-envs, hosts, clusters and events lists, and its 401 body).
func TestServiceClient(t *testing.T) {
	const ie, cl = "6a3f9b2e-1c4d-4e5f-8a9b-0c1d2e3f4a5b", "0c6f2b4e-8a1d-4f3e-9b2c-7d5e6f708192"
	infraEnvs := "[]"
	answers := map[string]string{
		rendezvous.APIPath + "/infra-envs/" + ie + "/hosts": `[{"kind":"Host","id":"h1","href":"/api/assisted-install/v2/infra-envs/` + ie + `/hosts/h1",` +
			`"requested_hostname":"sno-live","status":"known","status_info":"Host is ready to be installed",` +
			`"inventory":"{\"interfaces\":[{\"name\":\"bond0\",\"mac_address\":\"52:54:00:aa:00:01\"}]}"}]`,
		rendezvous.APIPath + "/clusters": `[{"kind":"Cluster","id":"` + cl + `","href":"x","status":"preparing-for-installation","status_info":"Preparing cluster for installation"}]`,
		rendezvous.APIPath + "/events":   `[{"name":"cluster_status_updated","cluster_id":"` + cl + `","severity":"info","message":"Updated status of the cluster to preparing-for-installation","event_time":"2026-11-26T01:02:03.000Z"}]`,
	}
	var gotAuth, gotQuery string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotQuery = r.Header.Get("Authorization"), r.URL.RawQuery
		if gotAuth != "user-token" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code":401,"message":"Unauthorized"}`))
			return
		}
		if r.URL.Path == rendezvous.APIPath+"/infra-envs" {
			_, _ = w.Write([]byte(infraEnvs))
			return
		}
		a, ok := answers[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(a))
	}))
	defer srv.Close()
	ctx := context.Background()
	c := &ServiceClient{BaseURL: srv.URL, UserToken: "user-token"}

	_, err := c.Hosts(ctx)
	require.ErrorContains(t, err, "0 infra-envs, want 1")
	infraEnvs = `[{"kind":"InfraEnv","id":"` + ie + `","href":"x","name":"sno","type":"full-iso","cluster_id":"` + cl + `"}]`
	hosts, err := c.Hosts(ctx)
	require.NoError(t, err)
	require.Len(t, hosts, 1)
	assert.Equal(t, "sno-live", hosts[0].RequestedHostname)
	assert.Equal(t, "known", hosts[0].Status)
	require.NoError(t, CheckRegistered(hosts, "sno-live", []string{"52:54:00:AA:00:01"}))

	cls, err := c.Clusters(ctx)
	require.NoError(t, err)
	require.Len(t, cls, 1)
	assert.Equal(t, rendezvous.ClusterPreparing, cls[0].Status)
	events, err := c.Events(ctx, cl)
	require.NoError(t, err)
	assert.Equal(t, "cluster_id="+cl, gotQuery)
	ev, ok := InstallEvent(events)
	require.True(t, ok)
	assert.Equal(t, 2026, ev.EventTime.Year())
	_, ok = InstallEvent([]rendezvous.Event{{Message: "Host sno-live: updated status from known to preparing-for-installation", HostID: "h1"}})
	assert.False(t, ok, "a host's event is not the cluster's")

	_, err = (&ServiceClient{BaseURL: srv.URL, UserToken: "agent-token"}).Clusters(ctx)
	require.ErrorContains(t, err, "HTTP 401")
	_, err = c.Events(ctx, "nope")
	require.NoError(t, err)
	_, err = (&ServiceClient{BaseURL: srv.URL + "/elsewhere", UserToken: "user-token"}).Clusters(ctx)
	require.ErrorContains(t, err, "HTTP 404")
}

func TestCheckRegistered(t *testing.T) {
	inv := `{"interfaces":[{"name":"bond0","mac_address":"52:54:00:AA:00:01"},{"name":"eno2","mac_address":"52:54:00:aa:00:02"}]}`
	hosts := []RegisteredHost{{Host: rendezvous.Host{ID: "h1", RequestedHostname: "sno-live", Status: "known"}, Inventory: inv}}
	require.NoError(t, CheckRegistered(hosts, "sno-live", []string{"52:54:00:aa:00:01"}))
	require.NoError(t, CheckRegistered(hosts, "sno-live", []string{"52:54:00:AA:00:02"}))
	err := CheckRegistered(hosts, "other", []string{"52:54:00:aa:00:02"})
	require.ErrorContains(t, err, `registered as "sno-live", want "other"`)
	err = CheckRegistered(hosts, "master-1", []string{"52:54:00:bb:00:02"})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "no registered host") && strings.Contains(err.Error(), "h1(sno-live, known"), err.Error())
	err = CheckRegistered([]RegisteredHost{{Host: rendezvous.Host{ID: "h2"}, Inventory: "{"}}, "x", []string{"m"})
	require.ErrorContains(t, err, "host h2: inventory")
}
