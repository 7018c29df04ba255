package redfish

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/redfishsim"
	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

// isoBytes is a tiny image with an ISO 9660 volume descriptor signature.
func isoBytes() []byte {
	b := make([]byte, 64<<10)
	copy(b[32768:], "\x01CD001")
	return b
}

// mediaServer serves the image with ranges (ranges=true) or ignoring them.
func mediaServer(t *testing.T, ranges bool) string {
	t.Helper()
	img := isoBytes()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ranges {
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(img))
			return
		}
		_, _ = w.Write(img)
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/agent.x86_64.iso"
}

func bmc(t *testing.T, o redfishsim.Options) (*redfishsim.BMC, string) {
	t.Helper()
	if o.Username == "" {
		o.Username, o.Password = "admin", "pa55-word"
	}
	b := redfishsim.New(o)
	hs := httptest.NewServer(b)
	t.Cleanup(hs.Close)
	return b, strings.Replace(hs.URL, "http://", "redfish-virtualmedia+http://", 1)
}

func client(t *testing.T, addr, user, pass string, timeout time.Duration) *Client {
	t.Helper()
	a, err := ParseAddress(addr)
	require.NoError(t, err)
	return New(a, Options{Username: user, Password: pass, CallTimeout: timeout, RetryDelay: 50 * time.Millisecond})
}

func TestBootFromISOMediaUnderManager(t *testing.T) {
	b, addr := bmc(t, redfishsim.Options{Systems: []redfishsim.System{{ID: "1"}}})
	url := mediaServer(t, true)
	c := client(t, addr+"/redfish/v1/Systems/1", "admin", "pa55-word", 0)
	var steps []Step
	out, err := c.BootFromISO(context.Background(), Media{URL: url}, func(s Step, _ string) { steps = append(steps, s) })
	require.NoError(t, err)
	assert.Equal(t, Outcome{System: "/redfish/v1/Systems/1", Vendor: "Emulated redfishsim (BMC redfishsim BMC, firmware 1.0.0)", Media: "/redfish/v1/Managers/BMC-1/VirtualMedia/Cd", Under: "Manager", BootTarget: "Cd", Power: "On"}, out)
	st := b.State("1")
	assert.Equal(t, "On", st.PowerState)
	assert.True(t, st.Inserted)
	assert.Equal(t, url, st.Image)
	assert.Equal(t, []string{"cd:" + url}, st.Boots)
	assert.Equal(t, "Disabled", st.BootOverrideEnabled, "the one-time override is consumed by the boot")
	assert.Equal(t, []Step{StepFind, StepInsert, StepBoot, StepPower}, steps)
	assert.Contains(t, st.Calls, "POST /redfish/v1/Managers/BMC-1/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia")
	assert.Zero(t, st.ETagMismatch)
}

