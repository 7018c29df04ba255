package nodejoin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
	"github.com/seed-a052040e/agentiso/pkg/kubeapi"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

var rCSRs = kubeapi.Resource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}

// Cluster is the part of the cluster's API the monitor uses.
type Cluster interface {
	API
	Update(ctx context.Context, r kubeapi.Resource, sub string, body, out any) error
}

// MonitorOptions configure Monitor.
type MonitorOptions struct {
	Cluster Cluster
	// IPs are the addresses of the hosts being added.
	IPs []string
	// Names, when known (nodes-config.yaml), map an IP to its host name.
	Names map[string]string
	// Roles map an IP to its host's role (nodes-config.yaml's: master,
	// arbiter); a host without one is a worker.
	Roles map[string]string
	// ApproveCSRs approves the pending CSRs of the hosts being added that
	// pass the approval rules (JudgeCSR); without it they are only shown.
	// A CSR that fails a rule stays pending, and the monitor says which.
	ApproveCSRs bool
	// Interval between polls (0: 10s); Timeout of the whole watch (0: 1h).
	Interval, Timeout time.Duration
	// Resolve names an IP by reverse DNS; nil uses the system resolver,
	// each look-up bounded to 5s.
	Resolve func(ctx context.Context, ip string) string
	// Agent, when set, is the host at ip's own assisted-service (every
	// add-nodes ISO runs one; read with the ISO's watcher token): its
	// status, install stage and failing validations make the host table
	// until the host is a node. Nil: the cluster side only.
	Agent func(ip string) (AgentAPI, error)
	// Reporter gets the messages and the host table; nil discards them.
	Reporter rendezvous.Reporter
}

// HostStatus is one host's state in the report.
type HostStatus struct {
	IP   string `json:"ip"`
	Name string `json:"name,omitempty"`
	// NameFrom says where Name came from (NameSource).
	NameFrom NameSource `json:"nameFrom,omitempty"`
	// Role is the host's role: worker, master or arbiter.
	Role     string   `json:"role"`
	Node     bool     `json:"node"`
	Ready    bool     `json:"ready"`
	Pending  []string `json:"pendingCSRs,omitempty"`
	Approved []string `json:"approvedCSRs,omitempty"`
	// Refused are the pending CSRs for this host that fail an approval
	// rule: never approved by the monitor.
	Refused []RefusedCSR `json:"refusedCSRs,omitempty"`
	// Agent is the host as its own assisted-service last said, nil when
	// it never answered.
	Agent *AgentStatus `json:"agent,omitempty"`
}

