package bmcboot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/console"
	"github.com/seed-a052040e/agentiso/internal/fake/redfishsim"
	"github.com/seed-a052040e/agentiso/internal/output"
	"github.com/seed-a052040e/agentiso/internal/termsafe"
	"github.com/seed-a052040e/agentiso/pkg/serve"
)

const installConfig = `apiVersion: v1
metadata:
  name: ostest
baseDomain: test.metalkube.org
controlPlane: {name: master, replicas: 3}
compute: [{name: worker, replicas: 0}]
networking:
  machineNetwork: [{cidr: 192.168.111.0/24}]
platform:
  baremetal:
    apiVIPs: [192.168.111.5]
    ingressVIPs: [192.168.111.4]
    hosts:
%s
pullSecret: '{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}'
sshKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGqSD39lBCzJKKW6OKTsxkQCW+GbT/f+OhO9xZLMB4i7 admin@laptop
`

type hostSpec struct{ name, mac, addr, user, pass string }

func writeDir(t *testing.T, hosts []hostSpec) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for _, h := range hosts {
		fmt.Fprintf(&b, "      - name: %s\n        role: master\n        bootMACAddress: %s\n        bmc: {address: '%s', username: %s, password: '%s'}\n", h.name, h.mac, h.addr, h.user, h.pass)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "install-config.yaml"), fmt.Appendf(nil, installConfig, b.String()), 0o600))
	iso := make([]byte, 40000)
	copy(iso[32768:], "\x01CD001")
	sum := sha256.Sum256(iso)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.x86_64.iso"), iso, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.x86_64.iso.sha256"), []byte(hex.EncodeToString(sum[:])+"  agent.x86_64.iso\n"), 0o644))
	return dir
}