func TestBootFromISOMediaUnderSystemPoweredOnWithOldMedia(t *testing.T) {
	b, addr := bmc(t, redfishsim.Options{Systems: []redfishsim.System{{ID: "node-a", MediaUnderSystem: true, PoweredOn: true}}})
	old, url := mediaServer(t, true), mediaServer(t, true)
	c := client(t, addr, "admin", "pa55-word", 0) // no system path: the only one
	_, err := c.BootFromISO(context.Background(), Media{URL: old}, nil)
	require.NoError(t, err)
	var steps []Step
	out, err := c.BootFromISO(context.Background(), Media{URL: url, Username: "media", Password: "mp"}, func(s Step, _ string) { steps = append(steps, s) })
	require.NoError(t, err)
	assert.Equal(t, Outcome{System: "/redfish/v1/Systems/node-a", Vendor: "Emulated redfishsim (BMC redfishsim BMC, firmware 1.0.0)", Media: "/redfish/v1/Systems/node-a/VirtualMedia/Cd", Under: "System", Ejected: true, EjectedImage: old, BootTarget: "Cd", Power: "ForceRestart"}, out)
	st := b.State("node-a")
	assert.Equal(t, url, st.Image)
	assert.Equal(t, "media", st.MediaUser)
	assert.Equal(t, []string{"cd:" + old, "cd:" + url}, st.Boots)
	assert.Equal(t, []Step{StepFind, StepEject, StepInsert, StepBoot, StepReset}, steps)
	assert.Contains(t, st.Calls, "POST /redfish/v1/Systems/node-a/VirtualMedia/Cd/Actions/VirtualMedia.EjectMedia")
	out, err = c.Eject(context.Background())
	require.NoError(t, err)
	assert.Equal(t, Outcome{System: "/redfish/v1/Systems/node-a", Vendor: "Emulated redfishsim (BMC redfishsim BMC, firmware 1.0.0)", Media: "/redfish/v1/Systems/node-a/VirtualMedia/Cd", Under: "System", Ejected: true, EjectedImage: url}, out)
	assert.False(t, b.State("node-a").Inserted)
	out, err = c.Eject(context.Background())
	require.NoError(t, err)
	assert.False(t, out.Ejected, "nothing to eject")
	assert.Equal(t, "/redfish/v1/Systems/node-a/VirtualMedia/Cd", out.Media)
}

func TestWrongPassword(t *testing.T) {
	b, addr := bmc(t, redfishsim.Options{Systems: []redfishsim.System{{ID: "1"}}})
	c := client(t, addr+"/redfish/v1/Systems/1", "admin", "not-the-Password", 0)
	_, err := c.BootFromISO(context.Background(), Media{URL: mediaServer(t, true)}, nil)
	require.Error(t, err)
	var ce *CallError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, http.StatusUnauthorized, ce.Status)
	msg := err.Error()
	assert.Contains(t, msg, "BMC http://127.0.0.1:")
	assert.Contains(t, msg, "POST /redfish/v1/SessionService/Sessions: HTTP 401 Unauthorized: Invalid user name or password. (Base.1.8.NoValidSession) (check bmc.username and bmc.password)")
	assert.NotContains(t, msg, "not-the-Password")
	assert.False(t, b.State("1").Inserted)
}

func TestStalledBMC(t *testing.T) {
	_, addr := bmc(t, redfishsim.Options{Systems: []redfishsim.System{{ID: "1"}}, Stall: 10 * time.Second})
	c := client(t, addr+"/redfish/v1/Systems/1", "admin", "pa55-word", 300*time.Millisecond)
	start := time.Now()
	_, err := c.BootFromISO(context.Background(), Media{URL: mediaServer(t, true)}, nil)
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Contains(t, err.Error(), "GET /redfish/v1/Systems/1: no answer within 300ms (the BMC is unreachable or hung)")
}

func TestMediaServerIgnoringRanges(t *testing.T) {
	b, addr := bmc(t, redfishsim.Options{Systems: []redfishsim.System{{ID: "1"}}})
	c := client(t, addr+"/redfish/v1/Systems/1", "admin", "pa55-word", 0)
	_, err := c.BootFromISO(context.Background(), Media{URL: mediaServer(t, false)}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "POST /redfish/v1/Managers/BMC-1/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia: HTTP 400 Bad Request: Unable to mount the image: the image server does not support range requests")
	assert.Contains(t, err.Error(), "(the BMC could not mount the image: check that the BMC reaches the ISO URL and that the server answers range requests)")
	assert.Equal(t, "Off", b.State("1").PowerState, "nothing powered on after a failed insert")
}

func TestSeveralSystemsNeedAPath(t *testing.T) {
	_, addr := bmc(t, redfishsim.Options{Systems: []redfishsim.System{{ID: "1"}, {ID: "2"}}})
	c := client(t, addr, "admin", "pa55-word", 0)
	_, err := c.BootFromISO(context.Background(), Media{URL: "http://x/y.iso"}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "manages 2 systems (/redfish/v1/Systems/1, /redfish/v1/Systems/2): name one in the address")
}

