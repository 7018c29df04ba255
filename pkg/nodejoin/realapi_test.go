package nodejoin_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/seed-a052040e/agentiso/internal/fake/testcluster"
	"github.com/seed-a052040e/agentiso/internal/testapiserver"
	"github.com/seed-a052040e/agentiso/pkg/credentials"
	"github.com/seed-a052040e/agentiso/pkg/kubeapi"
	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
)

// The CRDs node-image reads, as the build stages them (openshift/api's;
// metal3's from assisted-service).
var realCRDs = []string{
	"openshift/0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml",
	"openshift/0000_03_config-operator_01_proxies.crd.yaml",
	"openshift/0000_10_config-operator_01_imagecontentpolicies.crd.yaml",
	"openshift/0000_10_config-operator_01_imagedigestmirrorsets.crd.yaml",
	"openshift/0000_10_config-operator_01_infrastructures-Default.crd.yaml",
	"openshift/0000_10_config-operator_01_imagecontentsourcepolicies.crd.yaml",
	"openshift/0000_80_machine-config_01_machineconfigs.crd.yaml",
	"hub/metal3.io_baremetalhosts.yaml",
}

// realServer starts the real kube-apiserver with the CRDs; it skips (fails
// in CI) when the server is not built.
func realServer(t *testing.T) *testapiserver.Server {
	t.Helper()
	bin, err := testapiserver.Find()
	if err != nil {
		if testapiserver.Required() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	s, err := testapiserver.Start(bin, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(s.Stop)
	t0 := time.Now()
	require.NoError(t, s.LoadCRDs(context.Background(), realCRDs...))
	t.Logf("kube-apiserver + etcd ready in %s, %d CRDs in %s", s.StartTime.Round(time.Millisecond), len(realCRDs), time.Since(t0).Round(time.Millisecond))
	return s
}

func gvr(r kubeapi.Resource) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
}

// copyCluster creates every object of the fake cluster c (described by o)
// in the real API server, through its API: the real schemas validate them.
func copyCluster(t *testing.T, s *testapiserver.Server, c *testcluster.Cluster, o testcluster.Options) {
	t.Helper()
	ctx := context.Background()
	kinds := map[string]string{"clusterversions": "ClusterVersion", "proxies": "Proxy", "infrastructures": "Infrastructure",
		"secrets": "Secret", "configmaps": "ConfigMap", "nodes": "Node", "imagedigestmirrorsets": "ImageDigestMirrorSet",
		"imagecontentpolicies": "ImageContentPolicy", "machineconfigs": "MachineConfig", "baremetalhosts": "BareMetalHost"}
	rs := []kubeapi.Resource{testcluster.ClusterVersion, testcluster.Proxy, testcluster.Infrastructure, testcluster.PullSecret,
		testcluster.UserCABundle, testcluster.ClusterConfig, testcluster.BootImages, testcluster.WorkerUserData,
		testcluster.Named(testcluster.DigestMirrors, "image-digest-mirror"), testcluster.Named(testcluster.LegacyMirrors, "legacy"),
		testcluster.Named(testcluster.MachineConfigs, "99-worker-ssh"), testcluster.Named(testcluster.MachineConfigs, "99-worker-fips"),
		testcluster.Named(testcluster.MachineConfigs, "50-workers-chrony-configuration")}
	for _, n := range o.Nodes {
		rs = append(rs, testcluster.Named(testcluster.Nodes, n.Name), testcluster.Named(testcluster.BareMetalHosts, n.Name))
	}
	for _, r := range rs {
		b := c.Object(r)
		if b == nil {
			continue
		}
		_, err := s.Create(ctx, gvr(r), kinds[r.Resource], b)
		require.NoError(t, err, "%s: %s", r, b)
	}
}

func adminKubeconfig(t *testing.T, s *testapiserver.Server) string {
	t.Helper()
	kc, err := s.Kubeconfig(t.TempDir(), "kubeconfig", testapiserver.User{Token: s.AdminToken})
	require.NoError(t, err)
	return kc
}

func inspectWith(t *testing.T, kubeconfig, context string) (*nodejoin.ClusterInfo, error) {
	t.Helper()
	cfg, err := kubeapi.LoadKubeconfig(kubeconfig, context)
	require.NoError(t, err)
	return nodejoin.Inspect(t.Context(), kubeapi.New(cfg, 20*time.Second), nodejoin.InspectOptions{})
}

// node-image's reads against the REAL kube-apiserver, with the real CRDs
// and every object created through its API, give what they give against
// the fake cluster: the fake is not the only oracle. Then the kubeconfigs
// admins use (an exec plugin, proxy-url, a KUBECONFIG list, a client
// certificate) and a missing permission, named exactly.
func TestInspectAgainstTheRealAPIServer(t *testing.T) {
	s := realServer(t)
	o := testcluster.Default()
	o.HTTPProxy, o.NoProxy = "http://proxy.example.com:3128", ".example.com"
	o.TrustBundle = "-----BEGIN CERTIFICATE-----\nMIRROR\n-----END CERTIFICATE-----\n"
	o.DigestMirrors = []testcluster.Mirror{{Source: "quay.io/openshift-release-dev/ocp-release", Mirrors: []string{"mirror.example.com:8443/ocp/release"}}}
	o.FIPS = true
	o.Chrony = "server ntp.example.com iburst\n"
	fake, fakeAPI := start(t, o)
	copyCluster(t, s, fake, o)
	want, err := nodejoin.Inspect(t.Context(), fakeAPI, nodejoin.InspectOptions{})
	require.NoError(t, err)

	t.Run("same as the fake cluster", func(t *testing.T) {
		got, err := inspectWith(t, adminKubeconfig(t, s), "")
		require.NoError(t, err)
		assert.Equal(t, want, got)
	})

	t.Run("exec plugin", func(t *testing.T) {
		dir := t.TempDir()
		ran := filepath.Join(dir, "ran")
		plugin := filepath.Join(dir, "credential-plugin")
		cred, _ := json.Marshal(map[string]any{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
			"status": map[string]any{"token": s.AdminToken}})
		require.NoError(t, os.WriteFile(plugin, []byte(fmt.Sprintf("#!/bin/sh\necho \"$KUBERNETES_EXEC_INFO\" > %q\ncat <<'EOF'\n%s\nEOF\n", ran, cred)), 0o700))
		kc, err := s.Kubeconfig(dir, "kubeconfig", testapiserver.User{Exec: &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1", Command: plugin, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}})
		require.NoError(t, err)
		got, err := inspectWith(t, kc, "")
		require.NoError(t, err)
		assert.Equal(t, want, got)
		info, err := os.ReadFile(ran)
		require.NoError(t, err, "the plugin ran")
		assert.Contains(t, string(info), `"kind":"ExecCredential"`)
	})

	t.Run("proxy-url", func(t *testing.T) {
		p := startConnectProxy(t)
		kc, err := s.Kubeconfig(t.TempDir(), "kubeconfig", testapiserver.User{Token: s.AdminToken, ProxyURL: p.url})
		require.NoError(t, err)
		got, err := inspectWith(t, kc, "")
		require.NoError(t, err)
		assert.Equal(t, want, got)
		assert.Equal(t, []string{strings.TrimPrefix(s.URL, "https://")}, p.targets(), "every request went through the proxy, to the API server")
	})

	t.Run("KUBECONFIG list and --context", func(t *testing.T) {
		dir := t.TempDir()
		// The first file has a current context whose cluster is elsewhere;
		// the second has the user and the context asked for.
		a, err := s.Kubeconfig(dir, "a", testapiserver.User{Token: "wrong", Server: "https://127.0.0.1:1", ClusterName: "other", UserName: "other", Context: "other"})
		require.NoError(t, err)
		b, err := s.Kubeconfig(dir, "b", testapiserver.User{Token: s.AdminToken, Context: "admin"})
		require.NoError(t, err)
		got, err := inspectWith(t, a+string(os.PathListSeparator)+filepath.Join(dir, "missing")+string(os.PathListSeparator)+b, "admin")
		require.NoError(t, err)
		assert.Equal(t, want, got)
	})

	t.Run("client certificate", func(t *testing.T) {
		cert, key, err := s.ClientCert("cert-admin", "system:masters")
		require.NoError(t, err)
		kc, err := s.Kubeconfig(t.TempDir(), "kubeconfig", testapiserver.User{CertPEM: cert, KeyPEM: key})
		require.NoError(t, err)
		got, err := inspectWith(t, kc, "")
		require.NoError(t, err)
		assert.Equal(t, want, got)
	})

	t.Run("tls-server-name", func(t *testing.T) {
		// The serving certificate names localhost and 127.0.0.1; the
		// server is reached at 127.0.0.1 and checked as "localhost".
		kc, err := s.Kubeconfig(t.TempDir(), "kubeconfig", testapiserver.User{Token: s.AdminToken, TLSServerName: "localhost"})
		require.NoError(t, err)
		_, err = inspectWith(t, kc, "")
		require.NoError(t, err)
		kc, err = s.Kubeconfig(t.TempDir(), "kubeconfig", testapiserver.User{Token: s.AdminToken, TLSServerName: "api.elsewhere.example"})
		require.NoError(t, err)
		_, err = inspectWith(t, kc, "")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "api.elsewhere.example")
	})

	t.Run("missing permission", func(t *testing.T) {
		// A service account granted every read node-image makes but the
		// pull secret: the real 403 is turned into the exact permission.
		cs, err := s.Clientset()
		require.NoError(t, err)
		ctx := t.Context()
		tok, err := s.ServiceAccountToken(ctx, "day2", "joiner")
		require.NoError(t, err)
		_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "joiner"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"config.openshift.io", "machineconfiguration.openshift.io", "metal3.io", "operator.openshift.io"}, Resources: []string{"*"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps", "nodes"}, Verbs: []string{"get", "list"}},
		}}, metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "joiner"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "joiner"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "joiner", Namespace: "day2"}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		kc, err := s.Kubeconfig(t.TempDir(), "kubeconfig", testapiserver.User{Token: tok})
		require.NoError(t, err)
		_, err = inspectWith(t, kc, "")
		require.Error(t, err)
		assert.Equal(t, `cannot read secrets openshift-config/pull-secret (the pull secret): the kubeconfig's user "system:serviceaccount:day2:joiner" may not get secrets pull-secret (API group "") in namespace openshift-config: grant it get on secrets in API group "" in namespace openshift-config, or use a cluster-admin kubeconfig`, err.Error())
	})

	// The mirrors of a cluster upgraded from 4.12 or older: an
	// ImageContentSourcePolicy (operator.openshift.io/v1alpha1) only, then
	// beside an ImageDigestMirrorSet for the same source.
	icspGVR := schema.GroupVersionResource{Group: "operator.openshift.io", Version: "v1alpha1", Resource: "imagecontentsourcepolicies"}
	idmsGVR := gvr(testcluster.DigestMirrors)
	release, art := "quay.io/openshift-release-dev/ocp-release", "quay.io/openshift-release-dev/ocp-v4.0-art-dev"
	t.Run("ICSP only", func(t *testing.T) {
		dc, err := s.Dynamic()
		require.NoError(t, err)
		require.NoError(t, dc.Resource(idmsGVR).Delete(t.Context(), "image-digest-mirror", metav1.DeleteOptions{}))
		_, err = s.Create(t.Context(), icspGVR, "ImageContentSourcePolicy", map[string]any{"metadata": map[string]any{"name": "image-policy-0"},
			"spec": map[string]any{"repositoryDigestMirrors": []any{
				map[string]any{"source": release, "mirrors": []any{"mirror.example.com:8443/icsp/release"}},
				map[string]any{"source": art, "mirrors": []any{"mirror.example.com:8443/icsp/art"}}}}})
		require.NoError(t, err)
		got, err := inspectWith(t, adminKubeconfig(t, s), "")
		require.NoError(t, err)
		assert.Empty(t, got.DigestMirrors)
		assert.Equal(t, []nodejoin.Mirror{{Source: release, Mirrors: []string{"mirror.example.com:8443/icsp/release"}},
			{Source: art, Mirrors: []string{"mirror.example.com:8443/icsp/art"}}}, got.LegacyMirrors)
	})

	t.Run("IDMS and ICSP", func(t *testing.T) {
		_, err := s.Create(t.Context(), idmsGVR, "ImageDigestMirrorSet", map[string]any{"metadata": map[string]any{"name": "image-digest-mirror"},
			"spec": map[string]any{"imageDigestMirrors": []any{map[string]any{"source": release, "mirrors": []any{"mirror.example.com:8443/idms/release"}}}}})
		require.NoError(t, err)
		got, err := inspectWith(t, adminKubeconfig(t, s), "")
		require.NoError(t, err)
		assert.Equal(t, []nodejoin.Mirror{{Source: release, Mirrors: []string{"mirror.example.com:8443/idms/release"}}}, got.DigestMirrors)
		assert.Equal(t, []nodejoin.Mirror{{Source: art, Mirrors: []string{"mirror.example.com:8443/icsp/art"}}}, got.LegacyMirrors,
			"the ICSP entry whose source the IDMS has is left out, the other kept")
		assert.Contains(t, got.Notes, "the ImageContentSourcePolicy (or ImageContentPolicy) mirrors of quay.io/openshift-release-dev/ocp-release (mirror.example.com:8443/icsp/release) are not used: an ImageDigestMirrorSet has that source, and its mirrors are used (as oc adm node-image merges them)")
	})

	// A Proxy whose spec.noProxy lists an entry twice (or an empty one)
	// and a user-ca-bundle holding a certificate twice, as admins' edits
	// leave them: the cluster itself merges spec.noProxy into a set (its
	// status.noProxy), but the new hosts' assisted-service refuses the
	// InfraEnv's ("duplicate no_proxy entry defined",
	// pkg/validations/validations.go ValidateNoProxyFormat, release-4.20),
	// so each entry and each certificate is given once, in the order read.
	t.Run("duplicate noProxy entries and certificates", func(t *testing.T) {
		dc, err := s.Dynamic()
		require.NoError(t, err)
		px, err := dc.Resource(gvr(testcluster.Proxy)).Get(t.Context(), "cluster", metav1.GetOptions{})
		require.NoError(t, err)
		require.NoError(t, unstructured.SetNestedField(px.Object, ".example.com,10.0.0.0/8,,.example.com,api-int.ostest.example.com,10.0.0.0/8", "spec", "noProxy"))
		_, err = dc.Resource(gvr(testcluster.Proxy)).Update(t.Context(), px, metav1.UpdateOptions{})
		require.NoError(t, err)
		a, b := selfSignedCA(t, "mirror-a"), selfSignedCA(t, "mirror-b")
		cm, err := dc.Resource(gvr(testcluster.UserCABundle)).Namespace("openshift-config").Get(t.Context(), "user-ca-bundle", metav1.GetOptions{})
		require.NoError(t, err)
		require.NoError(t, unstructured.SetNestedField(cm.Object, "# the mirror registry\n"+a+b+"\n"+a, "data", "ca-bundle.crt"))
		_, err = dc.Resource(gvr(testcluster.UserCABundle)).Namespace("openshift-config").Update(t.Context(), cm, metav1.UpdateOptions{})
		require.NoError(t, err)

		got, err := inspectWith(t, adminKubeconfig(t, s), "")
		require.NoError(t, err)
		require.NotNil(t, got.Proxy)
		assert.Equal(t, ".example.com,10.0.0.0/8,api-int.ostest.example.com", got.Proxy.NoProxy)
		assert.Contains(t, got.Notes, `the cluster's Proxy spec.noProxy lists .example.com, 10.0.0.0/8 more than once and an empty entry: the new hosts get each entry once (their assisted-service refuses a duplicate no_proxy entry; the cluster's own status.noProxy is a set too)`)
		assert.Equal(t, a+b, got.TrustBundle)
		assert.Contains(t, got.Notes, `configmap openshift-config/user-ca-bundle holds 1 certificate more than once (CN=mirror-a): the new hosts get each certificate once`)
	})

	// The node ISO's tokens kept in openshift-config/agent-auth-token as
	// upstream's node-joiner keeps them (three tokens and the public key,
	// updatedAt and expiresAt), created, reused while more than 24 hours
	// are left, replaced after; the watcher token read back as the monitor
	// reads it; a user who may not create it gets the exact permission.
	t.Run("agent-auth-token secret", func(t *testing.T) {
		ctx := t.Context()
		kc := adminKubeconfig(t, s)
		cfg, err := kubeapi.LoadKubeconfig(kc, "")
		require.NoError(t, err)
		api := kubeapi.New(cfg, 20*time.Second)
		now := time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)
		first := tokensAt(t, now.Add(48*time.Hour))
		_, err = nodejoin.StoredWatcherToken(ctx, api)
		assert.True(t, kubeapi.IsNotFound(err), "%v", err)

		use, reused, err := nodejoin.StoreAuthTokens(ctx, api, first, now)
		require.NoError(t, err)
		assert.False(t, reused)
		assert.Equal(t, first, use)
		cs, err := s.Clientset()
		require.NoError(t, err)
		sec, err := cs.CoreV1().Secrets("openshift-config").Get(ctx, "agent-auth-token", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, map[string][]byte{"agentAuthToken": []byte(first.Agent), "userAuthToken": []byte(first.User),
			"watcherAuthToken": []byte(first.Watcher), "authTokenPublicKey": []byte(first.PublicKey)}, sec.Data)
		assert.Equal(t, map[string]string{"updatedAt": "", "expiresAt": "2026-11-30T06:00:00Z"}, sec.Annotations)
		assert.EqualValues(t, "Opaque", sec.Type)
		w, err := nodejoin.StoredWatcherToken(ctx, api)
		require.NoError(t, err)
		assert.Equal(t, first.Watcher, w)

		// A day later, 24 hours left: still reused, the secret unchanged.
		second := tokensAt(t, now.Add(72*time.Hour))
		use, reused, err = nodejoin.StoreAuthTokens(ctx, api, second, now.Add(23*time.Hour))
		require.NoError(t, err)
		assert.True(t, reused)
		assert.Equal(t, first, use)
		again, err := cs.CoreV1().Secrets("openshift-config").Get(ctx, "agent-auth-token", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, sec.ResourceVersion, again.ResourceVersion)

		// Less than 24 hours left: new tokens, the secret updated.
		use, reused, err = nodejoin.StoreAuthTokens(ctx, api, second, now.Add(25*time.Hour))
		require.NoError(t, err)
		assert.False(t, reused)
		assert.Equal(t, second, use)
		sec, err = cs.CoreV1().Secrets("openshift-config").Get(ctx, "agent-auth-token", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, []byte(second.Watcher), sec.Data["watcherAuthToken"])
		assert.Equal(t, map[string]string{"updatedAt": "2026-11-29T07:00:00Z", "expiresAt": "2026-12-01T06:00:00Z"}, sec.Annotations)

		// A 4.17 node-joiner's secret (the agent token only, no persona):
		// replaced, whatever its expiry.
		sec.Data = map[string][]byte{"agentAuthToken": []byte(first.Agent), "authTokenPublicKey": []byte(first.PublicKey)}
		_, err = cs.CoreV1().Secrets("openshift-config").Update(ctx, sec, metav1.UpdateOptions{})
		require.NoError(t, err)
		_, err = nodejoin.StoredWatcherToken(ctx, api)
		assert.ErrorIs(t, err, nodejoin.ErrNoStoredWatcherToken)
		use, reused, err = nodejoin.StoreAuthTokens(ctx, api, second, now)
		require.NoError(t, err)
		assert.False(t, reused)
		assert.Equal(t, second, use)

		// May read it but not create or update it: the exact permission.
		require.NoError(t, cs.CoreV1().Secrets("openshift-config").Delete(ctx, "agent-auth-token", metav1.DeleteOptions{}))
		tok, err := s.ServiceAccountToken(ctx, "day2", "reader")
		require.NoError(t, err)
		_, err = cs.RbacV1().Roles("openshift-config").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "reader"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = cs.RbacV1().RoleBindings("openshift-config").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "reader"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "reader"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: "day2"}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		rkc, err := s.Kubeconfig(t.TempDir(), "kubeconfig", testapiserver.User{Token: tok})
		require.NoError(t, err)
		rcfg, err := kubeapi.LoadKubeconfig(rkc, "")
		require.NoError(t, err)
		reader := kubeapi.New(rcfg, 20*time.Second)
		// The API server's RBAC authorizer reads bindings from its informer
		// cache: wait until the new binding lets the reader get the secret
		// (404, not 403), else a loaded machine sees "may not get" first.
		require.Eventually(t, func() bool {
			_, err := nodejoin.StoredWatcherToken(ctx, reader)
			return kubeapi.IsNotFound(err)
		}, 30*time.Second, 100*time.Millisecond, "the reader's role binding never took effect")
		_, _, err = nodejoin.StoreAuthTokens(ctx, reader, first, now)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "secret openshift-config/agent-auth-token (where oc adm node-image monitor reads the node ISO's tokens, as oc adm node-image create keeps them there): ")
		assert.Contains(t, err.Error(), `may not create secrets (API group "") in namespace openshift-config: grant it create on secrets in API group "" in namespace openshift-config`)
	})

	// The cluster's RHCOS stream, configmap
	// openshift-machine-config-operator/coreos-bootimages, as upstream's
	// node-joiner reads it (openshift/installer
	// pkg/asset/agent/joiner/clusterinfo.go retrieveOsImage, commit
	// c1436495): the whole stream is kept, for OS_IMAGES and the base ISO;
	// a configmap without data.stream is an error naming it; no configmap
	// is a note (the payload's stream is used); a user who may not read it
	// gets the exact permission.
	t.Run("coreos-bootimages", func(t *testing.T) {
		ctx := t.Context()
		cs, err := s.Clientset()
		require.NoError(t, err)
		cms := cs.CoreV1().ConfigMaps("openshift-machine-config-operator")
		orig, err := cms.Get(ctx, "coreos-bootimages", metav1.GetOptions{})
		require.NoError(t, err)
		got, err := inspectWith(t, adminKubeconfig(t, s), "")
		require.NoError(t, err)
		assert.Equal(t, orig.Data["stream"], string(got.BootStream))
		assert.Equal(t, "9.6.20250925-0", got.BootRelease)
		assert.Equal(t, o.BootISO, got.BootISO)

		noStream := orig.DeepCopy()
		noStream.Data = map[string]string{"other": "x"}
		_, err = cms.Update(ctx, noStream, metav1.UpdateOptions{})
		require.NoError(t, err)
		_, err = inspectWith(t, adminKubeconfig(t, s), "")
		require.Error(t, err)
		assert.Equal(t, "configmap openshift-machine-config-operator/coreos-bootimages (the cluster's RHCOS boot images) has no data.stream: the cluster's machine-config operator writes it from the release; check that the operator is available (oc get clusteroperator machine-config)", err.Error())

		require.NoError(t, cms.Delete(ctx, "coreos-bootimages", metav1.DeleteOptions{}))
		got, err = inspectWith(t, adminKubeconfig(t, s), "")
		require.NoError(t, err)
		assert.Nil(t, got.BootStream)
		assert.Empty(t, got.BootISO)
		assert.Contains(t, got.Notes, "the cluster has no configmap openshift-machine-config-operator/coreos-bootimages (its RHCOS boot images): OS_IMAGES and the base ISO are taken from the release payload's RHCOS stream instead")

		restored := orig.DeepCopy()
		restored.ResourceVersion, restored.UID = "", ""
		_, err = cms.Create(ctx, restored, metav1.CreateOptions{})
		require.NoError(t, err)

		// Every read but the configmaps of the machine-config operator's
		// namespace: the 403 names that read, and it is not a fallback.
		tok, err := s.ServiceAccountToken(ctx, "day2", "nobootimages")
		require.NoError(t, err)
		_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "nobootimages"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"config.openshift.io", "machineconfiguration.openshift.io", "metal3.io", "operator.openshift.io"}, Resources: []string{"*"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{""}, Resources: []string{"nodes", "secrets"}, Verbs: []string{"get", "list"}},
		}}, metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "nobootimages"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "nobootimages"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "nobootimages", Namespace: "day2"}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		for _, ns := range []string{"openshift-config", "kube-system"} {
			_, err = cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "configmaps"}, Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}}}, metav1.CreateOptions{})
			require.NoError(t, err)
			_, err = cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "nobootimages"},
				RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "configmaps"},
				Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "nobootimages", Namespace: "day2"}}}, metav1.CreateOptions{})
			require.NoError(t, err)
		}
		kc, err := s.Kubeconfig(t.TempDir(), "kubeconfig", testapiserver.User{Token: tok})
		require.NoError(t, err)
		_, err = inspectWith(t, kc, "")
		require.Error(t, err)
		assert.Equal(t, `cannot read configmaps openshift-machine-config-operator/coreos-bootimages (the cluster's RHCOS boot images): the kubeconfig's user "system:serviceaccount:day2:nobootimages" may not get configmaps coreos-bootimages (API group "") in namespace openshift-machine-config-operator: grant it get on configmaps in API group "" in namespace openshift-machine-config-operator, or use a cluster-admin kubeconfig`, err.Error())
	})

	t.Run("refused credentials", func(t *testing.T) {
		kc, err := s.Kubeconfig(t.TempDir(), "kubeconfig", testapiserver.User{Token: "sha256~wrong"})
		require.NoError(t, err)
		_, err = inspectWith(t, kc, "")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "the API server refused the kubeconfig's credentials (401 Unauthorized")
		assert.NotContains(t, err.Error(), "sha256~wrong")
	})
}

