package nodejoin_test

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testcluster"
	. "github.com/seed-a052040e/agentiso/pkg/nodejoin"
)

// csrOf turns a CSR as a requester would create it into what the rules
// read, through the same parser the monitor uses.
func csrOf(t *testing.T, r testcluster.CSR) CSR {
	t.Helper()
	c, err := ParseCSR(r.JSON())
	require.NoError(t, err)
	require.True(t, c.Pending)
	return c
}

func clientCSR(t *testing.T, node string, edit func(*testcluster.CSR, *x509.CertificateRequest)) CSR {
	t.Helper()
	r, err := testcluster.KubeletClientCSR("csr-c", node)
	require.NoError(t, err)
	return reRequest(t, r, edit)
}

func servingCSR(t *testing.T, node string, dns, ips []string, edit func(*testcluster.CSR, *x509.CertificateRequest)) CSR {
	t.Helper()
	r, err := testcluster.KubeletServingCSR("csr-s", node, dns, ips)
	require.NoError(t, err)
	return reRequest(t, r, edit)
}

// reRequest lets edit change the CSR object and its x509 request (parsed
// from r), then signs the request again.
func reRequest(t *testing.T, r testcluster.CSR, edit func(*testcluster.CSR, *x509.CertificateRequest)) CSR {
	t.Helper()
	if edit != nil {
		c := csrOf(t, r)
		tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: c.CommonName, Organization: c.Organization}, DNSNames: c.DNSNames}
		for _, ip := range c.IPs {
			tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
		}
		edit(&r, tmpl)
		var err error
		r.Request, err = testcluster.NewCSRRequest(tmpl)
		require.NoError(t, err)
	}
	return csrOf(t, r)
}

// The cluster of the rules' tests: three control-plane nodes and worker-0,
// and a new worker node worker-3 (already registered, for its serving CSR).
func testNodes() []ClusterNode {
	n := func(name, ip string) ClusterNode {
		return ClusterNode{Name: name, Addresses: []NodeAddress{{"InternalIP", ip}, {"Hostname", name}}}
	}
	return []ClusterNode{n("master-0", "192.168.111.20"), n("master-1", "192.168.111.21"), n("master-2", "192.168.111.22"),
		n("worker-0", "192.168.111.23"), n("worker-3", "192.168.111.33")}
}

