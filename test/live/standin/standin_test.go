package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/testrelease"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/credentials"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
	"github.com/seed-a052040e/agentiso/test/live"
	"github.com/seed-a052040e/agentiso/test/live/assisted"
)

func TestCVO(t *testing.T) {
	root := t.TempDir()
	for p, b := range (testrelease.Payload{Components: map[string]string{"agent-installer-node-agent": "quay.io/x/y@sha256:abc"}}).Files() {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, p), b, 0o644))
	}
	dir := filepath.Join(root, "release-manifests")
	var out bytes.Buffer
	require.NoError(t, runCVO([]string{"image", "agent-installer-node-agent"}, dir, &out))
	assert.Equal(t, "quay.io/x/y@sha256:abc", out.String())
	require.ErrorIs(t, runCVO([]string{"image", "nope"}, dir, &out), errUnknownComponent)
	require.ErrorContains(t, runCVO([]string{"image"}, dir, &out), "missing command line argument short-name")
	require.ErrorContains(t, runCVO([]string{"start"}, dir, &out), "only answers: image SHORT-NAME")
	require.ErrorContains(t, runCVO([]string{"image", "x"}, t.TempDir(), &out), "read the release payload")
}

func TestRunDispatch(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 1, run(context.Background(), []string{"/usr/bin/frobnicate"}, &out, &errb))
	assert.Contains(t, errb.String(), `unknown role "frobnicate"`)
	errb.Reset()
	assert.Equal(t, 2, run(context.Background(), []string{"standin"}, &out, &errb))
	assert.Equal(t, 1, run(context.Background(), []string{"standin", "cp", "-r", "a", "b"}, &out, &errb))
	assert.Contains(t, errb.String(), "cp: the stand-in cp copies one file")
}

func TestCP(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "agent")
	require.NoError(t, os.WriteFile(src, []byte("binary"), 0o755))
	dst := filepath.Join(dir, "hostbin")
	require.NoError(t, os.Mkdir(dst, 0o755))
	require.NoError(t, runCP([]string{src, dst}))
	fi, err := os.Stat(filepath.Join(dst, "agent"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
	b, err := os.ReadFile(filepath.Join(dst, "agent"))
	require.NoError(t, err)
	assert.Equal(t, "binary", string(b))
	require.Error(t, runCP([]string{dir, dst}), "a directory is not copied")
	require.Error(t, runCP([]string{filepath.Join(dir, "missing"), dst}))
}

func TestBashRunsOnlyStartDB(t *testing.T) {
	err := runBash(context.Background(), []string{"-c", "echo hi"}, func(string) string { return "" }, io.Discard)
	require.ErrorContains(t, err, "only runs start_db.sh")
	err = runBash(context.Background(), []string{filepath.Join(t.TempDir(), DBScript)}, func(string) string { return "" }, io.Discard)
	require.ErrorContains(t, err, "no such file")
}

func TestDBAcceptsConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	require.NoError(t, ln.Close())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	env := map[string]string{"DB_PORT": port}
	go func() { done <- runDB(ctx, func(k string) string { return env[k] }, io.Discard) }()
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, waitForDB(context.Background(), net.JoinHostPort("127.0.0.1", port), time.Second, slog.New(slog.DiscardHandler)))
	cancel()
	require.NoError(t, <-done)
	require.ErrorContains(t, waitForDB(context.Background(), net.JoinHostPort("127.0.0.1", port), 10*time.Millisecond, slog.New(slog.DiscardHandler)), "did not answer")
}