// RefusedCSR is a pending CSR the approval rules refuse, and why.
type RefusedCSR struct {
	Name   string `json:"name"`
	Kind   string `json:"kind,omitempty"`
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

// MonitorReport is the outcome (node-image monitor --report).
type MonitorReport struct {
	Hosts []*HostStatus `json:"hosts"`
	// Complete is true when every host is a Ready node.
	Complete bool   `json:"complete"`
	Error    string `json:"error,omitempty"`
}

// The defaults of MonitorOptions' Interval and Timeout.
const (
	DefaultMonitorInterval = 10 * time.Second
	DefaultMonitorTimeout  = time.Hour
)

// Monitor follows the hosts until each is a Ready node of the cluster,
// showing (and with ApproveCSRs approving) their CSRs on the way. The
// report is returned also on error (timeout, interruption).
func Monitor(ctx context.Context, o MonitorOptions) (*MonitorReport, error) {
	if o.Interval <= 0 {
		o.Interval = DefaultMonitorInterval
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultMonitorTimeout
	}
	if o.Reporter == nil {
		o.Reporter = rendezvous.NewPlainReporter(io.Discard, slog.LevelError)
	}
	if o.Resolve == nil {
		o.Resolve = reverseDNS
	}
	rep := &MonitorReport{}
	for _, ip := range o.IPs {
		if !ValidIP(ip) {
			return nil, fmt.Errorf("--ip-addresses: %q is not an IP address", ip)
		}
		role := o.Roles[ip]
		if role == "" {
			role = "worker"
		}
		hs := &HostStatus{IP: ip, Name: o.Names[ip], Role: role}
		if hs.Name != "" {
			hs.NameFrom = NameFromNodesConfig
		}
		rep.Hosts = append(rep.Hosts, hs)
	}
	if len(rep.Hosts) == 0 {
		return nil, fmt.Errorf("--ip-addresses: give the addresses of the hosts being added (nodes-config.yaml in --dir gives them when its hosts have static addresses)")
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	m := &monitor{o: o, rep: rep, shown: map[string]bool{}, agents: map[string]*agentWatch{}}
	for {
		err := m.poll(ctx)
		if err == nil {
			err = m.pollAgents(ctx)
		}
		if err != nil && ctx.Err() == nil {
			rep.Error = err.Error()
			return rep, err
		}
		m.table()
		if rep.Complete {
			return rep, nil
		}
		select {
		case <-ctx.Done():
			var err error = &timeoutError{fmt.Sprintf("after %s, not every host is a Ready node: %s", o.Timeout, m.waitingFor())}
			if ctx.Err() == context.Canceled {
				err = ctx.Err()
			}
			rep.Error = err.Error()
			return rep, err
		case <-time.After(o.Interval):
		}
	}
}

// ErrMonitorTimeout is what Monitor's error Is when the timeout passed
// with a host not yet a Ready node.
var ErrMonitorTimeout = errors.New("timed out")

// timeoutError says which hosts are not Ready nodes; it Is
// ErrMonitorTimeout.
type timeoutError struct{ msg string }

func (e *timeoutError) Error() string        { return e.msg }
func (e *timeoutError) Is(target error) bool { return target == ErrMonitorTimeout }

type monitor struct {
	o      MonitorOptions
	rep    *MonitorReport
	shown  map[string]bool
	agents map[string]*agentWatch
	// nodes are the cluster's Nodes as the last poll listed them.
	nodes []ClusterNode
}

func (m *monitor) log(l slog.Level, msg string) { m.o.Reporter.Log(l, msg) }

func (m *monitor) waitingFor() string {
	var w []string
	for _, h := range m.rep.Hosts {
		if !h.Ready {
			n := h.IP
			if h.Name != "" {
				n = h.Name + " (" + h.IP + ")"
			}
			w = append(w, n)
		}
	}
	return strings.Join(w, ", ")
}

type nodeItem struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Status struct {
		Addresses  []NodeAddress `json:"addresses"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

func (m *monitor) poll(ctx context.Context) error {
	var nodes struct {
		Items []nodeItem `json:"items"`
	}
	if err := getPerm(ctx, m.o.Cluster, rNodes, "the nodes", &nodes); err != nil {
		return err
	}
	m.nodes = m.nodes[:0]
	for _, n := range nodes.Items {
		m.nodes = append(m.nodes, ClusterNode{Name: n.Metadata.Name, Addresses: n.Status.Addresses})
	}
	complete := true
	for _, h := range m.rep.Hosts {
		for _, n := range nodes.Items {
			for _, a := range n.Status.Addresses {
				if a.Type == "InternalIP" && sameIP(a.Address, h.IP) {
					h.Node, h.Name, h.NameFrom = true, n.Metadata.Name, NameFromNode
					for _, c := range n.Status.Conditions {
						if c.Type == "Ready" {
							ready := c.Status == "True"
							if ready && !h.Ready {
								m.log(slog.LevelInfo, fmt.Sprintf("Node %s (%s) is Ready", termsafe.String(h.Name), h.IP))
							}
							h.Ready = ready
						}
					}
				}
			}
		}
		if h.Name == "" {
			if h.Name = m.o.Resolve(ctx, h.IP); h.Name != "" {
				h.NameFrom = NameFromDNS
			}
		}
		complete = complete && h.Ready
	}
	m.rep.Complete = complete
	if complete {
		return nil
	}
	return m.csrs(ctx)
}

func (m *monitor) csrs(ctx context.Context) error {
	var l struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := getPerm(ctx, m.o.Cluster, rCSRs, "the certificate signing requests", &l); err != nil {
		return err
	}
	var joining []JoiningHost
	byIP := map[string]*HostStatus{}
	for _, h := range m.rep.Hosts {
		h.Pending, h.Refused = nil, nil
		joining = append(joining, JoiningHost{Name: h.Name, IP: h.IP, From: h.NameFrom})
		byIP[h.IP] = h
	}
	for _, raw := range l.Items {
		var o csrObject
		if err := json.Unmarshal(raw, &o); err != nil {
			continue
		}
		c, err := parseCSR(o)
		if err != nil || !c.Pending {
			continue
		}
		v := JudgeCSR(c, joining, m.nodes)
		h := byIP[v.Host.IP]
		if h == nil {
			continue
		}
		name, who := termsafe.String(c.Name), termsafe.String(v.Host.Name)+" ("+v.Host.IP+")"
		if !v.Approve {
			h.Refused = append(h.Refused, RefusedCSR{Name: c.Name, Kind: v.Kind, Rule: v.Rule, Reason: v.Reason})
			if !m.shown[c.Name] {
				m.shown[c.Name] = true
				todo := "if you have checked it, approve it by hand: oc adm certificate approve " + termsafe.ShellArg(c.Name)
				if v.Rule != "client/trusted-name" {
					todo = "no joining kubelet asks for this: find who created it, and deny it: oc adm certificate deny " + termsafe.ShellArg(c.Name)
				}
				m.log(slog.LevelWarn, fmt.Sprintf("The %s CSR %s for host %s stays pending: it fails the approval rule %s: %s. agentiso does not approve it; %s",
					v.Kind, name, who, v.Rule, termsafe.String(v.Reason), todo))
			}
			continue
		}
		if !m.o.ApproveCSRs {
			h.Pending = append(h.Pending, c.Name)
			if !m.shown[c.Name] {
				m.shown[c.Name] = true
				m.log(slog.LevelWarn, fmt.Sprintf("The %s CSR %s of node %s is pending and passes the approval rules: approve it (agentiso node-image monitor --approve-csrs, or oc adm certificate approve %s)",
					v.Kind, name, who, termsafe.ShellArg(c.Name)))
			}
			continue
		}
		if err := approve(ctx, m.o.Cluster, raw, c.Name); err != nil {
			return err
		}
		h.Approved = append(h.Approved, c.Name)
		m.log(slog.LevelInfo, fmt.Sprintf("Approved the %s CSR %s of node %s", v.Kind, name, who))
	}
	for _, h := range m.rep.Hosts {
		sort.Strings(h.Pending)
	}
	return nil
}

// approve adds the Approved condition to the CSR, as oc adm certificate
// approve does, through its approval subresource.
func approve(ctx context.Context, c Cluster, raw json.RawMessage, name string) error {
	var o map[string]any
	if err := json.Unmarshal(raw, &o); err != nil {
		return err
	}
	st, _ := o["status"].(map[string]any)
	if st == nil {
		st = map[string]any{}
	}
	conds, _ := st["conditions"].([]any)
	st["conditions"] = append(conds, map[string]any{"type": "Approved", "status": "True", "reason": "AgentisoNodeImageApprove",
		"message": "approved by agentiso node-image monitor: the request of a host being added"})
	o["status"] = st
	r := rCSRs
	r.Name = name
	if err := c.Update(ctx, r, "approval", o, nil); err != nil {
		var se *kubeapi.StatusError
		if errors.As(err, &se) && se.Code == 403 {
			return fmt.Errorf("cannot approve CSR %s: %s", termsafe.String(name), se.Permission())
		}
		return fmt.Errorf("cannot approve CSR %s: %w", termsafe.String(name), err)
	}
	return nil
}

func getPerm(ctx context.Context, api API, r kubeapi.Resource, why string, out any) error {
	in := &inspector{api: api}
	return in.get(ctx, r, why, out)
}

func reverseDNS(ctx context.Context, ip string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	names, err := net.DefaultResolver.LookupAddr(ctx, ip)
	if err != nil || len(names) == 0 {
		return ""
	}
	return strings.TrimSuffix(names[0], ".")
}
