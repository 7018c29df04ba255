package devcmd

import (
	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/fake/rendezvoussim"
)

func newSimulateCmd(e *env) *cobra.Command {
	var scenario string
	o := rendezvoussim.DirOptions{}
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Serve a simulated rendezvous host and cluster API for wait-for",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Log = e.log
			return rendezvoussim.Simulate(cmd.Context(), e.dir, scenario, o)
		},
	}
	cmd.Flags().StringVar(&scenario, "scenario", "", "scenario YAML file or built-in scenario name (required)")
	cmd.Flags().StringVar(&o.Listen, "listen", "", "REST API listen address host:port")
	cmd.Flags().StringVar(&o.KubeListen, "kube-listen", "", "Kubernetes API listen address host:port")
	cmd.Flags().Float64Var(&o.Speed, "speed", 1, "scenario seconds per real second")
	cmd.Flags().BoolVar(&o.HoldUntilSeen, "hold-until-seen", false, "hold each REST API state until a client has been served it (at most "+rendezvoussim.DefaultHoldTimeout.String()+" per step)")
	_ = cmd.MarkFlagRequired("scenario")
	return cmd
}

func newInitDirCmd(e *env) *cobra.Command {
	o := rendezvoussim.DevDirOptions{}
	cmd := &cobra.Command{
		Use:   "init-dir",
		Short: "Write the files wait-for reads, with freshly generated credentials",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Dir = e.dir
			if err := rendezvoussim.WriteDevDir(o); err != nil {
				return err
			}
			e.log.Info("wrote wait-for inputs", "dir", e.dir, "local", o.Local)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.RendezvousIP, "rendezvous-ip", "", "IP address of the rendezvous host (required)")
	cmd.Flags().StringVar(&o.ClusterName, "cluster-name", "ocp", "cluster name")
	cmd.Flags().StringVar(&o.BaseDomain, "base-domain", "example.com", "base DNS domain")
	cmd.Flags().BoolVar(&o.Local, "local", false, "serve the simulator on free loopback ports and point the inputs at them")
	_ = cmd.MarkFlagRequired("rendezvous-ip")
	return cmd
}
