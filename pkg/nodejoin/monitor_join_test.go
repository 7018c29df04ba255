package nodejoin_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/testcluster"
	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// freeLoopback is a loopback address whose port 8090 is free.
func freeLoopback(t *testing.T) string {
	t.Helper()
	for range 20 {
		ip := fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(250), rand.IntN(250), 2+rand.IntN(250))
		if ln, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(rendezvous.Port))); err == nil {
			ln.Close()
			return ip
		}
	}
	t.Skip("no loopback address with a free port 8090")
	return ""
}

// The whole day-2 join as the simulator plays it (the host's own
// assisted-service over HTTP, then its two CSRs, then the node), followed
// by Monitor with the real client: every state is seen, only the host's
// CSRs are approved, and it ends when the node is Ready.
func TestMonitorFollowsAPlayedJoin(t *testing.T) {
	c, api := start(t, testcluster.Default())
	ip := freeLoopback(t)
	const tok = "watcher-token"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	played := make(chan error, 1)
	go func() {
		played <- c.PlayJoin(ctx, testcluster.JoinOptions{Hosts: []testcluster.JoiningHost{{Name: "worker-7", IP: ip, MAC: "52:54:00:00:00:77"}},
			Token: func() string { return tok }, Step: 150 * time.Millisecond})
	}()
	rec := &recorder{}
	rep, err := nodejoin.Monitor(ctx, nodejoin.MonitorOptions{Cluster: api, IPs: []string{ip}, Resolve: noDNS, ApproveCSRs: true,
		Interval: 40 * time.Millisecond, Timeout: 50 * time.Second, Reporter: rec,
		Agent: func(ip string) (nodejoin.AgentAPI, error) {
			return rendezvous.NewClient(rendezvous.BaseURL(ip), tok, 2*time.Second, nil)
		}})
	require.NoError(t, err, rec.text())
	require.NoError(t, <-played)
	assert.True(t, rep.Complete)
	assert.Equal(t, "worker-7", rep.Hosts[0].Name, "named by its own service")
	assert.Equal(t, []string{"csr-worker-7-client", "csr-worker-7-serving"}, rep.Hosts[0].Approved)
	st := rec.statuses()
	for _, want := range []string{"insufficient", "known", "installing-in-progress", "node, Ready"} {
		assert.Contains(t, st, want)
	}
	assert.Contains(t, rec.text(), "validation: Ignition is not yet available, pending API connectivity")
}
