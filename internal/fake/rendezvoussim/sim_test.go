package rendezvoussim

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/credentials"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

type fixture struct {
	cert    tls.Certificate
	auth    *credentials.AuthConfig
	signers *credentials.SignerCAs
	kc      *credentials.Kubeconfig
}

var (
	fixOnce sync.Once
	fix     fixture
	fixErr  error
)

func getFixture(t *testing.T) fixture {
	t.Helper()
	fixOnce.Do(func() {
		now := time.Now()
		if fix.auth, fixErr = credentials.GenerateAuthConfig(rand.Reader); fixErr != nil {
			return
		}
		if fix.signers, fixErr = credentials.GenerateSignerCAs(rand.Reader, now); fixErr != nil {
			return
		}
		if fix.kc, fixErr = credentials.GenerateAdminKubeconfig(rand.Reader, fix.signers, "ocp", "example.com", now); fixErr != nil {
			return
		}
		fix.cert, fixErr = NewKubeServerCert(rand.Reader, fix.signers, "ocp", "example.com", now)
	})
	require.NoError(t, fixErr)
	return fix
}

// startSim runs a simulator on loopback ports until the test ends.
func startSim(t *testing.T, sc *Scenario, speed float64) *Simulator {
	t.Helper()
	return startSimWith(t, Config{Scenario: sc, Speed: speed})
}

// startSimWith fills in the addresses and credentials of cfg and runs it until the test ends.
func startSimWith(t *testing.T, cfg Config) *Simulator {
	t.Helper()
	f := getFixture(t)
	pub, err := f.auth.ECPublicKey()
	require.NoError(t, err)
	pool, err := ClientCAPool(f.signers)
	require.NoError(t, err)
	cfg.PublicKey, cfg.RESTAddr, cfg.KubeAddr, cfg.KubeServerCert, cfg.ClientCAs = pub, "127.0.0.1:0", "127.0.0.1:0", f.cert, pool
	cfg.ClusterName, cfg.BaseDomain = "ocp", "example.com"
	s, err := New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	return s
}

func TestBuiltinScenariosParse(t *testing.T) {
	names := BuiltinNames()
	assert.Equal(t, []string{"cancelled", "disk-insufficient", "ha-happy", "node-zero-reboot-gap", "ntp-recover", "sno-happy", "stuck-ready"}, names)
	for _, n := range names {
		sc, err := Builtin(n)
		require.NoError(t, err, n)
		assert.Equal(t, n, sc.Name)
		require.NotNil(t, sc.Expect, n)
	}
	_, err := Builtin("nope")
	assert.ErrorContains(t, err, "sno-happy")
}

func TestParseScenarioErrors(t *testing.T) {
	for name, y := range map[string]string{
		"no steps":       "name: x\n",
		"order":          "steps: [{at: 2m}, {at: 1m}]\n",
		"rest":           "steps: [{rest: sideways}]\n",
		"unknown field":  "steps: [{at: 1s, colour: red}]\n",
		"host name":      "steps: [{hosts: [{status: known}]}]\n",
		"validation":     "steps: [{cluster: {validations: [{id: a, category: b, status: great}]}}]\n",
		"severity":       "steps: [{events: [{message: m, severity: loud}]}]\n",
		"duration":       "steps: [{at: soon}]\n",
		"expect command": "expect: {command: wait}\nsteps: [{at: 1s}]\n",
	} {
		_, err := ParseScenario(name, []byte(y))
		assert.Error(t, err, name)
	}
	sc, err := ParseScenario("n", []byte("steps: [{at: 90}, {at: 2m}]\n"))
	require.NoError(t, err)
	assert.Equal(t, Duration(90*time.Second), sc.Steps[0].At)
}

