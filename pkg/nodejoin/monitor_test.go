package nodejoin_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/testcluster"
	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
)

func requestPEM(t *testing.T, cn string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

const bootstrapper = "system:serviceaccount:openshift-machine-config-operator:node-bootstrapper"

func noDNS(context.Context, string) string { return "" }

func TestMonitorApprovesOnlyTheHostsCSRs(t *testing.T) {
	c, api := start(t, testcluster.Default())
	require.NoError(t, c.AddCSR("csr-mine", bootstrapper, "kubernetes.io/kube-apiserver-client-kubelet", requestPEM(t, "system:node:worker-1")))
	require.NoError(t, c.AddCSR("csr-other", bootstrapper, "kubernetes.io/kube-apiserver-client-kubelet", requestPEM(t, "system:node:intruder")))
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
	require.NoError(t, c.AddCSR("csr-mine", bootstrapper, "kubernetes.io/kube-apiserver-client-kubelet", requestPEM(t, "system:node:worker-1")))
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
	require.NoError(t, c.AddCSR("csr-cp", bootstrapper, "kubernetes.io/kube-apiserver-client-kubelet", requestPEM(t, "system:node:master-3")))
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
