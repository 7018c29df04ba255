package live

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/credentials"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous/sim"
	"github.com/seed-a052040e/agentiso/test/live/assisted"
)

func TestServiceClient(t *testing.T) {
	auth, err := credentials.GenerateAuthConfig(nil)
	require.NoError(t, err)
	pub, err := credentials.ParsePublicKey(auth.PublicKey)
	require.NoError(t, err)
	live, err := assisted.NewLive(assisted.LiveConfig{PublicKey: pub, InfraEnvID: "6a3f9b2e-1c4d-4e5f-8a9b-0c1d2e3f4a5b",
		ReleaseImages: []assisted.ReleaseImage{{OpenshiftVersion: "4.20", CPUArchitecture: "x86_64", URL: "quay.io/r@sha256:1", Version: "4.20.0"}}})
	require.NoError(t, err)
	srv := httptest.NewServer(live.Handler())
	defer srv.Close()
	ctx := context.Background()

	c := &ServiceClient{BaseURL: srv.URL, UserToken: auth.UserAuthToken}
	_, err = c.Hosts(ctx)
	require.ErrorContains(t, err, "0 infra-envs, want 1")
	reqs, err := c.Requests(ctx)
	require.NoError(t, err)
	assert.Empty(t, InstallCalls(reqs))

	bad := &ServiceClient{BaseURL: srv.URL, UserToken: auth.AgentAuthToken}
	_, err = bad.Requests(ctx)
	require.ErrorContains(t, err, "HTTP 403")

	// The install call as start-cluster-installation.sh makes it.
	id := "0c6f2b4e-8a1d-4f3e-9b2c-7d5e6f708192"
	req, err := http.NewRequest(http.MethodPost, srv.URL+rendezvous.APIPath+"/clusters/"+id+"/actions/install", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", auth.UserAuthToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	reqs, err = c.Requests(ctx)
	require.NoError(t, err)
	calls := InstallCalls(reqs)
	require.Len(t, calls, 1)
	assert.Equal(t, rendezvous.APIPath+"/clusters/"+id+"/actions/install", calls[0].Path)
	assert.Empty(t, InstallCalls([]sim.Request{{Method: "GET", Path: calls[0].Path, AuthHeaders: []string{"Authorization"}}}))
	assert.Empty(t, InstallCalls([]sim.Request{{Method: "POST", Path: calls[0].Path}}), "without a token it is not the unit's call")
}

func TestCheckRegistered(t *testing.T) {
	inv := `{"interfaces":[{"name":"bond0","mac_address":"52:54:00:AA:00:01"},{"name":"eno2","mac_address":"52:54:00:aa:00:02"}]}`
	hosts := []assisted.LiveHost{{Host: rendezvous.Host{ID: "h1", RequestedHostname: "sno-live", Status: "known"}, Inventory: inv}}
	require.NoError(t, CheckRegistered(hosts, "sno-live", []string{"52:54:00:aa:00:01"}))
	require.NoError(t, CheckRegistered(hosts, "sno-live", []string{"52:54:00:AA:00:02"}))
	err := CheckRegistered(hosts, "other", []string{"52:54:00:aa:00:02"})
	require.ErrorContains(t, err, `registered as "sno-live", want "other"`)
	err = CheckRegistered(hosts, "master-1", []string{"52:54:00:bb:00:02"})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "no registered host") && strings.Contains(err.Error(), "h1(sno-live, known"), err.Error())
	err = CheckRegistered([]assisted.LiveHost{{Host: rendezvous.Host{ID: "h2"}, Inventory: "{"}}, "x", []string{"m"})
	require.ErrorContains(t, err, "host h2: inventory")
}
