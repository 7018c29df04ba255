package ignition

import (
	"encoding/json"
	"path"
	"strings"
	"testing"

	v32 "github.com/coreos/ignition/v2/config/v3_2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzBuild feeds user-controlled host fields into Build. Property: Build
// either rejects the input or produces a config Ignition accepts, in which
// the host's files carry exactly what was given.
func FuzzBuild(f *testing.F) {
	f.Add("master-0", "52:54:01:AA:AA:A1", "master", "--append-karg", `{"ignition":{"version":"3.2.0"}}`, "belongs-to-majority-group", "http://proxy:3128", "192.168.111.80")
	f.Add("", "52:54:01:aa:aa:a1", "", "", "", "", "", "fd00::5")
	f.Add("../etc", "zz", "bootstrap", "a\nb", "[]", "Bad Id", `http://"x"`, "1.2.3")
	f.Add("w\x00", "52-54-01-AA-AA-A1", "worker", "ip=eth0:dhcp", "{}", "ntp-synced", "", "10.0.0.1")
	f.Fuzz(func(t *testing.T, hostname, mac, role, arg, override, validation, proxy, rendezvous string) {
		in := snoInput()
		in.RendezvousIP = rendezvous
		in.Hosts = []Host{{Hostname: hostname, Role: role, MACs: []string{mac}, IgnitionConfigOverride: override}}
		if arg != "" {
			in.Hosts[0].InstallerArgs = []string{arg}
		}
		if validation != "" {
			in.DisabledHostValidations = []string{validation}
		}
		if proxy != "" {
			in.Proxy = &Proxy{HTTPProxy: proxy}
		}
		cfg, _, err := Build(in)
		if err != nil {
			assert.Contains(t, err.Error(), "invalid ignition input")
			return
		}
		raw, err := MarshalIndent(cfg)
		require.NoError(t, err)
		_, rpt, err := v32.Parse(raw)
		require.NoError(t, err, rpt.String())

		dir := path.Join(HostConfigDir, in.Hosts[0].configDirName(0))
		macs, ok := fileContents(t, cfg, path.Join(dir, "mac_addresses"))
		require.True(t, ok)
		assert.Equal(t, strings.ToLower(mac), string(macs))
		if arg != "" {
			b, ok := fileContents(t, cfg, path.Join(dir, InstallerArgsFile))
			require.True(t, ok)
			var got []string
			require.NoError(t, json.Unmarshal(b, &got))
			assert.Equal(t, []string{arg}, got)
		}
		if override != "" {
			b, ok := fileContents(t, cfg, path.Join(dir, IgnitionOverrideFile))
			require.True(t, ok)
			assert.Equal(t, override, string(b))
		}
		if hostname != "" {
			b, ok := fileContents(t, cfg, path.Join(HostnamesDir, strings.ToLower(mac)))
			require.True(t, ok)
			assert.Equal(t, hostname, string(b))
		}
		env, _ := fileContents(t, cfg, "/usr/local/share/assisted-service/assisted-service.env")
		for _, line := range strings.Split(strings.TrimSpace(string(env)), "\n") {
			assert.Contains(t, line, "=", "every assisted-service.env line is KEY=value")
		}
	})
}

func BenchmarkBuild(b *testing.B) {
	in := haInput()
	for b.Loop() {
		if _, _, err := Build(in); err != nil {
			b.Fatal(err)
		}
	}
}