func TestHostileBMC(t *testing.T) {
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(bytes.Repeat([]byte("x"), MaxBody+10))
	}))
	defer huge.Close()
	c := client(t, strings.Replace(huge.URL, "http://", "redfish+http://", 1)+"/redfish/v1/Systems/1", "u", "p", 0)
	_, err := c.BootFromISO(context.Background(), Media{URL: "http://x/y.iso"}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "answer larger than 1048576 bytes: refused")

	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://192.0.2.1/steal", http.StatusFound)
	}))
	defer redirect.Close()
	c = client(t, strings.Replace(redirect.URL, "http://", "redfish+http://", 1)+"/redfish/v1/Systems/1", "u", "p", 0)
	_, err = c.BootFromISO(context.Background(), Media{URL: "http://x/y.iso"}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "redirected to another host (192.0.2.1): refused")

	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("<html>\x1b[31mboom</html>"))
	}))
	defer garbage.Close()
	c = client(t, strings.Replace(garbage.URL, "http://", "redfish+http://", 1)+"/redfish/v1/Systems/1", "u", "p", 0)
	_, err = c.BootFromISO(context.Background(), Media{URL: "http://x/y.iso"}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "HTTP 500 Internal Server Error: <html>")
	assert.Contains(t, err.Error(), "(still refused after 3 attempts: wait until the BMC is ready and run agentiso boot again)")
	assert.NotContains(t, err.Error(), "\x1b")
}

func TestParseAddress(t *testing.T) {
	for _, c := range []struct{ in, endpoint, sys, driver string }{
		{"redfish-virtualmedia://10.0.0.5/redfish/v1/Systems/1", "https://10.0.0.5", "/redfish/v1/Systems/1", "redfish-virtualmedia"},
		{"redfish-virtualmedia+http://10.0.0.5:8000/redfish/v1/Systems/abc/", "http://10.0.0.5:8000", "/redfish/v1/Systems/abc", "redfish-virtualmedia"},
		{"idrac-virtualmedia://[fd00::5]/redfish/v1/Systems/System.Embedded.1", "https://[fd00::5]", "/redfish/v1/Systems/System.Embedded.1", "idrac-virtualmedia"},
		{"redfish://bmc.example.com", "https://bmc.example.com", "", "redfish"},
		{"redfish+https://bmc:443/redfish/v1/Systems/1", "https://bmc:443", "/redfish/v1/Systems/1", "redfish"},
		{"ilo5-virtualmedia://10.0.0.9/redfish/v1/Systems/1", "https://10.0.0.9", "/redfish/v1/Systems/1", "ilo5-virtualmedia"},
	} {
		a, err := ParseAddress(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.endpoint, a.Endpoint.String(), c.in)
		assert.Equal(t, c.sys, a.SystemPath, c.in)
		assert.Equal(t, c.driver, a.Driver, c.in)
	}
	for in, want := range map[string]string{
		"ipmi://10.0.0.5:623":                       "IPMI has no virtual media",
		"10.0.0.5":                                  "no scheme, which Metal3 reads as IPMI",
		"libvirt://192.168.122.1":                   "libvirt addresses are virtual BMCs",
		"idrac://10.0.0.5":                          "WS-Management",
		"ilo4://10.0.0.5":                           "iLO 4",
		"irmc://10.0.0.5":                           "iRMC",
		"pxe://x":                                   `unknown scheme "pxe"`,
		"redfish+ftp://x/redfish/v1/Systems/1":      `transport "ftp"`,
		"redfish://u:secret@x/redfish/v1/Systems/1": "carries user information",
		"redfish://x/Systems/1":                     "must be the system's Redfish path",
		"redfish://x/redfish/v1/Systems/../..":      `must not contain ".." segments`,
		"redfish:///redfish/v1/Systems/1":           "has no host",
	} {
		_, err := ParseAddress(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
		assert.NotContains(t, err.Error(), "secret", in)
	}
}

func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{"redfish-virtualmedia://10.0.0.5/redfish/v1/Systems/1", "ipmi://x", "idrac-virtualmedia+http://[::1]:80/redfish/v1/Systems/S", "redfish://u:p@h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAddress(s)
		if err == nil && (a.Endpoint.Host == "" || (a.Endpoint.Scheme != "http" && a.Endpoint.Scheme != "https")) {
			t.Fatalf("%q parsed to %+v", s, a)
		}
	})
}

