package ignition

import (
	"fmt"
	"io"
	"strings"

	v32 "github.com/coreos/ignition/v2/config/v3_2"
	"github.com/coreos/ignition/v2/config/v3_2/types"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

// WriteListing prints the shape of an Ignition config, what lands where
// and no content: each directory and file with its mode and owner, and
// each systemd unit with whether it is enabled, one a line. Paths and
// names are escaped (internal/termsafe): the config may come from any ISO.
func WriteListing(w io.Writer, cfg []byte) error {
	c, rpt, err := v32.ParseCompatibleVersion(cfg)
	if err != nil {
		return fmt.Errorf("embedded config does not parse: %w (%s)", err, rpt.String())
	}
	var b strings.Builder
	owner := func(u types.NodeUser) string {
		if u.Name != nil {
			return *u.Name
		}
		return "root"
	}
	for _, d := range c.Storage.Directories {
		mode := 0o755
		if d.Mode != nil {
			mode = *d.Mode
		}
		fmt.Fprintf(&b, "dir  %04o %-6s %s\n", mode, owner(d.User), termsafe.String(d.Path))
	}
	for _, f := range c.Storage.Files {
		mode := 0o644
		if f.Mode != nil {
			mode = *f.Mode
		}
		fmt.Fprintf(&b, "file %04o %-6s %s\n", mode, owner(f.User), termsafe.String(f.Path))
	}
	for _, u := range c.Systemd.Units {
		state := "disabled"
		if u.Enabled != nil && *u.Enabled {
			state = "enabled"
		}
		fmt.Fprintf(&b, "unit %-8s %s\n", state, termsafe.String(u.Name))
	}
	_, err = io.WriteString(w, b.String())
	return err
}
