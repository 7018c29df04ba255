//go:build upstream

package upstream

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/internal/testapiserver"
)

// The namespace and service account assisted-service runs as in MCE
// (multicluster-engine's operator installs it there).
const (
	hubServiceNamespace = "multicluster-engine"
	hubServiceAccount   = "assisted-service"
	hubFieldManager     = "agentiso-hub-test"
	// hubImageService is where the ISO URLs point: the image service does
	// not run here (.invalid never resolves).
	hubImageService = "https://assisted-image-service.hub.invalid"
)

var (
	aciGVR      = schema.GroupVersionResource{Group: "extensions.hive.openshift.io", Version: "v1beta1", Resource: "agentclusterinstalls"}
	cdGVR       = schema.GroupVersionResource{Group: "hive.openshift.io", Version: "v1", Resource: "clusterdeployments"}
	infraEnvGVR = schema.GroupVersionResource{Group: "agent-install.openshift.io", Version: "v1beta1", Resource: "infraenvs"}
	bmhGVR      = schema.GroupVersionResource{Group: "metal3.io", Version: "v1alpha1", Resource: "baremetalhosts"}
)

// TestHubControllers hands a fleet from the laptop to a hub with the same
// files: `agentiso create cluster-manifests --for-hub` on the bundled
// examples/compact-bmc (3 control-plane hosts with Redfish BMCs and static
// NMState) writes the ZTP manifests and a BareMetalHost + BMC Secret per
// host, which are applied through the REAL kube-apiserver (with the real
// hive, metal3 and agent-install CRDs, internal/testapiserver) to the REAL
// assisted-service of AGENTISO_HUB_BRANCH (default release-4.23) running in
// its Kubernetes mode as MCE runs it (ENABLE_KUBE_API, DEPLOY_TARGET=k8s,
// its service account's token and namespace mounted where a pod has them,
// the ClusterRole of the branch's config/rbac) with PostgreSQL. Its
// controllers must accept them: AgentClusterInstall SpecSynced, InfraEnv
// ImageCreated with the three hosts' static networks, and BMAC taking up the
// three BareMetalHosts. The negative control comes first: without
// pull-secret.yaml the controllers must refuse with their own message, and
// recover once it is applied. docs/hub.md records what they did.
func TestHubControllers(t *testing.T) {
	t0 := time.Now()
	branch := envOr("AGENTISO_HUB_BRANCH", "release-4.23")
	version, err := releaseFor(branch)
	require.NoError(t, err)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	stamp := func(what string) { t.Logf("[%5.1fs] %s", time.Since(t0).Seconds(), what) }

	// The metrics server of controller-runtime binds :8080 in the service's
	// process (release-4.23's cmd/main.go sets no address; in a pod that is
	// the pod's own network).
	if l, err := net.Listen("tcp", ":8080"); err != nil {
		t.Fatalf("port 8080 is taken (%v): assisted-service's controller manager binds its metrics server there (release-4.23 cmd/main.go leaves controller-runtime's default); free it and run again", err)
	} else {
		l.Close()
	}

	// The real service of the branch and its sources (for its RBAC and
	// hardware requirements, as the operator deploys them).
	dir, err := Build(ctx, root, branch, 50*time.Minute, os.Stderr)
	require.NoError(t, err)
	bi, err := ReadBuildInfo(dir)
	require.NoError(t, err)
	src := upstreamSource(t, ctx, root, branch)
	stamp(fmt.Sprintf("assisted-service %s@%s", branch, bi.Get("assisted-service.upstream")))

	apiBin, err := testapiserver.Find()
	if err != nil {
		t.Fatalf("%v", err)
	}
	cred, err := Unprivileged()
	require.NoError(t, err)
	work, err := os.MkdirTemp("", "agentiso-hub-")
	require.NoError(t, err)
	t.Cleanup(func() {
		if os.Getenv("AGENTISO_UPSTREAM_KEEP") != "" {
			t.Logf("kept %s", work)
			return
		}
		_ = os.RemoveAll(work)
	})
	require.NoError(t, os.Chmod(work, 0o755))

	// 1. agentiso writes the hub's files from the example.
	agentiso := agentisoBinary(t, ctx, root, work)
	cluster := filepath.Join(work, "cluster")
	require.NoError(t, os.CopyFS(cluster, os.DirFS(filepath.Join(root, "examples", "compact-bmc"))))
	releaseImage := fmt.Sprintf("quay.io/openshift-release-dev/ocp-release@sha256:%x", sha256.Sum256([]byte("agentiso hub "+version)))
	out, err := Run(ctx, 2*time.Minute, exec.Command(agentiso, "create", "cluster-manifests", "--for-hub", "--dir", cluster,
		"--offline", "--release-image", releaseImage, "--release-version", version))
	require.NoError(t, err, "agentiso create cluster-manifests --for-hub:\n%s", out)
	ztp, err := ManifestFiles(filepath.Join(cluster, "cluster-manifests"))
	require.NoError(t, err)
	hubFiles, err := ManifestFiles(filepath.Join(cluster, "hub"))
	require.NoError(t, err)
	require.Len(t, hubFiles, 3, "one hub file per BMC host")
	stamp(fmt.Sprintf("agentiso wrote %d ZTP manifests and %d hub files", len(ztp), len(hubFiles)))

	// 2. The real API server with the hub's CRDs.
	s, err := testapiserver.Start(apiBin, mkdir(t, work, "apiserver"))
	require.NoError(t, err)
	t.Cleanup(s.Stop)
	crds, err := filepath.Glob(filepath.Join(s.CRDDir, "hub", "*.yaml"))
	require.NoError(t, err)
	var rel []string
	for _, c := range crds {
		rel = append(rel, filepath.Join("hub", filepath.Base(c)))
	}
	require.NoError(t, s.LoadCRDs(ctx, rel...))
	cs, err := s.Clientset()
	require.NoError(t, err)
	hub, err := NewHub(s.Admin())
	require.NoError(t, err)
	stamp(fmt.Sprintf("kube-apiserver ready in %s with %d hub CRDs", s.StartTime.Round(time.Millisecond), len(rel)))

	// 3. The service's identity: its service account with the branch's
	// ClusterRole (config/rbac/role.yaml) and leader-election Role.
	token, err := s.ServiceAccountToken(ctx, hubServiceNamespace, hubServiceAccount)
	require.NoError(t, err)
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: hubServiceAccount, Namespace: hubServiceNamespace}}
	var role rbacv1.ClusterRole
	readYAML(t, filepath.Join(src, "config", "rbac", "role.yaml"), &role)
	_, err = cs.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}, Subjects: subject}, metav1.CreateOptions{})
	require.NoError(t, err)
	var leRole rbacv1.Role
	readYAML(t, filepath.Join(src, "config", "rbac", "leader_election_role.yaml"), &leRole)
	leRole.Namespace = hubServiceNamespace
	_, err = cs.RbacV1().Roles(hubServiceNamespace).Create(ctx, &leRole, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.RbacV1().RoleBindings(hubServiceNamespace).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: leRole.Name, Namespace: hubServiceNamespace},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: leRole.Name}, Subjects: subject}, metav1.CreateOptions{})
	require.NoError(t, err)
	saDir := mkdir(t, work, "serviceaccount")
	for n, b := range map[string][]byte{"token": []byte(token), "ca.crt": s.CAPEM, "namespace": []byte(hubServiceNamespace)} {
		require.NoError(t, os.WriteFile(filepath.Join(saDir, n), b, 0o600))
	}

	// 4. PostgreSQL and the service, with the env the operator gives it
	// (agentserviceconfig_controller.go: newAssistedCM and the
	// deployment's secrets), adjusted for the host where logged.
	pg, err := StartPostgres(ctx, filepath.Join(work, "pg"), cred)
	require.NoError(t, err)
	t.Cleanup(func() { pg.Proc.Stop(10 * time.Second) })
	bins := filepath.Join(work, "bin")
	require.NoError(t, linkOrCopy(filepath.Join(dir, "assisted-service"), filepath.Join(bins, "assisted-service")))
	ocLog := filepath.Join(work, "oc.log")
	writeOCStandIn(t, filepath.Join(bins, "oc"), ocLog, releaseImage, version)
	port, err := FreePort()
	require.NoError(t, err)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	env := hubServiceEnv(t, src, s.URL, pg.Port, base, work, version)
	env.Set("PATH", bins+":/usr/local/bin:/usr/bin:/bin")
	env.Set("HOME", work)
	for _, d := range []string{"data", "isocache"} {
		mkdir(t, work, d)
	}
	require.NoError(t, Chown(work, cred))
	svc, err := Start("assisted-service", podCommand(cred, saDir, env, filepath.Join(bins, "assisted-service"), "-port", strconv.Itoa(port)))
	require.NoError(t, err)
	t.Cleanup(func() {
		svc.Stop(15 * time.Second)
		if b, err := os.ReadFile(ocLog); err == nil {
			t.Logf("oc stand-in calls:\n%s", b)
		}
		if f := os.Getenv("AGENTISO_HUB_SERVICE_LOG"); f != "" {
			if err := os.WriteFile(f, []byte(svc.Output()), 0o600); err != nil {
				t.Errorf("AGENTISO_HUB_SERVICE_LOG: %v", err)
			}
		}
		if t.Failed() {
			t.Logf("assisted-service log (tail):\n%s", tail(svc.Output(), 150))
		}
	})
	require.NoError(t, waitHealthy(ctx, base, svc, 3*time.Minute))
	stamp("assisted-service answers /health; its controllers start")

	// 5. Negative control: everything but pull-secret.yaml. The namespace
	// is created as the admin would (agentiso writes none).
	require.NoError(t, testapiserver.EnsureNamespace(ctx, cs, "compact"))
	objs, err := ReadManifests(append(append([]string{}, ztp...), hubFiles...)...)
	require.NoError(t, err)
	var pullSecret *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Secret" && strings.HasSuffix(o.GetName(), "-pull-secret") {
			pullSecret = o
			continue
		}
		_, err := hub.Apply(ctx, hubFieldManager, o)
		require.NoError(t, err, "the real API server refused %s %s", o.GetKind(), o.GetName())
	}
	require.NotNil(t, pullSecret, "cluster-manifests has no pull secret")
	stamp(fmt.Sprintf("applied %d objects (all but %s)", len(objs)-1, pullSecret.GetName()))
	get := func(gvr schema.GroupVersionResource, name string) func(context.Context) (*unstructured.Unstructured, error) {
		return func(ctx context.Context) (*unstructured.Unstructured, error) {
			return hub.Get(ctx, gvr, "compact", name)
		}
	}
	describe := func(o *unstructured.Unstructured) string { return FormatConditions(Conditions(o)) }
	cond := func(typ, status string) func(*unstructured.Unstructured) bool {
		return func(o *unstructured.Unstructured) bool { c, ok := Conditions(o)[typ]; return ok && c.Status == status }
	}
	aci, err := WaitFor(ctx, 2*time.Minute, "AgentClusterInstall compact refused without its pull secret", get(aciGVR, "compact"), cond("SpecSynced", "False"), describe)
	require.NoError(t, err)
	refusal := Conditions(aci)["SpecSynced"]
	stamp("negative control: AgentClusterInstall " + refusal.String())
	assert.Contains(t, refusal.Message, "compact-pull-secret", "the controller names the missing Secret")
	assert.Equal(t, "BackendError", refusal.Reason)
	// The InfraEnv waits for the cluster the ClusterDeployment would make.
	ie, err := WaitFor(ctx, 2*time.Minute, "InfraEnv compact waiting for its cluster", get(infraEnvGVR, "compact"), cond("ImageCreated", "Unknown"), describe)
	require.NoError(t, err)
	waiting := Conditions(ie)["ImageCreated"]
	stamp("negative control: InfraEnv " + waiting.String())
	// release-4.23 says MissingClusterDeployment, release-4.20
	// ImageCreationError; both in these words.
	assert.Contains(t, waiting.Message, "cluster does not exist: compact")
	isoURL, _, _ := unstructured.NestedString(ie.Object, "status", "isoDownloadURL")
	assert.Empty(t, isoURL, "no ISO without the cluster")
	t.Logf("negative control: AgentClusterInstall conditions:\n%s\nInfraEnv conditions:\n%s", describe(aci), describe(ie))

	// 6. The pull secret: the controllers accept the same files.
	_, err = hub.Apply(ctx, hubFieldManager, pullSecret)
	require.NoError(t, err)
	stamp("applied " + pullSecret.GetName())
	aci, err = WaitFor(ctx, 3*time.Minute, "AgentClusterInstall compact SpecSynced", get(aciGVR, "compact"), cond("SpecSynced", "True"), describe)
	require.NoError(t, err)
	stamp("AgentClusterInstall " + Conditions(aci)["SpecSynced"].String())
	ie, err = WaitFor(ctx, 3*time.Minute, "InfraEnv compact ImageCreated", get(infraEnvGVR, "compact"), cond("ImageCreated", "True"), describe)
	require.NoError(t, err)
	stamp("InfraEnv " + Conditions(ie)["ImageCreated"].String())
	isoURL, _, _ = unstructured.NestedString(ie.Object, "status", "isoDownloadURL")
	assert.True(t, strings.HasPrefix(isoURL, hubImageService+"/"), "the ISO is served by the image service: %s", isoURL)
	t.Logf("AgentClusterInstall conditions:\n%s\nInfraEnv conditions:\n%s\nISO URL: %s", describe(aci), describe(ie), isoURL)
	cd, err := hub.Get(ctx, cdGVR, "compact", "compact")
	require.NoError(t, err)
	t.Logf("ClusterDeployment finalizers %v, status %v", cd.GetFinalizers(), cd.Object["status"])

	// BMAC takes up the BareMetalHosts: release-4.23 labels them for
	// backup once their InfraEnv is found, release-4.20 puts its
	// deprovision finalizer on them.
	for _, h := range []string{"master-0", "master-1", "master-2"} {
		bmh, err := WaitFor(ctx, 2*time.Minute, "BareMetalHost "+h+" taken up by BMAC", get(bmhGVR, h),
			func(o *unstructured.Unstructured) bool {
				return o.GetLabels()["cluster.open-cluster-management.io/backup"] == "true" ||
					slices.Contains(o.GetFinalizers(), "bmac.agent-install.openshift.io/deprovision")
			},
			func(o *unstructured.Unstructured) string { b, _ := yaml.Marshal(o.Object); return string(b) })
		require.NoError(t, err)
		t.Logf("BareMetalHost %s: labels %v annotations %v finalizers %v spec.image %v", h, bmh.GetLabels(), bmh.GetAnnotations(), bmh.GetFinalizers(), bmh.Object["spec"].(map[string]any)["image"])
	}
	stamp("BMAC took up the three BareMetalHosts")

	// The service holds the three hosts' static networks, each under the
	// MAC the BareMetalHost boots from.
	static := psql(t, ctx, pg, cred, "SELECT static_network_config FROM infra_envs WHERE name = 'compact'")
	for i, mac := range []string{"52:54:00:10:00:01", "52:54:00:10:00:02", "52:54:00:10:00:03"} {
		assert.Contains(t, static, `"mac_address":"`+mac+`"`, "the InfraEnv's static network of master-%d", i)
		assert.Contains(t, static, fmt.Sprintf("192.168.111.2%d", i), "master-%d's address", i)
	}
	assert.Equal(t, 3, strings.Count(static, `"mac_address"`), "three hosts' static networks: %s", static)

	// Not refused: an InfraEnv whose nmStateConfigLabelSelector matches no
	// NMStateConfig gets its image, with no static network in it (its
	// hosts would come up on DHCP). The controllers do not flag it.
	nomatch := ie.DeepCopy()
	nomatch.SetName("compact-nomatch")
	nomatch.SetResourceVersion("")
	nomatch.SetUID("")
	nomatch.SetManagedFields(nil)
	nomatch.SetFinalizers(nil)
	delete(nomatch.Object, "status")
	require.NoError(t, unstructured.SetNestedStringMap(nomatch.Object, map[string]string{"infraenvs.agent-install.openshift.io": "no-such-label"},
		"spec", "nmStateConfigLabelSelector", "matchLabels"))
	_, err = hub.Apply(ctx, hubFieldManager, nomatch)
	require.NoError(t, err)
	nm, err := WaitFor(ctx, 2*time.Minute, "InfraEnv compact-nomatch ImageCreated", get(infraEnvGVR, "compact-nomatch"), cond("ImageCreated", "True"), describe)
	require.NoError(t, err)
	stamp("InfraEnv with a selector matching no NMStateConfig: " + Conditions(nm)["ImageCreated"].String())
	assert.Equal(t, "", strings.TrimSpace(psql(t, ctx, pg, cred, "SELECT static_network_config FROM infra_envs WHERE name = 'compact-nomatch'")),
		"no static network in the image of an InfraEnv whose selector matches nothing")
	require.NoError(t, hub.Delete(ctx, infraEnvGVR, "compact", "compact-nomatch"))

	// Metal3's part, played: without Ironic no BareMetalHost registers, so
	// the test writes the status baremetal-operator writes once a host is
	// registered and available. BMAC then points the host at the InfraEnv's
	// ISO (after its 60 s cool-down from the image's creation).
	for i, h := range []string{"master-0", "master-1", "master-2"} {
		bmh, err := hub.Get(ctx, bmhGVR, "compact", h)
		require.NoError(t, err)
		bmh.Object["status"] = map[string]any{"errorCount": 0, "errorMessage": "", "hardwareProfile": "unknown", "operationalStatus": "OK",
			"poweredOn": false, "provisioning": map[string]any{"ID": fmt.Sprintf("00000000-0000-4000-8000-00000000000%d", i), "state": "available", "bootMode": "UEFI"}}
		_, err = hub.UpdateStatus(ctx, bmhGVR, bmh)
		require.NoError(t, err, "BareMetalHost %s status", h)
	}
	stamp("BareMetalHosts' status written as baremetal-operator would: provisioning.state=available")
	for _, h := range []string{"master-0", "master-1", "master-2"} {
		bmh, err := WaitFor(ctx, 3*time.Minute, "BareMetalHost "+h+" given the InfraEnv's ISO", get(bmhGVR, h),
			func(o *unstructured.Unstructured) bool {
				u, _, _ := unstructured.NestedString(o.Object, "spec", "image", "url")
				return u != ""
			},
			func(o *unstructured.Unstructured) string { b, _ := yaml.Marshal(o.Object["spec"]); return string(b) })
		require.NoError(t, err)
		img, _, _ := unstructured.NestedStringMap(bmh.Object, "spec", "image")
		assert.Equal(t, map[string]string{"url": isoURL, "format": "live-iso"}, img, "BareMetalHost %s boots the InfraEnv's ISO", h)
		online, _, _ := unstructured.NestedBool(bmh.Object, "spec", "online")
		assert.True(t, online, h)
		stamp(fmt.Sprintf("BareMetalHost %s: spec.image %v", h, img))
	}
}

