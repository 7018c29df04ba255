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

	"github.com/seed-a052040e/agentiso/internal/fake/testcluster"
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

// playJoin plays worker-7 at ip joining the cluster of c, in the
// background; its result arrives on the channel.
func playJoin(ctx context.Context, c *testcluster.Cluster, ip, tok string, step time.Duration) <-chan error {
	played := make(chan error, 1)
	go func() {
		played <- c.PlayJoin(ctx, testcluster.JoinOptions{Hosts: []testcluster.JoiningHost{{Name: "worker-7", IP: ip, MAC: "52:54:00:00:00:77"}},
			Token: func() string { return tok }, Step: step})
	}()
	return played
}

// agentWith reads a host's own assisted-service with the watcher token tok.
func agentWith(tok string) func(ip string) (nodejoin.AgentAPI, error) {
	return func(ip string) (nodejoin.AgentAPI, error) {
		return rendezvous.NewClient(rendezvous.BaseURL(ip), tok, 2*time.Second, nil)
	}
}

// The whole day-2 join as the simulator plays it (the host's own
// assisted-service over HTTP, then its two CSRs, then the node), followed
// by Monitor with the real client: every state is seen, only the host's
// CSRs are approved, and it ends when the node is Ready. The host is named
// by nodes-config.yaml (Names).
func TestMonitorFollowsAPlayedJoin(t *testing.T) {
	c, api := start(t, testcluster.Default())
	ip := freeLoopback(t)
	const tok = "watcher-token"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	played := playJoin(ctx, c, ip, tok, 150*time.Millisecond)
	rec := &recorder{}
	rep, err := nodejoin.Monitor(ctx, nodejoin.MonitorOptions{Cluster: api, IPs: []string{ip}, Names: map[string]string{ip: "worker-7"}, Resolve: noDNS, ApproveCSRs: true,
		Interval: 40 * time.Millisecond, Timeout: 50 * time.Second, Reporter: rec, Agent: agentWith(tok)})
	require.NoError(t, err, rec.text())
	require.NoError(t, <-played)
	assert.True(t, rep.Complete)
	assert.Equal(t, "worker-7", rep.Hosts[0].Name)
	assert.Equal(t, nodejoin.NameFromNode, rep.Hosts[0].NameFrom, "named by its Node at the end")
	assert.Equal(t, []string{"csr-worker-7-client", "csr-worker-7-serving"}, rep.Hosts[0].Approved)
	st := rec.statuses()
	for _, want := range []string{"insufficient", "known", "installing-in-progress", "node, Ready"} {
		assert.Contains(t, st, want)
	}
	assert.Contains(t, rec.text(), "validation: Ignition is not yet available, pending API connectivity")
}

// Issue 33 item 1: a host named only by its own assisted-service (plain
// HTTP, anyone on the network) does not get its client CSR approved: it
// stays pending, and the monitor says which rule it fails and what to do.
func TestMonitorDoesNotTakeAHostsWordForItsName(t *testing.T) {
	c, api := start(t, testcluster.Default())
	ip := freeLoopback(t)
	const tok = "watcher-token"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	playJoin(ctx, c, ip, tok, 100*time.Millisecond)
	rec := &recorder{}
	rep, err := nodejoin.Monitor(ctx, nodejoin.MonitorOptions{Cluster: api, IPs: []string{ip}, Resolve: noDNS, ApproveCSRs: true,
		Interval: 40 * time.Millisecond, Timeout: 8 * time.Second, Reporter: rec, Agent: agentWith(tok)})
	require.ErrorIs(t, err, nodejoin.ErrMonitorTimeout, rec.text())
	h := rep.Hosts[0]
	assert.Equal(t, "worker-7", h.Name)
	assert.Equal(t, nodejoin.NameFromHost, h.NameFrom)
	assert.Empty(t, h.Approved)
	require.Len(t, h.Refused, 1, rec.text())
	assert.Equal(t, nodejoin.RefusedCSR{Name: "csr-worker-7-client", Kind: "client", Rule: "client/trusted-name",
		Reason: "the name worker-7 comes only from the host at " + ip + " itself (its assisted-service, over plain HTTP): give it as the host's hostname in nodes-config.yaml (node-image monitor --dir reads it)"}, h.Refused[0])
	assert.NotContains(t, string(c.Object(testcluster.Named(testcluster.CSRs, "csr-worker-7-client"))), "Approved")
	assert.Contains(t, rec.text(), "WARN The client CSR csr-worker-7-client for host worker-7 ("+ip+") stays pending: it fails the approval rule client/trusted-name")
	assert.Contains(t, rec.text(), "if you have checked it, approve it by hand: oc adm certificate approve csr-worker-7-client")
}
