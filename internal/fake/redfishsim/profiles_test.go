package redfishsim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// do is one raw Redfish call with Basic authentication.
func do(t *testing.T, base, method, path string, body any, hdr ...string) (int, string) {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, base+path, rd)
	require.NoError(t, err)
	req.SetBasicAuth("admin", "pw")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

func isoServer(t *testing.T) string {
	t.Helper()
	img := make([]byte, 40000)
	copy(img[32768:], "\x01CD001")
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(img))
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/a.iso"
}

// The quirks hold: the standard recipe (InsertMedia with Inserted and
// WriteProtected, a one-time Cd boot on the System, a reset) does not
// boot these vendors' hosts from the virtual CD, each for the reason its
// source documents.
func TestProfileQuirksRefuseTheStandardRecipe(t *testing.T) {
	iso := isoServer(t)
	std := map[string]any{"Image": iso, "Inserted": true, "WriteProtected": true}
	cd := map[string]any{"Boot": map[string]any{"BootSourceOverrideEnabled": "Once", "BootSourceOverrideTarget": "Cd"}}
	for _, tc := range []struct {
		p                  Profile
		sys, insert        string
		insertCode, bootOK int
		refused            string
		boots              string
	}{
		{ProfileSupermicro, "1", "/redfish/v1/Managers/1/VirtualMedia/CD1/Actions/VirtualMedia.InsertMedia", 400, 204, "Base.1.4.PropertyUnknown", "local-optical"},
		{ProfileIDRAC9Old, "S", "/redfish/v1/Managers/iDRAC.Embedded.1/VirtualMedia/CD/Actions/VirtualMedia.InsertMedia", 204, 204, "", "local-optical"},
		{ProfileIDRAC10, "S", "/redfish/v1/Systems/S/VirtualMedia/2/Actions/VirtualMedia.InsertMedia", 204, 400, "Base.1.12.PropertyNotWritable", "default"},
		{ProfileLenovoXCC, "1", "/redfish/v1/Managers/1/VirtualMedia/EXT1/Actions/VirtualMedia.InsertMedia", 404, 204, "", "default"},
		{ProfileASRockRack, "1", "/redfish/v1/Managers/Self/VirtualMedia/CD1/Actions/VirtualMedia.InsertMedia", 204, 400, "Base.1.8.PropertyMissing", "default"},
	} {
		t.Run(string(tc.p), func(t *testing.T) {
			b := New(Options{Username: "admin", Password: "pw", Profile: tc.p, Systems: []System{{ID: tc.sys}}})
			hs := httptest.NewServer(b)
			defer hs.Close()
			code, body := do(t, hs.URL, http.MethodPost, tc.insert, std)
			assert.Equal(t, tc.insertCode, code, body)
			code, body = do(t, hs.URL, http.MethodPatch, "/redfish/v1/Systems/"+tc.sys, cd)
			assert.Equal(t, tc.bootOK, code, body)
			code, _ = do(t, hs.URL, http.MethodPost, "/redfish/v1/Systems/"+tc.sys+"/Actions/ComputerSystem.Reset", map[string]any{"ResetType": "On"})
			assert.Equal(t, 204, code)
			st := b.State(tc.sys)
			assert.Equal(t, []string{tc.boots}, st.Boots)
			if tc.refused != "" {
				assert.Contains(t, st.Refused, tc.refused)
			}
		})
	}
}

