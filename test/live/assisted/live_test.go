package assisted

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/credentials"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous/sim"
)

type liveFixture struct {
	t    *testing.T
	srv  *httptest.Server
	live *Live
	auth *credentials.AuthConfig
}

func newLiveFixture(t *testing.T, cfg LiveConfig) *liveFixture {
	t.Helper()
	auth, err := credentials.GenerateAuthConfig(nil)
	require.NoError(t, err)
	cfg.PublicKey, err = credentials.ParsePublicKey(auth.PublicKey)
	require.NoError(t, err)
	live, err := NewLive(cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(live.Handler())
	t.Cleanup(srv.Close)
	return &liveFixture{t: t, srv: srv, live: live, auth: auth}
}

// do sends body (JSON unless it is a string) with header: token and
// returns the status and body.
func (f *liveFixture) do(method, path, header, token string, body any) (int, []byte) {
	f.t.Helper()
	var rd io.Reader
	if body != nil {
		b, ok := body.(string)
		if !ok {
			j, err := json.Marshal(body)
			require.NoError(f.t, err)
			b = string(j)
		}
		rd = bytes.NewReader([]byte(b))
	}
	req, err := http.NewRequest(method, f.srv.URL+rendezvous.APIPath+path, rd)
	require.NoError(f.t, err)
	if header != "" {
		req.Header.Set(header, token)
	}
	resp, err := f.srv.Client().Do(req)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	return resp.StatusCode, out
}

func (f *liveFixture) user(method, path string, body any) (int, []byte) {
	return f.do(method, path, "Authorization", f.auth.UserAuthToken, body)
}

func (f *liveFixture) agent(method, path string, body any) (int, []byte) {
	return f.do(method, path, "X-Secret-Key", f.auth.AgentAuthToken, body)
}

const testPullSecret = `{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}`

func TestLiveRegistrationRules(t *testing.T) {
	f := newLiveFixture(t, LiveConfig{InfraEnvID: sim.InfraEnvID, ReleaseImages: []ReleaseImage{{OpenshiftVersion: "4.19", CPUArchitecture: "x86_64", URL: "quay.io/r@sha256:1", Version: "4.19.2"}}})

	// Authentication: the scheme of the route must match the token's persona.
	code, _ := f.do("GET", "/clusters", "", "", nil)
	assert.Equal(t, 401, code)
	code, _ = f.do("GET", "/clusters", "Authorization", f.auth.AgentAuthToken, nil)
	assert.Equal(t, 403, code, "an agent token on a user route")
	code, _ = f.do("GET", "/clusters", rendezvous.WatcherHeader, f.auth.WatcherAuthToken, nil)
	assert.Equal(t, 200, code)
	code, _ = f.do("POST", "/clusters", rendezvous.WatcherHeader, f.auth.WatcherAuthToken, ClusterCreateParams{})
	assert.Equal(t, 401, code, "POST /clusters is userAuth only: the watcher header is not looked at")

	good := ClusterCreateParams{Name: "sno", OpenshiftVersion: "4.19.2", CPUArchitecture: "x86_64", PullSecret: testPullSecret, ControlPlaneCount: 1, HighAvailabilityMode: "None"}
	bad := good
	bad.OpenshiftVersion = "4.18.0"
	code, body := f.user("POST", "/clusters", bad)
	assert.Equal(t, 400, code)
	assert.Contains(t, string(body), "no release image found for version 4.18.0")
	// By version (the release-4.18 ... 4.21 client sends no
	// ocp_release_image): an x.y.z must be exactly an entry's version.
	bad = good
	bad.OpenshiftVersion = "4.19.3"
	code, body = f.user("POST", "/clusters", bad)
	assert.Equal(t, 400, code, "another z-stream of the same minor is not the release")
	assert.Contains(t, string(body), "no release image found for version 4.19.3")
	// By url (the release-4.22+ client sends its ClusterImageSet's
	// spec.releaseImage): exactly an entry's url; the release by tag does
	// not match the url by digest.
	bad = good
	bad.OCPReleaseImage = "quay.io/r:4.19.2-x86_64"
	code, body = f.user("POST", "/clusters", bad)
	assert.Equal(t, 400, code, "a tag never matches a url by digest")
	assert.Contains(t, string(body), "failed to get release image by URL quay.io/r:4.19.2-x86_64")
	bad = good
	bad.PullSecret = "{}"
	code, body = f.user("POST", "/clusters", bad)
	assert.Equal(t, 400, code)
	assert.Contains(t, string(body), "pull secret has no auths")
	code, body = f.user("POST", "/clusters", `{"name":"sno","openshift_version":"4.19","pull_secret":"{}","controlPlaneCount":1}`)
	assert.Equal(t, 400, code)
	var apiErr rendezvous.APIError
	require.NoError(t, json.Unmarshal(body, &apiErr))
	assert.Contains(t, apiErr.Reason, `unknown field "controlPlaneCount"`)

	code, body = f.user("POST", "/clusters", good)
	require.Equal(t, 201, code, string(body))
	var c LiveCluster
	require.NoError(t, json.Unmarshal(body, &c))
	assert.Equal(t, "quay.io/r@sha256:1", c.OCPReleaseImage, "taken from RELEASE_IMAGES")
	code, _ = f.user("POST", "/clusters", good)
	assert.Equal(t, 409, code)
	code, _ = f.user("POST", "/clusters/"+c.ID+"/actions/install", nil)
	assert.Equal(t, 409, code, "no host: the cluster is not ready")

	code, _ = f.agent("POST", "/infra-envs/"+sim.InfraEnvID+"/hosts", HostCreateParams{HostID: "5c2a3b4d-0000-4000-8000-525400123456"})
	assert.Equal(t, 404, code, "no infra-env yet")
	code, body = f.user("POST", "/infra-envs", InfraEnvCreateParams{Name: "sno", ClusterID: c.ID, PullSecret: testPullSecret, ImageType: "full-iso"})
	require.Equal(t, 201, code, string(body))
	code, _ = f.user("POST", "/infra-envs/"+sim.InfraEnvID+"/hosts", HostCreateParams{HostID: "5c2a3b4d-0000-4000-8000-525400123456"})
	assert.Equal(t, 401, code, "host registration is agentAuth only")
	code, _ = f.agent("POST", "/infra-envs/"+sim.InfraEnvID+"/hosts", HostCreateParams{HostID: "not-a-uuid"})
	assert.Equal(t, 400, code)
	hostID := "5c2a3b4d-0000-4000-8000-525400123456"
	code, _ = f.agent("POST", "/infra-envs/"+sim.InfraEnvID+"/hosts", HostCreateParams{HostID: hostID, DiscoveryAgentVersion: "img@sha256:2"})
	require.Equal(t, 201, code)

	// The first instruction is the inventory; a reply with a bad MAC is refused.
	code, body = f.agent("GET", "/infra-envs/"+sim.InfraEnvID+"/hosts/"+hostID+"/instructions", nil)
	require.Equal(t, 200, code)
	var steps Steps
	require.NoError(t, json.Unmarshal(body, &steps))
	require.Len(t, steps.Instructions, 1)
	assert.Equal(t, StepInventory, steps.Instructions[0].StepType)
	inv := Inventory{Hostname: "localhost", CPU: CPU{Count: 2}, Interfaces: []Interface{{Name: "eth0", MacAddress: "zz"}}}
	reply := func(inv Inventory) int {
		b, err := json.Marshal(inv)
		require.NoError(t, err)
		code, _ := f.agent("POST", "/infra-envs/"+sim.InfraEnvID+"/hosts/"+hostID+"/instructions",
			StepReply{StepType: StepInventory, StepID: steps.Instructions[0].StepID, Output: string(b)})
		return code
	}
	assert.Equal(t, 400, reply(inv))
	inv.Interfaces[0].MacAddress = "52:54:00:12:34:56"
	inv.Interfaces[0].IPV4Addresses = []string{"192.168.122.10/24"}
	require.Equal(t, 204, reply(inv))
	h := f.live.Cluster().Hosts[0]
	assert.Equal(t, "insufficient", h.Status, "localhost is a forbidden hostname, and there is no disk")
	assert.Contains(t, h.StatusInfo, "Hostname localhost is forbidden")
	assert.Contains(t, h.StatusInfo, "No eligible disks")
	assert.Equal(t, rendezvous.ClusterInsufficient, f.live.Cluster().Status)

	code, body = f.user("PATCH", "/infra-envs/"+sim.InfraEnvID+"/hosts/"+hostID, HostUpdateParams{HostRole: "boss"})
	assert.Equal(t, 400, code, string(body))
	code, body = f.user("PATCH", "/infra-envs/"+sim.InfraEnvID+"/hosts/"+hostID, HostUpdateParams{DisksSelectedConfig: []DiskSelected{{ID: "/dev/not-found-by-hints", Role: "install"}}})
	assert.Equal(t, 400, code)
	assert.Contains(t, string(body), "is not a disk of host")
	inv.Disks = []Disk{{ID: "/dev/vda", Name: "vda", Path: "/dev/vda", SizeBytes: 120 << 30, InstallationEligibility: DiskEligibility{Eligible: true}}}
	// An agent that restarts registers again and sends a new inventory.
	code, _ = f.agent("POST", "/infra-envs/"+sim.InfraEnvID+"/hosts", HostCreateParams{HostID: hostID})
	require.Equal(t, 201, code)
	assert.Equal(t, "discovering", f.live.Cluster().Hosts[0].Status)
	require.Equal(t, 204, reply(inv))
	code, _ = f.user("PATCH", "/infra-envs/"+sim.InfraEnvID+"/hosts/"+hostID, HostUpdateParams{HostName: "sno", HostRole: "master"})
	require.Equal(t, 201, code)
	cl := f.live.Cluster()
	assert.Equal(t, "known", cl.Hosts[0].Status)
	assert.Equal(t, "sno", cl.Hosts[0].RequestedHostname)
	assert.Equal(t, "/dev/vda", cl.Hosts[0].InstallationDiskPath, "the first eligible disk is the default")
	assert.Equal(t, rendezvous.ClusterReady, cl.Status)

	code, _ = f.user("PATCH", "/infra-envs/"+sim.InfraEnvID+"/hosts/"+hostID+"/ignition", IgnitionParams{Config: `{"no":"version"}`})
	assert.Equal(t, 400, code)
	code, _ = f.user("PATCH", "/infra-envs/"+sim.InfraEnvID+"/hosts/"+hostID+"/ignition", IgnitionParams{Config: `{"ignition":{"version":"3.2.0"}}`})
	assert.Equal(t, 201, code)
	code, _ = f.user("PATCH", "/infra-envs/"+sim.InfraEnvID+"/hosts/"+hostID+"/installer-args", InstallerArgsParams{Args: []string{"--copy-network"}})
	assert.Equal(t, 201, code)
	assert.Equal(t, `["--copy-network"]`, f.live.Cluster().Hosts[0].InstallerArgs)

	code, _ = f.user("POST", "/clusters/"+c.ID+"/actions/install", nil)
	require.Equal(t, 202, code)
	code, _ = f.agent("POST", "/infra-envs/"+sim.InfraEnvID+"/hosts", HostCreateParams{HostID: hostID})
	assert.Equal(t, 409, code, "no re-registration once installing")
	code, _ = f.user("PATCH", "/infra-envs/"+sim.InfraEnvID+"/hosts/"+hostID, HostUpdateParams{HostRole: "worker"})
	assert.Equal(t, 409, code)

	// The lab's request log, readable with the watcher token.
	code, body = f.do("GET", "/lab/requests", rendezvous.WatcherHeader, f.auth.WatcherAuthToken, nil)
	require.Equal(t, 200, code)
	var reqs []sim.Request
	require.NoError(t, json.Unmarshal(body, &reqs))
	assert.Contains(t, reqs, sim.Request{Method: "POST", Path: rendezvous.APIPath + "/clusters/" + c.ID + "/actions/install", AuthHeaders: []string{"Authorization"}, Status: 202})
}

func TestLivePreparingTurnsInstalling(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := newLiveFixture(t, LiveConfig{InfraEnvID: sim.InfraEnvID, PrepareFor: time.Minute, Now: func() time.Time { return now }, InstallerImage: "quay.io/o@sha256:9"})
	code, body := f.user("POST", "/clusters", ClusterCreateParams{Name: "two", OpenshiftVersion: "4.19", PullSecret: testPullSecret, ControlPlaneCount: 1})
	require.Equal(t, 201, code, string(body))
	var c LiveCluster
	require.NoError(t, json.Unmarshal(body, &c))
	require.Equal(t, 201, func() int {
		code, _ := f.user("POST", "/infra-envs", InfraEnvCreateParams{Name: "two", ClusterID: c.ID, PullSecret: testPullSecret})
		return code
	}())
	for i, id := range []string{"11111111-0000-4000-8000-000000000001", "11111111-0000-4000-8000-000000000002"} {
		code, _ := f.agent("POST", "/infra-envs/"+sim.InfraEnvID+"/hosts", HostCreateParams{HostID: id})
		require.Equal(t, 201, code)
		inv := Inventory{Hostname: []string{"master-0", "worker-0"}[i], CPU: CPU{Count: 4},
			Interfaces: []Interface{{Name: "eth0", MacAddress: []string{"52:54:00:00:00:01", "52:54:00:00:00:02"}[i]}},
			Disks:      []Disk{{ID: "/dev/vda", Path: "/dev/vda", InstallationEligibility: DiskEligibility{Eligible: true}}}}
		b, _ := json.Marshal(inv)
		code, _ = f.agent("POST", "/infra-envs/"+sim.InfraEnvID+"/hosts/"+id+"/instructions", StepReply{StepType: StepInventory, StepID: "inventory-1", Output: string(b)})
		require.Equal(t, 204, code)
	}
	cl := f.live.Cluster()
	assert.Equal(t, rendezvous.ClusterReady, cl.Status)
	code, _ = f.agent("PUT", "/infra-envs/"+sim.InfraEnvID+"/hosts/"+cl.Hosts[0].ID+"/progress", HostProgressParams{CurrentStage: "Installing"})
	assert.Equal(t, 409, code, "no progress before the install")
	assert.Equal(t, "master", cl.Hosts[0].SuggestedRole)
	assert.Equal(t, "worker", cl.Hosts[1].SuggestedRole, "one control plane host is required; the rest are workers")
	code, _ = f.user("POST", "/clusters/"+c.ID+"/actions/install", nil)
	require.Equal(t, 202, code)
	cl = f.live.Cluster()
	assert.Equal(t, rendezvous.ClusterPreparing, cl.Status)
	assert.True(t, cl.Hosts[0].Bootstrap, "without BOOTSTRAP_HOST_MAC the first master is the bootstrap host")
	assert.Equal(t, "master", cl.Hosts[0].Role)
	assert.Equal(t, "worker", cl.Hosts[1].Role)
	now = now.Add(59 * time.Second)
	assert.Equal(t, rendezvous.ClusterPreparing, f.live.Cluster().Status)
	now = now.Add(time.Second)
	cl = f.live.Cluster()
	assert.Equal(t, rendezvous.ClusterInstalling, cl.Status)
	for _, h := range cl.Hosts {
		assert.Equal(t, "installing", h.Status)
		require.NotNil(t, h.Progress)
		assert.Equal(t, "Starting installation", h.Progress.CurrentStage)
	}

	// Each installing host gets one install step naming the installer image.
	stepOf := func(id string) []AgentStep {
		code, body := f.agent("GET", "/infra-envs/"+sim.InfraEnvID+"/hosts/"+id+"/instructions", nil)
		require.Equal(t, 200, code)
		var st Steps
		require.NoError(t, json.Unmarshal(body, &st))
		return st.Instructions
	}
	master, worker := cl.Hosts[0].ID, cl.Hosts[1].ID
	st := stepOf(master)
	require.Len(t, st, 1)
	assert.Equal(t, StepInstall, st[0].StepType)
	assert.Equal(t, "quay.io/o@sha256:9", st[0].Args[0])
	assert.Equal(t, []string{"--role", "bootstrap"}, st[0].Args[1:3])
	assert.Empty(t, stepOf(master), "handed out once")
	code, _ = f.agent("PUT", "/infra-envs/"+sim.InfraEnvID+"/hosts/"+master+"/progress", HostProgressParams{CurrentStage: "Waiting for ignition"})
	assert.Equal(t, 400, code, "not a stage of a bootstrap host")
	code, _ = f.agent("PUT", "/infra-envs/"+sim.InfraEnvID+"/hosts/"+master+"/progress", HostProgressParams{CurrentStage: "Installing", ProgressInfo: "x"})
	require.Equal(t, 200, code)
	ws := stepOf(worker)
	require.Len(t, ws, 1)
	assert.Equal(t, []string{"--role", "worker"}, ws[0].Args[1:3])
	code, _ = f.agent("POST", "/infra-envs/"+sim.InfraEnvID+"/hosts/"+worker+"/instructions", StepReply{StepType: StepInstall, StepID: ws[0].StepID, ExitCode: 125, Error: "image not known"})
	require.Equal(t, 204, code)
	code, _ = f.agent("POST", "/infra-envs/"+sim.InfraEnvID+"/hosts/"+worker+"/instructions", StepReply{StepType: StepInstall, StepID: "install-99"})
	assert.Equal(t, 400, code, "a step never handed out")
	cl = f.live.Cluster()
	assert.Equal(t, "installing-in-progress", cl.Hosts[0].Status)
	assert.Equal(t, "Installing", cl.Hosts[0].Progress.CurrentStage)
	assert.Equal(t, "error", cl.Hosts[1].Status)
	assert.Contains(t, cl.Hosts[1].StatusInfo, "the installer exited with code 125: image not known")
}

func TestNewLiveChecksConfig(t *testing.T) {
	_, err := NewLive(LiveConfig{})
	require.ErrorContains(t, err, "no public key")
	auth, err := credentials.GenerateAuthConfig(nil)
	require.NoError(t, err)
	pub, err := credentials.ParsePublicKey(auth.PublicKey)
	require.NoError(t, err)
	_, err = NewLive(LiveConfig{PublicKey: pub, InfraEnvID: "nope"})
	require.ErrorContains(t, err, `infra-env id "nope" is not a UUID`)
}
