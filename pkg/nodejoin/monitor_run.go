package nodejoin

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/fsutil"
	"github.com/seed-a052040e/agentiso/pkg/kubeapi"
)

// MonitorRequest is node-image monitor's command line.
type MonitorRequest struct {
	Kubeconfig, Context string
	IPs                 []string
	ApproveCSRs         bool
	Timeout, Interval   time.Duration
	// Dir is --dir: its nodes-config.yaml, when there, names the hosts by
	// their static addresses; with Report, report.json is written there.
	Dir    string
	Report bool
	Log    *slog.Logger
}

// ReportFile is the monitor's report in --dir (--report).
const ReportFile = "report.json"

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
	names := map[string]string{}
	if b, err := fsutil.ReadRegular(filepath.Join(r.Dir, NodesConfigFile), maxNodesConfig); err == nil {
		nc, err := ParseNodesConfig(b)
		if err != nil {
			return nil, err
		}
		for _, h := range nc.NewHosts() {
			for _, ip := range h.IPs {
				names[ip] = h.Name
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	rep, err := Monitor(ctx, MonitorOptions{Cluster: kubeapi.New(cfg, 0), IPs: r.IPs, Names: names, ApproveCSRs: r.ApproveCSRs,
		Interval: r.Interval, Timeout: r.Timeout, Log: r.Log})
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