// TestScenarios runs wait-for in process against every shipped scenario and
// checks the documented outcome.
func TestScenarios(t *testing.T) {
	const speed = 300
	f := getFixture(t)
	for _, name := range BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc, err := Builtin(name)
			require.NoError(t, err)
			s := startSimWith(t, Config{Scenario: sc, Speed: speed, HoldUntilSeen: true})
			rc, err := rendezvous.NewClient("http://"+s.RESTAddr()+rendezvous.APIPath, f.auth.WatcherAuthToken, 5*time.Second, nil)
			require.NoError(t, err)
			kc, err := rendezvous.NewKubeClient(f.kc, "https://"+s.KubeAddr(), 5*time.Second)
			require.NoError(t, err)
			var out bytes.Buffer
			clock := &rendezvous.ScaledClock{Scale: speed}
			w := rendezvous.NewWaiter(rendezvous.Options{
				REST: rc, Kube: kc, Clock: clock, Reporter: rendezvous.NewPlainReporter(&out, slog.LevelInfo),
				BootstrapTimeout: WaitTimeout(sc, speed), InstallTimeout: WaitTimeout(sc, speed),
				KubeconfigPath: "/dir/auth/kubeconfig", PasswordPath: "/dir/auth/kubeadmin-password",
			})
			if sc.Expect.Command == "install-complete" {
				err = w.WaitForInstallComplete(context.Background())
			} else {
				err = w.WaitForBootstrapComplete(context.Background())
			}
			code := 0
			var we *rendezvous.WaitError
			if errors.As(err, &we) {
				code = we.ExitCode()
				out.WriteString(err.Error())
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, sc.Expect.ExitCode, code, out.String())
			for _, c := range sc.Expect.Contains {
				assert.Contains(t, out.String(), c)
			}
			for _, r := range s.Requests() {
				assert.Equal(t, []string{rendezvous.WatcherHeader}, r.AuthHeaders, "%s %s", r.Method, r.Path)
				assert.Equal(t, 200, r.Status, "%s %s", r.Method, r.Path)
			}
			assert.NotEmpty(t, s.Requests())
		})
	}
}

func get(t *testing.T, url string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	require.NoError(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

func TestAuthEnforcement(t *testing.T) {
	f := getFixture(t)
	sc, err := Builtin("stuck-ready")
	require.NoError(t, err)
	s := startSim(t, sc, 1)
	base := "http://" + s.RESTAddr() + rendezvous.APIPath
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/infra-envs")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)

	other, err := credentials.GenerateAuthConfig(rand.Reader)
	require.NoError(t, err)
	key, err := credentials.ParsePrivateKey(f.auth.PrivateKey)
	require.NoError(t, err)
	noScheme, err := credentials.SignToken(rand.Reader, key, credentials.Claims{"sub": "watcherAuth"})
	require.NoError(t, err)

	for _, path := range []string{"/infra-envs", "/clusters", "/clusters/" + ClusterID, "/events?infra_env_id=" + InfraEnvID} {
		code, _ := get(t, base+path, map[string]string{rendezvous.WatcherHeader: f.auth.WatcherAuthToken})
		assert.Equal(t, 200, code, path)

		code, body := get(t, base+path, map[string]string{rendezvous.WatcherHeader: f.auth.AgentAuthToken})
		assert.Equal(t, 403, code, path)
		assert.JSONEq(t, `{"code":403,"message":"authClaim agentAuth is unauthorized to access"}`, body)

		code, _ = get(t, base+path, map[string]string{rendezvous.WatcherHeader: other.WatcherAuthToken})
		assert.Equal(t, 401, code, "signature by another key on %s", path)

		code, _ = get(t, base+path, nil)
		assert.Equal(t, 401, code, "no credentials on %s", path)

		code, body = get(t, base+path, map[string]string{rendezvous.WatcherHeader: noScheme})
		assert.Equal(t, 500, code, path)
		assert.Contains(t, body, "malformed auth_scheme claim")
	}
	// The agent token in its own header is not accepted on watcher-only routes.
	code, _ := get(t, base+"/clusters", map[string]string{"X-Secret-Key": f.auth.AgentAuthToken})
	assert.Equal(t, 401, code)
	// ... but is on GET /clusters/{id}, whose security includes agentAuth.
	code, _ = get(t, base+"/clusters/"+ClusterID, map[string]string{"X-Secret-Key": f.auth.AgentAuthToken})
	assert.Equal(t, 200, code)
	// The watcher token may not list hosts.
	code, _ = get(t, base+"/infra-envs/"+InfraEnvID+"/hosts", map[string]string{rendezvous.WatcherHeader: f.auth.WatcherAuthToken})
	assert.Equal(t, 401, code)
	code, _ = get(t, base+"/infra-envs/"+InfraEnvID+"/hosts", map[string]string{"Authorization": f.auth.WatcherAuthToken})
	assert.Equal(t, 403, code)
}

// The client sends the watcher token and nothing else.
func TestClientSendsOnlyWatcherToken(t *testing.T) {
	f := getFixture(t)
	sc, err := Builtin("stuck-ready")
	require.NoError(t, err)
	s := startSim(t, sc, 1)
	c, err := rendezvous.NewClient("http://"+s.RESTAddr()+rendezvous.APIPath, f.auth.WatcherAuthToken, time.Second, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := c.ListInfraEnvs(context.Background()); return err == nil }, 5*time.Second, 10*time.Millisecond)
	_, err = c.ListClusters(context.Background())
	require.NoError(t, err)
	cl, err := c.GetCluster(context.Background(), ClusterID)
	require.NoError(t, err)
	assert.Len(t, cl.Hosts, 1)
	_, err = c.ListEvents(context.Background(), InfraEnvID)
	require.NoError(t, err)
	reqs := s.Requests()
	require.GreaterOrEqual(t, len(reqs), 4)
	for _, r := range reqs {
		assert.Equal(t, []string{rendezvous.WatcherHeader}, r.AuthHeaders)
	}

	// The same client with the agent token is refused with 403 on the same routes.
	bad, err := rendezvous.NewClient("http://"+s.RESTAddr()+rendezvous.APIPath, f.auth.AgentAuthToken, time.Second, nil)
	require.NoError(t, err)
	_, err = bad.ListClusters(context.Background())
	var se *rendezvous.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 403, se.StatusCode)
	assert.Equal(t, "authClaim agentAuth is unauthorized to access", se.Message)
}

