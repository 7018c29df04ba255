package nodejoin_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testcluster"
	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// fakeAgent is a host's own assisted-service: steps are its answers, one
// per poll (the last one repeats); an error step is an API that does not
// answer.
type fakeAgent struct {
	mu    sync.Mutex
	steps []agentStep
	n     int
}

type agentStep struct {
	host *rendezvous.Host // nil: the cluster is not imported yet
	err  error
}

func (f *fakeAgent) step() agentStep {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.steps[min(f.n, len(f.steps)-1)]
	f.n++
	return s
}

func (f *fakeAgent) ListClusters(context.Context) ([]rendezvous.Cluster, error) {
	s := f.step()
	if s.err != nil {
		return nil, s.err
	}
	if s.host == nil {
		return nil, nil
	}
	return []rendezvous.Cluster{{ID: "c1", Status: "adding-hosts", Hosts: []rendezvous.Host{*s.host}}}, nil
}

func (f *fakeAgent) GetCluster(_ context.Context, id string) (*rendezvous.Cluster, error) {
	f.mu.Lock()
	s := f.steps[min(f.n-1, len(f.steps)-1)]
	f.mu.Unlock()
	return &rendezvous.Cluster{ID: id, Status: "adding-hosts", Hosts: []rendezvous.Host{*s.host}}, nil
}

// recorder keeps what the monitor reported.
type recorder struct {
	mu     sync.Mutex
	lines  []string
	tables [][]rendezvous.HostRow
}

func (r *recorder) Log(l slog.Level, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, l.String()+" "+msg)
}
func (r *recorder) Hosts(rows []rendezvous.HostRow) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tables = append(r.tables, rows)
}
func (r *recorder) Stale(string)  {}
func (r *recorder) Result(string) {}
func (r *recorder) Close(bool)    {}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}

func (r *recorder) statuses() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, t := range r.tables {
		for _, row := range t {
			if len(out) == 0 || out[len(out)-1] != row.Status {
				out = append(out, row.Status)
			}
		}
	}
	return out
}

func validations(t *testing.T, vs ...rendezvous.Validation) string {
	t.Helper()
	s, err := rendezvous.EncodeValidations(vs)
	require.NoError(t, err)
	return s
}

