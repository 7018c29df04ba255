//go:build upstream

package upstream

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/pkg/releasepolicy"
)

// TestOracle runs the REAL assisted-service and agent-installer client of one
// upstream branch (AGENTISO_UPSTREAM_BRANCH, default release-4.20) on this
// host, configured by the env files and units of an Ignition config agentiso
// writes, and asserts that the service starts and accepts the ISO's user
// token and that the client registers the cluster and the infra-env from
// the ISO's ZTP manifests. It runs twice: an offline build (OS_IMAGES names
// the RHCOS embedded in agentiso) and an offline build with --base-iso (the
// given ISO's RHCOS at a file: URL), with a negative control of the
// service's own check of OS_IMAGES. What is adjusted for the host is logged
// (and listed in docs/e2e.md).
func TestOracle(t *testing.T) {
	branch := envOr("AGENTISO_UPSTREAM_BRANCH", "release-4.20")
	version, err := releaseFor(branch)
	require.NoError(t, err)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()

	// The real binaries of the branch (built once, then cached).
	dir, err := Build(ctx, root, branch, 50*time.Minute, os.Stderr)
	require.NoError(t, err)
	bi, err := ReadBuildInfo(dir)
	require.NoError(t, err)
	fmt.Printf("upstream assisted-service %s@%s\n", branch, bi.Get("assisted-service.upstream"))
	for _, f := range []string{"assisted-service", "agent-installer-client"} {
		_, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, "%s was not built for %s (BUILDINFO: %v)", f, branch, bi["failed"])
	}
	agentiso := agentisoBinary(t, ctx, root, t.TempDir())

	// Offline, the payload is not read: OS_IMAGES names the RHCOS stream
	// embedded in agentiso (an https URL of its live ISO) ...
	t.Run("offline", func(t *testing.T) {
		oracle(t, ctx, oracleRun{branch: branch, version: version, root: root, dir: dir, agentiso: agentiso})
	})
	// ... or, with --base-iso, the RHCOS of the ISO given: its volume ID's
	// release and a file: URL of its path (issue 37 item 2).
	t.Run("offline-base-iso", func(t *testing.T) {
		oracle(t, ctx, oracleRun{branch: branch, version: version, root: root, dir: dir, agentiso: agentiso,
			baseISOVolumeID: "rhcos-9.6.20260101-0"})
	})
}

// oracleRun is one ISO agentiso writes for the oracle: the branch's
// binaries (dir), the release version, and how the ISO is built.
type oracleRun struct {
	branch, version, root, dir, agentiso string
	// baseISOVolumeID, when set, builds with --base-iso: a test live ISO
	// with this volume ID, written in the run's temp dir.
	baseISOVolumeID string
}

