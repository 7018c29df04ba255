package main

import (
	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/config"

	"github.com/seed-a052040e/agentiso/pkg/serve"
)

func newServeCmd(g *globals) *cobra.Command {
	o := serve.RunOptions{}
	c := &cobra.Command{
		Use:   "serve [ISO...]",
		Short: "Serve the ISOs and PXE files of --dir over HTTP(S), for virtual media and PXE",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir, o.Log, o.Extra = g.dir, g.log, args
			// Chosen on the command line, in the environment or the
			// config file: not the default, every interface.
			src := g.setting("listen").Source
			o.ListenGiven = cmd.Flags().Changed("listen") || src == config.FromFlag || src == config.FromEnv || src == config.FromFile
			return serve.Run(cmd.Context(), o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Listen, "listen", ":8080", "address to listen on, HOST:PORT (HOST empty: every interface; an ISO holding the pull secret is served there without --user only when --listen is given)")
	f.BoolVar(&o.GenerateTLS, "tls", false, "serve HTTPS with a generated self-signed certificate")
	f.StringSliceVar(&o.TLSHosts, "tls-host", nil, "with --tls: a name or address the certificate is valid for (repeatable; the --listen host is added)")
	f.StringVar(&o.TLSCert, "tls-cert", "", "serve HTTPS with this PEM certificate (with --tls-key)")
	f.StringVar(&o.TLSKey, "tls-key", "", "the PEM private key of --tls-cert")
	f.StringVar(&o.User, "user", "", "require HTTP basic authentication with this user name (with --password-file)")
	f.StringVar(&o.PasswordFile, "password-file", "", "file whose one line is the basic-authentication password")
	return c
}