// psql runs one query on the service's database and returns its rows
// (unaligned, tuples only).
func psql(t *testing.T, ctx context.Context, pg *Postgres, cred *syscall.Credential, query string) string {
	t.Helper()
	bin, err := PostgresBin()
	require.NoError(t, err)
	cmd := exec.Command(filepath.Join(bin, "psql"), "-h", "127.0.0.1", "-p", strconv.Itoa(pg.Port), "-U", "admin", "-d", "installer",
		"-v", "ON_ERROR_STOP=1", "-At", "-c", query)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	out, err := Run(ctx, time.Minute, cmd)
	require.NoError(t, err, "psql %q: %s", query, out)
	return string(out)
}

// hubServiceEnv is the environment of the assisted-service container as
// release-4.23's operator writes it (newAssistedCM, newAssistedServiceDeployment).
func hubServiceEnv(t *testing.T, src, apiURL string, dbPort int, base, work, version string) Env {
	t.Helper()
	hw, err := os.ReadFile(filepath.Join(src, "internal", "controller", "controllers", "default_controller_hw_requirements.json"))
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	pb, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	require.NoError(t, err)
	minor := strings.Join(strings.Split(version, ".")[:2], ".")
	osImages, err := json.Marshal([]map[string]string{{"openshift_version": minor, "cpu_architecture": "x86_64",
		"url": "https://rhcos.hub.invalid/rhcos-" + minor + "-x86_64-live.x86_64.iso", "version": strings.ReplaceAll(minor, ".", "") + ".0"}})
	require.NoError(t, err)
	u, err := url.Parse(apiURL)
	require.NoError(t, err)
	var e Env
	for _, kv := range [][2]string{
		// newAssistedCM (a cluster that is not OpenShift: no SERVE_HTTPS).
		{"SERVICE_BASE_URL", base},
		{"IMAGE_SERVICE_BASE_URL", hubImageService},
		{"OS_IMAGES", string(osImages)},
		{"MUST_GATHER_IMAGES", ""},
		{"ISO_IMAGE_TYPE", "minimal-iso"},
		{"S3_USE_SSL", "false"},
		{"LOG_LEVEL", "info"},
		{"LOG_FORMAT", "text"},
		{"INSTALL_RH_CA", "false"},
		{"REGISTRY_CREDS", ""},
		{"DEPLOY_TARGET", "k8s"},
		{"STORAGE", "filesystem"},
		{"ISO_WORKSPACE_BASE_DIR", filepath.Join(work, "data")},
		{"AUTH_TYPE", "local"},
		{"BASE_DNS_DOMAINS", ""},
		{"CHECK_CLUSTER_VERSION", "True"},
		{"CREATE_S3_BUCKET", "False"},
		{"ENABLE_KUBE_API", "True"},
		{"ENABLE_AUTO_ASSIGN", "True"},
		{"ENABLE_SINGLE_NODE_DNSMASQ", "True"},
		{"IPV6_SUPPORT", "True"},
		{"JWKS_URL", "https://api.openshift.com/.well-known/jwks.json"},
		{"PUBLIC_CONTAINER_REGISTRIES", "quay.io,registry.ci.openshift.org"},
		{"HW_VALIDATOR_REQUIREMENTS", string(hw)},
		// Adjusted: no telemetry upload from a test.
		{"ENABLE_DATA_COLLECTION", "False"},
		{"NAMESPACE", hubServiceNamespace},
		{"INSTALL_INVOKER", "assisted-installer-operator"},
		{"SKIP_CERT_VERIFICATION", "False"},
		{"EVENT_RATE_LIMITS", ""},
		{"ENABLE_IMAGE_SERVICE", "true"},
		// The deployment's secrets: the database and the local-auth keys.
		{"DB_HOST", "127.0.0.1"},
		{"DB_PORT", strconv.Itoa(dbPort)},
		{"DB_USER", "admin"},
		{"DB_PASS", "admin"},
		{"DB_NAME", "installer"},
		{"EC_PUBLIC_KEY_PEM", string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pb}))},
		{"EC_PRIVATE_KEY_PEM", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))},
		// Adjusted for the host: the bucket volume is a directory of the
		// test; the API server is on loopback (a pod reads these two from
		// the kubelet).
		{"WORK_DIR", filepath.Join(work, "data")},
		{"ISO_CACHE_DIR", filepath.Join(work, "isocache")},
		{"KUBERNETES_SERVICE_HOST", u.Hostname()},
		{"KUBERNETES_SERVICE_PORT", u.Port()},
		// The image's own ENV (Dockerfile.assisted-service).
		{"GODEBUG", "madvdontneed=1"},
		{"GOGC", "50"},
	} {
		e.Set(kv[0], kv[1])
	}
	return e
}

