package redfishsim

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"net/http/httptest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSushyAgainstProfiles boots every vendor profile with Debian's
// python3-sushy 4.3.3 as Ironic's redfish-virtual-media interface drives
// it: the profiles must be usable by the Redfish client that drives real
// BMCs, and their quirks must bite it where they bite real hardware. sushy
// 4.3.3 has the Supermicro (11a6de2, f7c873f), PATCH-insert (9e5a103),
// Settings object (1ddf9d7) and session handling, so those hosts boot (an
// AMI/ASRockRack only when the mode is sent, as Ironic does); without
// Dell's OEM extension the iDRAC 9 5.x boots its local optical drive; it
// predates virtual media under the System (iDRAC 9 6.x, 10), so only the
// boot override is tried there. One sushy process drives every BMC.
func TestSushyAgainstProfiles(t *testing.T) {
	py := sushyPython(t)
	image := isoServer(t)
	type want struct {
		p                Profile
		sys, full, boots string
		err              string
	}
	cases := map[string]want{
		"generic":        {ProfileGeneric, "1", "-", "cd:" + image, ""},
		"supermicro":     {ProfileSupermicro, "1", "-", "cd:" + image, ""},
		"lenovo":         {ProfileLenovoXCC, "1", "-", "cd:" + image, ""},
		"asrock-full":    {ProfileASRockRack, "1", "full", "cd:" + image, ""},
		"ilo5":           {ProfileILO5, "1", "-", "cd:" + image, ""},
		"basic-disabled": {ProfileBasicDisabled, "1", "-", "cd:" + image, ""},
		"idrac9-5x":      {ProfileIDRAC9Old, "System.Embedded.1", "-", "local-optical", ""},
		"idrac10":        {ProfileIDRAC10, "System.Embedded.1", "-", "default", ""},
		"asrock-minimal": {ProfileASRockRack, "1", "-", "", "error BadRequestError 400 Base.1.8.PropertyMissing"},
	}
	bmcs := map[string]*BMC{}
	args := []string{"testdata/sushy_profiles.py", "admin", "pw", image}
	for name, c := range cases {
		b := New(Options{Username: "admin", Password: "pw", Profile: c.p, Systems: []System{{ID: c.sys}}})
		hs := httptest.NewServer(b)
		defer hs.Close()
		bmcs[name] = b
		args = append(args, name+"="+hs.URL+","+c.sys+","+c.full)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, args...).CombinedOutput()
	t.Logf("sushy:\n%s", out)
	require.NoError(t, err)
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Contains(t, string(out), name+" SUSHY done\n")
			st := bmcs[name].State(c.sys)
			if c.err != "" {
				assert.Contains(t, string(out), name+" SUSHY "+c.err+"\n")
				assert.Empty(t, st.Boots)
				return
			}
			assert.NotContains(t, string(out), name+" SUSHY error")
			assert.Equal(t, []string{c.boots}, st.Boots)
			if c.p == ProfileBasicDisabled {
				assert.Equal(t, 1, bmcs[name].Logins(), "sushy logged in with a session")
			}
			if c.p == ProfileIDRAC10 {
				// sushy 4.3.3 writes the override to the Settings object
				// (1ddf9d7); it cannot reach the media under the System
				assert.Contains(t, st.Calls, "PATCH /redfish/v1/Systems/System.Embedded.1/Settings")
				assert.Contains(t, string(out), name+" SUSHY no-manager-virtual-media\n")
			}
			if c.p == ProfileLenovoXCC {
				assert.Contains(t, strings.Join(st.Calls, "\n"), "PATCH /redfish/v1/Managers/1/VirtualMedia/EXT1", "sushy PATCHed the slot")
			}
		})
	}
}
