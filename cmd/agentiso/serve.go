package main

import (
	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/serve"
)

func newServeCmd(g *globals) *cobra.Command {
	o := serve.RunOptions{}
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the agent ISO and PXE files of --dir over HTTP(S), for virtual media and PXE",
		Long: `Serve the boot media agentiso wrote into --dir, and nothing else:

  /agent.<arch>.iso                          the agent ISO
  /boot-artifacts/agent.<arch>-vmlinuz       the PXE kernel
  /boot-artifacts/agent.<arch>-initrd.img    the PXE initrd
  /boot-artifacts/agent.<arch>-rootfs.img    the root file system
  /boot-artifacts/agent.<arch>.ipxe          the iPXE script
  and each one's .sha256

With bootArtifactsBaseURL in agent-config.yaml, the boot-artifacts/ files
are also served at its path (e.g. /boot/), where iPXE and a minimal ISO
fetch them.

Each file is served only if its content matches its .sha256 (checked at
start, and again if the file changes while serving): the inputs, auth/,
agent.ign, the state and anything else in --dir are never served, and no
symbolic link is followed. Files are read in place (no copy), with range
requests (BMC virtual media reads the ISO in ranges), HEAD, ETag (the
sha256) and Last-Modified. Every request is logged. Ctrl-C stops.

The agent ISO and the PXE initrd carry the pull secret and the install's
tokens: whoever can reach the URL can read them. Bind to the address of
the network your BMCs are on (--listen), require a password (--user,
--password-file; agentiso boot passes it to BMCs that support it), and stop
serving once the hosts have booted. See docs/serve-boot.md.`,
		Example: `  # Serve on the BMC network, then boot the hosts through their BMCs
  agentiso serve --dir mycluster --listen 10.0.0.1:8080
  agentiso boot --dir mycluster --url http://10.0.0.1:8080

  # HTTPS with a generated certificate (written to .agentiso/serve.crt)
  agentiso serve --dir mycluster --listen 10.0.0.1:8443 --tls

  # HTTPS with your certificate and basic authentication
  agentiso serve --dir mycluster --listen 10.0.0.1:8443 \
      --tls-cert serve.crt --tls-key serve.key --user media --password-file media.pass`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Dir, o.Log = g.dir, g.log
			return serve.Run(cmd.Context(), o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Listen, "listen", ":8080", "address to listen on, HOST:PORT (HOST empty: every interface)")
	f.BoolVar(&o.GenerateTLS, "tls", false, "serve HTTPS with a generated self-signed certificate")
	f.StringSliceVar(&o.TLSHosts, "tls-host", nil, "with --tls: a name or address the certificate is valid for (repeatable; the --listen host is added)")
	f.StringVar(&o.TLSCert, "tls-cert", "", "serve HTTPS with this PEM certificate (with --tls-key)")
	f.StringVar(&o.TLSKey, "tls-key", "", "the PEM private key of --tls-cert")
	f.StringVar(&o.User, "user", "", "require HTTP basic authentication with this user name (with --password-file)")
	f.StringVar(&o.PasswordFile, "password-file", "", "file whose one line is the basic-authentication password")
	return c
}
