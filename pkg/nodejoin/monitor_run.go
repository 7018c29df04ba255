package nodejoin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
	"github.com/seed-a052040e/agentiso/pkg/kubeapi"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// MonitorRequest is node-image monitor's command line.
type MonitorRequest struct {
	Kubeconfig, Context string
	IPs                 []string
	ApproveCSRs         bool
	Timeout, Interval   time.Duration
	// Dir is --dir: its nodes-config.yaml, when there, names the hosts by
	// their static addresses; its watcher token (node-image create's)
	// reads each host's own assisted-service; with Report, report.json is
	// written there.
	Dir    string
	Report bool
	// Reporter gets the messages and the host table.
	Reporter rendezvous.Reporter
	// AgentURL is a host's assisted-service v2 URL (nil:
	// rendezvous.BaseURL, http://<ip>:8090/api/assisted-install/v2).
	AgentURL func(ip string) string
	// RequestTimeout bounds each request to a host's service (0: 10s).
	RequestTimeout time.Duration
}

// ReportFile is the monitor's report in --dir (--report).
const ReportFile = "report.json"

// MonitorExitCode is node-image monitor's exit code for RunMonitor's
// error: 0 when every host is a Ready node, 5 when the timeout passed
// first, 6 when a host's installation failed, else 1 (a usage error,
// missing input, a refused permission).
func MonitorExitCode(err error) int {
	var hf *HostFailedError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrMonitorTimeout):
		return 5
	case errors.As(err, &hf):
		return 6
	}
	return 1
}

// RunMonitor loads the kubeconfig and runs Monitor; with Report it writes
// the report, also after a failure.
func RunMonitor(ctx context.Context, r MonitorRequest) (*MonitorReport, error) {
	if r.Kubeconfig == "" {
		return nil, errors.New("no kubeconfig: pass --kubeconfig (or set $KUBECONFIG) with the installed cluster's credentials")
	}
	cfg, err := kubeapi.LoadKubeconfig(r.Kubeconfig, r.Context)
	if err != nil {
		return nil, err
	}
	names, roles := map[string]string{}, map[string]string{}
	var configIPs []string
	if b, err := fsutil.ReadRegular(filepath.Join(r.Dir, NodesConfigFile), maxNodesConfig); err == nil {
		nc, err := ParseNodesConfig(b)
		if err != nil {
			return nil, err
		}
		for _, h := range nc.NewHosts() {
			for _, ip := range h.IPs {
				configIPs = append(configIPs, ip)
				names[ip] = h.Name
				if h.Role != "" {
					roles[ip] = h.Role
				}
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if len(r.IPs) == 0 && len(configIPs) > 0 {
		// The hosts' static addresses in nodes-config.yaml are the ones
		// being added (issue 37 item 10).
		r.IPs = configIPs
		if r.Reporter != nil {
			r.Reporter.Log(slog.LevelInfo, fmt.Sprintf("Following the hosts of %s: %s", filepath.Join(r.Dir, NodesConfigFile), strings.Join(configIPs, ", ")))
		}
	}
	o := MonitorOptions{Cluster: kubeapi.New(cfg, 0), IPs: r.IPs, Names: names, Roles: roles, ApproveCSRs: r.ApproveCSRs,
		Interval: r.Interval, Timeout: r.Timeout, Reporter: r.Reporter}
	if o.Agent, err = agentsFromDir(ctx, r, o.Cluster); err != nil {
		return nil, err
	}
	rep, err := Monitor(ctx, o)
	if r.Report && rep != nil {
		b, jerr := json.MarshalIndent(rep, "", "  ")
		if jerr == nil {
			jerr = fsutil.WriteFileAtomic(filepath.Join(r.Dir, ReportFile), append(b, '\n'), 0o644)
		}
		if jerr != nil && err == nil {
			err = jerr
		}
	}
	return rep, err
}

// maxNodesConfig bounds nodes-config.yaml.
const maxNodesConfig = 4 << 20

// agentsFromDir returns the hosts' own assisted-service clients, with the
// watcher tokens node-image create kept in --dir, then the one of the
// cluster's openshift-config/agent-auth-token secret, where node-image
// create and `oc adm node-image create` keep it and upstream's monitor
// reads it (openshift/installer pkg/agent/cluster.go NewCluster, commit
// f4e8e574): hosts booted from an ISO of another directory, or of oc, are
// followed too. nil (with a warning) when there is no token: the cluster
// side is then followed alone.
func agentsFromDir(ctx context.Context, r MonitorRequest, cluster API) (func(ip string) (AgentAPI, error), error) {
	p := filepath.Join(r.Dir, filepath.FromSlash(assetdir.NodeWatcherToken))
	b, err := fsutil.ReadRegular(p, maxToken)
	var toks []string
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("read the node ISO's watcher token: %w", err)
	default:
		if toks = WatcherTokens(b); len(toks) == 0 {
			return nil, fmt.Errorf("the node ISO's watcher token file %s is empty: run node-image create again", p)
		}
	}
	stored, serr := StoredWatcherToken(ctx, cluster)
	if serr == nil && !contains(toks, stored) {
		if len(toks) == 0 && r.Reporter != nil {
			r.Reporter.Log(slog.LevelInfo, fmt.Sprintf("No watcher token in %s: the hosts' own assisted-service is read with the watcher token of secret %s/%s, as oc adm node-image monitor reads it",
				r.Dir, AuthTokenSecret.Namespace, AuthTokenSecret.Name))
		}
		toks = append(toks, stored)
	}
	if len(toks) == 0 {
		if r.Reporter != nil {
			why := "absent"
			if !kubeapi.IsNotFound(serr) {
				why = serr.Error()
			}
			r.Reporter.Log(slog.LevelWarn, fmt.Sprintf("No watcher token in %s (node-image create writes it with the ISO), nor in secret %s/%s (%s): the hosts' own progress is not shown, only the cluster side; pass the --dir of node-image create",
				r.Dir, AuthTokenSecret.Namespace, AuthTokenSecret.Name, why))
		}
		return nil, nil
	}
	if exp, ok := tokenExpiry(toks[0]); ok && time.Now().After(exp) && r.Reporter != nil {
		r.Reporter.Log(slog.LevelWarn, fmt.Sprintf("The node ISO's tokens expired at %s: the hosts' assisted-service refuses them; hosts not yet installed need a new ISO (node-image create)",
			exp.Local().Format(time.RFC3339)))
	}
	url := r.AgentURL
	if url == nil {
		url = rendezvous.BaseURL
	}
	return func(ip string) (AgentAPI, error) {
		fb := &tokenFallback{}
		for _, tok := range toks {
			c, err := rendezvous.NewClient(url(ip), tok, r.RequestTimeout, nil)
			if err != nil {
				return nil, err
			}
			fb.clients = append(fb.clients, c)
		}
		return fb, nil
	}, nil
}

// maxToken bounds the watcher token file.
const maxToken = 64 << 10

// tokenExpiry is a JWT's exp claim, read without verifying the token (only
// to say when it expired; the service checks it).
func tokenExpiry(tok string) (time.Time, bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}, false
	}
	var c struct {
		Exp *float64 `json:"exp"`
	}
	if json.Unmarshal(raw, &c) != nil || c.Exp == nil {
		return time.Time{}, false
	}
	return time.Unix(int64(*c.Exp), 0), true
}