// oracle runs the service and the client of o.branch with the ISO agentiso
// writes for o, as TestOracle says.
func oracle(t *testing.T, ctx context.Context, o oracleRun) {
	branch, version, root, dir, agentiso := o.branch, o.version, o.root, o.dir, o.agentiso
	cred, err := Unprivileged()
	require.NoError(t, err)
	work, err := os.MkdirTemp("", "agentiso-upstream-")
	require.NoError(t, err)
	t.Cleanup(func() {
		if os.Getenv("AGENTISO_UPSTREAM_KEEP") != "" {
			t.Logf("kept %s", work)
			return
		}
		_ = os.RemoveAll(work)
	})
	require.NoError(t, os.Chmod(work, 0o755))
	// The unprivileged user may not reach the cache (root's home is 0700):
	// run the binaries from the work dir.
	bins := filepath.Join(work, "bin")
	for _, f := range []string{"assisted-service", "agent-installer-client"} {
		require.NoError(t, linkOrCopy(filepath.Join(dir, f), filepath.Join(bins, f)))
	}
	path := bins + ":/usr/local/bin:/usr/bin:/bin"

	// 1. agentiso writes the Ignition config of an SNO ISO (the sno example,
	// static network) for the branch's release.
	assets := filepath.Join(work, "assets")
	require.NoError(t, os.MkdirAll(assets, 0o755))
	for _, f := range []string{"install-config.yaml", "agent-config.yaml"} {
		b, err := os.ReadFile(filepath.Join(root, "examples", "sno", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(assets, f), b, 0o600))
	}
	image := func(v string) string {
		return fmt.Sprintf("quay.io/openshift-release-dev/ocp-release@sha256:%x", sha256.Sum256([]byte("agentiso upstream oracle "+v)))
	}
	var extra []string
	baseISO := ""
	if o.baseISOVolumeID != "" {
		baseISO = filepath.Join(work, "rhcos-live.x86_64.iso")
		_, err := testiso.WriteFile(baseISO, testiso.Options{VolumeID: o.baseISOVolumeID})
		require.NoError(t, err)
		extra = append(extra, "--base-iso", baseISO)
	}
	createIgnition := func(v string) ([]byte, error) {
		return Run(ctx, 2*time.Minute, exec.Command(agentiso, append([]string{"create", "ignition", "--dir", assets, "--offline",
			"--release-image", image(v), "--release-version", v}, extra...)...))
	}
	out, err := createIgnition(version)
	_, below := belowFloor[branch]
	if err != nil && below {
		// agentiso's release policy refuses the branch's release: probe the
		// branch's service with what agentiso writes for the floor release.
		t.Logf("agentiso refuses release %s (%v):\n%s\nprobing %s with an ISO for %s", version, err, tail(string(out), 5), branch, floorRelease)
		version = floorRelease
		out, err = createIgnition(version)
	}
	require.NoError(t, err, "agentiso create ignition:\n%s", out)
	iso, err := ReadIgnition(filepath.Join(assets, "agent.ign"))
	require.NoError(t, err)
	releaseImage := image(version)
	ocLog := filepath.Join(work, "oc.log")
	writeOCStandIn(t, filepath.Join(bins, "oc"), ocLog, releaseImage, version)
	t.Cleanup(func() {
		if b, err := os.ReadFile(ocLog); err == nil {
			t.Logf("oc stand-in calls:\n%s", b)
		}
	})

	// 2. The ISO's files under a host root; what boot would add to it.
	rootfs := filepath.Join(work, "root")
	n, err := iso.WriteTree(rootfs, "/")
	require.NoError(t, err)
	t.Logf("wrote the ISO's %d files under %s", n, rootfs)
	require.NoError(t, os.MkdirAll(filepath.Join(rootfs, "etc/assisted/extra-manifests"), 0o755))
	// set-node-zero.sh writes node0 on the host holding the rendezvous IP.
	mac := firstMAC(t, iso)
	writeFile(t, rootfs, "/etc/assisted/node0", "BOOTSTRAP_HOST_MAC="+mac+"\n")
	// get-container-images.sh resolves the payload's images (by digest, in
	// the payload's repository). There is no payload on the host: the images
	// are named as a payload names them, never pulled (the service hands
	// AGENT_DOCKER_IMAGE to agents, and checks the pull secret covers it).
	img := func(name string) string {
		return fmt.Sprintf("quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:%x", sha256.Sum256([]byte(name+" "+version)))
	}
	writeFile(t, rootfs, "/usr/local/share/assisted-service/agent-images.env", strings.Join([]string{
		"SERVICE_IMAGE=" + img("agent-installer-api-server"),
		"CONTROLLER_IMAGE=" + img("agent-installer-csr-approver"),
		"INSTALLER_IMAGE=" + img("agent-installer-orchestrator"),
		"AGENT_DOCKER_IMAGE=" + img("agent-installer-node-agent"),
		"AGENT_INSTALLER_UTILS_IMAGE=" + img("agent-installer-utils"),
	}, "\n")+"\n")
	// The unit's ExecStartPre= writes HW_VALIDATOR_REQUIREMENTS: run the
	// ISO's own script against the host root.
	hw := exec.Command("bash", filepath.Join(rootfs, "usr/local/bin/configure-assisted-hw-requirements.sh"))
	hw.Env = append(os.Environ(), "AGENT_ROOT="+rootfs)
	out, err = Run(ctx, time.Minute, hw)
	require.NoError(t, err, "configure-assisted-hw-requirements.sh:\n%s", out)

	// 3. PostgreSQL, as upstream's start_db.sh sets it up.
	pg, err := StartPostgres(ctx, filepath.Join(work, "pg"), cred)
	require.NoError(t, err)
	t.Cleanup(func() {
		pg.Proc.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("PostgreSQL log (tail):\n%s", tail(pg.Proc.Output(), 40))
		}
	})

	// 4. The service with the env the assisted-service unit gives it.
	port, err := FreePort()
	require.NoError(t, err)
	base := fmt.Sprintf("http://127.0.0.1:%d/", port)
	pr, err := iso.Podman("assisted-service.service")
	require.NoError(t, err)
	var senv Env
	for _, f := range pr.EnvFiles {
		e := readEnvFile(t, rootfs, f)
		senv.Merge(e)
	}
	senv.Merge(pr.Set)
	// The release's authentication (pkg/releasepolicy): 4.16's installer
	// wrote AUTH_TYPE=none and no key nor token; 4.18 and later
	// agent-installer-local with the user, watcher and agent tokens.
	authType, _ := senv.Get("AUTH_TYPE")
	authNone := false
	if pol, err := releasepolicy.For(version); err == nil {
		require.Equal(t, string(pol.Auth), authType, "the ISO's AUTH_TYPE for %s", version)
		authNone = !pol.Auth.Tokens()
	}
	userToken, ok := senv.Get("USER_AUTH_TOKEN")
	if authNone {
		for _, k := range []string{"USER_AUTH_TOKEN", "WATCHER_AUTH_TOKEN", "PULL_SECRET_TOKEN", "EC_PUBLIC_KEY_PEM"} {
			v, has := senv.Get(k)
			require.False(t, has, "AUTH_TYPE=none: the service env has %s=%q", k, v)
		}
	} else {
		require.True(t, ok && userToken != "", "the service env has no USER_AUTH_TOKEN")
	}
	adjust := map[string]string{
		"DB_PORT": strconv.Itoa(pg.Port),
		"EPHEMERAL_INSTALLER_CLUSTER_TLS_CERTS_OVERRIDE_DIR": filepath.Join(rootfs, "opt/agent/tls"),
		"SERVICE_BASE_URL": base,
		"WORK_DIR":         filepath.Join(work, "data"),
		"ISO_CACHE_DIR":    filepath.Join(work, "isocache"),
	}
	for _, k := range sortedKeys(adjust) {
		old, _ := senv.Get(k)
		senv.Set(k, adjust[k])
		t.Logf("service env adjusted for the host: %s=%s (ISO: %q)", k, adjust[k], old)
	}
	// The image's own ENV (Dockerfile.assisted-service.ocp) and a PATH.
	senv.Set("GODEBUG", "madvdontneed=1")
	senv.Set("GOGC", "50")
	senv.Set("PATH", path)
	senv.Set("HOME", work)
	require.NoError(t, os.MkdirAll(filepath.Join(work, "data"), 0o755))
	require.NoError(t, Chown(work, cred))
	if baseISO != "" {
		// agentiso names the given ISO's RHCOS (its volume ID) at a file:
		// URL of its path, and the service below starts with it.
		raw, _ := senv.Get("OS_IMAGES")
		var images []map[string]string
		require.NoError(t, json.Unmarshal([]byte(raw), &images), "OS_IMAGES=%s", raw)
		require.Equal(t, []map[string]string{{"openshift_version": version, "cpu_architecture": "x86_64",
			"url": (&url.URL{Scheme: "file", Path: baseISO}).String(), "version": strings.TrimPrefix(o.baseISOVolumeID, "rhcos-")}},
			images, "OS_IMAGES of an offline build with --base-iso %s", baseISO)
		// The negative control: the same service and env with the entry's
		// url emptied stops at start, refused by the service's own check of
		// OS_IMAGES (versions.NewOSImages), the check the run below passes.
		for _, im := range images {
			im["url"] = ""
		}
		bad, err := json.Marshal(images)
		require.NoError(t, err)
		var benv Env
		benv.Merge(senv)
		benv.Set("OS_IMAGES", string(bad))
		out := serviceRefuses(t, filepath.Join(bins, "assisted-service"), work, cred, benv, time.Minute)
		require.Contains(t, out, "Missing value in OSImage for 'url' field", "the service refused OS_IMAGES with an empty url, but not for that")
		t.Logf("negative control: with an empty url in OS_IMAGES the service stops at start: %s", tail(out, 1))
	}

	svcCmd := exec.Command(filepath.Join(bins, "assisted-service"), "-port", strconv.Itoa(port))
	svcCmd.Env = senv.Environ()
	svcCmd.Dir = work
	if cred != nil {
		svcCmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	svc, err := Start("assisted-service", svcCmd)
	require.NoError(t, err)
	t.Cleanup(func() {
		svc.Stop(15 * time.Second)
		if t.Failed() {
			t.Logf("assisted-service log (tail):\n%s", tail(svc.Output(), 200))
		}
	})
	api := &apiClient{base: base + "api/assisted-install/v2", http: &http.Client{Timeout: 30 * time.Second}}
	err = waitReady(ctx, api, userToken, svc, 5*time.Minute)
	if want, ok := belowFloor[branch]; ok {
		// A known refusal holds only while agentiso writes the 4.18+ auth.
		authType, _ := senv.Get("AUTH_TYPE")
		scheme, claimErr := authScheme(userToken)
		require.True(t, authType == "agent-installer-local" && claimErr == nil && scheme == "userAuth",
			"agentiso no longer writes the 4.18+ auth (AUTH_TYPE=%q, user token auth_scheme %q, %v): revisit the known refusal of %s (belowFloor)",
			authType, scheme, claimErr, branch)
		require.Error(t, err, "%s's service accepted the ISO's user token: its known refusal is gone; update belowFloor and the release policy", branch)
		require.Contains(t, err.Error()+"\n"+svc.Output(), want, "%s refused, but not for the known reason", branch)
		t.Logf("as known, %s cannot run what agentiso writes (AUTH_TYPE=agent-installer-local, auth_scheme tokens): %q; its error: %v", branch, want, err)
		return
	}
	require.NoError(t, err)
	code, body, err := api.get(ctx, "/infra-envs", "")
	require.NoError(t, err)
	if authNone {
		// AUTH_TYPE=none, as the 4.16 installer had it: the service is
		// open on the rendezvous host.
		require.Equal(t, http.StatusOK, code, "AUTH_TYPE=none: the service answers without a token: %s", body)
		t.Logf("assisted-service %s runs with AUTH_TYPE=none and answers without a token", branch)
	} else {
		t.Logf("assisted-service %s answers the ISO's user token", branch)
		require.Equal(t, http.StatusUnauthorized, code, "without a token the service must refuse: %s", body)
	}

	// 5. The client, with the env its units give it.
	client := func(unit, sub string) string {
		pr, err := iso.Podman(unit)
		require.NoError(t, err)
		var uenv Env
		ue, err := iso.UnitEnv(unit)
		require.NoError(t, err)
		uenv.Merge(ue)
		files, err := iso.UnitEnvFiles(unit)
		require.NoError(t, err)
		for _, f := range files {
			uenv.Merge(readEnvFile(t, rootfs, f))
		}
		var cenv Env
		for _, name := range pr.Pass {
			v, _ := uenv.Get(name)
			cenv.Set(name, v)
		}
		cenv.Merge(pr.Set)
		// Adjusted: the container's mounts (/manifests, /extra-manifests,
		// /etc/assisted/hostconfig) become paths in the host root, and the
		// service is on loopback.
		manifests := filepath.Join(rootfs, "etc/assisted/manifests")
		for k, f := range map[string]string{
			"CLUSTER_DEPLOYMENT_FILE":    "cluster-deployment.yaml",
			"AGENT_CLUSTER_INSTALL_FILE": "agent-cluster-install.yaml",
			"INFRA_ENV_FILE":             "infraenv.yaml",
			"PULL_SECRET_FILE":           "pull-secret.yaml",
			"CLUSTER_IMAGE_SET_FILE":     "cluster-image-set.yaml",
			"NMSTATE_CONFIG_FILE":        "nmstateconfig.yaml",
			"OPERATOR_INSTALL_FILE":      "operators.yaml",
		} {
			cenv.Set(k, filepath.Join(manifests, f))
		}
		cenv.Set("EXTRA_MANIFESTS_PATH", filepath.Join(rootfs, "etc/assisted/extra-manifests"))
		cenv.Set("HOST_CONFIG_DIR", filepath.Join(rootfs, "etc/assisted/hostconfig"))
		cenv.Set("SERVICE_BASE_URL", base)
		cenv.Set("HOME", work)
		// The image's PATH, with the oc stand-in first.
		cenv.Set("PATH", path)
		cmd := exec.Command(filepath.Join(bins, "agent-installer-client"), sub)
		cmd.Env = cenv.Environ()
		cmd.Dir = work
		if cred != nil {
			// As root the client would write /etc/assisted/client_config.
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		out, err := Run(ctx, 3*time.Minute, cmd)
		require.NoError(t, err, "agent-installer-client %s (%s):\n%s", sub, unit, out)
		t.Logf("agent-installer-client %s:\n%s", sub, tail(string(out), 30))
		return string(out)
	}
	client("agent-register-cluster.service", "registerCluster")
	var clusters []map[string]any
	api.getJSON(t, ctx, "/clusters", userToken, &clusters)
	require.Len(t, clusters, 1, "registerCluster must leave one cluster")
	require.Equal(t, "sno", clusters[0]["name"])
	require.True(t, strings.HasPrefix(fmt.Sprint(clusters[0]["openshift_version"]), strings.Join(strings.Split(version, ".")[:2], ".")),
		"cluster openshift_version %v, want %s", clusters[0]["openshift_version"], version)

	client("agent-register-infraenv.service", "registerInfraEnv")
	var ies []map[string]any
	api.getJSON(t, ctx, "/infra-envs", userToken, &ies)
	require.Len(t, ies, 1, "registerInfraEnv must leave one infra-env")
	require.Equal(t, clusters[0]["id"], ies[0]["cluster_id"], "the infra-env belongs to the cluster")
	require.NotEmpty(t, ies[0]["static_network_config"], "the NMStateConfig reached the infra-env")
	infraEnvID := fmt.Sprint(ies[0]["id"])
	if want, ok := senv.Get("INFRA_ENV_ID"); ok && want != "" {
		require.Equal(t, want, infraEnvID, "the infra-env has the ISO's INFRA_ENV_ID")
	}

	// 6. The ISO's other tokens: wait-for's watcher token reads the
	// cluster; the agent token (PULL_SECRET_TOKEN, which start-agent.sh
	// hands the agent) registers a host. The host is registered by this
	// test speaking the agent's two calls (register, inventory reply), not by
	// the real agent, so that configure has a host to configure.
	watcher, _ := senv.Get("WATCHER_AUTH_TOKEN")
	code, body, err = api.do(ctx, http.MethodGet, "/clusters/"+fmt.Sprint(clusters[0]["id"]), "Watcher-Authorization", watcher, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, "the ISO's watcher token must read the cluster: %s", body)
	agentToken, _ := senv.Get("PULL_SECRET_TOKEN")
	require.True(t, authNone || agentToken != "", "the service env has no PULL_SECRET_TOKEN")
	hostID := "3c7d3f5a-5b0e-4c53-9b5d-0f5a7c1e2d4b"
	code, body, err = api.do(ctx, http.MethodPost, "/infra-envs/"+infraEnvID+"/hosts", "X-Secret-Key", agentToken,
		map[string]any{"host_id": hostID, "discovery_agent_version": img("agent-installer-node-agent")})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, code, "the ISO's agent token must register a host: %s", body)
	inv, err := json.Marshal(map[string]any{
		"hostname":      "oracle-host",
		"cpu":           map[string]any{"count": 8, "architecture": "x86_64"},
		"memory":        map[string]any{"physical_bytes": int64(32) << 30, "usable_bytes": int64(32) << 30},
		"system_vendor": map[string]any{"manufacturer": "QEMU", "product_name": "Standard PC", "virtual": true},
		"interfaces": []any{map[string]any{"name": "enp1s0", "mac_address": mac, "has_carrier": true, "type": "physical",
			"ipv4_addresses": []string{"192.168.122.10/24"}, "ipv6_addresses": []string{}, "flags": []string{"up", "broadcast"}, "mtu": 1500}},
		"disks": []any{map[string]any{"id": "/dev/disk/by-path/pci-0000:00:05.0", "name": "vda", "path": "/dev/vda", "drive_type": "HDD",
			"size_bytes": int64(200) << 30, "by_path": "/dev/disk/by-path/pci-0000:00:05.0",
			"installation_eligibility": map[string]any{"eligible": true}}},
	})
	require.NoError(t, err)
	code, body, err = api.do(ctx, http.MethodPost, "/infra-envs/"+infraEnvID+"/hosts/"+hostID+"/instructions", "X-Secret-Key", agentToken,
		map[string]any{"step_type": "inventory", "step_id": "inventory-oracle", "exit_code": 0, "output": string(inv)})
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, code, "inventory reply: %s", body)

	// 7. configure, with the env of apply-host-config.service; the host
	// configs come from the ISO (/etc/assisted/hostconfig).
	client("apply-host-config.service", "configure")
	var hosts []map[string]any
	api.getJSON(t, ctx, "/infra-envs/"+infraEnvID+"/hosts", userToken, &hosts)
	require.Len(t, hosts, 1)
	roles, err := filepath.Glob(filepath.Join(rootfs, "etc/assisted/hostconfig/*/role"))
	require.NoError(t, err)
	require.Len(t, roles, 1, "the SNO ISO has one hostconfig with a role")
	role, err := os.ReadFile(roles[0])
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(string(role)), fmt.Sprint(hosts[0]["suggested_role"]), "the host has the role its hostconfig names")
}