// podCommand runs bin as in a pod: in a private mount namespace whose /run
// is a fresh tmpfs holding the service account's token, CA and namespace at
// /var/run/secrets/kubernetes.io/serviceaccount (client-go's in-cluster
// config and controller-runtime's leader election read them there, and
// nowhere else), as cred when given.
func podCommand(cred *syscall.Credential, saDir string, env Env, bin string, args ...string) *exec.Cmd {
	const sa = "/run/secrets/kubernetes.io/serviceaccount"
	script := `set -e
mount -t tmpfs -o mode=0755,size=1m tmpfs /run
mkdir -p ` + sa + `
cp "$0"/token "$0"/ca.crt "$0"/namespace ` + sa + `/
`
	var unshare []string
	if cred != nil {
		script += fmt.Sprintf("chown -R %d:%d /run/secrets\nexec setpriv --reuid=%d --regid=%d --clear-groups -- \"$@\"\n", cred.Uid, cred.Gid, cred.Uid, cred.Gid)
		unshare = []string{"unshare", "--mount", "--propagation", "private"}
	} else {
		// Not root: a user namespace of our own may mount.
		script += "exec \"$@\"\n"
		unshare = []string{"unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"}
	}
	argv := append(append(unshare, "sh", "-c", script, saDir, bin), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env.Environ()
	cmd.Dir = filepath.Dir(saDir)
	return cmd
}

// waitHealthy polls the service's /health until it answers 200.
func waitHealthy(ctx context.Context, base string, svc *Proc, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	hc := &http.Client{Timeout: 5 * time.Second}
	last := ""
	for time.Now().Before(deadline) {
		if done, err := svc.Exited(); done {
			return fmt.Errorf("assisted-service exited (%v); last lines:\n%s", err, tail(svc.Output(), 30))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return fmt.Errorf("assisted-service not healthy within %s (last: %s); log:\n%s", limit, last, tail(svc.Output(), 30))
}

func readYAML(t *testing.T, path string, out any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, out), path)
}

func mkdir(t *testing.T, parent, name string) string {
	t.Helper()
	d := filepath.Join(parent, name)
	require.NoError(t, os.MkdirAll(d, 0o755))
	return d
}
