package testcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// JoiningHost is a host booted from a node image, as PlayJoin plays it.
type JoiningHost struct {
	Name, IP, MAC string
}

// JoinOptions configure PlayJoin.
type JoinOptions struct {
	Hosts []JoiningHost
	// Token returns the watcher token the hosts' own assisted-service takes
	// ("" while the image is not built: the hosts have not booted).
	Token func() string
	// Step is the time between two states of a host (0: 2s).
	Step time.Duration
	Log  *slog.Logger
}

// The day-2 states a host's own assisted-service goes through, as the real
// one (host statuses of assisted-service's state machine; the install
// stages of a worker).
var joinStates = []struct {
	status, info, stage string
	pct                 int64
	failing             string // a failing validation's message
}{
	{status: "discovering", info: "Waiting for the host to report its inventory"},
	{status: "insufficient", info: "Host cannot be installed due to following failing validation(s): Ignition is not yet available, pending API connectivity",
		failing: "Ignition is not yet available, pending API connectivity"},
	{status: "known", info: "Host is ready to be installed"},
	{status: "installing", info: "Installation is in progress", stage: "Starting installation"},
	{status: "installing-in-progress", info: "Writing image to disk", stage: "Writing image to disk", pct: 40},
	{status: "installing-in-progress", info: "Writing image to disk", stage: "Writing image to disk", pct: 80},
	{status: "installing-in-progress", info: "Rebooting", stage: "Rebooting", pct: 90},
}

// PlayJoin plays the hosts of o joining the cluster, as after booting
// node-image create's ISO: once Token returns one, each host's own
// assisted-service answers on <IP>:8090 (so the IPs must be this
// machine's, loopback ones) with the imported cluster and the host going
// through joinStates; then the host "reboots" (the service goes away), its
// client CSR appears, and once approved its serving CSR, and once that is
// approved it is a Ready node. It returns when every host is a node, or
// with ctx.
func (c *Cluster) PlayJoin(ctx context.Context, o JoinOptions) error {
	if o.Step <= 0 {
		o.Step = 2 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	tick := time.NewTicker(o.Step / 4)
	defer tick.Stop()
	var tok string
	for tok == "" {
		if tok = o.Token(); tok != "" {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	o.Log.Info("The node image was built: its hosts boot")
	var wg sync.WaitGroup
	errs := make(chan error, len(o.Hosts))
	for _, h := range o.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.playHost(ctx, o, h, tok); err != nil {
				errs <- fmt.Errorf("%s: %w", h.Name, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func (c *Cluster) playHost(ctx context.Context, o JoinOptions, h JoiningHost, tok string) error {
	var mu sync.Mutex
	state := 0
	ln, err := net.Listen("tcp", net.JoinHostPort(h.IP, fmt.Sprint(rendezvous.Port)))
	if err != nil {
		return fmt.Errorf("its assisted-service cannot listen: %w", err)
	}
	hostAt := func() rendezvous.Host {
		mu.Lock()
		defer mu.Unlock()
		st := joinStates[state]
		now := time.Now()
		host := rendezvous.Host{ID: "5c2a3b4d-0000-4000-8000-" + strings.ReplaceAll(h.MAC, ":", ""), RequestedHostname: h.Name, Role: "worker",
			Status: st.status, StatusInfo: st.info, StatusUpdatedAt: &now}
		if st.stage != "" {
			host.Progress = &rendezvous.HostProgress{CurrentStage: st.stage, InstallationPercentage: st.pct, StageUpdatedAt: &now}
		}
		if st.failing != "" {
			host.ValidationsInfo = fmt.Sprintf(`{"network":[{"id":"ignition-downloadable","status":"failure","message":%q}]}`, st.failing)
		}
		return host
	}
	const clusterID = "f55e7c6b-17c5-45ca-af9e-026246a30176"
	mux := http.NewServeMux()
	answer := func(w http.ResponseWriter, r *http.Request, v any) {
		if r.Header.Get(rendezvous.WatcherHeader) != tok {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code":401,"reason":"The provided authentication token is not valid"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	cluster := func() rendezvous.Cluster {
		return rendezvous.Cluster{Kind: "AddHostsCluster", ID: clusterID, Name: c.opts.ClusterName, Status: "adding-hosts",
			StatusInfo: "cluster is adding hosts to existing OCP cluster", Hosts: []rendezvous.Host{hostAt()}}
	}
	mux.HandleFunc("GET "+rendezvous.APIPath+"/clusters", func(w http.ResponseWriter, r *http.Request) { answer(w, r, []rendezvous.Cluster{cluster()}) })
	mux.HandleFunc("GET "+rendezvous.APIPath+"/clusters/"+clusterID, func(w http.ResponseWriter, r *http.Request) { answer(w, r, cluster()) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	for i := 1; i < len(joinStates); i++ {
		if err := sleep(ctx, o.Step); err != nil {
			_ = srv.Close()
			return err
		}
		mu.Lock()
		state = i
		mu.Unlock()
	}
	if err := sleep(ctx, o.Step); err != nil {
		_ = srv.Close()
		return err
	}
	_ = srv.Close()
	o.Log.Info("Host " + h.Name + " rebooted into the installed system: its client CSR is pending")
	client, err := KubeletClientCSR("csr-"+h.Name+"-client", h.Name)
	if err != nil {
		return err
	}
	if err := c.awaitCSR(ctx, o, client); err != nil {
		return err
	}
	// With its client certificate the kubelet registers its Node (not
	// Ready yet), then asks for its serving certificate.
	n := Node{Name: h.Name, Role: "worker", Arch: "amd64", IP: h.IP, MAC: h.MAC}
	if err := c.AddNode(n); err != nil {
		return err
	}
	o.Log.Info("Host " + h.Name + ": client CSR approved, node registered; its serving CSR is pending")
	serving, err := KubeletServingCSR("csr-"+h.Name+"-serving", h.Name, []string{h.Name}, []string{h.IP})
	if err != nil {
		return err
	}
	if err := c.awaitCSR(ctx, o, serving); err != nil {
		return err
	}
	if err := sleep(ctx, o.Step); err != nil {
		return err
	}
	o.Log.Info("Host " + h.Name + " is a Ready node")
	n.Ready = true
	return c.AddNode(n)
}

// The requesters and signers of a joining node's CSRs.
const (
	bootstrapperUser = "system:serviceaccount:openshift-machine-config-operator:node-bootstrapper"
	clientSigner     = "kubernetes.io/kube-apiserver-client-kubelet"
	servingSigner    = "kubernetes.io/kubelet-serving"
)

// awaitCSR adds r pending and waits until it is approved.
func (c *Cluster) awaitCSR(ctx context.Context, o JoinOptions, r CSR) error {
	if err := c.AddCSR(r); err != nil {
		return err
	}
	for !strings.Contains(string(c.Object(Named(CSRs, r.Name))), `"Approved"`) {
		if err := sleep(ctx, o.Step/4); err != nil {
			return err
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