// The host table follows the host's own service until it reboots, then
// the cluster: failing validations are printed once, and when they pass.
func TestMonitorFollowsTheHostsService(t *testing.T) {
	c, api := start(t, testcluster.Default())
	dnsFail := rendezvous.Validation{Category: "network", ID: "api-int-domain-name-resolved-correctly", Status: rendezvous.ValidationFailure, Message: "Couldn't resolve domain name api-int.ostest.example.com"}
	dnsOK := dnsFail
	dnsOK.Status, dnsOK.Message = rendezvous.ValidationSuccess, "Domain name resolution was successful"
	h := func(status string, v rendezvous.Validation, stage string, pct int64) *rendezvous.Host {
		host := &rendezvous.Host{ID: "h1", RequestedHostname: "worker-1", Role: "worker", Status: status, StatusInfo: status + " info", ValidationsInfo: validations(t, v)}
		if stage != "" {
			host.Progress = &rendezvous.HostProgress{CurrentStage: stage, InstallationPercentage: pct}
		}
		return host
	}
	agent := &fakeAgent{steps: []agentStep{
		{err: context.DeadlineExceeded},
		{host: nil},
		{host: h("insufficient", dnsFail, "", 0)},
		{host: h("insufficient", dnsFail, "", 0)},
		{host: h("known", dnsOK, "", 0)},
		{host: h("installing-in-progress", dnsOK, "Writing image to disk", 40)},
		{err: context.DeadlineExceeded},
	}}
	rec := &recorder{}
	go func() {
		for range 400 {
			agent.mu.Lock()
			gone := agent.n >= len(agent.steps)+1
			agent.mu.Unlock()
			if gone {
				_ = c.AddNode(testcluster.Node{Name: "worker-1", Role: "worker", Arch: "amd64", IP: "192.168.111.31", MAC: "52:54:00:00:00:31", Ready: true})
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	rep, err := nodejoin.Monitor(context.Background(), nodejoin.MonitorOptions{Cluster: api, IPs: []string{"192.168.111.31"}, Resolve: noDNS,
		Interval: 10 * time.Millisecond, Timeout: 20 * time.Second, Reporter: rec,
		Agent: func(ip string) (nodejoin.AgentAPI, error) {
			assert.Equal(t, "192.168.111.31", ip)
			return agent, nil
		}})
	require.NoError(t, err)
	assert.True(t, rep.Complete)
	out := rec.text()
	assert.Equal(t, 1, strings.Count(out, "WARN Host worker-1 (192.168.111.31) validation: Couldn't resolve domain name api-int.ostest.example.com"), out)
	assert.Contains(t, out, "INFO Host worker-1 (192.168.111.31) validation passes now: api-int-domain-name-resolved-correctly")
	assert.Contains(t, out, "INFO Host worker-1 (192.168.111.31): installing-in-progress: installing-in-progress info")
	assert.Contains(t, out, "INFO Host worker-1 (192.168.111.31): its assisted-service stopped answering: the host is rebooting")
	assert.Contains(t, out, "INFO Node worker-1 (192.168.111.31) is Ready")
	assert.Equal(t, []string{"assisted-service not answering yet", "importing the cluster", "insufficient", "known", "installing-in-progress",
		"rebooted: joining the cluster", "node, Ready"}, rec.statuses())
	require.NotNil(t, rep.Hosts[0].Agent)
	assert.True(t, rep.Hosts[0].Agent.Gone)
	assert.Equal(t, "Writing image to disk", rep.Hosts[0].Agent.Stage)
}

// A host whose service says its install failed ends the watch with the
// reason; a refused token says which token and why.
func TestMonitorHostFailures(t *testing.T) {
	_, api := start(t, testcluster.Default())
	failed := &fakeAgent{steps: []agentStep{{host: &rendezvous.Host{ID: "h1", RequestedHostname: "worker-1", Status: "error",
		StatusInfo: "Host failed to install: failed to write image to disk"}}}}
	_, err := nodejoin.Monitor(context.Background(), nodejoin.MonitorOptions{Cluster: api, IPs: []string{"192.168.111.31"}, Resolve: noDNS,
		Interval: 10 * time.Millisecond, Timeout: 5 * time.Second, Agent: func(string) (nodejoin.AgentAPI, error) { return failed, nil }})
	var hf *nodejoin.HostFailedError
	require.ErrorAs(t, err, &hf)
	assert.EqualError(t, err, "host worker-1 (192.168.111.31): its installation failed: error: Host failed to install: failed to write image to disk")

	refused := &fakeAgent{steps: []agentStep{{err: &rendezvous.StatusError{Method: "GET", URL: "http://192.168.111.31:8090/api/assisted-install/v2/clusters", StatusCode: 401,
		Message: "The provided authentication token has expired"}}}}
	_, err = nodejoin.Monitor(context.Background(), nodejoin.MonitorOptions{Cluster: api, IPs: []string{"192.168.111.31"}, Resolve: noDNS,
		Interval: 10 * time.Millisecond, Timeout: 5 * time.Second, Agent: func(string) (nodejoin.AgentAPI, error) { return refused, nil }})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "host 192.168.111.31: its assisted-service refuses the watcher token (The provided authentication token has expired)")

	// The timeout is told apart from the other failures.
	silent := &fakeAgent{steps: []agentStep{{err: context.DeadlineExceeded}}}
	_, err = nodejoin.Monitor(context.Background(), nodejoin.MonitorOptions{Cluster: api, IPs: []string{"192.168.111.31"}, Resolve: noDNS,
		Interval: 10 * time.Millisecond, Timeout: 200 * time.Millisecond, Agent: func(string) (nodejoin.AgentAPI, error) { return silent, nil }})
	assert.ErrorIs(t, err, nodejoin.ErrMonitorTimeout)
	assert.EqualError(t, err, "after 200ms, not every host is a Ready node: 192.168.111.31")
}
