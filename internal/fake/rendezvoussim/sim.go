package rendezvoussim

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/credentials"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// Config configures a Simulator.
type Config struct {
	Scenario *Scenario
	// Speed divides scenario time: 60 plays one scenario minute per second. <= 0 means 1.
	Speed float64
	// PublicKey checks the JWTs, like assisted-service's EC_PUBLIC_KEY_PEM.
	PublicKey *ecdsa.PublicKey
	// RESTAddr and KubeAddr are the listen addresses (host:port; port 0 picks one).
	RESTAddr string
	KubeAddr string
	// KubeServerCert is the TLS certificate of the fake API server; it must
	// chain to a CA in the kubeconfig's certificate-authority-data.
	KubeServerCert tls.Certificate
	// ClientCAs verify client certificates (the admin-kubeconfig signer).
	ClientCAs *x509.CertPool
	// ClusterName and BaseDomain make the console URL.
	ClusterName, BaseDomain string
	Log                     *slog.Logger
	// HoldUntilSeen keeps the scenario from skipping REST states when the
	// machine is slow: a step is not applied before every REST state of
	// the steps before it has been served to a client at least once (see
	// holdKinds). Scenario time is then the later of the scaled wall time
	// and the time the earlier states were seen; later steps keep their
	// spacing, so an outage still lasts its scaled length. With it both
	// listeners stay open for the whole run, and while the scenario says
	// "down" a request has its connection reset: that is how the simulator
	// sees that a client looked, and no other process can take the port of
	// an API that is down (a test running beside this one). Only the REST
	// API is held: Kubernetes states and the timing of steps that change
	// nothing visible are as without it.
	HoldUntilSeen bool
	// HoldTimeout bounds one hold, for a client that stops reading what a
	// step changed (wait-for stops polling REST after bootstrap). <= 0 means
	// DefaultHoldTimeout.
	HoldTimeout time.Duration
}

// DefaultHoldTimeout is how long, at most, HoldUntilSeen holds one step.
const DefaultHoldTimeout = 10 * time.Second

// WaitTimeout is the wait-for --timeout to play sc with at speed with
// HoldUntilSeen (and DefaultHoldTimeout): the scenario's Expect.Timeout
// when it sets one (a timeout is then what it plays), else wait-for's
// longer default phase timeout plus the most the holds can delay the
// scenario. wait-for's deadlines run on its own clock, wall time scaled,
// and the scenario falls behind that clock by every hold: on a loaded
// machine, where holds are long, a scenario that ends well within the
// default timeouts at its nominal pace can reach them (ha-happy's bootstrap
// at 28 minutes against the 60-minute default is 6.4 s of wall time at
// speed 300). With this timeout only a wait-for that never ends meets it.
func WaitTimeout(sc *Scenario, speed float64) time.Duration {
	if sc.Expect.Timeout != 0 {
		return time.Duration(sc.Expect.Timeout)
	}
	holds := time.Duration(float64(time.Duration(len(sc.Steps))*DefaultHoldTimeout) * speed)
	return rendezvous.DefaultInstallTimeout + holds
}

// holdKinds are the REST observations a step may wait for.
type holdKinds uint8

const (
	seeCluster holdKinds = 1 << iota // GET /clusters or /clusters/{id}
	seeHosts                         // the same with hosts, or GET /infra-envs/{id}/hosts
	seeEvents                        // GET /events
	seeDown                          // a request refused because the API is down
	seeUp                            // any request answered because the API is up
)

// Request records one REST request: which credential headers it carried and the answer.
type Request struct {
	Method, Path string
	AuthHeaders  []string
	Status       int
}

// Simulator serves the REST and Kubernetes APIs following a scenario.
type Simulator struct {
	cfg   Config
	log   *slog.Logger
	start time.Time

	mu       sync.Mutex
	next     int
	st       state
	requests []Request
	// With HoldUntilSeen: what the last applied step still waits to have
	// served, how far (wall time) later steps have been pushed back, and a
	// wake-up for Run when a hold ends.
	pending holdKinds
	shift   time.Duration
	wake    chan struct{}

	restAddr, kubeAddr string
	restSrv, kubeSrv   *http.Server
}

