package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/testcluster"
	"github.com/seed-a052040e/agentiso/internal/testrelease"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
)

// devClusterVersion is the simulated installed cluster's release.
const devClusterVersion = "4.20.0"

func newDevClusterCmd(g *globals) *cobra.Command {
	var step time.Duration
	c := &cobra.Command{
		Use:   "cluster",
		Short: "Serve an installed cluster for node-image (day 2) and play its new hosts joining",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var hosts []testcluster.JoiningHost
			b, err := fsutil.ReadRegular(filepath.Join(g.dir, nodejoin.NodesConfigFile), 4<<20)
			switch {
			case errors.Is(err, os.ErrNotExist):
			case err != nil:
				return err
			default:
				nc, err := nodejoin.ParseNodesConfig(b)
				if err != nil {
					return err
				}
				for _, h := range nc.NewHosts() {
					if len(h.IPs) == 0 || len(h.MACs) == 0 {
						return fmt.Errorf("%s: host %q: give it a static 127.x address (networkConfig) to be played joining", nodejoin.NodesConfigFile, h.Name)
					}
					hosts = append(hosts, testcluster.JoiningHost{Name: h.Name, IP: h.IPs[0], MAC: h.MACs[0]})
				}
			}
			reg, err := testrelease.NewRegistry(testrelease.RegistryOptions{})
			if err != nil {
				return err
			}
			defer reg.Close()
			img, err := testrelease.Payload{Version: devClusterVersion}.Image()
			if err != nil {
				return err
			}
			dg, err := reg.Push("ocp/release", devClusterVersion+"-x86_64", img)
			if err != nil {
				return err
			}
			o := testcluster.Default()
			o.Version, o.ReleaseImage = devClusterVersion, reg.Host+"/ocp/release@"+dg
			o.PullSecret, o.TrustBundle = string(reg.PullSecret()), string(reg.CAPEM)
			o.MachineNetwork = "127.0.0.0/8"
			c, err := testcluster.Start(o)
			if err != nil {
				return err
			}
			defer c.Close()
			kc := filepath.Join(g.dir, "kubeconfig")
			if err := fsutil.WriteFileAtomic(kc, c.Kubeconfig(), 0o600); err != nil {
				return err
			}
			g.log.Info("Installed cluster "+o.ClusterName+"."+o.BaseDomain+" (OpenShift "+devClusterVersion+") serving", "api", c.URL(), "kubeconfig", kc)
			tokPath := filepath.Join(g.dir, filepath.FromSlash(assetdir.NodeWatcherToken))
			token := func() string {
				b, err := fsutil.ReadRegular(tokPath, 64<<10)
				if err != nil {
					return ""
				}
				return strings.TrimSpace(string(b))
			}
			if len(hosts) > 0 {
				if err := c.PlayJoin(cmd.Context(), testcluster.JoinOptions{Hosts: hosts, Token: token, Step: step, Log: g.log}); err != nil {
					return err
				}
			}
			<-cmd.Context().Done()
			return nil
		},
	}
	c.Flags().DurationVar(&step, "step", 2*time.Second, "time between two states of a joining host")
	return c
}