func FuzzBMCMessage(f *testing.F) {
	f.Add([]byte(`{"error":{"code":"x","message":"m","@Message.ExtendedInfo":[{"MessageId":"Base.1","Message":"bad"}]}}`))
	f.Add([]byte("<html>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := bmcMessage(b)
		if len(m) > 2000 {
			t.Fatalf("message of %d bytes", len(m))
		}
	})
}

// scripted is a BMC that answers GETs from a table of JSON bodies, POSTs
// and PATCHes with 204: a hostile BMC says whatever a test makes it say.
func scripted(t *testing.T, get map[string]string) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		body, ok := get[r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(hs.Close)
	return strings.Replace(hs.URL, "http://", "redfish-virtualmedia+http://", 1)
}

// forged is what a hostile BMC puts after a newline: a line of agentiso's
// own, were it printed raw.
const forged = `\nINFO every host is booting from the agent ISO\r\u001b[2K`

// TestHostileBMCCannotForgeLines: newlines and other control characters
// in what a BMC says (system ids, resource paths, action targets, the
// Image it reports, its allowable values) never reach an error or an
// outcome as such: they are refused or shown as visible escapes.
func TestHostileBMCCannotForgeLines(t *testing.T) {
	sys := func(extra string) string {
		return `{"Id":"1","PowerState":"Off","Links":{"ManagedBy":[]},"VirtualMedia":{"@odata.id":"/redfish/v1/Systems/1/VirtualMedia"}` + extra + `}`
	}
	media := func(id, image, actions string) string {
		return `{"@odata.id":"` + id + `","MediaTypes":["CD"],"Inserted":true,"Image":"` + image + `","Actions":{` + actions + `}}`
	}
	base := func() map[string]string {
		return map[string]string{
			"/redfish/v1/":                          `{"Systems":{"@odata.id":"/redfish/v1/Systems"}}`,
			"/redfish/v1/Systems":                   `{"Members":[{"@odata.id":"/redfish/v1/Systems/1"}]}`,
			"/redfish/v1/Systems/1":                 sys(""),
			"/redfish/v1/Systems/1/VirtualMedia":    `{"Members":[{"@odata.id":"/redfish/v1/Systems/1/VirtualMedia/Cd"}]}`,
			"/redfish/v1/Systems/1/VirtualMedia/Cd": media("/redfish/v1/Systems/1/VirtualMedia/Cd", "http://x/y.iso", ""),
		}
	}
	for name, c := range map[string]struct {
		change func(map[string]string)
		eject  bool
	}{
		"system ids": {change: func(m map[string]string) {
			m["/redfish/v1/Systems"] = `{"Members":[{"@odata.id":"/redfish/v1/Systems/1` + forged + `"},{"@odata.id":"/redfish/v1/Systems/2"}]}`
		}},
		"the only system's id": {change: func(m map[string]string) {
			m["/redfish/v1/Systems"] = `{"Members":[{"@odata.id":"/redfish/v1/Systems/1` + forged + `"}]}`
		}},
		"the Image after the insert": {change: func(m map[string]string) {
			m["/redfish/v1/Systems/1/VirtualMedia/Cd"] = media("/redfish/v1/Systems/1/VirtualMedia/Cd", "http://x/other.iso"+forged, "")
		}},
		"the media's own id": {change: func(m map[string]string) {
			m["/redfish/v1/Systems/1/VirtualMedia/Cd"] = media("/redfish/v1/Systems/1/VirtualMedia/Cd"+forged, "http://x/y.iso", `"#VirtualMedia.EjectMedia":{"target":"/redfish/v1/eject"},"#VirtualMedia.InsertMedia":{"target":"/redfish/v1/insert"}`)
		}, eject: true},
		"an action target": {change: func(m map[string]string) {
			m["/redfish/v1/Systems/1/VirtualMedia/Cd"] = media("/redfish/v1/Systems/1/VirtualMedia/Cd", "http://x/y.iso", `"#VirtualMedia.EjectMedia":{"target":"/redfish/v1/eject`+forged+`"}`)
		}},
		"the allowable boot targets": {change: func(m map[string]string) {
			m["/redfish/v1/Systems/1"] = sys(`,"Boot":{"BootSourceOverrideTarget@Redfish.AllowableValues":["Pxe` + forged + `"]}`)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			get := base()
			c.change(get)
			cl := client(t, scripted(t, get), "u", "p", 5*time.Second)
			var out Outcome
			var err error
			if c.eject {
				out, err = cl.Eject(context.Background())
			} else {
				out, err = cl.BootFromISO(context.Background(), Media{URL: "http://x/y.iso"}, nil)
			}
			require.Error(t, err)
			assert.Equal(t, termsafe.String(err.Error()), err.Error(), "the error holds control characters")
			assert.NotContains(t, err.Error(), "\n")
			for _, s := range []string{out.System, out.Media, out.Under, out.Power} {
				assert.Equal(t, termsafe.String(s), s)
			}
		})
	}
}