// TestJudgeCSR: what the approver refuses stays refused (issue 33 items
// 1-3), each with the rule it fails; what a real kubelet asks for passes.
func TestJudgeCSR(t *testing.T) {
	nodes := testNodes()
	cfg := JoiningHost{Name: "worker-4", IP: "192.168.111.34", From: NameFromNodesConfig}
	dns := JoiningHost{Name: "worker-5", IP: "192.168.111.35", From: NameFromDNS}
	self := JoiningHost{Name: "worker-6", IP: "192.168.111.36", From: NameFromHost}
	liar := JoiningHost{Name: "master-0", IP: "192.168.111.37", From: NameFromHost}
	joined := JoiningHost{Name: "worker-3", IP: "192.168.111.33", From: NameFromNode}
	hosts := []JoiningHost{cfg, dns, self, liar, joined}
	masters := func(r *testcluster.CSR, x *x509.CertificateRequest) {
		x.Subject.Organization = []string{"system:nodes", "system:masters"}
	}
	for name, tc := range map[string]struct {
		c    CSR
		host JoiningHost
		rule string // "" : approved
	}{
		"client, named by nodes-config.yaml": {clientCSR(t, "worker-4", nil), cfg, ""},
		"client, named by reverse DNS":       {clientCSR(t, "worker-5", nil), dns, ""},
		"client, RSA usages": {clientCSR(t, "worker-4", func(r *testcluster.CSR, _ *x509.CertificateRequest) {
			r.Usages = []string{"key encipherment", "digital signature", "client auth"}
		}), cfg, ""},
		"serving of a new node": {servingCSR(t, "worker-3", []string{"worker-3"}, []string{"192.168.111.33"}, nil), joined, ""},
		// item 1: a host's own word for its name
		"client, named only by the host":         {clientCSR(t, "worker-6", nil), self, "client/trusted-name"},
		"client, a host calling itself master-0": {clientCSR(t, "master-0", nil), liar, "client/new-node"},
		// item 2
		"client for an existing node": {clientCSR(t, "worker-3", nil), joined, "client/new-node"},
		// item 3
		"client, O=system:masters too": {clientCSR(t, "worker-4", masters), cfg, "client/organization"},
		"client, no organization":      {clientCSR(t, "worker-4", func(_ *testcluster.CSR, x *x509.CertificateRequest) { x.Subject.Organization = nil }), cfg, "client/organization"},
		"client, DNS SAN":              {clientCSR(t, "worker-4", func(_ *testcluster.CSR, x *x509.CertificateRequest) { x.DNSNames = []string{"worker-4"} }), cfg, "client/no-sans"},
		"client, IP SAN": {clientCSR(t, "worker-4", func(_ *testcluster.CSR, x *x509.CertificateRequest) {
			x.IPAddresses = []net.IP{net.ParseIP("192.168.111.34")}
		}), cfg, "client/no-sans"},
		"client, server auth":      {clientCSR(t, "worker-4", func(r *testcluster.CSR, _ *x509.CertificateRequest) { r.Usages = append(r.Usages, "server auth") }), cfg, "client/usages"},
		"client, case-folded name": {clientCSR(t, "WORKER-4", nil), cfg, "client/common-name"},
		"client, wrong requester": {clientCSR(t, "worker-4", func(r *testcluster.CSR, _ *x509.CertificateRequest) {
			r.Username = "system:serviceaccount:default:builder"
		}), cfg, "client/requester"},
		"client, extra group": {clientCSR(t, "worker-4", func(r *testcluster.CSR, _ *x509.CertificateRequest) { r.Groups = append(r.Groups, "system:masters") }), cfg, "client/groups"},
		"serving, URI and e-mail SANs": {servingCSR(t, "worker-3", []string{"worker-3"}, nil, func(_ *testcluster.CSR, x *x509.CertificateRequest) {
			x.URIs = []*url.URL{{Scheme: "spiffe", Host: "cluster.local", Path: "/ns/x"}}
			x.EmailAddresses = []string{"root@example.com"}
		}), joined, "serving/sans"},
		"serving, no organization":        {servingCSR(t, "worker-3", []string{"worker-3"}, nil, func(_ *testcluster.CSR, x *x509.CertificateRequest) { x.Subject.Organization = nil }), joined, "serving/organization"},
		"serving, O=system:masters":       {servingCSR(t, "worker-3", []string{"worker-3"}, nil, masters), joined, "serving/organization"},
		"serving, another node's address": {servingCSR(t, "worker-3", nil, []string{"192.168.111.20"}, nil), joined, "serving/ip-addresses"},
		"serving, a foreign name":         {servingCSR(t, "worker-3", []string{"api.example.com"}, nil, nil), joined, "serving/dns-names"},
		"serving, another node's name":    {servingCSR(t, "worker-3", []string{"master-0"}, nil, nil), joined, "serving/dns-names"},
		"serving, client usages": {servingCSR(t, "worker-3", []string{"worker-3"}, nil, func(r *testcluster.CSR, _ *x509.CertificateRequest) {
			r.Usages = []string{"digital signature", "client auth"}
		}), joined, "serving/usages"},
		"serving, subject not requester": {servingCSR(t, "worker-3", []string{"worker-3"}, nil, func(_ *testcluster.CSR, x *x509.CertificateRequest) { x.Subject.CommonName = "system:node:worker-4" }), joined, "serving/common-name"},
		"serving, not from a node":       {servingCSR(t, "worker-3", []string{"worker-3"}, nil, func(r *testcluster.CSR, _ *x509.CertificateRequest) { r.Username = "system:serviceaccount:x:y" }), joined, "serving/requester"},
		"serving, without system:nodes":  {servingCSR(t, "worker-3", []string{"worker-3"}, nil, func(r *testcluster.CSR, _ *x509.CertificateRequest) { r.Groups = []string{"system:authenticated"} }), joined, "serving/groups"},
		"serving, no names":              {servingCSR(t, "worker-3", nil, nil, nil), joined, "serving/sans"},
		"serving before the node exists": {servingCSR(t, "worker-4", []string{"worker-4"}, []string{"192.168.111.34"}, nil), cfg, "serving/node"},
		"other signer":                   {clientCSR(t, "worker-4", func(r *testcluster.CSR, _ *x509.CertificateRequest) { r.Signer = "kubernetes.io/kube-apiserver-client" }), cfg, "signer"},
	} {
		t.Run(name, func(t *testing.T) {
			v := JudgeCSR(tc.c, hosts, nodes)
			assert.Equal(t, tc.host, v.Host, "the host it is for")
			if tc.rule == "" {
				assert.True(t, v.Approve, "%s: %s", v.Rule, v.Reason)
				return
			}
			assert.False(t, v.Approve)
			assert.Equal(t, tc.rule, v.Rule, v.Reason)
			assert.NotEmpty(t, v.Reason)
		})
	}
}