func TestServiceConfigFromEnv(t *testing.T) {
	auth, err := credentials.GenerateAuthConfig(nil)
	require.NoError(t, err)
	env := map[string]string{"AUTH_TYPE": "agent-installer-local", "EC_PUBLIC_KEY_PEM": auth.PublicKey, "INFRA_ENV_ID": "6a3f9b2e-1c4d-4e5f-8a9b-0c1d2e3f4a5b", "DB_HOST": "127.0.0.1", "DB_PORT": "5432",
		"RELEASE_IMAGES":            `[{"openshift_version":"4.19","cpu_architecture":"x86_64","cpu_architectures":["x86_64"],"url":"quay.io/openshift-release-dev/ocp-release@sha256:abc","version":"4.19.0"}]`,
		"OS_IMAGES":                 `[{"openshift_version":"4.19","cpu_architecture":"x86_64","url":"https://x/rhcos.iso","version":"419.96"}]`,
		"HW_VALIDATOR_REQUIREMENTS": `[{"version":"default","master":{"cpu_cores":4},"arbiter":{},"worker":{},"sno":{"cpu_cores":8}}]`}
	getenv := func(k string) string { return env[k] }
	cfg, err := serviceConfigFromEnv(getenv, nil)
	require.NoError(t, err)
	assert.Equal(t, ":8090", cfg.listen)
	assert.Equal(t, "127.0.0.1:5432", cfg.dbAddr)
	assert.Equal(t, env["INFRA_ENV_ID"], cfg.live.InfraEnvID)
	assert.Equal(t, []assisted.ReleaseImage{{OpenshiftVersion: "4.19", CPUArchitecture: "x86_64", CPUArchitectures: []string{"x86_64"}, URL: "quay.io/openshift-release-dev/ocp-release@sha256:abc", Version: "4.19.0"}}, cfg.live.ReleaseImages)

	// The unit's ExecStartPre must have replaced the placeholder.
	env["HW_VALIDATOR_REQUIREMENTS"] = "TO_BE_REPLACED_BY_SYSTEMD"
	_, err = serviceConfigFromEnv(getenv, nil)
	require.ErrorContains(t, err, "HW_VALIDATOR_REQUIREMENTS is not valid JSON")
	env["HW_VALIDATOR_REQUIREMENTS"] = `[{"version":"default","master":{}}]`
	_, err = serviceConfigFromEnv(getenv, nil)
	require.ErrorContains(t, err, `HW_VALIDATOR_REQUIREMENTS[0] has no "worker"`)
	env["HW_VALIDATOR_REQUIREMENTS"] = `[{"version":"default","master":{},"worker":{},"sno":{}}]`
	env["RELEASE_IMAGES"] = "[]"
	_, err = serviceConfigFromEnv(getenv, nil)
	require.ErrorContains(t, err, "RELEASE_IMAGES lists no release")
	env["RELEASE_IMAGES"] = `[{"openshift_version":"4.19","cpu_architecture":"x86_64","url":"u","version":"4.19.0"}]`
	env["AUTH_TYPE"] = "rhsso"
	_, err = serviceConfigFromEnv(func(k string) string { return env[k] }, nil)
	require.ErrorContains(t, err, "AUTH_TYPE is \"rhsso\"")
	env["AUTH_TYPE"] = "local"
	_, err = serviceConfigFromEnv(func(k string) string { return env[k] }, nil)
	require.ErrorContains(t, err, "AUTH_TYPE is \"local\"", "assisted-service's local auth is not the agent flow's")
	env["AUTH_TYPE"] = "agent-installer-local"
	env["EC_PUBLIC_KEY_PEM"] = "garbage"
	_, err = serviceConfigFromEnv(func(k string) string { return env[k] }, nil)
	require.ErrorContains(t, err, "EC_PUBLIC_KEY_PEM")
}

// snoManifests runs create cluster-manifests on examples/sno and copies the
// result into a /manifests-like directory.
func snoManifests(t *testing.T) string {
	t.Helper()
	work := t.TempDir()
	for _, f := range []string{assetdir.InstallConfig, assetdir.AgentConfig} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "sno", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(work, f), b, 0o644))
	}
	s, err := asset.NewStore(work, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	rel, err := agent.OfflineRelease("quay.io/openshift-release-dev/ocp-release@sha256:"+strings.Repeat("4", 64), "4.19.0")
	require.NoError(t, err)
	require.NoError(t, s.Provide(rel))
	targets := agent.ClusterManifestsTargets()
	for _, a := range targets {
		_, err := s.Fetch(context.Background(), a)
		require.NoError(t, err, "fetch %s", a.Name())
	}
	require.NoError(t, s.Persist(context.Background(), targets...))
	out := t.TempDir()
	files, err := filepath.Glob(filepath.Join(work, "cluster-manifests", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(out, filepath.Base(f)), b, 0o600))
	}
	return out
}

