package redfish

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/redfishsim"
)

// vendorSystem is the system id each vendor uses.
func vendorSystem(p redfishsim.Profile) string {
	switch p {
	case redfishsim.ProfileIDRAC9Old, redfishsim.ProfileIDRAC9, redfishsim.ProfileIDRAC10:
		return "System.Embedded.1"
	}
	return "1"
}

// Every vendor profile boots: the emulated firmware boots the served ISO
// from the virtual CD (the URL in a slot that boots, the one-time target
// this vendor boots virtual media from, a reset), once, whether the host
// was off or on with an older image inserted; the Redfish session is
// closed at the end, and every retry was logged.
func TestBootsEveryVendorProfile(t *testing.T) {
	for _, p := range redfishsim.Profiles() {
		if !p.Boots() {
			continue
		}
		for _, on := range []bool{false, true} {
			name := string(p)
			if name == "" {
				name = "generic"
			}
			if on {
				name += "/on-with-old-media"
			}
			t.Run(name, func(t *testing.T) {
				sys := vendorSystem(p)
				b, addr := bmc(t, redfishsim.Options{Profile: p, Systems: []redfishsim.System{{ID: sys, PoweredOn: on}},
					POST: 700 * time.Millisecond, EjectBusy: 400 * time.Millisecond})
				url := mediaServer(t, true)
				var logs bytes.Buffer
				a, err := ParseAddress(addr + "/redfish/v1/Systems/" + sys)
				require.NoError(t, err)
				c := New(a, Options{Username: "admin", Password: "pa55-word", Log: slog.New(slog.NewTextHandler(&logs, nil)), RetryDelay: 200 * time.Millisecond})
				if on {
					// an earlier image, in every slot that takes CDs
					for _, slot := range []string{"Cd", "CD", "CD1", "1", "2", "EXT1"} {
						_ = b.Insert(sys, slot, "http://old.example/old.iso")
					}
				}
				start := time.Now()
				_, err = c.BootFromISO(context.Background(), Media{URL: url}, nil)
				require.NoError(t, err, "logs:\n%s", logs.String())
				require.NoError(t, c.Close(context.Background()))
				st := b.State(sys)
				assert.Equal(t, []string{"cd:" + url}, st.Boots, "the firmware booted the served ISO from the virtual CD once; quirks met: %v", st.Refused)
				assert.Equal(t, "On", st.PowerState)
				assert.Zero(t, b.OpenSessions(), "logged out")
				assert.Less(t, time.Since(start), 20*time.Second)
				for _, r := range st.Refused {
					assert.Contains(t, logs.String(), r, "a refusal that was retried is logged")
				}
				assert.NotContains(t, logs.String(), "pa55-word")
			})
		}
	}
}

// The hosts that cannot boot an ISO URL end in seconds with an error that
// says why and what to do, having changed nothing.
func TestVendorProfilesThatCannotBoot(t *testing.T) {
	for _, tc := range []struct {
		p    redfishsim.Profile
		want []string
	}{
		{redfishsim.ProfileNoVirtualMedia, []string{"has no CD/DVD virtual media slot", "a license may be needed"}},
		{redfishsim.ProfileNoCDImages, []string{"/redfish/v1/Managers/1/VirtualMedia/Cd", "cannot take an image URL", "neither #VirtualMedia.InsertMedia nor PATCH"}},
	} {
		t.Run(string(tc.p), func(t *testing.T) {
			b, addr := bmc(t, redfishsim.Options{Profile: tc.p, Systems: []redfishsim.System{{ID: "1", ManagerID: "1"}}})
			c := client(t, addr+"/redfish/v1/Systems/1", "admin", "pa55-word", 0)
			start := time.Now()
			_, err := c.BootFromISO(context.Background(), Media{URL: mediaServer(t, true)}, nil)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Less(t, time.Since(start), 5*time.Second)
			st := b.State("1")
			assert.Equal(t, "Off", st.PowerState)
			assert.Empty(t, st.Boots)
			for _, call := range st.Calls {
				assert.True(t, strings.HasPrefix(call, "GET "), "only read: %s", call)
			}
		})
	}
}

// A BMC with Basic authentication disabled is spoken to through a
// session; a wrong password there is named as such, in one call.
func TestSessionOnlyBMC(t *testing.T) {
	b, addr := bmc(t, redfishsim.Options{Profile: redfishsim.ProfileBasicDisabled, Systems: []redfishsim.System{{ID: "1"}}})
	c := client(t, addr+"/redfish/v1/Systems/1", "admin", "wrong", 0)
	_, err := c.BootFromISO(context.Background(), Media{URL: mediaServer(t, true)}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "POST /redfish/v1/SessionService/Sessions: HTTP 401 Unauthorized: Invalid user name or password. (Base.1.8.NoValidSession) (check bmc.username and bmc.password)")
	assert.Zero(t, b.Logins())
	assert.Empty(t, b.State("1").Calls)
}