func TestKubeRequiresAdminClientCert(t *testing.T) {
	f := getFixture(t)
	sc, err := ParseScenario("k", []byte("steps: [{kube: up, bootstrap: complete}]\n"))
	require.NoError(t, err)
	s := startSim(t, sc, 1)
	kc, err := rendezvous.NewKubeClient(f.kc, "https://"+s.KubeAddr(), time.Second)
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := kc.Version(context.Background()); return err == nil }, 5*time.Second, 10*time.Millisecond)
	cm, err := kc.ConfigMap(context.Background(), "kube-system", "bootstrap")
	require.NoError(t, err)
	assert.Equal(t, "complete", cm.Data["status"])
	_, err = kc.ClusterVersion(context.Background())
	var se *rendezvous.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 404, se.StatusCode)

	// A kubeconfig without the client certificate fails the TLS handshake.
	anon := *f.kc
	anon.Users = []credentials.NamedUser{{Name: "admin"}}
	ac, err := rendezvous.NewKubeClient(&anon, "https://"+s.KubeAddr(), time.Second)
	require.NoError(t, err)
	_, err = ac.Version(context.Background())
	assert.Error(t, err)

	// A kubeconfig that does not trust the sim's CA fails too.
	untrusting := *f.kc
	untrusting.Clusters = []credentials.NamedCluster{{Name: "ocp", Cluster: credentials.KubeCluster{Server: "https://x", CertificateAuthorityData: []byte(f.signers.AdminKubeconfig.CertPEM)}}}
	uc, err := rendezvous.NewKubeClient(&untrusting, "https://"+s.KubeAddr(), time.Second)
	require.NoError(t, err)
	_, err = uc.Version(context.Background())
	assert.ErrorContains(t, err, "certificate")
}

func TestRESTOutageIsConnectionRefused(t *testing.T) {
	f := getFixture(t)
	sc, err := ParseScenario("o", []byte("steps: [{at: 0s, rest: up}, {at: 200ms, rest: down}, {at: 400ms, rest: up}]\n"))
	require.NoError(t, err)
	s := startSim(t, sc, 1)
	c, err := rendezvous.NewClient("http://"+s.RESTAddr()+rendezvous.APIPath, f.auth.WatcherAuthToken, time.Second, nil)
	require.NoError(t, err)
	ok := func() bool { _, err := c.ListInfraEnvs(context.Background()); return err == nil }
	require.Eventually(t, ok, 2*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool {
		_, err := c.ListInfraEnvs(context.Background())
		return err != nil && strings.Contains(err.Error(), "refused")
	}, 2*time.Second, 5*time.Millisecond)
	require.Eventually(t, ok, 2*time.Second, 5*time.Millisecond, "the API comes back on the same address")
}