// Each vendor's own recipe boots, and what the emulator does with it.
func TestProfileRecipesBoot(t *testing.T) {
	iso := isoServer(t)
	t.Run("lenovo PATCH needs If-Match", func(t *testing.T) {
		b := New(Options{Username: "admin", Password: "pw", Profile: ProfileLenovoXCC, Systems: []System{{ID: "1"}}})
		hs := httptest.NewServer(b)
		defer hs.Close()
		body := map[string]any{"Image": iso, "Inserted": true, "WriteProtected": true}
		code, _ := do(t, hs.URL, http.MethodPatch, "/redfish/v1/Managers/1/VirtualMedia/EXT1", body)
		assert.Equal(t, http.StatusPreconditionRequired, code)
		req, _ := http.NewRequest(http.MethodGet, hs.URL+"/redfish/v1/Managers/1/VirtualMedia/EXT1", nil)
		req.SetBasicAuth("admin", "pw")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, "GET, PATCH", resp.Header.Get("Allow"))
		code, _ = do(t, hs.URL, http.MethodPatch, "/redfish/v1/Managers/1/VirtualMedia/EXT1", body, "If-Match", resp.Header.Get("ETag"))
		assert.Equal(t, 204, code)
		assert.Equal(t, iso, b.State("1").Slots["EXT1"])
	})
	t.Run("idrac 5.x OEM import", func(t *testing.T) {
		b := New(Options{Username: "admin", Password: "pw", Profile: ProfileIDRAC9Old, Systems: []System{{ID: "S"}}})
		hs := httptest.NewServer(b)
		defer hs.Close()
		code, _ := do(t, hs.URL, http.MethodPost, "/redfish/v1/Managers/iDRAC.Embedded.1/VirtualMedia/CD/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": iso})
		require.Equal(t, 204, code)
		scp := `<SystemConfiguration><Component FQDD="iDRAC.Embedded.1"><Attribute Name="ServerBoot.1#BootOnce">Enabled</Attribute><Attribute Name="ServerBoot.1#FirstBootDevice">VCD-DVD</Attribute></Component></SystemConfiguration>`
		code, _ = do(t, hs.URL, http.MethodPost, "/redfish/v1/Managers/iDRAC.Embedded.1/Actions/Oem/EID_674_Manager.ImportSystemConfiguration", map[string]any{"ShareParameters": map[string]any{"Target": []string{"ALL"}}, "ImportBuffer": scp})
		assert.Equal(t, http.StatusAccepted, code)
		code, _ = do(t, hs.URL, http.MethodPost, "/redfish/v1/Systems/S/Actions/ComputerSystem.Reset", map[string]any{"ResetType": "On"})
		assert.Equal(t, 204, code)
		code, _ = do(t, hs.URL, http.MethodPost, "/redfish/v1/Systems/S/Actions/ComputerSystem.Reset", map[string]any{"ResetType": "ForceRestart"})
		assert.Equal(t, 204, code)
		assert.Equal(t, []string{"cd:" + iso, "default"}, b.State("S").Boots, "once")
	})
	t.Run("idrac 10 settings and slot 1", func(t *testing.T) {
		var booted []string
		b := New(Options{Username: "admin", Password: "pw", Profile: ProfileIDRAC10, Systems: []System{{ID: "S"}}, OnBoot: func(_, image string) { booted = append(booted, image) }})
		hs := httptest.NewServer(b)
		defer hs.Close()
		code, _ := do(t, hs.URL, http.MethodPost, "/redfish/v1/Systems/S/VirtualMedia/2/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": iso})
		require.Equal(t, 204, code)
		code, _ = do(t, hs.URL, http.MethodPatch, "/redfish/v1/Systems/S/Settings", map[string]any{"Boot": map[string]any{"BootSourceOverrideEnabled": "Once", "BootSourceOverrideTarget": "Cd"}})
		require.Equal(t, 204, code)
		code, _ = do(t, hs.URL, http.MethodPost, "/redfish/v1/Systems/S/Actions/ComputerSystem.Reset", map[string]any{"ResetType": "On"})
		require.Equal(t, 204, code)
		assert.Equal(t, []string{"default"}, b.State("S").Boots, "slot 2 does not boot")
		assert.Equal(t, []string{""}, booted, "OnBoot has no image when the CD did not boot")
		code, _ = do(t, hs.URL, http.MethodPost, "/redfish/v1/Systems/S/VirtualMedia/1/Actions/VirtualMedia.InsertMedia", map[string]any{"Image": iso})
		require.Equal(t, 204, code)
		code, _ = do(t, hs.URL, http.MethodPatch, "/redfish/v1/Systems/S/Settings", map[string]any{"Boot": map[string]any{"BootSourceOverrideEnabled": "Once", "BootSourceOverrideTarget": "Cd"}})
		require.Equal(t, 204, code)
		code, _ = do(t, hs.URL, http.MethodPost, "/redfish/v1/Systems/S/Actions/ComputerSystem.ForceRestart", nil)
		assert.Equal(t, 404, code)
		code, _ = do(t, hs.URL, http.MethodPost, "/redfish/v1/Systems/S/Actions/ComputerSystem.Reset", map[string]any{"ResetType": "ForceRestart"})
		require.Equal(t, 204, code)
		assert.Equal(t, []string{"default", "cd:" + iso}, b.State("S").Boots)
		assert.Equal(t, []string{"", iso}, booted)
	})
	t.Run("basic disabled", func(t *testing.T) {
		b := New(Options{Username: "admin", Password: "pw", Profile: ProfileBasicDisabled, Systems: []System{{ID: "1"}}})
		hs := httptest.NewServer(b)
		defer hs.Close()
		code, body := do(t, hs.URL, http.MethodGet, "/redfish/v1/Systems/1", nil)
		assert.Equal(t, 401, code)
		assert.Contains(t, body, "HTTP Basic authentication is disabled")
		resp, err := http.Post(hs.URL+"/redfish/v1/SessionService/Sessions", "application/json", strings.NewReader(`{"UserName":"admin","Password":"pw"}`))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 201, resp.StatusCode)
		req, _ := http.NewRequest(http.MethodGet, hs.URL+"/redfish/v1/Systems/1", nil)
		req.Header.Set("X-Auth-Token", resp.Header.Get("X-Auth-Token"))
		r2, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		r2.Body.Close()
		assert.Equal(t, 200, r2.StatusCode)
		assert.Equal(t, 1, b.OpenSessions())
	})
}