type hostState struct {
	h    rendezvous.Host
	vals []rendezvous.Validation
}

type state struct {
	restUp, kubeUp bool
	registered     bool
	cluster        rendezvous.Cluster
	clusterVals    []rendezvous.Validation
	hosts          []*hostState
	events         []rendezvous.Event
	bootstrap      string
	cv             *ClusterVersionPatch
	cvRV           int
	console        bool
	operators      []OperatorSpec
}

// Fixed ids of the simulated objects.
const (
	InfraEnvID = "6a3f9b2e-1c4d-4e5f-8a9b-0c1d2e3f4a5b"
	ClusterID  = "0d8c7b6a-5f4e-4d3c-9b2a-1f0e9d8c7b6a"
)

// New checks cfg and returns a simulator; call Run to serve.
func New(cfg Config) (*Simulator, error) {
	if cfg.Scenario == nil {
		return nil, errors.New("simulator: no scenario")
	}
	if cfg.PublicKey == nil {
		return nil, errors.New("simulator: no public key to check tokens with")
	}
	if cfg.Speed <= 0 {
		cfg.Speed = 1
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.HoldTimeout <= 0 {
		cfg.HoldTimeout = DefaultHoldTimeout
	}
	s := &Simulator{cfg: cfg, log: cfg.Log, start: time.Now(), wake: make(chan struct{}, 1)}
	s.st.cluster = rendezvous.Cluster{Kind: "Cluster", ID: ClusterID, Href: "/api/assisted-install/v2/clusters/" + ClusterID,
		Name: cfg.ClusterName, BaseDNSDomain: cfg.BaseDomain}
	var err error
	if s.restAddr, err = reserve(cfg.RESTAddr); err != nil {
		return nil, fmt.Errorf("simulator REST address: %w", err)
	}
	if cfg.KubeAddr != "" {
		if s.kubeAddr, err = reserve(cfg.KubeAddr); err != nil {
			return nil, fmt.Errorf("simulator Kubernetes address: %w", err)
		}
	}
	return s, nil
}

// reserve resolves port 0 to a free port so the API can go down and come back on the same address.
func reserve(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if port != "0" {
		return addr, nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	a := ln.Addr().String()
	return a, ln.Close()
}

// RESTAddr and KubeAddr are the resolved listen addresses.
func (s *Simulator) RESTAddr() string { return s.restAddr }

// KubeAddr is the resolved Kubernetes API address.
func (s *Simulator) KubeAddr() string { return s.kubeAddr }

// Requests returns the REST requests seen so far.
func (s *Simulator) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// scenarioTime maps a scenario offset to the reported wall time.
func (s *Simulator) scenarioTime(at Duration) time.Time { return s.start.Add(time.Duration(at)) }

// scenarioNowLocked is the scenario time of the wall clock's now: the
// inverse of due.
func (s *Simulator) scenarioNowLocked() time.Time {
	return s.scenarioTime(Duration(float64(time.Since(s.start)-s.shift) * s.cfg.Speed))
}

// Run plays the scenario and serves until ctx is done. After the last step
// the final state is served until ctx is cancelled. The state is also
// brought up to date on every request, so a late timer never serves a stale step.
func (s *Simulator) Run(ctx context.Context) error {
	s.mu.Lock()
	s.start = time.Now()
	s.mu.Unlock()
	defer s.setREST(false)
	defer s.setKube(false)
	for {
		s.mu.Lock()
		s.catchUpLocked()
		restUp, kubeUp := s.st.restUp, s.st.kubeUp
		done := s.next >= len(s.cfg.Scenario.Steps)
		var wakeAt time.Time
		if !done {
			wakeAt = s.due(s.cfg.Scenario.Steps[s.next])
			if !wakeAt.After(time.Now()) { // held
				wakeAt = wakeAt.Add(s.cfg.HoldTimeout)
			}
		}
		s.mu.Unlock()
		// With HoldUntilSeen the listeners stay open so that requests
		// during an outage are seen (and reset by gate) and their ports
		// are not taken by another process meanwhile.
		if err := s.setREST(restUp || s.cfg.HoldUntilSeen); err != nil {
			return err
		}
		if err := s.setKube(kubeUp || s.cfg.HoldUntilSeen); err != nil {
			return err
		}
		if done {
			break
		}
		t := time.NewTimer(time.Until(wakeAt))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		case <-s.wake:
			t.Stop()
		}
	}
	<-ctx.Done()
	return nil
}

// due is the wall time at which st is due, later steps pushed back by holds.
func (s *Simulator) due(st Step) time.Time {
	return s.start.Add(time.Duration(float64(st.At)/s.cfg.Speed) + s.shift)
}

// catchUpLocked applies every step that is due and not held.
func (s *Simulator) catchUpLocked() {
	now := time.Now()
	steps := s.cfg.Scenario.Steps
	for s.next < len(steps) {
		due := s.due(steps[s.next])
		if due.After(now) {
			return
		}
		if s.pending != 0 {
			if now.Sub(due) < s.cfg.HoldTimeout {
				return
			}
			s.log.Debug("scenario hold timed out", "at", time.Duration(steps[s.next].At).String(), "unseen", int(s.pending))
		}
		if s.cfg.HoldUntilSeen {
			// The step applies now: push it and the later ones back.
			s.shift += now.Sub(due)
		}
		s.applyLocked(steps[s.next])
		s.next++
		s.log.Debug("scenario step", "at", time.Duration(steps[s.next-1].At).String(), "rest", s.st.restUp, "kube", s.st.kubeUp)
	}
}

// seenLocked records that a client was served what kinds show; when
// nothing is left to see, Run is woken to apply the next step.
func (s *Simulator) seenLocked(kinds holdKinds) {
	if s.pending == 0 {
		return
	}
	s.pending &^= kinds
	if s.pending == 0 {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// holdFor is what a client must be served after st is applied before the
// next step may apply: what st changed that the REST API shows, everything
// it shows when st brought it up (an answer at all, and what is in it), or
// a refused request when st took it down (or left it down at the start). wasUp is whether the REST API was up
// before st, first whether st is the first step, events how many events
// there were before st.
func (s *Simulator) holdFor(st Step, wasUp, first bool, events int) holdKinds {
	if !s.cfg.HoldUntilSeen {
		return 0
	}
	if !s.st.restUp {
		if wasUp || first {
			return seeDown
		}
		return 0
	}
	var k holdKinds
	if !wasUp {
		// The API answering at all is a state, even with nothing in it
		// yet: a late client must not miss it and find it down again.
		k |= seeUp
	}
	if s.st.registered && (!wasUp || st.Cluster != nil) {
		k |= seeCluster
	}
	if len(s.st.hosts) > 0 && (!wasUp || len(st.Hosts) > 0) {
		k |= seeHosts
	}
	if len(s.st.events) > 0 && (!wasUp || len(s.st.events) > events) {
		k |= seeEvents
	}
	return k
}

// gate answers with a dropped connection when the scenario says the API is
// down but the listener has not been closed yet.
func (s *Simulator) gate(w http.ResponseWriter, kube bool) bool {
	s.mu.Lock()
	s.catchUpLocked()
	up := s.st.restUp
	switch {
	case kube:
		up = s.st.kubeUp
	case up:
		s.seenLocked(seeUp)
	default:
		s.seenLocked(seeDown)
	}
	s.mu.Unlock()
	if up {
		return true
	}
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a reset, the nearest to a refused connection
			}
			_ = c.Close()
			return false
		}
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	return false
}

func (s *Simulator) setREST(up bool) error {
	if up == (s.restSrv != nil) {
		return nil
	}
	if !up {
		_ = s.restSrv.Close()
		s.restSrv = nil
		return nil
	}
	ln, err := listenRetry(s.restAddr)
	if err != nil {
		return fmt.Errorf("simulator REST API: %w", err)
	}
	s.restSrv = &http.Server{Handler: s.RESTHandler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	go func(srv *http.Server) { _ = srv.Serve(ln) }(s.restSrv)
	return nil
}

func (s *Simulator) setKube(up bool) error {
	if s.kubeAddr == "" || up == (s.kubeSrv != nil) {
		return nil
	}
	if !up {
		_ = s.kubeSrv.Close()
		s.kubeSrv = nil
		return nil
	}
	ln, err := listenRetry(s.kubeAddr)
	if err != nil {
		return fmt.Errorf("simulator Kubernetes API: %w", err)
	}
	tl := tls.NewListener(ln, s.KubeTLSConfig())
	s.kubeSrv = &http.Server{Handler: s.KubeHandler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	go func(srv *http.Server) { _ = srv.Serve(tl) }(s.kubeSrv)
	return nil
}

func listenRetry(addr string) (net.Listener, error) {
	var err error
	for range 50 {
		var ln net.Listener
		if ln, err = net.Listen("tcp", addr); err == nil {
			return ln, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, err
}

// KubeTLSConfig requires a client certificate signed by ClientCAs.
func (s *Simulator) KubeTLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{s.cfg.KubeServerCert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    s.cfg.ClientCAs,
	}
}

func hostID(name string) string {
	h := sha256.Sum256([]byte(name))
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

func mergeValidations(cur []rendezvous.Validation, patch []ValidationSpec) []rendezvous.Validation {
	for _, p := range patch {
		v := rendezvous.Validation{ID: p.ID, Status: p.Status, Message: p.Message, Category: p.Category}
		i := slices.IndexFunc(cur, func(c rendezvous.Validation) bool { return c.ID == p.ID })
		if i >= 0 {
			cur[i] = v
		} else {
			cur = append(cur, v)
		}
	}
	return cur
}

// stageOrder gives the host stages per role, used to derive a percentage.
func stageOrder(role string, bootstrap, sno bool) []string {
	switch {
	case sno:
		return []string{"Starting installation", "Installing", "Waiting for bootkube", "Writing image to disk", "Copying registry data to disk", "Rebooting", "Joined", "Done"}
	case bootstrap:
		return []string{"Starting installation", "Installing", "Writing image to disk", "Copying registry data to disk", "Waiting for control plane", "Waiting for bootkube", "Waiting for controller", "Rebooting", "Configuring", "Joined", "Done"}
	case role == "worker":
		return []string{"Starting installation", "Installing", "Writing image to disk", "Waiting for control plane", "Rebooting", "Waiting for ignition", "Configuring", "Joined", "Done"}
	}
	return []string{"Starting installation", "Installing", "Writing image to disk", "Copying registry data to disk", "Rebooting", "Configuring", "Joined", "Done"}
}

// defaultHostStatusInfo is a typical status_info for a host status.
func defaultHostStatusInfo(status string) string {
	switch status {
	case "discovering":
		return "Waiting for host to send hardware details"
	case "known":
		return "Host is ready to be installed"
	case "insufficient":
		return "Host cannot be installed due to failing validations"
	case "preparing-for-installation":
		return "Host is preparing for installation"
	case "preparing-successful":
		return "Host finished successfully to prepare for installation"
	case "installing":
		return "Installation is in progress"
	case "installing-in-progress":
		return "Host is being installed"
	case "installed":
		return "Done"
	case "installing-pending-user-action":
		return "Expected the host to boot from disk, but it booted the installation image - please reboot and fix boot order to boot from disk"
	case "error":
		return "Host failed to install"
	case "cancelled":
		return "Installation was cancelled by user"
	}
	return ""
}

func (s *Simulator) applyLocked(st Step) {
	wasUp, first, events := s.st.restUp, s.next == 0, len(s.st.events)
	defer func() { s.pending = s.holdFor(st, wasUp, first, events) }()
	now := s.scenarioTime(st.At)
	switch st.REST {
	case "up":
		s.st.restUp = true
	case "down":
		s.st.restUp = false
	}
	switch st.Kube {
	case "up":
		s.st.kubeUp = true
	case "down":
		s.st.kubeUp = false
	}
	addEvent := func(sev, msg string, clusterLevel bool) {
		if sev == "" {
			sev = "info"
		}
		e := rendezvous.Event{Severity: sev, Message: msg, EventTime: now, ClusterID: ClusterID, Category: "user"}
		if !clusterLevel {
			e.InfraEnvID = InfraEnvID
		}
		s.st.events = append(s.st.events, e)
	}
	if c := st.Cluster; c != nil {
		if !s.st.registered {
			s.st.registered = true
			addEvent("info", "Successfully registered cluster", true)
		}
		if c.Status != "" && c.Status != s.st.cluster.Status {
			s.st.cluster.Status = c.Status
			t := now
			s.st.cluster.StatusUpdatedAt = &t
			addEvent("info", "Updated status of the cluster to "+c.Status, true)
		}
		if c.StatusInfo != "" {
			s.st.cluster.StatusInfo = c.StatusInfo
		}
		s.st.clusterVals = mergeValidations(s.st.clusterVals, c.Validations)
	}
	sno := false
	for _, hp := range st.Hosts {
		i := slices.IndexFunc(s.st.hosts, func(h *hostState) bool { return h.h.RequestedHostname == hp.Name })
		if i < 0 {
			t := now
			s.st.hosts = append(s.st.hosts, &hostState{h: rendezvous.Host{Kind: "Host", ID: hostID(hp.Name), InfraEnvID: InfraEnvID, ClusterID: ClusterID,
				RequestedHostname: hp.Name, Status: "discovering", StatusInfo: "Waiting for host to send hardware details", StatusUpdatedAt: &t}})
			i = len(s.st.hosts) - 1
		}
		hs := s.st.hosts[i]
		h := &hs.h
		h.Href = "/api/assisted-install/v2/infra-envs/" + InfraEnvID + "/hosts/" + h.ID
		if hp.Role != "" {
			h.Role, h.SuggestedRole = hp.Role, hp.Role
		}
		if hp.Bootstrap != nil {
			h.Bootstrap = *hp.Bootstrap
		}
		if hp.StatusInfo != "" {
			h.StatusInfo = hp.StatusInfo
		} else if hp.Status != "" && hp.Status != h.Status {
			h.StatusInfo = defaultHostStatusInfo(hp.Status)
		}
		if hp.Status != "" && hp.Status != h.Status {
			info := ""
			if h.StatusInfo != "" {
				info = " (" + h.StatusInfo + ")"
			}
			addEvent("info", fmt.Sprintf("Host %s: updated status from %s to %s%s", hp.Name, h.Status, hp.Status, info), false)
			h.Status = hp.Status
			t := now
			h.StatusUpdatedAt = &t
		}
		if hp.Stage != "" {
			if h.Progress == nil {
				h.Progress = &rendezvous.HostProgress{}
			}
			p := h.Progress
			if hp.Stage != p.CurrentStage || hp.ProgressInfo != p.ProgressInfo {
				msg := fmt.Sprintf("Host: %s, reached installation stage %s", hp.Name, hp.Stage)
				if hp.ProgressInfo != "" {
					msg += ": " + hp.ProgressInfo
				}
				addEvent("info", msg, false)
				t := now
				p.StageUpdatedAt = &t
				if hp.Stage != p.CurrentStage {
					p.StageStartedAt = &t
				}
			}
			p.CurrentStage, p.ProgressInfo = hp.Stage, hp.ProgressInfo
			sno = len(s.st.hosts) == 1
			order := stageOrder(h.Role, h.Bootstrap, sno)
			if k := slices.Index(order, hp.Stage); k >= 0 {
				p.InstallationPercentage = int64(100 * (k + 1) / len(order))
			}
		}
		if hp.Percent != nil && h.Progress != nil {
			h.Progress.InstallationPercentage = *hp.Percent
		}
		hs.vals = mergeValidations(hs.vals, hp.Validations)
	}
	for _, e := range st.Events {
		addEvent(e.Severity, e.Message, e.ClusterLevel)
	}
	if st.Bootstrap != "" {
		s.st.bootstrap = st.Bootstrap
	}
	if st.ClusterVersion != nil {
		cv := *st.ClusterVersion
		s.st.cv = &cv
		s.st.cvRV++
	}
	if st.ConsoleAdmitted != nil {
		s.st.console = *st.ConsoleAdmitted
	}
	if st.Operators != nil {
		s.st.operators = slices.Clone(st.Operators)
	}
}

func (s *Simulator) clusterLocked(withHosts bool) rendezvous.Cluster {
	c := s.st.cluster
	c.ValidationsInfo, _ = rendezvous.EncodeValidations(s.st.clusterVals)
	c.TotalHostCount = int64(len(s.st.hosts))
	c.Hosts = nil
	if withHosts {
		c.Hosts = []rendezvous.Host{}
		for _, hs := range s.st.hosts {
			h := hs.h
			if hs.h.Progress != nil {
				p := *hs.h.Progress
				h.Progress = &p
			}
			h.ValidationsInfo, _ = rendezvous.EncodeValidations(hs.vals)
			c.Hosts = append(c.Hosts, h)
		}
	}
	return c
}

func clusterKinds(withHosts bool) holdKinds {
	if withHosts {
		return seeCluster | seeHosts
	}
	return seeCluster
}

// WriteJSON answers with code and v as JSON, as assisted-service does.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func schemeHeader(scheme string) string {
	switch scheme {
	case credentials.SchemeAgent:
		return "X-Secret-Key"
	case credentials.SchemeUser:
		return "Authorization"
	case credentials.SchemeWatcher:
		return rendezvous.WatcherHeader
	}
	return ""
}

// Authorize applies assisted-service's local authenticator: the first
// scheme of the route whose header is present is used; a bad token is 401,
// a missing or non-string auth_scheme is 500, and a token whose auth_scheme
// differs from the matched scheme is 403.
func (s *Simulator) Authorize(w http.ResponseWriter, r *http.Request, schemes ...string) bool {
	return authorize(w, r, s.cfg.PublicKey, schemes...)
}

// authorize is Simulator.Authorize with the public key pub.
func authorize(w http.ResponseWriter, r *http.Request, pub *ecdsa.PublicKey, schemes ...string) bool {
	for _, sch := range schemes {
		tok := r.Header.Get(schemeHeader(sch))
		if tok == "" {
			continue
		}
		claims, err := credentials.VerifyAt(tok, pub, time.Now())
		if errors.Is(err, credentials.ErrExpired) {
			WriteJSON(w, 401, rendezvous.InfraError{Code: 401, Message: "The provided authentication token has expired. Please generate a new token and try again."})
			return false
		}
		if err != nil {
			WriteJSON(w, 401, rendezvous.InfraError{Code: 401, Message: "Unauthorized: " + err.Error()})
			return false
		}
		claim, ok := claims.AuthScheme()
		if !ok {
			WriteJSON(w, 500, rendezvous.InfraError{Code: 500, Message: "malformed auth_scheme claim"})
			return false
		}
		if claim != sch {
			WriteJSON(w, 403, rendezvous.InfraError{Code: 403, Message: fmt.Sprintf("authClaim %s is unauthorized to access", claim)})
			return false
		}
		return true
	}
	WriteJSON(w, 401, rendezvous.InfraError{Code: 401, Message: "unauthenticated for invalid credentials"})
	return false
}

// StatusRecorder remembers the status code a handler answered with.
type StatusRecorder struct {
	http.ResponseWriter
	Code int
}

func (s *StatusRecorder) WriteHeader(c int) { s.Code = c; s.ResponseWriter.WriteHeader(c) }

// RESTHandler serves the assisted-service v2 subset wait-for uses.
func (s *Simulator) RESTHandler() http.Handler {
	const base = "/api/assisted-install/v2"
	u, a, wa := credentials.SchemeUser, credentials.SchemeAgent, credentials.SchemeWatcher
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+base+"/infra-envs", func(w http.ResponseWriter, r *http.Request) {
		if !s.Authorize(w, r, u, wa) {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		out := []rendezvous.InfraEnv{}
		if s.st.registered {
			t := s.start
			out = append(out, rendezvous.InfraEnv{Kind: "InfraEnv", ID: InfraEnvID, Href: base + "/infra-envs/" + InfraEnvID,
				Name: s.cfg.ClusterName + "_infra-env", Type: "full-iso", ClusterID: ClusterID, CreatedAt: t, UpdatedAt: t})
		}
		WriteJSON(w, 200, out)
	})
	mux.HandleFunc("GET "+base+"/clusters", func(w http.ResponseWriter, r *http.Request) {
		if !s.Authorize(w, r, u, wa) {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		out := []rendezvous.Cluster{}
		if s.st.registered {
			withHosts := r.URL.Query().Get("with_hosts") == "true"
			out = append(out, s.clusterLocked(withHosts))
			s.seenLocked(clusterKinds(withHosts))
		}
		WriteJSON(w, 200, out)
	})
	mux.HandleFunc("GET "+base+"/clusters/{id}", func(w http.ResponseWriter, r *http.Request) {
		if !s.Authorize(w, r, u, a, wa) {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.st.registered || r.PathValue("id") != ClusterID {
			WriteJSON(w, 404, rendezvous.APIError{Kind: "Error", ID: 404, Href: r.URL.Path, Code: "404", Reason: "cluster " + r.PathValue("id") + " can not be found"})
			return
		}
		withHosts := r.URL.Query().Get("exclude-hosts") != "true"
		// The Date of the answer is on the scenario's clock, as its
		// timestamps are: wait-for measures host ages on it.
		w.Header().Set("Date", s.scenarioNowLocked().UTC().Format(http.TimeFormat))
		WriteJSON(w, 200, s.clusterLocked(withHosts))
		s.seenLocked(clusterKinds(withHosts))
	})
	mux.HandleFunc("GET "+base+"/infra-envs/{id}/hosts", func(w http.ResponseWriter, r *http.Request) {
		if !s.Authorize(w, r, u, a) {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		WriteJSON(w, 200, s.clusterLocked(true).Hosts)
		s.seenLocked(seeHosts)
	})
	mux.HandleFunc("GET "+base+"/events", func(w http.ResponseWriter, r *http.Request) {
		if !s.Authorize(w, r, u, wa) {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		WriteJSON(w, 200, queryEvents(s.st.events, r.URL.Query()))
		s.seenLocked(seeEvents)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var hdrs []string
		for _, h := range []string{"X-Secret-Key", "Authorization", rendezvous.WatcherHeader, "Image-Token"} {
			if r.Header.Get(h) != "" {
				hdrs = append(hdrs, h)
			}
		}
		if r.URL.Query().Get("api_key") != "" {
			hdrs = append(hdrs, "api_key")
		}
		if !s.gate(w, false) {
			return
		}
		rec := &StatusRecorder{ResponseWriter: w, Code: 200}
		mux.ServeHTTP(rec, r)
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, AuthHeaders: hdrs, Status: rec.Code})
		s.mu.Unlock()
	})
}

func kubeStatus(w http.ResponseWriter, code int, reason, msg string) {
	WriteJSON(w, code, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "message": msg, "code": code})
}

func cond(t string, b bool, reason, msg string) rendezvous.Condition {
	s := "False"
	if b {
		s = "True"
	}
	return rendezvous.Condition{Type: t, Status: s, Reason: reason, Message: msg}
}

// KubeHandler serves the Kubernetes/OpenShift reads wait-for makes. Callers
// must present a client certificate of the system:masters group.
func (s *Simulator) KubeHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, 200, rendezvous.VersionInfo{Major: "1", Minor: "33", GitVersion: "v1.33.5"})
	})
	mux.HandleFunc("GET /api/v1/namespaces/kube-system/configmaps/bootstrap", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.st.bootstrap == "" {
			kubeStatus(w, 404, "NotFound", `configmaps "bootstrap" not found`)
			return
		}
		WriteJSON(w, 200, rendezvous.ConfigMap{APIVersion: "v1", Kind: "ConfigMap",
			Metadata: rendezvous.ObjectMeta{Name: "bootstrap", Namespace: "kube-system"}, Data: map[string]string{"status": s.st.bootstrap}})
	})
	mux.HandleFunc("GET /apis/config.openshift.io/v1/clusterversions/version", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.st.cv == nil {
			kubeStatus(w, 404, "NotFound", `clusterversions.config.openshift.io "version" not found`)
			return
		}
		cv := rendezvous.ClusterVersion{APIVersion: "config.openshift.io/v1", Kind: "ClusterVersion",
			Metadata: rendezvous.ObjectMeta{Name: "version", ResourceVersion: fmt.Sprint(s.st.cvRV)}}
		p := s.st.cv
		msg := p.Message
		cv.Status.Conditions = []rendezvous.Condition{
			cond("Available", p.Available, "", ""),
			cond("Failing", p.Failing, "", failingMsg(p)),
			cond("Progressing", p.Progressing, "", msg),
		}
		WriteJSON(w, 200, cv)
	})
	mux.HandleFunc("GET /apis/route.openshift.io/v1/namespaces/openshift-console/routes/console", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.st.console {
			kubeStatus(w, 404, "NotFound", `routes.route.openshift.io "console" not found`)
			return
		}
		host := "console-openshift-console.apps." + s.cfg.ClusterName + "." + strings.TrimSuffix(s.cfg.BaseDomain, ".")
		WriteJSON(w, 200, map[string]any{
			"metadata": map[string]any{"name": "console", "namespace": "openshift-console"},
			"spec":     map[string]any{"host": host},
			"status": map[string]any{"ingress": []any{map[string]any{
				"host": host, "routerName": "default",
				"conditions": []any{map[string]any{"type": "Admitted", "status": "True"}},
			}}},
		})
	})
	mux.HandleFunc("GET /apis/config.openshift.io/v1/clusteroperators", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		items := []rendezvous.ClusterOperator{}
		for _, o := range s.st.operators {
			var co rendezvous.ClusterOperator
			co.Metadata.Name = o.Name
			co.Status.Conditions = []rendezvous.Condition{
				cond("Available", o.Available, o.Reason, o.Message),
				cond("Progressing", o.Progressing, o.Reason, o.Message),
				cond("Degraded", o.Degraded, o.Reason, o.Message),
				cond("Upgradeable", true, "", ""),
			}
			items = append(items, co)
		}
		WriteJSON(w, 200, map[string]any{"kind": "ClusterOperatorList", "apiVersion": "config.openshift.io/v1", "items": items})
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.gate(w, true) {
			return
		}
		if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
			kubeStatus(w, 401, "Unauthorized", "Unauthorized")
			return
		}
		if !slices.Contains(r.TLS.PeerCertificates[0].Subject.Organization, "system:masters") {
			kubeStatus(w, 403, "Forbidden", "user "+r.TLS.PeerCertificates[0].Subject.CommonName+" is not in system:masters")
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func failingMsg(p *ClusterVersionPatch) string {
	if p.Failing {
		return p.Message
	}
	return ""
}

// queryEvents answers GET /v2/events: the events matching the query's
// infra_env_id, cluster_id and host_id (each when given), by event time,
// latest first with order=descending.
func queryEvents(events []rendezvous.Event, q url.Values) []rendezvous.Event {
	out := []rendezvous.Event{}
	for _, e := range events {
		if ie := q.Get("infra_env_id"); ie != "" && e.InfraEnvID != ie {
			continue
		}
		if c := q.Get("cluster_id"); c != "" && e.ClusterID != c {
			continue
		}
		if hid := q.Get("host_id"); hid != "" && e.HostID != hid {
			continue
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].EventTime.Before(out[j].EventTime) })
	if q.Get("order") == "descending" {
		slices.Reverse(out)
	}
	return out
}