// A BMC busy restarting (503) is asked again, each retry logged; a host
// that stays in POST longer than the retries last ends with the BMC's
// message, the number of attempts and what to do, and was not reset.
func TestTransientRefusalsRetriedThenReported(t *testing.T) {
	b, addr := bmc(t, redfishsim.Options{Unavailable: 2, Systems: []redfishsim.System{{ID: "1"}}})
	var logs bytes.Buffer
	a, err := ParseAddress(addr + "/redfish/v1/Systems/1")
	require.NoError(t, err)
	c := New(a, Options{Username: "admin", Password: "pa55-word", Log: slog.New(slog.NewTextHandler(&logs, nil)), RetryDelay: 20 * time.Millisecond})
	url := mediaServer(t, true)
	_, err = c.BootFromISO(context.Background(), Media{URL: url}, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"cd:" + url}, b.State("1").Boots)
	assert.Equal(t, 2, strings.Count(logs.String(), "the BMC is busy (503): trying again in"), logs.String())

	b, addr = bmc(t, redfishsim.Options{Profile: redfishsim.ProfileILO5, POST: time.Hour, Systems: []redfishsim.System{{ID: "1", PoweredOn: true}}})
	logs.Reset()
	a, err = ParseAddress(addr + "/redfish/v1/Systems/1")
	require.NoError(t, err)
	c = New(a, Options{Username: "admin", Password: "pa55-word", Log: slog.New(slog.NewTextHandler(&logs, nil)), RetryDelay: 10 * time.Millisecond})
	start := time.Now()
	_, err = c.BootFromISO(context.Background(), Media{URL: url}, nil)
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Contains(t, err.Error(), "PATCH /redfish/v1/Systems/1: HTTP 400 Bad Request: The value for the property cannot be changed while the computer system is in POST. (iLO.2.14.UnableToModifyDuringSystemPOST) (still refused after 6 attempts: wait until the BMC is ready and run agentiso boot again)")
	assert.Equal(t, 5, strings.Count(logs.String(), "the host is in POST: trying again in"))
	assert.Empty(t, b.State("1").Boots, "not reset")
}

// With the config image, every vendor profile boots the generic ISO from
// its booting CD slot and holds the config image in another slot, a USB
// stick or floppy slot first (ironic's config_via_removable,
// ironic/drivers/modules/redfish/boot.py), before the host starts; an
// eject afterwards removes both.
func TestBootsEveryVendorProfileWithConfigImage(t *testing.T) {
	for _, p := range redfishsim.Profiles() {
		if !p.Boots() || p == redfishsim.ProfileOneSlot {
			continue
		}
		name := string(p)
		if name == "" {
			name = "generic"
		}
		t.Run(name, func(t *testing.T) {
			sys := vendorSystem(p)
			b, addr := bmc(t, redfishsim.Options{Profile: p, Systems: []redfishsim.System{{ID: sys}},
				POST: 300 * time.Millisecond, EjectBusy: 200 * time.Millisecond})
			url := mediaServer(t, true)
			cfg := strings.TrimSuffix(url, "agent.x86_64.iso") + "agentconfig.noarch.iso"
			a, err := ParseAddress(addr + "/redfish/v1/Systems/" + sys)
			require.NoError(t, err)
			c := New(a, Options{Username: "admin", Password: "pa55-word", RetryDelay: 100 * time.Millisecond})
			var steps []Step
			out, err := c.BootFromISO(context.Background(), Media{URL: url, ConfigURL: cfg}, func(s Step, _ string) { steps = append(steps, s) })
			require.NoError(t, err)
			st := b.State(sys)
			assert.Equal(t, []string{"cd:" + url}, st.Boots, "quirks met: %v", st.Refused)
			assert.NotEmpty(t, out.ConfigMedia)
			assert.NotEqual(t, out.Media, out.ConfigMedia)
			var held []string
			for _, img := range st.Slots {
				held = append(held, img)
			}
			assert.ElementsMatch(t, []string{url, cfg}, held, "the ISO and the config image, each in its slot")
			assert.Contains(t, steps, StepInsertConfig)
			assert.Less(t, slices.Index(steps, StepInsertConfig), slices.Index(steps, StepBoot), "the config image is in before the host starts")

			ej, err := c.Eject(context.Background())
			require.NoError(t, err)
			assert.True(t, ej.Ejected)
			assert.Equal(t, cfg, ej.EjectedConfig)
			assert.Empty(t, b.State(sys).Slots)
			require.NoError(t, c.Close(context.Background()))
		})
	}
}

// A BMC whose only insertable slot is the CD cannot hold the config
// image too: the error says so and what to do, before the host is
// touched beyond the CD.
func TestConfigImageNeedsASecondSlot(t *testing.T) {
	b, addr := bmc(t, redfishsim.Options{Profile: redfishsim.ProfileOneSlot, Systems: []redfishsim.System{{ID: "1"}}})
	c := client(t, addr+"/redfish/v1/Systems/1", "admin", "pa55-word", 0)
	url := mediaServer(t, true)
	_, err := c.BootFromISO(context.Background(), Media{URL: url, ConfigURL: strings.TrimSuffix(url, "agent.x86_64.iso") + "agentconfig.noarch.iso"}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no second virtual media slot for the config image")
	assert.Contains(t, err.Error(), "attach the config image")
	st := b.State("1")
	assert.Equal(t, "Off", st.PowerState)
	assert.Empty(t, st.Boots)
}
