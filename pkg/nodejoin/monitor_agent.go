package nodejoin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// AgentAPI is what the monitor reads of a host's own assisted-service:
// the add-nodes ISO runs one on every host, which imports the installed
// cluster and installs that host alone (upstream: oc adm node-image
// monitor reads the same, with the ISO's watcher token).
type AgentAPI interface {
	ListClusters(ctx context.Context) ([]rendezvous.Cluster, error)
	GetCluster(ctx context.Context, id string) (*rendezvous.Cluster, error)
}

// AgentStatus is a host as its own assisted-service says.
type AgentStatus struct {
	// Status and StatusInfo are the host's (known, installing,
	// installing-in-progress, added-to-existing-cluster, error, ...).
	Status     string `json:"status"`
	StatusInfo string `json:"statusInfo,omitempty"`
	Stage      string `json:"stage,omitempty"`
	Percent    int64  `json:"percent,omitempty"`
	// FailingValidations are the validations that hold the host back.
	FailingValidations []string `json:"failingValidations,omitempty"`
	// Gone is set once the API stopped answering after it had answered:
	// the host rebooted into the installed system.
	Gone bool `json:"gone,omitempty"`
}

// HostFailedError is a host whose own assisted-service says its
// installation failed.
type HostFailedError struct {
	Host, IP, Status, Info string
}

func (e *HostFailedError) Error() string {
	return fmt.Sprintf("host %s (%s): its installation failed: %s: %s", e.Host, e.IP, e.Status, e.Info)
}

// agentWatch is the monitor's state of one host's API.
type agentWatch struct {
	api     AgentAPI
	err     error  // the API could not be made (bad address)
	seen    bool   // answered at least once
	lastErr string // the last error said, said once
	status  string
	failing map[string]string // validation id -> message
	rows    []rendezvous.HostRow
}

// pollAgents asks each host that is not yet a node its own assisted-service.
func (m *monitor) pollAgents(ctx context.Context) error {
	if m.o.Agent == nil {
		return nil
	}
	for _, h := range m.rep.Hosts {
		if h.Node {
			continue
		}
		w := m.agents[h.IP]
		if w == nil {
			w = &agentWatch{failing: map[string]string{}}
			w.api, w.err = m.o.Agent(h.IP)
			m.agents[h.IP] = w
		}
		if w.err != nil {
			return fmt.Errorf("host %s: %w", h.IP, w.err)
		}
		if err := m.pollAgent(ctx, h, w); err != nil {
			return err
		}
	}
	return nil
}