// connectProxy is an HTTP CONNECT proxy on loopback that records the
// targets it tunnelled to.
type connectProxy struct {
	url  string
	mu   sync.Mutex
	seen map[string]bool
}

func (p *connectProxy) targets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for k := range p.seen {
		out = append(out, k)
	}
	return out
}

func startConnectProxy(t *testing.T) *connectProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &connectProxy{url: "http://" + ln.Addr().String(), seen: map[string]bool{}}
	var wg sync.WaitGroup
	var conns []net.Conn
	// The client keeps its tunnel open (keep-alive): closing the
	// connections ends the tunnels.
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		p.mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			conns = append(conns, c)
			p.mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(time.Minute))
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil || req.Method != http.MethodConnect {
					_, _ = io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\n\r\n")
					return
				}
				p.mu.Lock()
				p.seen[req.Host] = true
				p.mu.Unlock()
				up, err := net.DialTimeout("tcp", req.Host, 10*time.Second)
				if err != nil {
					_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
					return
				}
				defer up.Close()
				p.mu.Lock()
				conns = append(conns, up)
				p.mu.Unlock()
				_, _ = io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
				go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
				<-done
			}()
		}
	}()
	return p
}

// selfSignedCA is a CA certificate (PEM) with common name cn.
func selfSignedCA(t *testing.T, cn string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// tokensAt are a node ISO's tokens expiring at exp, signed by a new key.
func tokensAt(t *testing.T, exp time.Time) nodejoin.AuthTokens {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ac, err := credentials.NewAuthConfig(rand.Reader, key, exp)
	require.NoError(t, err)
	return nodejoin.AuthTokens{PublicKey: ac.PublicKey, Agent: ac.AgentAuthToken, User: ac.UserAuthToken, Watcher: ac.WatcherAuthToken, Expiry: exp}
}
