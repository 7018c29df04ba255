package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/internal/console"
	"github.com/seed-a052040e/agentiso/internal/termsafe"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
	"github.com/seed-a052040e/agentiso/pkg/kubeapi"
	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
)

// NodeImageRequest is node-image create's command line.
type NodeImageRequest struct {
	// Kubeconfig is the installed cluster's kubeconfig; Context its
	// context ("" for current-context).
	Kubeconfig, Context string
	// The single-host flags; MAC "" means nodes-config.yaml.
	MAC, CPUArchitecture, SSHKeyPath, Hostname, RootDeviceHint, NetworkConfigPath string
	// OutputName is -o.
	OutputName string
	// Log, when set, is told which cluster was read (name, API, version,
	// architecture, platform, and the kubeconfig and context used).
	Log *slog.Logger
	// PXE is --pxe: PXE files instead of the ISO.
	PXE bool
	// Report is --report: report.json in the directory, whether the
	// command succeeds or fails (NodeImageReport).
	Report bool
	// Image are the base ISO choices, as create image's.
	Image *ImageOptions
}

// maxSmallInput bounds the SSH key and NMState files of the flags.
const maxSmallInput = 1 << 20

// NodeImageResult is what CreateNodeImage wrote: the ISO, or with --pxe
// the PXE files.
type NodeImageResult struct {
	ISO *NodeISO
	PXE *NodePXEFiles
	// TokenExpiry is when the image's tokens expire (RFC 3339; "": in 48
	// hours).
	TokenExpiry string
}

// expiry says when the image's tokens expire.
func (r *NodeImageResult) expiry() string {
	if r.TokenExpiry == "" {
		return "Its tokens expire in 48 hours."
	}
	return "Its tokens expire at " + r.TokenExpiry + " (kept in secret " + nodejoin.AuthTokenSecret.Namespace + "/" + nodejoin.AuthTokenSecret.Name + ", where oc adm node-image monitor reads them)."
}

// Log says what the node image wrote into dir, and what it carries.
func (r *NodeImageResult) Log(log *slog.Logger, dir string) {
	if px := r.PXE; px != nil {
		for _, res := range px.Results() {
			log.Debug("wrote", "file", res.Path, "bytes", res.Size, "sha256", res.SHA256)
		}
		console.Outcome(log, "Generated the node PXE files in "+filepath.Join(dir, assetdir.BootArtifactsDir))
		log.Info("Kernel parameters for PXE boot: " + px.Kargs)
		if px.IPXE != "" {
			console.Outcome(log, "Created iPXE script "+px.IPXE, "rootfs", px.RootfsURL)
		} else {
			log.Info("No iPXE script: set bootArtifactsBaseURL in nodes-config.yaml for one; boot with coreos.live.rootfs_url=<URL of " + filepath.Base(px.Rootfs) + "> added")
		}
		log.Warn("The initrd " + filepath.Join(dir, px.Initrd) + " carries the cluster's pull secret; it is readable only by you (0600): never serve it world-readable. " + r.expiry())
		return
	}
	res := r.ISO.Result()
	console.Outcome(log, "Generated node ISO at "+res.Path, "bytes", res.Size, "sha256", res.SHA256)
	log.Warn("The ISO carries the cluster's pull secret; it is readable only by you (0600). " + r.expiry())
}