// holdScenario reboots a host and then takes the REST API down 10
// scenario seconds later: at speed 1000, 10 ms of wall time.
const holdScenario = `steps:
- {at: 0s, rest: up, cluster: {status: installing}, hosts: [{name: m0, role: master, status: installing-in-progress, stage: Installing}]}
- {at: 10s, hosts: [{name: m0, stage: Rebooting}]}
- {at: 20s, rest: down}
- {at: 30s, kube: up}
`

// watcher returns a REST client with the watcher token.
func watcher(t *testing.T, s *Simulator) *rendezvous.Client {
	t.Helper()
	c, err := rendezvous.NewClient("http://"+s.RESTAddr()+rendezvous.APIPath, getFixture(t).auth.WatcherAuthToken, time.Second, nil)
	require.NoError(t, err)
	return c
}

// stage polls the cluster and the events as wait-for does and returns the
// host's stage, or "down" when the REST API does not answer.
func stage(t *testing.T, c *rendezvous.Client) string {
	t.Helper()
	ctx := context.Background()
	cl, err := c.GetCluster(ctx, ClusterID)
	if err != nil {
		return "down"
	}
	_, err = c.ListEvents(ctx, InfraEnvID)
	require.NoError(t, err)
	require.Len(t, cl.Hosts, 1)
	return cl.Hosts[0].Progress.CurrentStage
}

// A poller that is late (a loaded machine) still sees every REST state of
// the scenario, in order, with HoldUntilSeen.
func TestHoldUntilSeenServesEveryState(t *testing.T) {
	sc, err := ParseScenario("hold", []byte(holdScenario))
	require.NoError(t, err)
	s := startSimWith(t, Config{Scenario: sc, Speed: 1000, HoldUntilSeen: true})
	c := watcher(t, s)
	// The whole scenario is due after 30 ms; the client looks only now.
	time.Sleep(200 * time.Millisecond)
	assert.Equal(t, "Installing", stage(t, c))
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, "Rebooting", stage(t, c), "the reboot is held until a client was served it")
	cl, err := c.GetCluster(context.Background(), ClusterID)
	if err == nil { // the outage may already have begun, but not before 10 ms
		assert.Equal(t, "Rebooting", cl.Hosts[0].Progress.CurrentStage)
	}
	require.Eventually(t, func() bool { return stage(t, c) == "down" }, 2*time.Second, 5*time.Millisecond)

	// Without the hold the same late client finds the API gone.
	s = startSimWith(t, Config{Scenario: sc, Speed: 1000})
	c = watcher(t, s)
	time.Sleep(200 * time.Millisecond)
	assert.Equal(t, "down", stage(t, c))
}

// The state before the REST API first comes up (nothing answers) is a state
// too: a client that starts late still finds the API down first.
func TestHoldUntilSeenInitialOutage(t *testing.T) {
	sc, err := ParseScenario("late", []byte("steps: [{at: 0s}, {at: 1s, rest: up, cluster: {status: ready}}]\n"))
	require.NoError(t, err)
	s := startSimWith(t, Config{Scenario: sc, Speed: 1000, HoldUntilSeen: true})
	c := watcher(t, s)
	time.Sleep(100 * time.Millisecond)
	_, err = c.ListInfraEnvs(context.Background())
	require.Error(t, err, "the first request finds the API down")
	assert.NotContains(t, err.Error(), "refused", "the listener stays open so the outage can be seen")
	require.Eventually(t, func() bool { _, err := c.ListInfraEnvs(context.Background()); return err == nil }, 2*time.Second, 5*time.Millisecond)
}

