package testcluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
)

// DevVersion is the release of the cluster ServeDir serves.
const DevVersion = "4.20.0"

// ServeDir is agentiso-dev cluster: it serves, until ctx is done, an installed
// cluster whose release is a synthetic payload in a loopback registry and
// whose machine network is 127.0.0.0/8, writes its kubeconfig to
// <dir>/kubeconfig, and plays each host of <dir>/nodes-config.yaml (static
// 127.x addresses) joining it, a state every step, once node-image create
// has written the watcher token into dir.
func ServeDir(ctx context.Context, dir string, step time.Duration, log *slog.Logger) error {
	hosts, err := joiningHosts(dir)
	if err != nil {
		return err
	}
	reg, err := testrelease.NewRegistry(testrelease.RegistryOptions{})
	if err != nil {
		return err
	}
	defer reg.Close()
	img, err := testrelease.Payload{Version: DevVersion}.Image()
	if err != nil {
		return err
	}
	dg, err := reg.Push("ocp/release", DevVersion+"-x86_64", img)
	if err != nil {
		return err
	}
	o := Default()
	o.Version, o.ReleaseImage = DevVersion, reg.Host+"/ocp/release@"+dg
	o.PullSecret, o.TrustBundle = string(reg.PullSecret()), string(reg.CAPEM)
	o.MachineNetwork = "127.0.0.0/8"
	c, err := Start(o)
	if err != nil {
		return err
	}
	defer c.Close()
	kc := filepath.Join(dir, "kubeconfig")
	if err := fsutil.WriteFileAtomic(kc, c.Kubeconfig(), 0o600); err != nil {
		return err
	}
	log.Info("Installed cluster "+o.ClusterName+"."+o.BaseDomain+" (OpenShift "+DevVersion+") serving", "api", c.URL(), "kubeconfig", kc)
	tokPath := filepath.Join(dir, filepath.FromSlash(assetdir.NodeWatcherToken))
	token := func() string {
		b, err := fsutil.ReadRegular(tokPath, 64<<10)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	if len(hosts) > 0 {
		if err := c.PlayJoin(ctx, JoinOptions{Hosts: hosts, Token: token, Step: step, Log: log}); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return nil
}

// joiningHosts are the hosts of <dir>/nodes-config.yaml, none without the
// file; each needs a static address to be played joining.
func joiningHosts(dir string) ([]JoiningHost, error) {
	b, err := fsutil.ReadRegular(filepath.Join(dir, nodejoin.NodesConfigFile), 4<<20)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	nc, err := nodejoin.ParseNodesConfig(b)
	if err != nil {
		return nil, err
	}
	var hosts []JoiningHost
	for _, h := range nc.NewHosts() {
		if len(h.IPs) == 0 || len(h.MACs) == 0 {
			return nil, fmt.Errorf("%s: host %q: give it a static 127.x address (networkConfig) to be played joining", nodejoin.NodesConfigFile, h.Name)
		}
		hosts = append(hosts, JoiningHost{Name: h.Name, IP: h.IPs[0], MAC: h.MACs[0]})
	}
	return hosts, nil
}