func (m *monitor) pollAgent(ctx context.Context, h *HostStatus, w *agentWatch) error {
	who := h.IP
	if h.Name != "" {
		who = h.Name + " (" + h.IP + ")"
	}
	c, err := m.agentCluster(ctx, w)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		var se *rendezvous.StatusError
		if errors.As(err, &se) && se.StatusCode == 401 {
			// Said at once and kept: the token will not start working.
			return fmt.Errorf("host %s: its assisted-service refuses the watcher token (%s): no watcher token in --dir is the one of the ISO this host booted (an ISO built in another directory?), or it expired: %w",
				who, se.Message, err)
		}
		switch {
		case w.seen && h.Agent != nil && !h.Agent.Gone:
			h.Agent.Gone = true
			m.log(slog.LevelInfo, fmt.Sprintf("Host %s: its assisted-service stopped answering: the host is rebooting into the installed system", who))
		case !w.seen && w.lastErr != err.Error():
			w.lastErr = err.Error()
			m.log(slog.LevelDebug, fmt.Sprintf("Host %s: its assisted-service does not answer yet: %v", who, err))
		}
		return nil
	}
	if !w.seen {
		w.seen = true
		m.log(slog.LevelInfo, fmt.Sprintf("Host %s: its assisted-service answers", who))
	}
	if c == nil {
		h.Agent = &AgentStatus{Status: "importing the cluster"}
		w.rows = nil
		return nil
	}
	if len(c.Hosts) == 0 {
		h.Agent = &AgentStatus{Status: "not registered yet"}
		w.rows = nil
		return nil
	}
	// The host's service knows this host only.
	sh := c.Hosts[0]
	if h.Name == "" && sh.RequestedHostname != "" {
		h.Name, h.NameFrom = sh.RequestedHostname, NameFromHost
		who = h.Name + " (" + h.IP + ")"
	}
	st := &AgentStatus{Status: sh.Status, StatusInfo: sh.StatusInfo}
	if p := sh.Progress; p != nil {
		st.Stage, st.Percent = p.CurrentStage, p.InstallationPercentage
	}
	w.rows = rendezvous.HostRows(c)
	if sh.Status != w.status {
		w.status = sh.Status
		msg := fmt.Sprintf("Host %s: %s", who, sh.Status)
		if sh.StatusInfo != "" {
			msg += ": " + sh.StatusInfo
		}
		m.log(slog.LevelInfo, msg)
	}
	vs, err := rendezvous.ParseValidations(sh.ValidationsInfo)
	if err != nil {
		m.log(slog.LevelDebug, fmt.Sprintf("Host %s: validations: %v", who, err))
	}
	now := map[string]string{}
	for _, v := range vs {
		if v.Status != rendezvous.ValidationFailure && v.Status != rendezvous.ValidationError {
			continue
		}
		now[v.ID] = v.Message
		st.FailingValidations = append(st.FailingValidations, v.ID+": "+v.Message)
		if w.failing[v.ID] != v.Message {
			msg := fmt.Sprintf("Host %s validation: %s", who, v.Message)
			if hint := rendezvous.Hint(v.ID); hint != "" {
				msg += " (hint: " + hint + ")"
			}
			m.log(slog.LevelWarn, msg)
		}
	}
	for id, msg := range w.failing {
		if _, still := now[id]; !still {
			m.log(slog.LevelInfo, fmt.Sprintf("Host %s validation passes now: %s (was: %s)", who, id, msg))
		}
	}
	w.failing = now
	sort.Strings(st.FailingValidations)
	h.Agent = st
	if sh.Status == "error" || sh.Status == "cancelled" {
		return &HostFailedError{Host: h.Name, IP: h.IP, Status: sh.Status, Info: sh.StatusInfo}
	}
	return nil
}

// agentCluster is the one cluster of a host's service with its hosts; nil
// before the import.
func (m *monitor) agentCluster(ctx context.Context, w *agentWatch) (*rendezvous.Cluster, error) {
	cs, err := w.api.ListClusters(ctx)
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	return w.api.GetCluster(ctx, cs[0].ID)
}

// table reports the host table: a node's row says so; a host that is not
// yet one shows its service's row, or why there is none.
func (m *monitor) table() {
	var rows []rendezvous.HostRow
	for _, h := range m.rep.Hosts {
		name := h.Name
		if name == "" {
			name = h.IP
		}
		w := m.agents[h.IP]
		switch {
		case h.Node && h.Ready:
			rows = append(rows, rendezvous.HostRow{Name: name, Role: h.Role, Status: "node, Ready"})
		case h.Node:
			rows = append(rows, rendezvous.HostRow{Name: name, Role: h.Role, Status: "node, not Ready yet"})
		case len(h.Pending) > 0:
			rows = append(rows, rendezvous.HostRow{Name: name, Role: h.Role, Status: "waiting for CSR approval: " + strings.Join(h.Pending, ", ")})
		case h.Agent != nil && h.Agent.Gone:
			rows = append(rows, rendezvous.HostRow{Name: name, Role: h.Role, Status: "rebooted: joining the cluster"})
		case w != nil && len(w.rows) > 0:
			rows = append(rows, w.rows...)
		case h.Agent != nil:
			rows = append(rows, rendezvous.HostRow{Name: name, Role: h.Role, Status: h.Agent.Status})
		case m.o.Agent != nil:
			rows = append(rows, rendezvous.HostRow{Name: name, Role: h.Role, Status: "assisted-service not answering yet"})
		default:
			rows = append(rows, rendezvous.HostRow{Name: name, Role: h.Role, Status: "not a node yet"})
		}
	}
	m.o.Reporter.Hosts(rows)
}
