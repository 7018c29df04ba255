package testcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With MCSListen the machine-config server answers the worker Ignition
// config over TLS as api-int.<name>.<domain>, and the user data of new
// workers names it with its CA.
func TestMachineConfigServer(t *testing.T) {
	o := Default()
	o.MCSListen = "127.0.0.1:0"
	c, err := Start(o)
	require.NoError(t, err)
	defer c.Close()

	var secret struct {
		Data map[string][]byte `json:"data"`
	}
	require.NoError(t, json.Unmarshal(c.Object(WorkerUserData), &secret))
	var ud struct {
		Ignition struct {
			Config struct {
				Merge []struct {
					Source string `json:"source"`
				} `json:"merge"`
			} `json:"config"`
		} `json:"ignition"`
	}
	require.NoError(t, json.Unmarshal(secret.Data["userData"], &ud))
	require.Len(t, ud.Ignition.Config.Merge, 1)
	assert.Equal(t, c.MCSURL(), ud.Ignition.Config.Merge[0].Source)
	assert.Contains(t, string(secret.Data["userData"]), "data:text/plain;charset=utf-8;base64,", "the CA is inline")

	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM([]byte(c.MCSCA())))
	u, err := url.Parse(c.MCSURL())
	require.NoError(t, err)
	port := u.Port()
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, "127.0.0.1:"+port)
		}}}
	resp, err := hc.Get(c.MCSURL())
	require.NoError(t, err, "the certificate is valid for %s under the CA of the user data", c.APIIntName())
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	var ign struct {
		Ignition struct{ Version string } `json:"ignition"`
		Storage  struct {
			Files []struct{ Path string } `json:"files"`
		} `json:"storage"`
	}
	require.NoError(t, json.Unmarshal(b, &ign))
	assert.Equal(t, "3.2.0", ign.Ignition.Version)
	require.Len(t, ign.Storage.Files, 1)
	assert.Equal(t, "/etc/kubernetes/kubeconfig", ign.Storage.Files[0].Path)
	assert.Contains(t, c.Requests(), "MCS GET /config/worker")

	// assisted-service asks for <ignition endpoint URL>/<pool>
	// (release-4.20 internal/host/hostutil/host_utils.go,
	// GetIgnitionEndpointAndCert); the machine-config server takes the
	// pool from the last path element, as the real one
	// (machine-config-operator pkg/server/api.go, path.Base).
	// It serves the pools the cluster has: worker and master (a day-2
	// control-plane host asks for <endpoint>/master), arbiter only on a
	// cluster with an arbiter node, no other.
	for path, want := range map[string]int{"/worker": http.StatusOK, "/master": http.StatusOK, "/arbiter": http.StatusNotFound, "/infra": http.StatusNotFound} {
		resp, err := hc.Get(c.MCSURL() + path)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode, path)
	}
	assert.Contains(t, c.Requests(), "MCS GET /config/worker/master")

	o.Nodes = append(o.Nodes, Node{Name: "arbiter-0", Role: "arbiter", Arch: "amd64", IP: "192.168.111.24", MAC: "52:54:00:00:00:24", Ready: true})
	c2, err := Start(o)
	require.NoError(t, err)
	defer c2.Close()
	u2, err := url.Parse(c2.MCSURL())
	require.NoError(t, err)
	port = u2.Port()
	pool2 := x509.NewCertPool()
	require.True(t, pool2.AppendCertsFromPEM([]byte(c2.MCSCA())))
	hc.Transport.(*http.Transport).TLSClientConfig.RootCAs = pool2
	resp, err = hc.Get(c2.MCSURL() + "/arbiter")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the arbiter pool of a cluster with an arbiter node")
}
