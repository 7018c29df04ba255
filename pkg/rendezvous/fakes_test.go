package rendezvous

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/seed-a052040e/agentiso/internal/console"
)

// fakeClock advances instantly: After(d) moves time forward by d.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.sleeps = append(c.sleeps, d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

type logLine struct {
	level slog.Level
	msg   string
}

type recordReporter struct {
	lines   []logLine
	rows    [][]HostRow
	results []string
	stale   []string
	closed  int
}

func (r *recordReporter) Log(l slog.Level, msg string) { r.lines = append(r.lines, logLine{l, msg}) }
func (r *recordReporter) Hosts(rows []HostRow)         { r.rows = append(r.rows, rows) }
func (r *recordReporter) Stale(note string)            { r.stale = append(r.stale, note) }
func (r *recordReporter) Close(bool)                   { r.closed++ }

// Result is recorded as an INFO line too: what a person reads.
func (r *recordReporter) Result(msg string) {
	r.results = append(r.results, msg)
	r.lines = append(r.lines, logLine{slog.LevelInfo, msg})
}

func (r *recordReporter) count(msg string) int {
	n := 0
	for _, l := range r.lines {
		if strings.Contains(l.msg, msg) {
			n++
		}
	}
	return n
}

func (r *recordReporter) level(msg string) (slog.Level, bool) {
	for _, l := range r.lines {
		if strings.Contains(l.msg, msg) {
			return l.level, true
		}
	}
	return 0, false
}

// index returns the position of the first line containing msg, or -1.
func (r *recordReporter) index(msg string) int {
	for i, l := range r.lines {
		if strings.Contains(l.msg, msg) {
			return i
		}
	}
	return -1
}

func (r *recordReporter) String() string {
	var b strings.Builder
	for _, l := range r.lines {
		fmt.Fprintf(&b, "%s %s\n", console.LevelName(l.level), l.msg)
	}
	return b.String()
}

// world is a fake REST + Kube API whose state follows a timeline keyed by
// the time elapsed on the fake clock.
type world struct {
	clock *fakeClock
	start time.Time
	steps []step
	next  int

	restUp, kubeUp bool
	// restErr, when set, is what the REST API answers while it is not
	// up (else errRefused).
	restErr   error
	infraEnvs []InfraEnv
	clusters  []Cluster
	cluster   Cluster
	events    []Event
	bootstrap string
	cv        ClusterVersion
	route     Route
	operators []ClusterOperator
	restCalls int
	// eventsLatency[i] is how long the i-th ListEvents call takes on the clock.
	eventsLatency []time.Duration
	eventsCalls   int
}

type step struct {
	at time.Duration
	do func(w *world)
}

var errRefused = errors.New("dial tcp 192.0.2.1:8090: connect: connection refused")

func newWorld(c *fakeClock, steps ...step) *world {
	return &world{clock: c, start: c.Now(), steps: steps}
}

func (w *world) advance() {
	el := w.clock.Now().Sub(w.start)
	for w.next < len(w.steps) && w.steps[w.next].at <= el {
		w.steps[w.next].do(w)
		w.next++
	}
}

func (w *world) ListInfraEnvs(context.Context) ([]InfraEnv, error) {
	w.advance()
	w.restCalls++
	if !w.restUp {
		if w.restErr != nil {
			return nil, w.restErr
		}
		return nil, errRefused
	}
	return w.infraEnvs, nil
}

func (w *world) ListClusters(context.Context) ([]Cluster, error) {
	if !w.restUp {
		return nil, errRefused
	}
	return w.clusters, nil
}

func (w *world) GetCluster(_ context.Context, id string) (*Cluster, error) {
	if !w.restUp {
		return nil, errRefused
	}
	c := w.cluster
	c.ID = id
	return &c, nil
}

func (w *world) ListEvents(_ context.Context, id string) ([]Event, error) {
	if !w.restUp {
		return nil, errRefused
	}
	if w.eventsCalls < len(w.eventsLatency) {
		w.clock.mu.Lock()
		w.clock.now = w.clock.now.Add(w.eventsLatency[w.eventsCalls])
		w.clock.mu.Unlock()
	}
	w.eventsCalls++
	return w.events, nil
}

func (w *world) Version(context.Context) (*VersionInfo, error) {
	w.advance()
	if !w.kubeUp {
		return nil, errors.New("dial tcp 192.0.2.1:6443: connect: connection refused")
	}
	return &VersionInfo{GitVersion: "v1.33.0"}, nil
}

func (w *world) ConfigMap(_ context.Context, ns, name string) (*ConfigMap, error) {
	if !w.kubeUp {
		return nil, errRefused
	}
	if w.bootstrap == "" {
		return nil, &StatusError{Method: "GET", URL: name, StatusCode: 404, Message: "not found"}
	}
	return &ConfigMap{Data: map[string]string{"status": w.bootstrap}}, nil
}

func (w *world) ClusterVersion(context.Context) (*ClusterVersion, error) {
	w.advance()
	if !w.kubeUp {
		return nil, errRefused
	}
	cv := w.cv
	return &cv, nil
}

func (w *world) ConsoleRoute(context.Context) (*Route, error) {
	if !w.kubeUp {
		return nil, errRefused
	}
	r := w.route
	return &r, nil
}

func (w *world) ClusterOperators(context.Context) ([]ClusterOperator, error) {
	if !w.kubeUp {
		return nil, errRefused
	}
	return w.operators, nil
}

// helpers to change state

func restUp(w *world) {
	w.restUp = true
	w.infraEnvs = []InfraEnv{{Kind: "InfraEnv", ID: "ie-1", Name: "ie", Type: "full-iso"}}
	w.clusters = []Cluster{{Kind: "Cluster", ID: "c-1", Status: ClusterInsufficient}}
}

func status(s string, hosts ...Host) func(*world) {
	return func(w *world) {
		w.cluster.Status = s
		if hosts != nil {
			w.cluster.Hosts = hosts
		}
	}
}

func cvConds(avail, failing, progressing, msg, rv string) func(*world) {
	return func(w *world) {
		w.cv = ClusterVersion{}
		w.cv.Metadata.ResourceVersion = rv
		w.cv.Status.Conditions = []Condition{
			{Type: "Available", Status: avail},
			{Type: "Failing", Status: failing},
			{Type: "Progressing", Status: progressing, Message: msg},
		}
	}
}

func admittedRoute(w *world) {
	w.route = Route{}
	w.route.Status.Ingress = append(w.route.Status.Ingress, struct {
		Host       string      `json:"host"`
		Conditions []Condition `json:"conditions,omitempty"`
	}{Host: "console-openshift-console.apps.ocp.example.com", Conditions: []Condition{{Type: "Admitted", Status: "True"}}})
}

func newTestWaiter(w *world, c *fakeClock, r *recordReporter, mod ...func(*Options)) *Waiter {
	o := Options{REST: w, Kube: w, Reporter: r, Clock: c, KubeconfigPath: "/d/auth/kubeconfig", PasswordPath: "/d/auth/kubeadmin-password"}
	for _, m := range mod {
		m(&o)
	}
	return NewWaiter(o)
}