func serveDir(t *testing.T, dir string) string {
	t.Helper()
	s, err := serve.New(serve.Options{Dir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs.URL
}

func emulator(t *testing.T, o redfishsim.Options) (*redfishsim.BMC, string) {
	t.Helper()
	b := redfishsim.New(o)
	hs := httptest.NewServer(b)
	t.Cleanup(hs.Close)
	return b, strings.TrimPrefix(hs.URL, "http://")
}

func TestBootsEveryHostInParallel(t *testing.T) {
	b1, h1 := emulator(t, redfishsim.Options{Username: "admin", Password: "pw1", Systems: []redfishsim.System{{ID: "1"}}})
	b2, h2 := emulator(t, redfishsim.Options{Username: "root", Password: "pw2", Systems: []redfishsim.System{{ID: "System.Embedded.1", MediaUnderSystem: true, PoweredOn: true}}})
	dir := writeDir(t, []hostSpec{
		{"master-0", "52:54:00:00:00:01", "redfish-virtualmedia+http://" + h1 + "/redfish/v1/Systems/1", "admin", "pw1"},
		{"master-1", "52:54:00:00:00:02", "idrac-virtualmedia+http://" + h2 + "/redfish/v1/Systems/System.Embedded.1", "root", "pw2"},
	})
	url := serveDir(t, dir)
	var logs bytes.Buffer
	res, err := Run(context.Background(), Options{Dir: dir, URL: url, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	iso := url + "/agent.x86_64.iso"
	sum, err := os.ReadFile(filepath.Join(dir, "agent.x86_64.iso.sha256"))
	require.NoError(t, err)
	assert.Equal(t, &Result{Action: "boot", Result: "complete", ISO: iso, SHA256: string(sum[:64]), Hosts: []HostResult{
		{Name: "master-0", BMC: "http://" + h1 + "/redfish/v1/Systems/1", Result: "booting",
			System: "/redfish/v1/Systems/1", Vendor: "Emulated redfishsim (BMC redfishsim BMC, firmware 1.0.0)", VirtualMedia: "/redfish/v1/Managers/BMC-1/VirtualMedia/Cd", VirtualMediaUnder: "Manager", BootTarget: "Cd", Power: "On"},
		{Name: "master-1", BMC: "http://" + h2 + "/redfish/v1/Systems/System.Embedded.1", Result: "booting",
			System: "/redfish/v1/Systems/System.Embedded.1", Vendor: "Emulated redfishsim (BMC redfishsim BMC, firmware 1.0.0)", VirtualMedia: "/redfish/v1/Systems/System.Embedded.1/VirtualMedia/Cd", VirtualMediaUnder: "System", BootTarget: "Cd", Power: "ForceRestart"},
	}}, res)
	assert.Equal(t, []string{"cd:" + iso}, b1.State("1").Boots)
	assert.Equal(t, []string{"cd:" + iso}, b2.State("System.Embedded.1").Boots)
	assert.Contains(t, logs.String(), "host master-0: powering on")
	assert.Contains(t, logs.String(), "host master-1: resetting")
	assert.Contains(t, logs.String(), "under the System")
	assert.NotContains(t, logs.String(), "pw1")
	assert.NotContains(t, logs.String(), "pw2")

	// --eject after the install
	logs.Reset()
	res, err = Run(context.Background(), Options{Dir: dir, Eject: true, Hosts: []string{"master-1"}, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	assert.False(t, b2.State("System.Embedded.1").Inserted)
	assert.True(t, b1.State("1").Inserted, "only the host named")
	assert.Contains(t, logs.String(), "host master-1: ejected")
	assert.Equal(t, &Result{Action: "eject", Result: "complete", Hosts: []HostResult{
		{Name: "master-1", BMC: "http://" + h2 + "/redfish/v1/Systems/System.Embedded.1", Result: "ejected", Ejected: true, EjectedImage: iso,
			System: "/redfish/v1/Systems/System.Embedded.1", Vendor: "Emulated redfishsim (BMC redfishsim BMC, firmware 1.0.0)", VirtualMedia: "/redfish/v1/Systems/System.Embedded.1/VirtualMedia/Cd", VirtualMediaUnder: "System"},
	}}, res)
	res, err = Run(context.Background(), Options{Dir: dir, Eject: true})
	require.NoError(t, err)
	assert.False(t, b1.State("1").Inserted)
	assert.Equal(t, []string{"ejected", "nothing-inserted"}, []string{res.Hosts[0].Result, res.Hosts[1].Result})
}

// Hosts named on the command line are the only ones spoken to, also when
// others follow them in install-config.yaml (the filter once emptied its
// set as it matched and let every later host through).
func TestOnlyTheNamedHosts(t *testing.T) {
	var bs []*redfishsim.BMC
	var specs []hostSpec
	for i := range 3 {
		b, h := emulator(t, redfishsim.Options{Username: "admin", Password: "pw", Systems: []redfishsim.System{{ID: "1"}}})
		bs = append(bs, b)
		specs = append(specs, hostSpec{fmt.Sprintf("master-%d", i), fmt.Sprintf("52:54:00:00:00:0%d", i+1), "redfish-virtualmedia+http://" + h + "/redfish/v1/Systems/1", "admin", "pw"})
	}
	dir := writeDir(t, specs)
	res, err := Run(context.Background(), Options{Dir: dir, URL: serveDir(t, dir), Hosts: []string{"master-1", "master-0"}})
	require.NoError(t, err)
	require.Len(t, res.Hosts, 2)
	assert.Equal(t, []string{"master-0", "master-1"}, []string{res.Hosts[0].Name, res.Hosts[1].Name})
	assert.Len(t, bs[0].State("1").Boots, 1)
	assert.Len(t, bs[1].State("1").Boots, 1)
	assert.Empty(t, bs[2].State("1").Calls, "master-2 was not named")
}

func TestWrongPasswordNamesTheHost(t *testing.T) {
	b1, h1 := emulator(t, redfishsim.Options{Username: "admin", Password: "pw1", Systems: []redfishsim.System{{ID: "1"}}})
	b2, h2 := emulator(t, redfishsim.Options{Username: "admin", Password: "pw2", Systems: []redfishsim.System{{ID: "1"}}})
	dir := writeDir(t, []hostSpec{
		{"master-0", "52:54:00:00:00:01", "redfish-virtualmedia+http://" + h1 + "/redfish/v1/Systems/1", "admin", "pw1"},
		{"master-1", "52:54:00:00:00:02", "redfish-virtualmedia+http://" + h2 + "/redfish/v1/Systems/1", "admin", "Wrong-Secret"},
	})
	res, err := Run(context.Background(), Options{Dir: dir, URL: serveDir(t, dir)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "1 of 2 host(s) failed:\n  host master-1: BMC http://"+h2+"/redfish/v1/Systems/1: POST /redfish/v1/SessionService/Sessions: HTTP 401 Unauthorized: ")
	assert.Contains(t, err.Error(), "(check bmc.username and bmc.password)")
	assert.NotContains(t, err.Error(), "Wrong-Secret")
	assert.Len(t, b1.State("1").Boots, 1, "the other host still boots")
	assert.Empty(t, b2.State("1").Boots)
	// The result says the same, host by host, without the credentials.
	require.NotNil(t, res)
	assert.Equal(t, "failed", res.Result)
	assert.Equal(t, err.Error(), res.Error)
	assert.Equal(t, "booting", res.Hosts[0].Result)
	h := res.Hosts[1]
	assert.Equal(t, "failed", h.Result)
	assert.Equal(t, "finding virtual media", h.Step)
	assert.Contains(t, h.Error, "BMC http://"+h2+"/redfish/v1/Systems/1: POST /redfish/v1/SessionService/Sessions: HTTP 401 Unauthorized: ")
	assert.Empty(t, h.VirtualMedia)
	js, jerr := json.Marshal(res)
	require.NoError(t, jerr)
	assert.NotContains(t, string(js), "Wrong-Secret")
	assert.NotContains(t, string(js), "pw1")
}

func TestStalledBMCTimesOut(t *testing.T) {
	_, h1 := emulator(t, redfishsim.Options{Username: "admin", Password: "pw1", Stall: time.Minute, Systems: []redfishsim.System{{ID: "1"}}})
	dir := writeDir(t, []hostSpec{{"master-0", "52:54:00:00:00:01", "redfish-virtualmedia+http://" + h1 + "/redfish/v1/Systems/1", "admin", "pw1"}})
	start := time.Now()
	_, err := Run(context.Background(), Options{Dir: dir, URL: serveDir(t, dir), CallTimeout: 500 * time.Millisecond})
	require.Error(t, err)
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Contains(t, err.Error(), "host master-0: BMC http://"+h1+"/redfish/v1/Systems/1: GET /redfish/v1/Systems/1: no answer within 500ms")
}

func TestRefusedBeforeAnyBMCIsTouched(t *testing.T) {
	b1, h1 := emulator(t, redfishsim.Options{Username: "admin", Password: "pw1", Systems: []redfishsim.System{{ID: "1"}}})
	dir := writeDir(t, []hostSpec{
		{"master-0", "52:54:00:00:00:01", "redfish-virtualmedia+http://" + h1 + "/redfish/v1/Systems/1", "admin", "pw1"},
		{"master-1", "52:54:00:00:00:02", "ipmi://10.0.0.6:623", "admin", "pw"},
	})
	res, err := Run(context.Background(), Options{Dir: dir, URL: serveDir(t, dir)})
	require.Error(t, err)
	assert.Nil(t, res, "no BMC was spoken to: no result")
	assert.Contains(t, err.Error(), "cannot boot through the BMCs; nothing was done:\n  host master-1 (install-config.yaml: platform.baremetal.hosts[1].bmc.address): BMC address ipmi://10.0.0.6:623: IPMI has no virtual media")
	assert.Empty(t, b1.State("1").Calls)

	_, err = Run(context.Background(), Options{Dir: dir, URL: serveDir(t, dir), Hosts: []string{"master-9"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no host named master-9 has a BMC in install-config.yaml (hosts with one: master-0, master-1)")
}

func TestMediaServerIgnoringRanges(t *testing.T) {
	b1, h1 := emulator(t, redfishsim.Options{Username: "admin", Password: "pw1", Systems: []redfishsim.System{{ID: "1"}}})
	dir := writeDir(t, []hostSpec{{"master-0", "52:54:00:00:00:01", "redfish-virtualmedia+http://" + h1 + "/redfish/v1/Systems/1", "admin", "pw1"}})
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := os.ReadFile(filepath.Join(dir, "agent.x86_64.iso"))
		_, _ = w.Write(b)
	}))
	defer plain.Close()
	res, err := Run(context.Background(), Options{Dir: dir, URL: plain.URL})
	require.Error(t, err)
	assert.Nil(t, res)
	assert.Contains(t, err.Error(), "ignores range requests (it answered 200 with the whole file to Range: bytes=0-0): BMC virtual media reads the ISO in ranges")
	assert.Empty(t, b1.State("1").Calls)

	// Another directory's ISO behind the URL.
	other := writeDir(t, []hostSpec{{"x", "52:54:00:00:00:09", "redfish://x/redfish/v1/Systems/1", "a", "b"}})
	require.NoError(t, os.WriteFile(filepath.Join(other, "agent.x86_64.iso"), bytes.Repeat([]byte{1}, 40000), 0o600))
	sum := sha256.Sum256(bytes.Repeat([]byte{1}, 40000))
	require.NoError(t, os.WriteFile(filepath.Join(other, "agent.x86_64.iso.sha256"), []byte(hex.EncodeToString(sum[:])+"  agent.x86_64.iso\n"), 0o644))
	_, err = Run(context.Background(), Options{Dir: dir, URL: serveDir(t, other)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "serves another ISO (sha256 "+hex.EncodeToString(sum[:]))
}

// On a terminal the hosts are one table redrawn in place: a header and a
// row per host, the cursor moved up over the previous drawing, the final
// state of each host in the last drawing, no credentials.
func TestLiveTable(t *testing.T) {
	_, h1 := emulator(t, redfishsim.Options{Username: "admin", Password: "pw1", Systems: []redfishsim.System{{ID: "1"}}})
	_, h2 := emulator(t, redfishsim.Options{Username: "admin", Password: "pw2", Systems: []redfishsim.System{{ID: "1"}}})
	dir := writeDir(t, []hostSpec{
		{"master-0", "52:54:00:00:00:01", "redfish-virtualmedia+http://" + h1 + "/redfish/v1/Systems/1", "admin", "pw1"},
		{"master-long-name-1", "52:54:00:00:00:02", "redfish-virtualmedia+http://" + h2 + "/redfish/v1/Systems/1", "admin", "Wrong-pw"},
	})
	var tb bytes.Buffer
	_, err := Run(context.Background(), Options{Dir: dir, URL: serveDir(t, dir), Table: &tb, Live: true})
	require.Error(t, err)
	out := tb.String()
	assert.Contains(t, out, "\x1b[3A", "the table is redrawn in place")
	last := out[strings.LastIndex(out, "\x1b[3A"):]
	assert.Regexp(t, `HOST +BMC +STATE`, last)
	assert.Regexp(t, `master-0 +http://`+strings.ReplaceAll(h1, ".", `\.`)+`/redfish/v1/Syste… +booting from the ISO`, last)
	assert.Regexp(t, `master-long-name-1 +http://.* +failed \(below\)`, last)
	assert.NotContains(t, out, "Wrong-pw")
	assert.NotContains(t, out, "pw1")
	// The STATE column lines up (the ellipsis is one character, three bytes).
	var cols []int
	plain := regexp.MustCompile(`\x1b\[[0-9]*[AK]`).ReplaceAllString(last, "")
	for _, l := range strings.Split(strings.TrimSpace(plain), "\n") {
		for _, w := range []string{"STATE", "booting", "failed"} {
			if i := strings.Index(l, w); i >= 0 {
				cols = append(cols, utf8.RuneCountInString(l[:i]))
			}
		}
	}
	require.Len(t, cols, 3)
	assert.Equal(t, cols[0], cols[1])
	assert.Equal(t, cols[0], cols[2])
}

// A run stopped before any BMC: failed, no host (an empty list, not null,
// for scripts), the error and the action kept.
func TestFailedBefore(t *testing.T) {
	b, err := json.Marshal(FailedBefore(false, fmt.Errorf("--url is required")))
	require.NoError(t, err)
	assert.JSONEq(t, `{"action":"boot","result":"failed","hosts":[],"error":"--url is required"}`, string(b))
	r := FailedBefore(true, nil)
	assert.Equal(t, "eject", r.Action)
	assert.Empty(t, r.Error)
}

// hostileBMC answers GETs from a table of JSON bodies, the rest with 204.
func hostileBMC(t *testing.T, get map[string]string) string {
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
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(hs.Close)
	return strings.TrimPrefix(hs.URL, "http://")
}

// printed is everything boot prints for a run: its log lines and final
// error as the terminal shows them, and its result as -o json and -o yaml.
func printed(t *testing.T, logs *bytes.Buffer, res *Result, err error) string {
	t.Helper()
	out := logs.String()
	if err != nil {
		out += console.Line(slog.LevelError, err.Error(), false)
	}
	for _, f := range []output.Format{output.JSON, output.YAML} {
		var b bytes.Buffer
		require.NoError(t, output.Write(&b, f, res))
		out += b.String()
	}
	return out
}

// A hostile BMC cannot forge a line of boot's output: the Image it says
// is inserted (ejected, or another than the one asked for) and its
// resource ids reach no line, text or -o json|yaml, with a newline or any
// other control character.
func TestHostileBMCForgesNoLine(t *testing.T) {
	const forged = `\nINFO every host is booting from the agent ISO`
	sysJSON := `{"Id":"1","PowerState":"Off","VirtualMedia":{"@odata.id":"/redfish/v1/Systems/1/VirtualMedia"}}`
	get := map[string]string{
		"/redfish/v1/Systems/1":              sysJSON,
		"/redfish/v1/Systems/1/VirtualMedia": `{"Members":[{"@odata.id":"/redfish/v1/Systems/1/VirtualMedia/Cd"}]}`,
		"/redfish/v1/Systems/1/VirtualMedia/Cd": `{"@odata.id":"/redfish/v1/Systems/1/VirtualMedia/Cd","MediaTypes":["CD"],"Inserted":true,"Image":"http://old/x.iso` + forged + `",` +
			`"Actions":{"#VirtualMedia.InsertMedia":{"target":"/redfish/v1/Systems/1/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia"},"#VirtualMedia.EjectMedia":{"target":"/redfish/v1/Systems/1/VirtualMedia/Cd/Actions/VirtualMedia.EjectMedia"}}}`,
	}
	h := hostileBMC(t, get)
	dir := writeDir(t, []hostSpec{{"master-0", "52:54:00:00:00:01", "redfish-virtualmedia+http://" + h + "/redfish/v1/Systems/1", "admin", "pw1"}})
	check := func(out string) {
		t.Helper()
		for _, l := range strings.Split(out, "\n") {
			assert.NotRegexp(t, `^\s*INFO every host`, l, "a forged line")
			assert.Equal(t, termsafe.String(l), l, "a control character")
		}
	}
	for _, eject := range []bool{true, false} {
		var logs bytes.Buffer
		log := slog.New(console.NewHandler(&logs, slog.LevelDebug, false))
		o := Options{Dir: dir, Eject: eject, Log: log}
		if !eject {
			o.URL = serveDir(t, dir)
		}
		res, err := Run(context.Background(), o)
		require.NotNil(t, res)
		if eject {
			require.NoError(t, err)
			assert.Equal(t, `http://old/x.iso\nINFO every host is booting from the agent ISO`, res.Hosts[0].EjectedImage)
		} else {
			// The BMC still says the old image after the insert.
			require.Error(t, err)
			assert.Contains(t, err.Error(), `Image http://old/x.iso\nINFO every host`)
		}
		check(printed(t, &logs, res, err))
	}
}

// A malformed BMC address never prints its password: not in the error,
// not in -o json's object (a '"' once defeated the masking: the address
// was quoted with %q, the quote escaped, the password left whole).
func TestMalformedAddressHidesPassword(t *testing.T) {
	for _, addr := range []string{
		`redfish-virtualmedia://admin:Pa"ss%zzSECRET@bmc.example.com/redfish/v1/Systems/1`,
		`redfish-virtualmedia://admin:SECRET%zz@bmc.example.com/redfish/v1/Systems/1`,
		`redfish-virtualmedia://admin:SECRET"x@bmc example.com/redfish/v1/Systems/1`,
		`redfish-virtualmedia://admin:SECRET@bmc.example.com:port/redfish/v1/Systems/1`,
		`redfish-virtualmedia://admin:SECRET@bmc.example.com/redfish/v1/Systems/1?x=1`,
		`admin:Pa"ssSECRET@bmc.example.com/redfish/v1/Systems/1`,
		`redfish-virtualmedia://admin:SECRET%@[fd00::1/redfish/v1/Systems/1`,
	} {
		dir := writeDir(t, []hostSpec{{"master-0", "52:54:00:00:00:01", strings.ReplaceAll(addr, "'", "''"), "admin", "pw"}})
		var logs bytes.Buffer
		res, err := Run(context.Background(), Options{Dir: dir, URL: "http://127.0.0.1:1", Log: slog.New(console.NewHandler(&logs, slog.LevelDebug, false))})
		require.Error(t, err, addr)
		assert.Nil(t, res)
		assert.Contains(t, err.Error(), "master-0", addr)
		out := printed(t, &logs, FailedBefore(false, err), err)
		assert.NotContains(t, out, "SECRET", addr)
		assert.NotContains(t, out, "zz", addr)
	}
	// Two hosts with the same address: install-config.yaml's check names
	// the duplicate, masked.
	addr := `redfish-virtualmedia://admin:Pa"ss%zzSECRET@bmc.example.com/redfish/v1/Systems/1`
	dir := writeDir(t, []hostSpec{{"master-0", "52:54:00:00:00:01", addr, "admin", "pw"}, {"master-1", "52:54:00:00:00:02", addr, "admin", "pw"}})
	_, err := Run(context.Background(), Options{Dir: dir, URL: "http://127.0.0.1:1"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "platform.baremetal.hosts[1].bmc.address: Duplicate value")
	assert.NotContains(t, err.Error(), "SECRET")
}

// writeISO writes an ISO-looking file and its .sha256 into dir.
func writeISO(t *testing.T, dir, name string) {
	t.Helper()
	iso := make([]byte, 40000)
	copy(iso[32768:], "\x01CD001")
	copy(iso, name)
	sum := sha256.Sum256(iso)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), iso, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".sha256"), []byte(hex.EncodeToString(sum[:])+"  "+name+"\n"), 0o644))
}

// The generic ISO boots with its config image in a second slot: both
// served by agentiso serve, both checked before any BMC is touched.
func TestBootsTheGenericISOWithItsConfigImage(t *testing.T) {
	b, h := emulator(t, redfishsim.Options{Username: "admin", Password: "pw1", Systems: []redfishsim.System{{ID: "1"}}})
	dir := writeDir(t, []hostSpec{{"master-0", "52:54:00:00:00:01", "redfish-virtualmedia+http://" + h + "/redfish/v1/Systems/1", "admin", "pw1"}})
	require.NoError(t, os.Remove(filepath.Join(dir, "agent.x86_64.iso")))
	require.NoError(t, os.Remove(filepath.Join(dir, "agent.x86_64.iso.sha256")))
	writeISO(t, dir, "agent-unconfigured.x86_64.iso")
	writeISO(t, dir, "agentconfig.noarch.iso")
	url := serveDir(t, dir)
	var logs bytes.Buffer
	res, err := Run(context.Background(), Options{Dir: dir, URL: url, ConfigImage: true, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err, logs.String())
	iso, cfg := url+"/agent-unconfigured.x86_64.iso", url+"/agentconfig.noarch.iso"
	assert.Equal(t, iso, res.ISO)
	assert.Equal(t, cfg, res.ConfigImage)
	assert.Len(t, res.ConfigSHA256, 64)
	assert.Equal(t, "/redfish/v1/Managers/BMC-1/VirtualMedia/Floppy1", res.Hosts[0].ConfigMedia)
	st := b.State("1")
	assert.Equal(t, []string{"cd:" + iso}, st.Boots)
	assert.Equal(t, map[string]string{"Cd": iso, "Floppy1": cfg}, st.Slots)

	// --eject takes both out
	res, err = Run(context.Background(), Options{Dir: dir, Eject: true})
	require.NoError(t, err)
	assert.Equal(t, cfg, res.Hosts[0].EjectedConfig)
	assert.Empty(t, b.State("1").Slots)
}

// Which ISO boots: the agent ISO by default; --iso names another; a
// directory with only other ISOs boots the one it holds, or asks which.
// Every refusal comes before any BMC is touched.
func TestChoosesTheISO(t *testing.T) {
	b, h := emulator(t, redfishsim.Options{Username: "admin", Password: "pw1", Systems: []redfishsim.System{{ID: "1"}}})
	dir := writeDir(t, []hostSpec{{"master-0", "52:54:00:00:00:01", "redfish-virtualmedia+http://" + h + "/redfish/v1/Systems/1", "admin", "pw1"}})
	writeISO(t, dir, "node.x86_64.iso")
	url := serveDir(t, dir)
	res, err := Run(context.Background(), Options{Dir: dir, URL: url})
	require.NoError(t, err)
	assert.Equal(t, url+"/agent.x86_64.iso", res.ISO)
	res, err = Run(context.Background(), Options{Dir: dir, URL: url, ISO: "node.x86_64.iso"})
	require.NoError(t, err)
	assert.Equal(t, url+"/node.x86_64.iso", res.ISO)
	assert.Equal(t, []string{"cd:" + url + "/agent.x86_64.iso", "cd:" + url + "/node.x86_64.iso"}, b.State("1").Boots)

	calls := len(b.State("1").Calls)
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{ISO: "missing.iso"}, "--iso missing.iso: no such ISO in " + dir + " (ISOs there: agent.x86_64.iso, node.x86_64.iso)"},
		{Options{ISO: "../agent.x86_64.iso"}, "--iso ../agent.x86_64.iso: give the file name of an ISO in --dir"},
		{Options{ISO: "install-config.yaml"}, "--iso install-config.yaml: give the file name of an ISO in --dir"},
		{Options{URL: url + "/agent.x86_64.iso", ISO: "node.x86_64.iso"}, "--url names an ISO (agent.x86_64.iso) and --iso another (node.x86_64.iso): give one"},
		{Options{ConfigImage: true}, "--config-image goes with the generic ISO (agent-unconfigured.<arch>.iso): agent.x86_64.iso carries its configuration"},
		{Options{ISO: "node.x86_64.iso", ConfigImage: true}, "--config-image goes with the generic ISO"},
	} {
		o := tc.o
		o.Dir = dir
		if o.URL == "" {
			o.URL = url
		}
		_, err := Run(context.Background(), o)
		if assert.Error(t, err, "%+v", tc.o) {
			assert.Contains(t, err.Error(), tc.want)
		}
	}
	assert.Len(t, b.State("1").Calls, calls, "no BMC call for a refused choice")

	// Only other ISOs: two of them, so which one must be said.
	require.NoError(t, os.Remove(filepath.Join(dir, "agent.x86_64.iso")))
	writeISO(t, dir, "agent-unconfigured.x86_64.iso")
	_, err = Run(context.Background(), Options{Dir: dir, URL: url})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no agent ISO (agent.<arch>.iso) in "+dir+" but 2 other ISOs: agent-unconfigured.x86_64.iso, node.x86_64.iso: name the one to boot with --iso")
	// The generic ISO without its config image: said before anything.
	_, err = Run(context.Background(), Options{Dir: dir, URL: url, ISO: "agent-unconfigured.x86_64.iso", ConfigImage: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--config-image: no agentconfig.noarch.iso in "+dir+": run agentiso create config-image first")
}
