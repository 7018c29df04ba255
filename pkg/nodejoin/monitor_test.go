package nodejoin_test

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testcluster"
	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
)

// addClientCSR adds the client CSR a real kubelet of node creates.
func addClientCSR(t *testing.T, c *testcluster.Cluster, name, node string) {
	t.Helper()
	r, err := testcluster.KubeletClientCSR(name, node)
	require.NoError(t, err)
	require.NoError(t, c.AddCSR(r))
}

func noDNS(context.Context, string) string { return "" }

func TestMonitorApprovesOnlyTheHostsCSRs(t *testing.T) {
	c, api := start(t, testcluster.Default())
	addClientCSR(t, c, "csr-mine", "worker-1")
	addClientCSR(t, c, "csr-other", "intruder")
	// The cluster side: once the CSR is approved, the node joins.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			if strings.Contains(string(c.Object(testcluster.Named(testcluster.CSRs, "csr-mine"))), `"Approved"`) {
				_ = c.AddNode(testcluster.Node{Name: "worker-1", Role: "worker", Arch: "amd64", IP: "192.168.111.31", MAC: "52:54:00:00:00:31", Ready: true})
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	rep, err := nodejoin.Monitor(context.Background(), nodejoin.MonitorOptions{Cluster: api, IPs: []string{"192.168.111.31"},
		Names: map[string]string{"192.168.111.31": "worker-1"}, ApproveCSRs: true, Interval: 30 * time.Millisecond, Timeout: 20 * time.Second, Resolve: noDNS})
	<-done
	require.NoError(t, err)
	assert.True(t, rep.Complete)
	assert.Equal(t, []string{"csr-mine"}, rep.Hosts[0].Approved)
	assert.True(t, rep.Hosts[0].Ready)
	assert.NotContains(t, string(c.Object(testcluster.Named(testcluster.CSRs, "csr-other"))), "Approved", "a CSR of another node is never approved")
}

func TestMonitorShowsWithoutApproving(t *testing.T) {
	c, api := start(t, testcluster.Default())
	addClientCSR(t, c, "csr-mine", "worker-1")
	rep, err := nodejoin.Monitor(context.Background(), nodejoin.MonitorOptions{Cluster: api, IPs: []string{"192.168.111.31"},
		Resolve: func(context.Context, string) string { return "worker-1" }, Interval: 30 * time.Millisecond, Timeout: 2 * time.Second})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not every host is a Ready node: worker-1 (192.168.111.31)")
	assert.Equal(t, []string{"csr-mine"}, rep.Hosts[0].Pending)
	assert.False(t, rep.Complete)
	assert.NotContains(t, string(c.Object(testcluster.Named(testcluster.CSRs, "csr-mine"))), "Approved")

	// An existing Ready node completes at once; a bad address is refused.
	rep, err = nodejoin.Monitor(context.Background(), nodejoin.MonitorOptions{Cluster: api, IPs: []string{"192.168.111.23"}, Resolve: noDNS})
	require.NoError(t, err)
	assert.Equal(t, "worker-0", rep.Hosts[0].Name)
	_, err = nodejoin.Monitor(context.Background(), nodejoin.MonitorOptions{Cluster: api, IPs: []string{"nope"}})
	assert.ErrorContains(t, err, `"nope" is not an IP address`)

	c.Deny("list", testcluster.CSRs)
	_, err = nodejoin.Monitor(context.Background(), nodejoin.MonitorOptions{Cluster: api, IPs: []string{"192.168.111.31"}, Resolve: noDNS, Timeout: time.Second})
	assert.ErrorContains(t, err, `may not list certificatesigningrequests (API group "certificates.k8s.io") cluster-wide`)
}

// A control-plane host being added is shown and reported with its role
// (nodes-config.yaml's), not as a worker.
func TestMonitorShowsTheHostsRole(t *testing.T) {
	c, api := start(t, testcluster.Default())
	addClientCSR(t, c, "csr-cp", "master-3")
	rec := &recorder{}
	rep, err := nodejoin.Monitor(context.Background(), nodejoin.MonitorOptions{Cluster: api, IPs: []string{"192.168.111.33", "192.168.111.34"},
		Names: map[string]string{"192.168.111.33": "master-3", "192.168.111.34": "worker-4"}, Roles: map[string]string{"192.168.111.33": "master"},
		Resolve: noDNS, Interval: 30 * time.Millisecond, Timeout: time.Second, Reporter: rec})
	require.Error(t, err)
	require.Len(t, rep.Hosts, 2)
	assert.Equal(t, "master", rep.Hosts[0].Role)
	assert.Equal(t, "worker", rep.Hosts[1].Role, "no role in nodes-config.yaml: a worker")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.NotEmpty(t, rec.tables)
	last := rec.tables[len(rec.tables)-1]
	require.Len(t, last, 2)
	assert.Equal(t, "master-3", last[0].Name)
	assert.Equal(t, "master", last[0].Role)
	assert.Equal(t, "worker", last[1].Role)
}

