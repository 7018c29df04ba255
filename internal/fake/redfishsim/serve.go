package redfishsim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

// Serve runs a BMC emulator with one system on listen until ctx ends (for
// `agentiso-dev bmc`: to watch agentiso boot work before touching real
// hardware). It logs the BMC address to put in install-config.yaml and,
// for every boot, what the emulated firmware booted.
func Serve(ctx context.Context, listen string, o Options, log *slog.Logger) error {
	if !o.Profile.Known() {
		var names []string
		for _, p := range Profiles() {
			names = append(names, fmt.Sprintf("%q", string(p)))
		}
		return fmt.Errorf("unknown profile %q: one of %s (\"\" is the Redfish standard)", o.Profile, strings.Join(names, ", "))
	}
	if len(o.Systems) != 1 || o.Systems[0].ID == "" {
		return errors.New("one system with an id is needed")
	}
	id := o.Systems[0].ID
	o.OnBoot = func(sys, image string) {
		if image != "" {
			log.Info("system "+sys+" booted the virtual CD", "image", image)
			return
		}
		log.Warn("system " + sys + " booted, but not from the virtual CD (no image inserted, or a boot target this firmware does not boot virtual media from)")
	}
	o.OnPowerOff = func(sys string) { log.Info("system " + sys + " powered off") }
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	b := New(o)
	hs := &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
	name := string(o.Profile)
	if name == "" {
		name = "generic"
	}
	log.Info(fmt.Sprintf("Redfish BMC emulator (profile %s) on http://%s: bmc.address redfish-virtualmedia+http://%s/redfish/v1/Systems/%s, username %s (Ctrl-C stops)", name, ln.Addr(), ln.Addr(), id, o.Username))
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	st := b.State(id)
	log.Info(fmt.Sprintf("system %s: power %s, boots %v", id, st.PowerState, st.Boots))
	return nil
}