// NodeImageReport is report.json of node-image create --report, written
// whether the command succeeds or fails (as oc adm node-image create
// --report): the result and the error, what was learnt of the cluster and
// the hosts before the end, and the files written.
type NodeImageReport struct {
	Command string    `json:"command"`
	Result  string    `json:"result"`
	Error   string    `json:"error,omitempty"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// Cluster is nil when the cluster could not be read.
	Cluster *NodeImageReportCluster `json:"cluster,omitempty"`
	// Hosts are the hosts to add (their names; "" for a host named later
	// by DHCP or reverse DNS), nil when they could not be read.
	Hosts   []NodeImageReportHost `json:"hosts,omitempty"`
	Outputs []asset.Output        `json:"outputs,omitempty"`
}

// NodeImageReportCluster is the installed cluster, as read over its API.
type NodeImageReportCluster struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Version      string `json:"version"`
	ReleaseImage string `json:"releaseImage"`
	Platform     string `json:"platform"`
	Arch         string `json:"architecture"`
}

// NodeImageReportHost is one host to add.
type NodeImageReportHost struct {
	Name string   `json:"name"`
	MACs []string `json:"macAddresses,omitempty"`
	IPs  []string `json:"ipAddresses,omitempty"`
}

// RunNodeImage is node-image create: CreateNodeImage on the store of dir,
// the store's warnings and then what was written logged on log.
func RunNodeImage(ctx context.Context, dir string, log *slog.Logger, r NodeImageRequest) error {
	s, err := asset.NewStore(dir, log)
	if err != nil {
		return err
	}
	r.Log = log
	out, err := CreateNodeImage(ctx, s, r)
	logWarnings(s, log)
	if err != nil {
		return err
	}
	out.Log(log, s.Dir())
	return nil
}

// CreateNodeImage builds and writes the node ISO (or its PXE files) into
// the store's directory: it reads the cluster, checks the hosts, and
// writes nothing when anything fails. With r.Report it then writes
// report.json (NodeImageReport), also after a failure; a report that cannot
// be written is an error of its own.
func CreateNodeImage(ctx context.Context, s *asset.Store, r NodeImageRequest) (*NodeImageResult, error) {
	if !r.Report {
		return createNodeImage(ctx, s, r, nil)
	}
	rep := &NodeImageReport{Command: "node-image create", Started: time.Now().UTC()}
	res, err := createNodeImage(ctx, s, r, rep)
	rep.Ended, rep.Result = time.Now().UTC(), "success"
	if err != nil {
		rep.Result, rep.Error = "failure", err.Error()
	} else {
		rep.Outputs = s.Outputs()
	}
	b, jerr := json.MarshalIndent(rep, "", "  ")
	if jerr == nil {
		jerr = fsutil.WriteFileAtomic(filepath.Join(s.Dir(), nodejoin.ReportFile), append(b, '\n'), 0o644)
	}
	if jerr != nil {
		jerr = fmt.Errorf("cannot write %s: %w", nodejoin.ReportFile, jerr)
		if err == nil {
			return res, jerr
		}
		return res, fmt.Errorf("%w (and %v)", err, jerr)
	}
	return res, err
}

func createNodeImage(ctx context.Context, s *asset.Store, r NodeImageRequest, rep *NodeImageReport) (*NodeImageResult, error) {
	switch strings.ToLower(r.OutputName) {
	case "json", "yaml", "yml", "text":
		// -o is --output-name here, as in oc adm node-image create; a
		// user who meant the output format must not get an ISO called
		// "json".
		return nil, fmt.Errorf("-o %q: here -o is --output-name, the ISO's file name (as oc adm node-image create has it), and %q is an output format, not an ISO name: give a file name such as node.iso; for a machine-readable result use --report (report.json in --dir)", r.OutputName, r.OutputName)
	}
	if r.Kubeconfig == "" {
		return nil, fmt.Errorf("no kubeconfig: pass --kubeconfig (or set $KUBECONFIG) with the installed cluster's credentials")
	}
	cfg, err := kubeapi.LoadKubeconfig(r.Kubeconfig, r.Context)
	if err != nil {
		return nil, err
	}
	if r.PXE && r.OutputName != "" {
		return nil, fmt.Errorf("--output-name names the ISO; with --pxe the files are boot-artifacts/node.<arch>-{vmlinuz,initrd.img,rootfs.img}: give one or the other")
	}
	if r.Log != nil {
		r.Log.Debug(fmt.Sprintf("Reading the cluster at %s (%s)", cfg.Server, cfg.Source))
	}
	o := &NodeImageOptions{Cluster: kubeapi.New(cfg, 0), Source: cfg.Source, OutputName: r.OutputName, PXE: r.PXE}
	if o.Single, err = r.single(); err != nil {
		return nil, err
	}
	if err := s.Provide(o); err != nil {
		return nil, err
	}
	// The earlier node ISOs' watcher tokens, kept beside the new one.
	prev, err := fsutil.ReadRegular(filepath.Join(s.Dir(), filepath.FromSlash(assetdir.NodeWatcherToken)), maxWatcherTokenFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read the earlier node ISO's watcher token: %w", err)
	}
	if err := s.Provide(&PreviousNodeWatcherTokens{File: prev}); err != nil {
		return nil, err
	}
	img := r.Image
	if img == nil {
		img = &ImageOptions{}
	}
	if err := s.Provide(img); err != nil {
		return nil, err
	}
	// The hosts and the cluster first (the report's, and what most
	// refusals are about), then the image.
	h, err := asset.Fetch[*NodeHosts](ctx, s)
	if err != nil {
		return nil, err
	}
	ci, err := asset.Fetch[*ClusterInfo](ctx, s)
	if rep != nil {
		for _, nh := range h.Config.NewHosts() {
			rep.Hosts = append(rep.Hosts, NodeImageReportHost{Name: nh.Name, MACs: nh.MACs, IPs: nh.IPs})
		}
		if err == nil && ci.Info != nil {
			i := ci.Info
			rep.Cluster = &NodeImageReportCluster{ID: i.ClusterID, Name: i.ClusterName, Version: i.Version, ReleaseImage: i.ReleaseImage, Platform: i.Platform, Arch: i.Arch}
		}
	}
	if err != nil {
		return nil, err
	}
	if i := ci.Info; i != nil && r.Log != nil {
		// A wrong kubeconfig context must not go unnoticed.
		r.Log.Info(fmt.Sprintf("Adding nodes to cluster %s at %s: OpenShift %s, %s, platform %s (%s)", termsafe.String(i.ClusterName), cfg.Server,
			termsafe.String(i.Version), i.Arch, termsafe.String(i.Platform), cfg.Source))
	}
	targets := NodeImageTargets(r.PXE)
	for _, t := range targets {
		if _, err := s.Fetch(ctx, t); err != nil {
			return nil, err
		}
	}
	if err := s.Persist(ctx, targets...); err != nil {
		return nil, err
	}
	auth, err := asset.Fetch[*NodeAuthConfig](ctx, s)
	if err != nil {
		return nil, err
	}
	if r.PXE {
		px, err := asset.Fetch[*NodePXEFiles](ctx, s)
		return &NodeImageResult{PXE: px, TokenExpiry: auth.AuthTokenExpiry}, err
	}
	iso, err := asset.Fetch[*NodeISO](ctx, s)
	return &NodeImageResult{ISO: iso, TokenExpiry: auth.AuthTokenExpiry}, err
}

// maxWatcherTokenFile bounds the watcher token file read back.
const maxWatcherTokenFile = 64 << 10

// single is the host of the single-host flags, nil without --mac-address
// (oc adm node-image create: the flags need --mac-address, and with it
// nodes-config.yaml is not used).
func (r NodeImageRequest) single() (*nodejoin.NodesConfig, error) {
	if r.MAC == "" {
		for flag, v := range map[string]string{"cpu-architecture": r.CPUArchitecture, "ssh-key-path": r.SSHKeyPath, "hostname": r.Hostname,
			"root-device-hint": r.RootDeviceHint, "network-config-path": r.NetworkConfigPath} {
			if v != "" {
				return nil, fmt.Errorf("--%s needs --mac-address: the single-host flags describe the host with that MAC (without them, hosts come from %s)", flag, nodejoin.NodesConfigFile)
			}
		}
		return nil, nil
	}
	var key string
	if r.SSHKeyPath != "" {
		b, err := fsutil.ReadRegular(r.SSHKeyPath, maxSmallInput)
		if err != nil {
			return nil, fmt.Errorf("--ssh-key-path: %w", err)
		}
		key = strings.TrimSpace(string(b))
	}
	var nmc []byte
	if r.NetworkConfigPath != "" {
		b, err := fsutil.ReadRegular(r.NetworkConfigPath, maxSmallInput)
		if err != nil {
			return nil, fmt.Errorf("--network-config-path: %w", err)
		}
		nmc = b
	}
	return nodejoin.SingleHost(r.MAC, r.Hostname, r.RootDeviceHint, nmc, r.CPUArchitecture, key)
}