// CSRs for no host being added are none of the monitor's business: not
// approved and not reported.
func TestJudgeCSRIgnoresOtherNodes(t *testing.T) {
	hosts := []JoiningHost{{Name: "worker-4", IP: "192.168.111.34", From: NameFromNodesConfig}}
	for _, c := range []CSR{clientCSR(t, "worker-9", nil), servingCSR(t, "worker-0", []string{"worker-0"}, nil, nil), clientCSR(t, "", nil)} {
		assert.Equal(t, Verdict{}, JudgeCSR(c, hosts, testNodes()), c.CommonName)
	}
	// A host whose name is not known yet is named by no CSR.
	assert.Equal(t, Verdict{}, JudgeCSR(clientCSR(t, "worker-4", nil), []JoiningHost{{IP: "192.168.111.34"}}, testNodes()))
}

// Two hosts going by one name get neither's client CSR approved.
func TestJudgeCSRNameTwice(t *testing.T) {
	hosts := []JoiningHost{{Name: "worker-4", IP: "192.168.111.34", From: NameFromDNS}, {Name: "worker-4", IP: "192.168.111.44", From: NameFromDNS}}
	v := JudgeCSR(clientCSR(t, "worker-4", nil), hosts, testNodes())
	assert.False(t, v.Approve)
	assert.Equal(t, "client/unique-name", v.Rule)
}

func TestParseCSR(t *testing.T) {
	bad := testcluster.CSR{Name: "bad", Request: []byte("nope")}
	_, err := ParseCSR(bad.JSON())
	assert.ErrorContains(t, err, "csr bad: spec.request holds no CERTIFICATE REQUEST PEM block")
	_, err = ParseCSR([]byte(`{"spec":`))
	assert.ErrorContains(t, err, "a certificate signing request from the cluster")
	r, err := testcluster.KubeletClientCSR("c", "worker-1")
	require.NoError(t, err)
	c, err := ParseCSR(r.JSON())
	require.NoError(t, err)
	assert.True(t, c.Pending)
	assert.Equal(t, []string{"system:nodes"}, c.Organization)
	assert.Equal(t, []string{"digital signature", "client auth"}, c.Usages)
	approved := strings.Replace(string(r.JSON()), `"status":{}`, `"status":{"conditions":[{"type":"Approved","status":"True"}]}`, 1)
	c, err = ParseCSR([]byte(approved))
	require.NoError(t, err)
	assert.False(t, c.Pending)
}

// FuzzParseCSR: whatever the cluster returns, ParseCSR and the rules
// answer without a panic.
func FuzzParseCSR(f *testing.F) {
	r, err := testcluster.KubeletClientCSR("c", "worker-4")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(r.JSON())
	f.Add([]byte(`{"spec":{"request":"bm9wZQ=="}}`))
	hosts := []JoiningHost{{Name: "worker-4", IP: "192.168.111.34", From: NameFromNodesConfig}}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := ParseCSR(raw)
		if err != nil {
			return
		}
		for _, signer := range []string{c.Signer, "kubernetes.io/kubelet-serving", "kubernetes.io/kube-apiserver-client-kubelet"} {
			c.Signer = signer
			v := JudgeCSR(c, hosts, testNodes())
			if v.Approve && v.Rule != "" {
				t.Fatalf("approved with a failed rule %s", v.Rule)
			}
		}
	})
}
