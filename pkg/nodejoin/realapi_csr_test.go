package nodejoin_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/seed-a052040e/agentiso/pkg/kubeapi"
	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
)

func csrPEM(t *testing.T, cn string, orgs, dns []string, ips []string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: orgs}, DNSNames: dns}
	for _, ip := range ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// createCSR creates a CSR as the client cs authenticates: the API server,
// not the request, sets spec.username and groups.
func createCSR(t *testing.T, cs kubernetes.Interface, name, signer string, usages []certificatesv1.KeyUsage, req []byte) {
	t.Helper()
	_, err := cs.CertificatesV1().CertificateSigningRequests().Create(t.Context(), &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       certificatesv1.CertificateSigningRequestSpec{Request: req, SignerName: signer, Usages: usages}}, metav1.CreateOptions{})
	require.NoError(t, err, name)
}

// node-image monitor --approve-csrs against the REAL certificates API: the
// CSRs are created by the requesters a joining node has (the
// machine-config operator's node-bootstrapper service account, then the
// node itself by its client certificate), so the API server sets their
// username and groups; the monitor approves exactly the joining host's
// client and serving CSRs through the approval subresource, and leaves the
// others pending: another requester, a system:masters organization, an
// extra SAN, a name outside the hosts being added.
func TestMonitorApprovesThroughTheRealCertificatesAPI(t *testing.T) {
	s := realServer(t)
	ctx := t.Context()
	admin, err := s.Clientset()
	require.NoError(t, err)
	// The bootstrapper and the nodes may create CSRs (on a real cluster:
	// the machine-config operator's and the system:node roles).
	_, err = admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "csr-creator"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get"}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "csr-creator"},
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "csr-creator"},
		Subjects: []rbacv1.Subject{{Kind: "Group", Name: "system:serviceaccounts", APIGroup: "rbac.authorization.k8s.io"},
			{Kind: "Group", Name: "system:nodes", APIGroup: "rbac.authorization.k8s.io"}}}, metav1.CreateOptions{})
	require.NoError(t, err)

	as := func(cfg *rest.Config) *kubernetes.Clientset {
		cs, err := kubernetes.NewForConfig(cfg)
		require.NoError(t, err)
		return cs
	}
	withToken := func(tok string) *rest.Config {
		c := rest.AnonymousClientConfig(s.Admin())
		c.BearerToken = tok
		return c
	}
	bootTok, err := s.ServiceAccountToken(ctx, "openshift-machine-config-operator", "node-bootstrapper")
	require.NoError(t, err)
	otherTok, err := s.ServiceAccountToken(ctx, "default", "intruder")
	require.NoError(t, err)
	bootstrapper, intruder := as(withToken(bootTok)), as(withToken(otherTok))

	clientUsages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	servingUsages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
	const clientSigner, servingSigner = "kubernetes.io/kube-apiserver-client-kubelet", "kubernetes.io/kubelet-serving"
	createCSR(t, bootstrapper, "client-worker-1", clientSigner, clientUsages, csrPEM(t, "system:node:worker-1", []string{"system:nodes"}, nil, nil))
	createCSR(t, intruder, "client-wrong-requester", clientSigner, clientUsages, csrPEM(t, "system:node:worker-1", []string{"system:nodes"}, nil, nil))
	createCSR(t, bootstrapper, "client-masters", clientSigner, clientUsages, csrPEM(t, "system:node:worker-1", []string{"system:nodes", "system:masters"}, nil, nil))
	createCSR(t, bootstrapper, "client-not-joining", clientSigner, clientUsages, csrPEM(t, "system:node:worker-9", []string{"system:nodes"}, nil, nil))

	// The cluster side of a node joining: once its client CSR is approved
	// the kubelet registers the Node and asks, as the node, for its serving
	// certificate (and a forged one asks for an extra address); once that
	// is approved the node is Ready.
	nodeCert, nodeKey, err := s.ClientCert("system:node:worker-1", "system:nodes")
	require.NoError(t, err)
	nodeCfg := rest.AnonymousClientConfig(s.Admin())
	nodeCfg.CertData, nodeCfg.KeyData = nodeCert, nodeKey
	node := as(nodeCfg)
	joined := make(chan error, 1)
	go func() {
		joined <- func() error {
			approved := func(name string) (bool, error) {
				c, err := admin.CertificatesV1().CertificateSigningRequests().Get(context.Background(), name, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				for _, cd := range c.Status.Conditions {
					if cd.Type == certificatesv1.CertificateApproved {
						return true, nil
					}
				}
				return false, nil
			}
			wait := func(name string) error {
				for range 600 {
					if ok, err := approved(name); ok || err != nil {
						return err
					}
					time.Sleep(50 * time.Millisecond)
				}
				return context.DeadlineExceeded
			}
			if err := wait("client-worker-1"); err != nil {
				return err
			}
			n, err := admin.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1",
				Labels: map[string]string{"node-role.kubernetes.io/worker": ""}}}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.168.111.31"}, {Type: corev1.NodeHostName, Address: "worker-1"}}
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
			if n, err = admin.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{}); err != nil {
				return err
			}
			for _, c := range []struct {
				name string
				req  []byte
			}{
				{"serving-worker-1", csrPEM(t, "system:node:worker-1", []string{"system:nodes"}, []string{"worker-1"}, []string{"192.168.111.31"})},
				{"serving-extra-san", csrPEM(t, "system:node:worker-1", []string{"system:nodes"}, []string{"worker-1"}, []string{"192.168.111.31", "10.9.9.9"})},
			} {
				if _, err := node.CertificatesV1().CertificateSigningRequests().Create(context.Background(), &certificatesv1.CertificateSigningRequest{
					ObjectMeta: metav1.ObjectMeta{Name: c.name},
					Spec:       certificatesv1.CertificateSigningRequestSpec{Request: c.req, SignerName: servingSigner, Usages: servingUsages}}, metav1.CreateOptions{}); err != nil {
					return err
				}
			}
			if err := wait("serving-worker-1"); err != nil {
				return err
			}
			n.Status.Conditions[0].Status = corev1.ConditionTrue
			_, err = admin.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{})
			return err
		}()
	}()

	cfg, err := kubeapi.LoadKubeconfig(adminKubeconfig(t, s), "")
	require.NoError(t, err)
	rep, err := nodejoin.Monitor(ctx, nodejoin.MonitorOptions{Cluster: kubeapi.New(cfg, 20*time.Second), IPs: []string{"192.168.111.31"},
		Names: map[string]string{"192.168.111.31": "worker-1"}, ApproveCSRs: true, Interval: 100 * time.Millisecond, Timeout: 90 * time.Second, Resolve: noDNS})
	require.NoError(t, <-joined)
	require.NoError(t, err)
	assert.True(t, rep.Complete)
	assert.ElementsMatch(t, []string{"client-worker-1", "serving-worker-1"}, rep.Hosts[0].Approved)

	for name, approvedWant := range map[string]bool{"client-worker-1": true, "serving-worker-1": true,
		"client-wrong-requester": false, "client-masters": false, "client-not-joining": false, "serving-extra-san": false} {
		c, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		if approvedWant {
			require.Len(t, c.Status.Conditions, 1, name)
			assert.Equal(t, certificatesv1.CertificateApproved, c.Status.Conditions[0].Type, name)
			assert.Equal(t, "AgentisoNodeImageApprove", c.Status.Conditions[0].Reason, name)
		} else {
			assert.Empty(t, c.Status.Conditions, "%s stays pending", name)
		}
	}
	refused := map[string]string{}
	for _, r := range rep.Hosts[0].Refused {
		refused[r.Name] = r.Rule + ": " + r.Reason
	}
	t.Logf("refused: %v", refused)
	for _, name := range []string{"client-wrong-requester", "client-masters"} {
		assert.Contains(t, refused, name, "the report names the refused CSR and why")
	}
}