// An address refused for any reason never shows its password, nor a
// piece of it: whatever surrounds it in the user information.
func FuzzParseAddressHidesPassword(f *testing.F) {
	for _, s := range [][2]string{{`Pa"ss%zz`, ""}, {"", "%zz"}, {"x", `"y`}, {"%", ""}, {"a\x00", "b"}, {"", ":"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pre, post string) {
		if strings.ContainsAny(pre+post, "/?#@") {
			t.Skip("the password ends at any of these: the rest is not user information")
		}
		for _, host := range []string{"bmc.example.com/redfish/v1/Systems/1", "bmc example.com:x/redfish/v1/Systems/1", "[fd00::1/redfish/v1/Systems/1?q"} {
			s := "redfish-virtualmedia://admin:" + pre + "S3CRET" + post + "@" + host
			_, err := ParseAddress(s)
			require.Error(t, err, s)
			assert.NotContains(t, err.Error(), "S3CRET", s)
			assert.NotContains(t, err.Error(), "\n", s)
		}
	})
}

func TestMalformedAddressHidesPassword(t *testing.T) {
	_, err := ParseAddress(`redfish-virtualmedia://admin:Pa"ss%zzSECRET@host/redfish/v1/Systems/1`)
	require.Error(t, err)
	assert.Equal(t, "BMC address redfish-virtualmedia://admin:xxxxx@host/redfish/v1/Systems/1 is not a URL: net/url: invalid userinfo", err.Error())
	_, err = ParseAddress(`redfish-virtualmedia://admin:Pass%zzSECRET@host/redfish/v1/Systems/1`)
	require.Error(t, err)
	assert.Equal(t, "BMC address redfish-virtualmedia://admin:xxxxx@host/redfish/v1/Systems/1 is not a URL: a '%' not followed by two hexadecimal digits (write a '%' in a password as %25; better, put the credentials in bmc.username and bmc.password)", err.Error())
	_, err = ParseAddress(`admin:Pa"ssSECRET@host/redfish/v1/Systems/1`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "BMC address admin:xxxxx@host/redfish/v1/Systems/1 has no scheme")
}