// fakeSys is a /sys and /proc with one 120 GiB virtio disk and a CD-ROM.
func fakeSys(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	w := func(p, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(s), 0o644))
	}
	w("proc/meminfo", "MemTotal:       16384000 kB\nMemFree:  1 kB\n")
	w("sys/block/vda/size", "251658240\n")
	w("sys/block/vda/ro", "0\n")
	w("sys/block/vda/queue/rotational", "0\n")
	w("sys/block/sr0/size", "2097152\n")
	w("sys/block/sr0/ro", "1\n")
	w("sys/block/loop0/size", "100\n")
	w("sys/class/dmi/id/product_uuid", "5C2A3B4D-0000-4000-8000-525400123456\n")
	w("sys/class/dmi/id/sys_vendor", "QEMU\n")
	return root
}

type downKube struct{}

func (downKube) Version(context.Context) (*rendezvous.VersionInfo, error) {
	return nil, &net.OpError{Op: "dial", Err: os.ErrDeadlineExceeded}
}
func (downKube) ConfigMap(context.Context, string, string) (*rendezvous.ConfigMap, error) {
	return nil, os.ErrDeadlineExceeded
}
func (downKube) ClusterVersion(context.Context) (*rendezvous.ClusterVersion, error) {
	return nil, os.ErrDeadlineExceeded
}
func (downKube) ConsoleRoute(context.Context) (*rendezvous.Route, error) {
	return nil, os.ErrDeadlineExceeded
}
func (downKube) ClusterOperators(context.Context) ([]rendezvous.ClusterOperator, error) {
	return nil, os.ErrDeadlineExceeded
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLiveFlowSNO plays the rendezvous host of examples/sno against the
// live simulator: the client registers the cluster and infra-env from the
// generated ZTP manifests, the agent registers the host with its inventory,
// configure applies the role, the install is triggered as
// start-cluster-installation.sh does, and wait-for's logic sees it.
func TestLiveFlowSNO(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	auth, err := credentials.GenerateAuthConfig(nil)
	require.NoError(t, err)
	pub, err := credentials.ParsePublicKey(auth.PublicKey)
	require.NoError(t, err)
	const infraEnvID = "6a3f9b2e-1c4d-4e5f-8a9b-0c1d2e3f4a5b"
	const mac = "52:54:00:12:34:56"
	releaseURL := "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("4", 64)
	const installerImage = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	live, err := assisted.NewLive(assisted.LiveConfig{PublicKey: pub, InfraEnvID: infraEnvID, BootstrapHostMAC: mac, PrepareFor: 300 * time.Millisecond, NextInstruction: 1,
		InstallerImage: installerImage,
		ReleaseImages:  []assisted.ReleaseImage{{OpenshiftVersion: "4.19", CPUArchitecture: goArchToRelease(runtime.GOARCH), URL: releaseURL, Version: "4.19.0"}}})
	require.NoError(t, err)
	srv := httptest.NewServer(live.Handler())
	defer srv.Close()

	var out syncBuffer
	hostcfg := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(hostcfg, "sno"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(hostcfg, "sno", "mac_addresses"), []byte(mac), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(hostcfg, "sno", "role"), []byte("master"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(hostcfg, "sno", "root-device-hints.yaml"), []byte("deviceName: /dev/vda\n"), 0o644))
	c := &clientConfig{ManifestsDir: snoManifests(t), ExtraManifestsDir: t.TempDir(), HostConfigDir: hostcfg, RunDir: t.TempDir(),
		BaseURL: srv.URL + "/", UserToken: auth.UserAuthToken, InfraEnvID: infraEnvID, ImageType: "full-iso",
		HTTP: srv.Client(), Retry: 20 * time.Millisecond, Out: &out}
	require.NoError(t, os.WriteFile(filepath.Join(c.ExtraManifestsDir, "extra-0.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"), 0o644))

	clusterID, err := c.registerCluster(ctx)
	require.NoError(t, err, out.String())
	again, err := c.registerCluster(ctx)
	require.NoError(t, err)
	assert.Equal(t, clusterID, again, "a second run reuses the registered cluster")
	ieID, err := c.registerInfraEnv(ctx)
	require.NoError(t, err, out.String())
	assert.Equal(t, infraEnvID, ieID, "assisted-service gives the infra-env the INFRA_ENV_ID of its environment")
	_, err = c.registerInfraEnv(ctx)
	require.NoError(t, err)

	cl := live.Cluster()
	require.NotNil(t, cl)
	assert.Equal(t, "sno", cl.Name)
	assert.Equal(t, "example.com", cl.BaseDNSDomain)
	assert.Equal(t, "4.19.0", cl.OpenshiftVersion)
	assert.Equal(t, releaseURL, cl.OCPReleaseImage)
	assert.Equal(t, "None", cl.HighAvailabilityMode)
	assert.Equal(t, int64(1), cl.ControlPlaneCount)
	assert.Equal(t, []assisted.Network{{CIDR: "192.168.122.0/24"}}, cl.MachineNetworks)
	assert.Equal(t, rendezvous.ClusterInsufficient, cl.Status)

	// The agent registers the host with its inventory.
	agentCfg := &agentConfig{URL: srv.URL + "/", InfraEnvID: ieID, AgentVersion: "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:1234",
		Token: auth.AgentAuthToken, SysRoot: fakeSys(t), HTTP: srv.Client(), Retry: 50 * time.Millisecond, Out: &out,
		Hostname: func() (string, error) { return "sno", nil },
		Interfaces: func() ([]assisted.Interface, error) {
			return []assisted.Interface{{Name: "enp1s0", MacAddress: mac, IPV4Addresses: []string{"192.168.122.10/24"}, IPV6Addresses: []string{}, MTU: 1500, HasCarrier: true}}, nil
		}}
	// podman, as far as the install step goes: run the image's entrypoint
	// (the stand-in assisted-installer) with the arguments after the image.
	var podmanArgs []string
	agentCfg.Run = func(ctx context.Context, name string, args ...string) ([]byte, error) {
		podmanArgs = args
		if name != "podman" || len(args) == 0 || args[0] != "run" {
			return nil, &exec.ExitError{}
		}
		i := slices.Index(args, installerImage)
		if i < 0 {
			return []byte("no image"), &exec.ExitError{}
		}
		var b bytes.Buffer
		err := runInstaller(ctx, args[i+1:], func(k string) string { return map[string]string{"PULL_SECRET_TOKEN": auth.AgentAuthToken}[k] }, &b)
		return b.Bytes(), err
	}
	agentCtx, stopAgent := context.WithCancel(ctx)
	agentDone := make(chan error, 1)
	go func() { agentDone <- agentCfg.run(agentCtx) }()

	require.NoError(t, c.configure(ctx), out.String())
	failures, err := os.ReadFile(filepath.Join(c.RunDir, "host-config-failures"))
	require.NoError(t, err)
	assert.Empty(t, string(failures))

	require.Eventually(t, func() bool { return live.Cluster().Status == rendezvous.ClusterReady }, 20*time.Second, 20*time.Millisecond, out.String())
	cl = live.Cluster()
	require.Len(t, cl.Hosts, 1)
	h := cl.Hosts[0]
	assert.Equal(t, "5c2a3b4d-0000-4000-8000-525400123456", h.ID, "the host id is the SMBIOS UUID")
	assert.Equal(t, "sno", h.RequestedHostname)
	assert.Equal(t, "master", h.Role)
	assert.Equal(t, "known", h.Status)
	assert.Equal(t, "/dev/vda", h.InstallationDiskPath)
	var inv assisted.Inventory
	require.NoError(t, json.Unmarshal([]byte(h.Inventory), &inv))
	assert.Equal(t, mac, inv.Interfaces[0].MacAddress)
	assert.Equal(t, []string{"192.168.122.10/24"}, inv.Interfaces[0].IPV4Addresses)
	assert.Equal(t, int64(16384000*1024), inv.Memory.PhysicalBytes)
	require.Len(t, inv.Disks, 2, "loop devices are not disks")
	assert.Equal(t, "sr0", inv.Disks[0].Name)
	assert.False(t, inv.Disks[0].InstallationEligibility.Eligible, "the CD-ROM is not eligible")
	assert.Equal(t, "vda", inv.Disks[1].Name)
	assert.True(t, inv.Disks[1].InstallationEligibility.Eligible)
	assert.Equal(t, int64(120<<30), inv.Disks[1].SizeBytes)

	// start-cluster-installation.sh: POST .../actions/install with the user token, 202.
	post := func(tok string) int {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+rendezvous.APIPath+"/clusters/"+clusterID+"/actions/install", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", tok)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusUnauthorized, post("not-a-token"))
	assert.Equal(t, http.StatusForbidden, post(auth.WatcherAuthToken))
	assert.Equal(t, http.StatusAccepted, post(auth.UserAuthToken))
	assert.Equal(t, http.StatusConflict, post(auth.UserAuthToken), "the cluster is no longer ready")
	cl = live.Cluster()
	assert.Equal(t, rendezvous.ClusterPreparing, cl.Status)
	assert.True(t, cl.Hosts[0].Bootstrap, "the host holding BOOTSTRAP_HOST_MAC is the bootstrap host")

	// The agent runs the installer image; the installer reports its stage.
	require.Eventually(t, func() bool {
		h := live.Cluster().Hosts[0]
		return h.Progress != nil && h.Progress.CurrentStage == "Installing"
	}, 20*time.Second, 20*time.Millisecond, out.String())
	assert.Equal(t, "installing-in-progress", live.Cluster().Hosts[0].Status)
	assert.Contains(t, podmanArgs, "--privileged")
	assert.Equal(t, []string{"--env", "PULL_SECRET_TOKEN"}, podmanArgs[slices.Index(podmanArgs, "--env"):slices.Index(podmanArgs, "--env")+2])
	assert.Equal(t, []string{"--role", "bootstrap"}, podmanArgs[slices.Index(podmanArgs, "--role"):slices.Index(podmanArgs, "--role")+2])
	assert.Equal(t, []string{"--boot-device", "/dev/vda"}, podmanArgs[slices.Index(podmanArgs, "--boot-device"):slices.Index(podmanArgs, "--boot-device")+2])

	// wait-for bootstrap-complete's logic, through the watcher-token client.
	rc, err := rendezvous.NewClient(srv.URL+rendezvous.APIPath, auth.WatcherAuthToken, 5*time.Second, srv.Client())
	require.NoError(t, err)
	var report syncBuffer
	w := rendezvous.NewWaiter(rendezvous.Options{REST: rc, Kube: downKube{}, Reporter: rendezvous.NewPlainReporter(&report, slog.LevelDebug),
		PollInterval: 100 * time.Millisecond, BootstrapTimeout: 3 * time.Second})
	err = w.WaitForBootstrapComplete(ctx)
	var we *rendezvous.WaitError
	require.ErrorAs(t, err, &we, report.String())
	assert.Contains(t, err.Error(), "bootstrap process timed out", "nothing installs in the lab: bootstrap never completes")
	for _, want := range []string{"Cluster installation in progress", "Host sno [master (bootstrap)]: installing-in-progress, stage Installing",
		"Host: sno, reached installation stage Installing: lab stand-in installer: bootstrap", "Host sno: the installer ran",
		"Host sno: updated status from known to preparing-for-installation", "Host: sno, reached installation stage Starting installation"} {
		assert.Contains(t, report.String(), want)
	}
	var msgs []string
	for _, e := range live.Events() {
		msgs = append(msgs, e.Message)
	}
	assert.Contains(t, msgs, "Cluster installation was requested")
	assert.Contains(t, msgs, "Updated status of the cluster to installing")
	stopAgent()
	require.NoError(t, <-agentDone)

	// Every request carried the credential its endpoint needs.
	var sawRegister, sawInventory bool
	for _, r := range live.Requests() {
		switch {
		case r.Method == "POST" && r.Path == rendezvous.APIPath+"/infra-envs/"+ieID+"/hosts":
			sawRegister = true
			assert.Equal(t, []string{"X-Secret-Key"}, r.AuthHeaders)
			assert.Equal(t, 201, r.Status)
		case r.Method == "POST" && strings.HasSuffix(r.Path, "/instructions"):
			sawInventory = true
			assert.Equal(t, 204, r.Status)
		case r.Method == "POST" && r.Path == rendezvous.APIPath+"/clusters":
			assert.Equal(t, []string{"Authorization"}, r.AuthHeaders)
			assert.Equal(t, 201, r.Status)
		case r.Method == "POST" && strings.HasSuffix(r.Path, "/manifests"):
			assert.Equal(t, 201, r.Status)
		}
	}
	assert.True(t, sawRegister)
	assert.True(t, sawInventory)
	assert.Contains(t, out.String(), "Uploaded extra manifest extra-0.yaml")
}

// TestConfigureMatching: a host config without mac_addresses matches the
// host by its hostname; one whose MAC never registers is retried and
// reported in host-config-failures until configure is stopped.
func TestConfigureMatching(t *testing.T) {
	auth, err := credentials.GenerateAuthConfig(nil)
	require.NoError(t, err)
	pub, err := credentials.ParsePublicKey(auth.PublicKey)
	require.NoError(t, err)
	const ieID = "6a3f9b2e-1c4d-4e5f-8a9b-0c1d2e3f4a5b"
	live, err := assisted.NewLive(assisted.LiveConfig{PublicKey: pub, InfraEnvID: ieID})
	require.NoError(t, err)
	srv := httptest.NewServer(live.Handler())
	defer srv.Close()
	ctx := context.Background()
	hostcfg := t.TempDir()
	c := &clientConfig{HostConfigDir: hostcfg, RunDir: t.TempDir(), BaseURL: srv.URL + "/", UserToken: auth.UserAuthToken,
		InfraEnvID: ieID, HTTP: srv.Client(), Retry: 10 * time.Millisecond, Out: io.Discard}
	ps := `{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}`
	var cl assisted.LiveCluster
	require.NoError(t, c.call(ctx, "POST", "/clusters", assisted.ClusterCreateParams{Name: "c", OpenshiftVersion: "4.19", PullSecret: ps, ControlPlaneCount: 1}, &cl, 201))
	require.NoError(t, c.call(ctx, "POST", "/infra-envs", assisted.InfraEnvCreateParams{Name: "c", ClusterID: cl.ID, PullSecret: ps}, nil, 201))
	a := &agentConfig{URL: srv.URL + "/", InfraEnvID: ieID, Token: auth.AgentAuthToken, HTTP: srv.Client(), SysRoot: fakeSys(t), Out: io.Discard,
		Hostname: func() (string, error) { return "master-0", nil },
		Interfaces: func() ([]assisted.Interface, error) {
			return []assisted.Interface{{Name: "eth0", MacAddress: "52:54:00:aa:bb:cc"}}, nil
		}}
	id, err := a.hostID()
	require.NoError(t, err)
	require.NoError(t, a.call(ctx, "POST", "/infra-envs/"+ieID+"/hosts", assisted.HostCreateParams{HostID: id}, nil, 201))
	var steps assisted.Steps
	require.NoError(t, a.call(ctx, "GET", "/infra-envs/"+ieID+"/hosts/"+id+"/instructions", nil, &steps, 200))
	require.Len(t, steps.Instructions, 1)
	a.runStep(ctx, "/infra-envs/"+ieID+"/hosts/"+id+"/instructions", steps.Instructions[0])

	require.NoError(t, os.MkdirAll(filepath.Join(hostcfg, "master-0"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(hostcfg, "master-0", "role"), []byte("master\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(hostcfg, "master-0", "root-device-hints.yaml"), []byte("minSizeGigabytes: 100\nrotational: false\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(hostcfg, "worker-0"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(hostcfg, "worker-0", "mac_addresses"), []byte("52:54:00:DD:EE:FF\n"), 0o644))

	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	require.ErrorIs(t, c.configure(cctx), context.DeadlineExceeded)
	failures, err := os.ReadFile(filepath.Join(c.RunDir, "host-config-failures"))
	require.NoError(t, err)
	assert.Equal(t, "worker-0: no registered host has one of the MAC addresses 52:54:00:dd:ee:ff yet\n", string(failures),
		"master-0 matched by hostname")
	h := live.Cluster().Hosts[0]
	assert.Equal(t, "master", h.Role)
	assert.Equal(t, "/dev/vda", h.InstallationDiskPath)

	disks := []assisted.Disk{{ID: "/dev/sr0", Path: "/dev/sr0", SizeBytes: 1 << 30}, {ID: "/dev/vda", Path: "/dev/vda", SizeBytes: 120 << 30, DriveType: "SSD", InstallationEligibility: assisted.DiskEligibility{Eligible: true}}}
	assert.Equal(t, "/dev/vda", matchHints(&manifests.RootDeviceHints{DeviceName: "/dev/vda"}, disks))
	assert.Equal(t, NotFoundByHints, matchHints(&manifests.RootDeviceHints{DeviceName: "/dev/sr0"}, disks), "not eligible")
	assert.Equal(t, NotFoundByHints, matchHints(&manifests.RootDeviceHints{MinSizeGigabytes: 500}, disks))
}

// renderedFiles returns the files of the agent Ignition config agentiso
// builds for examples/sno (release given by digest, offline), by path.
func renderedFiles(t *testing.T) map[string][]byte {
	t.Helper()
	work := t.TempDir()
	for _, f := range []string{assetdir.InstallConfig, assetdir.AgentConfig} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "sno", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(work, f), b, 0o644))
	}
	s, err := asset.NewStore(work, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	rel, err := agent.OfflineRelease("quay.io/openshift-release-dev/ocp-release@sha256:"+strings.Repeat("4", 64), "4.19.0")
	require.NoError(t, err)
	require.NoError(t, s.Provide(rel))
	a, err := s.Fetch(context.Background(), &agent.AgentIgnition{})
	require.NoError(t, err)
	var cfg types.Config
	require.NoError(t, json.Unmarshal(a.(*agent.AgentIgnition).Config, &cfg))
	files := map[string][]byte{}
	for _, f := range cfg.Storage.Files {
		b, err := live.FileContents(f)
		require.NoError(t, err)
		files[f.Path] = b
	}
	return files
}

// parseEnvFile reads KEY=VALUE lines as podman --env-file does (no quoting).
func parseEnvFile(b []byte) map[string]string {
	env := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		env[k] = v
	}
	return env
}

// The stand-in service must start from the environment the agent ISO
// really gives the service container (assisted-service.env as rendered,
// with HW_VALIDATOR_REQUIREMENTS filled in as
// configure-assisted-hw-requirements.sh does at boot).
func TestServiceConfigFromRenderedEnv(t *testing.T) {
	// the --env-file flags of assisted-service.service, in order, without
	// the ones written at boot (/etc/assisted/node0, agent-images.env)
	files := renderedFiles(t)
	env := map[string]string{}
	for _, f := range []string{"/etc/assisted/rendezvous-host.env", "/usr/local/share/assisted-service/assisted-service.env", "/usr/local/share/assisted-service/images.env"} {
		require.Contains(t, files, f)
		maps.Copy(env, parseEnvFile(files[f]))
	}
	require.Equal(t, "TO_BE_REPLACED_BY_SYSTEMD", env["HW_VALIDATOR_REQUIREMENTS"])
	env["HW_VALIDATOR_REQUIREMENTS"] = `[{"version":"default","master":{"cpu_cores":4},"arbiter":{},"worker":{},"sno":{"cpu_cores":8}}]`
	cfg, err := serviceConfigFromEnv(func(k string) string { return env[k] }, nil)
	require.NoError(t, err, "AUTH_TYPE=%s", env["AUTH_TYPE"])
	assert.Equal(t, "127.0.0.1:5432", cfg.dbAddr)
	assert.Equal(t, env["INFRA_ENV_ID"], cfg.live.InfraEnvID)
	require.Len(t, cfg.live.ReleaseImages, 1)
	assert.Equal(t, "4.19.0", cfg.live.ReleaseImages[0].Version)
}