// serviceRefuses starts the assisted-service bin with env and returns what
// it printed when it exits with an error; the test fails if it exits 0 or
// still runs after limit.
func serviceRefuses(t *testing.T, bin, work string, cred *syscall.Credential, env Env, limit time.Duration) string {
	t.Helper()
	port, err := FreePort()
	require.NoError(t, err)
	cmd := exec.Command(bin, "-port", strconv.Itoa(port))
	cmd.Env = env.Environ()
	cmd.Dir = work
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	p, err := Start("assisted-service (negative control)", cmd)
	require.NoError(t, err)
	defer p.Stop(5 * time.Second)
	deadline := time.Now().Add(limit)
	for {
		if done, err := p.Exited(); done {
			require.Error(t, err, "the service exited 0; it printed:\n%s", tail(p.Output(), 20))
			return p.Output()
		}
		if time.Now().After(deadline) {
			require.FailNow(t, "the service still runs", "after %s; it printed:\n%s", limit, tail(p.Output(), 20))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// floorRelease is the oldest release agentiso supports (its release policy):
// agentiso writes AUTH_TYPE=agent-installer-local and tokens that carry only
// an auth_scheme claim, which assisted-service reads from release-4.18 on.
const floorRelease = "4.18.0"

// belowFloor lists the branches whose service cannot run what agentiso
// writes, with the words of the real service's refusal (its log or its
// answer to the ISO's user token). For these branches TestOracle asserts the
// refusal, and fails if it is gone or agentiso's auth changed.
//
// (release-4.16 is supported since issue 37 item 4: agentiso writes
// AUTH_TYPE=none for it, as its installer did.)
//   - release-4.17: its agent-installer-local authenticator wants an
//     infra_env_id claim (pkg/auth/agent_local_authenticator.go), which
//     agentiso's tokens do not carry: every call is 401.
var belowFloor = map[string]string{
	"release-4.17": "claims are incorrectly formatted",
}

// authScheme returns the auth_scheme claim of a JWT, without checking its
// signature.
func authScheme(token string) (string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", fmt.Errorf("not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", err
	}
	var claims map[string]any
	if err := json.Unmarshal(b, &claims); err != nil {
		return "", err
	}
	s, _ := claims["auth_scheme"].(string)
	return s, nil
}

type apiClient struct {
	base string
	http *http.Client
}

func (c *apiClient) get(ctx context.Context, path, token string) (int, []byte, error) {
	return c.do(ctx, http.MethodGet, path, "Authorization", token, nil)
}

// do sends a request with the token in header (none when token is empty)
// and body as JSON (none when nil).
func (c *apiClient) do(ctx context.Context, method, path, header, token string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set(header, token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp.StatusCode, b, err
}

func (c *apiClient) getJSON(t *testing.T, ctx context.Context, path, token string, out any) {
	t.Helper()
	code, body, err := c.get(ctx, path, token)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, "GET %s: %s", path, body)
	require.NoError(t, json.Unmarshal(body, out), "GET %s", path)
}

// waitReady polls GET /infra-envs with the user token until it answers 200.
func waitReady(ctx context.Context, api *apiClient, token string, svc *Proc, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	last := ""
	for {
		if done, err := svc.Exited(); done {
			return fmt.Errorf("assisted-service exited before answering (%v); last lines:\n%s", err, tail(svc.Output(), 15))
		}
		code, body, err := api.get(ctx, "/infra-envs", token)
		switch {
		case err == nil && code == http.StatusOK:
			return nil
		case err == nil:
			last = fmt.Sprintf("HTTP %d: %s", code, strings.TrimSpace(string(body)))
			// The service answers: anything but 200 (or a gateway-style
			// "not yet") is its verdict on the token, e.g. 401, or 500
			// "malformed auth_scheme claim".
			if code != http.StatusServiceUnavailable && code != http.StatusBadGateway && code != http.StatusGatewayTimeout {
				return fmt.Errorf("assisted-service refused the ISO's user token: %s", last)
			}
		default:
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("assisted-service did not answer within %s: %s", limit, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// releaseFor maps a branch to the release version the ISO is made for:
// release-4.NN -> 4.NN.0, master -> AGENTISO_UPSTREAM_MASTER_VERSION (default
// 4.23.0, the newest branch); AGENTISO_UPSTREAM_RELEASE_VERSION overrides.
func releaseFor(branch string) (string, error) {
	if v := os.Getenv("AGENTISO_UPSTREAM_RELEASE_VERSION"); v != "" {
		return v, nil
	}
	if branch == "master" {
		return envOr("AGENTISO_UPSTREAM_MASTER_VERSION", "4.23.0"), nil
	}
	m := regexp.MustCompile(`^release-(\d+\.\d+)$`).FindStringSubmatch(branch)
	if m == nil {
		return "", fmt.Errorf("branch %q: want release-X.Y or master (or set AGENTISO_UPSTREAM_RELEASE_VERSION)", branch)
	}
	return m[1] + ".0", nil
}

// agentisoBinary returns $AGENTISO_UPSTREAM_AGENTISO, else builds
// ./cmd/agentiso into work.
func agentisoBinary(t *testing.T, ctx context.Context, root, work string) string {
	if b := os.Getenv("AGENTISO_UPSTREAM_AGENTISO"); b != "" {
		return b
	}
	bin := filepath.Join(work, "agentiso")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/agentiso")
	cmd.Dir = root
	out, err := Run(ctx, 10*time.Minute, cmd)
	require.NoError(t, err, "go build ./cmd/agentiso:\n%s", out)
	return bin
}

func firstMAC(t *testing.T, iso *ISO) string {
	for p := range iso.Files {
		if rest, ok := strings.CutPrefix(p, "/etc/assisted/hostnames/"); ok {
			return rest
		}
	}
	t.Fatal("the Ignition config has no /etc/assisted/hostnames/<mac>")
	return ""
}

func readEnvFile(t *testing.T, rootfs, path string) Env {
	t.Helper()
	optional := strings.HasPrefix(path, "-")
	path = strings.TrimPrefix(path, "-")
	b, err := os.ReadFile(filepath.Join(rootfs, path))
	if optional && os.IsNotExist(err) {
		return Env{}
	}
	require.NoError(t, err, "env file %s", path)
	e, err := ParseEnvFile(b, path)
	require.NoError(t, err)
	return e
}

func writeFile(t *testing.T, rootfs, path, content string) {
	t.Helper()
	p := filepath.Join(rootfs, path)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// linkOrCopy hard-links src to dst (creating dst's directory), or copies it
// with its mode when they are on different file systems.
func linkOrCopy(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// writeOCStandIn writes an oc that answers what the client and service ask
// of the release, for the one release image the ISO names: `oc adm release
// info` its version, `oc image info` a single-arch amd64 image (there is no
// payload on the host; the live lab reads one). Every call is appended to
// logf; anything else fails.
func writeOCStandIn(t *testing.T, path, logf, image, version string) {
	t.Helper()
	script := `#!/bin/sh
# agentiso upstream oracle: stand-in for oc (test/upstream). Upstream runs oc
# without a shell: the template arrives with its quotes.
printf '%s\n' "$*" >>'` + logf + `'
fail() {
	echo "oc stand-in (agentiso upstream oracle): not supported: oc $*" >&2
	exit 1
}
case " $* " in
*" ` + image + ` "*) ;;
*) fail "$@" ;;
esac
case "$*" in
"adm release info -o template --template "*"{{.metadata.version}}"*)
	printf '%s' '` + version + `' ;;
"image info --output json "*)
	printf '%s\n' '{"config":{"architecture":"amd64","os":"linux"}}' ;;
*) fail "$@" ;;
esac
`
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
}
