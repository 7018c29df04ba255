package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testcluster"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// fakeHostAPI serves a joining host's own assisted-service on a loopback
// address of its own, port 8090 (where node-image monitor looks): one
// imported cluster with the host in status, for the watcher token tok only.
func fakeHostAPI(t *testing.T, tok, status, info string) string {
	t.Helper()
	var ln net.Listener
	var ip string
	for range 20 {
		ip = fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(250), rand.IntN(250), 2+rand.IntN(250))
		var err error
		if ln, err = net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(rendezvous.Port))); err == nil {
			break
		}
	}
	if ln == nil {
		t.Skip("no loopback address with a free port 8090")
	}
	host := rendezvous.Host{ID: "h1", RequestedHostname: "worker-9", Role: "worker", Status: status, StatusInfo: info}
	mux := http.NewServeMux()
	auth := func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get(rendezvous.WatcherHeader) != tok {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code":401,"reason":"unauthorized"}`))
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		return true
	}
	mux.HandleFunc("GET "+rendezvous.APIPath+"/clusters", func(w http.ResponseWriter, r *http.Request) {
		if auth(w, r) {
			_ = json.NewEncoder(w).Encode([]rendezvous.Cluster{{ID: "c1", Kind: "AddHostsCluster", Status: "adding-hosts"}})
		}
	})
	mux.HandleFunc("GET "+rendezvous.APIPath+"/clusters/c1", func(w http.ResponseWriter, r *http.Request) {
		if auth(w, r) {
			_ = json.NewEncoder(w).Encode(rendezvous.Cluster{ID: "c1", Kind: "AddHostsCluster", Status: "adding-hosts", Hosts: []rendezvous.Host{host}})
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ip
}

// node-image monitor's exit codes: 6 when a host's own service says its
// install failed, 5 when the timeout passes first; the table shows the
// host's service until then.
func TestNodeImageMonitorExitCodes(t *testing.T) {
	c, err := testcluster.Start(testcluster.Default())
	require.NoError(t, err)
	t.Cleanup(c.Close)
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	require.NoError(t, os.WriteFile(kc, c.Kubeconfig(), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, assetdir.StateDir), 0o700))
	const tok = "eyJhbGciOiJFUzI1NiJ9.eyJhdXRoX3NjaGVtZSI6IndhdGNoZXJBdXRoIn0.c2ln"
	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.NodeWatcherToken), []byte(tok+"\n"), 0o600))

	monitor := func(ip string, extra ...string) (int, string) {
		var out, errOut bytes.Buffer
		args := append([]string{"node-image", "monitor", "--dir", dir, "--kubeconfig", kc, "--ip-addresses", ip,
			"--interval", "50ms", "--log-level", "debug"}, extra...)
		return run(args, nil, &out, &errOut), errOut.String()
	}

	failed := fakeHostAPI(t, tok, "error", "Host failed to install: failed to write image to disk")
	code, out := monitor(failed, "--timeout", "20s")
	assert.Equal(t, 6, code, out)
	assert.Contains(t, out, "host worker-9 ("+failed+"): its installation failed: error: Host failed to install")

	installing := fakeHostAPI(t, tok, "installing-in-progress", "Installing")
	code, out = monitor(installing, "--timeout", "1s", "--report")
	assert.Equal(t, 5, code, out)
	assert.Contains(t, out, "Host worker-9 ("+installing+"): installing-in-progress: Installing")
	assert.Contains(t, out, "Host worker-9 [worker]: installing-in-progress", "the host table (plain: one line per change)")
	assert.Contains(t, out, "not every host is a Ready node: worker-9 ("+installing+")")
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"status": "installing-in-progress"`)

	// Another ISO's token: said at once, with what to do.
	other := fakeHostAPI(t, "another-token", "known", "")
	code, out = monitor(other, "--timeout", "20s")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "its assisted-service refuses the watcher token")

	// Without the token in --dir: the watcher token of the cluster's
	// openshift-config/agent-auth-token secret, as oc adm node-image
	// monitor reads it (an ISO of another directory, or of oc).
	require.NoError(t, os.Remove(filepath.Join(dir, assetdir.NodeWatcherToken)))
	require.NoError(t, c.Put(nodejoin.AuthTokenSecret, map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "agent-auth-token", "namespace": "openshift-config"},
		"data":     map[string][]byte{"watcherAuthToken": []byte(tok)}}))
	code, out = monitor(installing, "--timeout", "1s")
	assert.Equal(t, 5, code, out)
	assert.Contains(t, out, "No watcher token in "+dir+": the hosts' own assisted-service is read with the watcher token of secret openshift-config/agent-auth-token, as oc adm node-image monitor reads it")
	assert.Contains(t, out, "Host worker-9 ("+installing+"): installing-in-progress: Installing")

	// With neither: the cluster side only, and it says so.
	c.Remove(nodejoin.AuthTokenSecret)
	code, out = monitor(installing, "--timeout", "300ms")
	assert.Equal(t, 5, code, out)
	assert.Contains(t, out, "No watcher token in "+dir+" (node-image create writes it with the ISO), nor in secret openshift-config/agent-auth-token (absent)")
	assert.False(t, strings.Contains(out, "installing-in-progress"), out)
}
