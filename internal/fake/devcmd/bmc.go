package devcmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/fake/redfishsim"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
)

// newBMCCmd runs the Redfish BMC emulator, in a vendor profile, to
// watch agentiso boot work before touching real hardware.
func newBMCCmd(e *env) *cobra.Command {
	var listen, profile, user, passFile, system string
	var on bool
	c := &cobra.Command{
		Use:   "bmc --password-file FILE",
		Short: "Run a Redfish BMC emulator in a vendor profile, to watch agentiso boot work",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := fsutil.ReadRegular(passFile, 4096)
			if err != nil {
				return fmt.Errorf("read --password-file: %w", err)
			}
			return redfishsim.Serve(cmd.Context(), listen, redfishsim.Options{Username: user, Password: strings.TrimRight(string(b), "\r\n"),
				Profile: redfishsim.Profile(profile), Systems: []redfishsim.System{{ID: system, PoweredOn: on}}}, e.log)
		},
	}
	f := c.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:8000", "address to listen on")
	f.StringVar(&profile, "profile", "", "vendor profile: "+profileNames())
	f.StringVar(&user, "user", "admin", "BMC user name")
	f.StringVar(&passFile, "password-file", "", "file holding the BMC password (required)")
	f.StringVar(&system, "system", "1", "the system's Redfish id")
	f.BoolVar(&on, "powered-on", false, "the system starts powered on")
	_ = c.MarkFlagRequired("password-file")
	return c
}

func profileNames() string {
	var n []string
	for _, p := range redfishsim.Profiles() {
		if p == "" {
			n = append(n, `"" (the Redfish standard)`)
			continue
		}
		n = append(n, string(p))
	}
	return strings.Join(n, ", ")
}