// The exit codes node-image monitor documents, also for a wrapped error.
func TestMonitorExitCode(t *testing.T) {
	assert.Equal(t, 0, nodejoin.MonitorExitCode(nil))
	assert.Equal(t, 5, nodejoin.MonitorExitCode(fmt.Errorf("monitor: %w", nodejoin.ErrMonitorTimeout)))
	assert.Equal(t, 6, nodejoin.MonitorExitCode(fmt.Errorf("monitor: %w", &nodejoin.HostFailedError{Host: "worker-1", Status: "error"})))
	assert.Equal(t, 1, nodejoin.MonitorExitCode(errors.New("no kubeconfig")))
}

// Issue 33 items 2-4 through the monitor and the cluster's API: with
// --approve-csrs, only the joining host's own requests are approved; the
// crafted ones stay pending, each reported with the rule it fails; names
// from the cluster never forge a line and are quoted for the shell in the
// printed commands.
func TestMonitorLeavesCraftedCSRsPending(t *testing.T) {
	c, api := start(t, testcluster.Default())
	add := func(r testcluster.CSR, err error) {
		t.Helper()
		require.NoError(t, err)
		require.NoError(t, c.AddCSR(r))
	}
	// the real one, under a name a shell would run
	add(testcluster.KubeletClientCSR("csr-4; touch pwned", "worker-4"))
	// another node's identity (item 2)
	add(testcluster.KubeletClientCSR("csr-m0", "master-0"))
	// content the approver refuses (item 3)
	masters, err := testcluster.NewCSRRequest(&x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:worker-4", Organization: []string{"system:nodes", "system:masters"}}})
	require.NoError(t, err)
	r, err := testcluster.KubeletClientCSR("csr-masters\nINFO Every host is a Ready node of the cluster", "worker-4")
	require.NoError(t, err)
	r.Request = masters
	add(r, nil)
	r, err = testcluster.KubeletClientCSR("csr-server-auth", "worker-4")
	r.Usages = append(r.Usages, "server auth")
	add(r, err)
	add(testcluster.KubeletClientCSR("csr-upper", "WORKER-4"))

	rec := &recorder{}
	hosts := map[string]string{"192.168.111.34": "worker-4", "192.168.111.20": "master-0"}
	rep, err := nodejoin.Monitor(context.Background(), nodejoin.MonitorOptions{Cluster: api, IPs: []string{"192.168.111.34"},
		Names: hosts, ApproveCSRs: true, Resolve: noDNS, Interval: 30 * time.Millisecond, Timeout: 2 * time.Second, Reporter: rec})
	require.ErrorIs(t, err, nodejoin.ErrMonitorTimeout)
	h := rep.Hosts[0]
	assert.Equal(t, []string{"csr-4; touch pwned"}, h.Approved)
	rules := map[string]string{}
	for _, f := range h.Refused {
		rules[f.Name] = f.Rule
	}
	assert.Equal(t, map[string]string{"csr-masters\nINFO Every host is a Ready node of the cluster": "client/organization",
		"csr-server-auth": "client/usages", "csr-upper": "client/common-name"}, rules)
	for _, n := range []string{"csr-m0", "csr-masters\nINFO Every host is a Ready node of the cluster", "csr-server-auth", "csr-upper"} {
		assert.NotContains(t, string(c.Object(testcluster.Named(testcluster.CSRs, n))), "Approved", n)
	}
	text := rec.text()
	assert.Contains(t, text, "INFO Approved the client CSR csr-4; touch pwned of node worker-4 (192.168.111.34)")
	assert.Contains(t, text, `oc adm certificate deny $'csr-masters\x0aINFO Every host is a Ready node of the cluster'`)
	assert.Contains(t, text, `The client CSR csr-masters\nINFO Every host`, "the name is shown escaped")
	for _, line := range rec.lines {
		assert.NotContains(t, line, "\n", "a name from the cluster forged a line")
	}
	assert.NotContains(t, text, "csr-m0", "master-0 is not a host being added: its CSR is none of the monitor's business")

	// Without --approve-csrs the good one's hint is quoted too.
	c2, api2 := start(t, testcluster.Default())
	r, err = testcluster.KubeletClientCSR("csr-5 $(id)", "worker-5")
	require.NoError(t, err)
	require.NoError(t, c2.AddCSR(r))
	rec = &recorder{}
	_, err = nodejoin.Monitor(context.Background(), nodejoin.MonitorOptions{Cluster: api2, IPs: []string{"192.168.111.35"},
		Names: map[string]string{"192.168.111.35": "worker-5"}, Resolve: noDNS, Interval: 30 * time.Millisecond, Timeout: time.Second, Reporter: rec})
	require.Error(t, err)
	assert.Contains(t, rec.text(), "or oc adm certificate approve 'csr-5 $(id)')")
}