// An outage still lasts its scaled length after the hold: the hold shifts
// later steps, it does not shorten them. The client looks late, after the
// outage was due: the API up with nothing in it is still served first, and
// the outage then lasts 300 ms from when it began. The times are the
// simulator's own (its step log), not when the client happened to notice.
func TestHoldUntilSeenKeepsGaps(t *testing.T) {
	sc, err := ParseScenario("gap", []byte("steps: [{at: 0s, rest: up}, {at: 1s, rest: down}, {at: 4s, rest: up}]\n"))
	require.NoError(t, err)
	steps := &stepLog{}
	s := startSimWith(t, Config{Scenario: sc, Speed: 10, HoldUntilSeen: true, Log: slog.New(steps)})
	c := watcher(t, s)
	time.Sleep(200 * time.Millisecond) // the outage is due 100 ms in
	looked := time.Now()
	up := func() bool { _, err := c.ListInfraEnvs(context.Background()); return err == nil }
	// Each state comes (the holds see to it); the bounds only end a wait
	// that would never end, and a core shared with six busy loops needed
	// more than 2 s for one (2 runs of 10).
	require.Eventually(t, up, 10*time.Second, 2*time.Millisecond, "the API up with nothing in it is seen first")
	require.Eventually(t, func() bool { return !up() }, 10*time.Second, 2*time.Millisecond)
	require.Eventually(t, up, 10*time.Second, 2*time.Millisecond)
	at := steps.applied()
	require.Len(t, at, 3, "every step applied once")
	assert.True(t, at[1].After(looked), "the outage waited for the client to see the API up")
	assert.GreaterOrEqual(t, at[2].Sub(at[1]), 300*time.Millisecond, "3 scenario seconds at speed 10 is 300 ms")
}

// stepLog is a slog.Handler that keeps when the simulator applied each
// step (its "scenario step" records), in order.
type stepLog struct {
	mu sync.Mutex
	at []time.Time
}

func (l *stepLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *stepLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *stepLog) WithGroup(string) slog.Handler            { return l }
func (l *stepLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "scenario step" {
		l.mu.Lock()
		l.at = append(l.at, r.Time)
		l.mu.Unlock()
	}
	return nil
}

func (l *stepLog) applied() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.at...)
}

// With HoldUntilSeen the port of an API that is down stays taken, so a
// process beside this one cannot bind it before the API comes up.
func TestHoldUntilSeenKeepsPorts(t *testing.T) {
	sc, err := ParseScenario("later", []byte("steps: [{at: 0s, rest: down}, {at: 1h, rest: up, kube: up}]\n"))
	require.NoError(t, err)
	s := startSimWith(t, Config{Scenario: sc, Speed: 1, HoldUntilSeen: true})
	for _, addr := range []string{s.RESTAddr(), s.KubeAddr()} {
		require.Eventually(t, func() bool {
			ln, err := net.Listen("tcp", addr)
			if err == nil {
				_ = ln.Close()
			}
			return err != nil
		}, 2*time.Second, 5*time.Millisecond, addr)
	}
	_, err = watcher(t, s).ListInfraEnvs(context.Background())
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "refused")
}

// A hold is bounded: with no client at all the scenario still plays to
// its end after HoldTimeout per held step.
func TestHoldUntilSeenTimesOut(t *testing.T) {
	sc, err := ParseScenario("hold", []byte(holdScenario))
	require.NoError(t, err)
	s := startSimWith(t, Config{Scenario: sc, Speed: 1000, HoldUntilSeen: true, HoldTimeout: 20 * time.Millisecond})
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.next == len(sc.Steps) && s.st.kubeUp
	}, 2*time.Second, 5*time.Millisecond)
	assert.Equal(t, "down", stage(t, watcher(t, s)))
}

func FuzzParseScenario(f *testing.F) {
	for _, n := range BuiltinNames() {
		b, err := builtin.ReadFile("scenarios/" + n + ".yaml")
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte("steps: [{at: 1}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := ParseScenario("fuzz", data)
		if err != nil {
			return
		}
		require.NotEmpty(t, sc.Steps)
		for i := 1; i < len(sc.Steps); i++ {
			assert.GreaterOrEqual(t, sc.Steps[i].At, sc.Steps[i-1].At)
		}
	})
}
