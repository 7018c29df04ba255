package ignition

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const copyNetworkScript = "/usr/local/bin/agent-set-host-copy-network-arg.sh"

// fakeHostsService installs a curl that serves the infra-env testInfraEnv
// and the hosts in hosts.json (kept in the scratch dir): GET lists them,
// PATCH .../installer-args and .../ignition store the body in the host
// and answer 201, or patchCode when it is set.
func (h *scriptHost) fakeHostsService(hosts []map[string]any, patchCode string) {
	h.t.Helper()
	b, err := json.Marshal(hosts)
	require.NoError(h.t, err)
	require.NoError(h.t, os.WriteFile(h.path("hosts.json"), b, 0o644))
	h.fake("curl", `
url="${*: -1}"
method=GET data="" writeout=""
while [ $# -gt 0 ]; do
	case "$1" in
	--request) method=$2; shift ;;
	--data) data=$2; shift ;;
	--write-out) writeout=$2; shift ;;
	esac
	shift
done
state=`+shellQuoted(h.dir)+`
base=*/api/assisted-install/v2
case "${method} ${url}" in
"GET "${base}/infra-envs) echo '[{"id":"`+testInfraEnv+`"}]' ;;
"GET "${base}/infra-envs/`+testInfraEnv+`/hosts) cat "${state}/hosts.json" ;;
"PATCH "${base}/infra-envs/`+testInfraEnv+`/hosts/*/installer-args | "PATCH "${base}/infra-envs/`+testInfraEnv+`/hosts/*/ignition)
	printf '%s\n' "${data}" >>"${state}/patches.log"
	code=`+shellQuoted(patchCode)+`
	if [ -z "${code}" ]; then
		code=201
		id=${url%/*}; id=${id##*/}
		case "${url}" in
		*/installer-args) jq --arg id "${id}" --argjson d "${data}" 'map(if .id == $id then .installer_args = ($d.args | tojson) else . end)' "${state}/hosts.json" >"${state}/hosts.new" ;;
		*) jq --arg id "${id}" --argjson d "${data}" 'map(if .id == $id then .ignition_config_overrides = $d.config else . end)' "${state}/hosts.json" >"${state}/hosts.new" ;;
		esac
		mv "${state}/hosts.new" "${state}/hosts.json"
	fi
	[ -n "${writeout}" ] && printf '%s' "${code}"
	;;
*) [ -n "${writeout}" ] && printf 404; exit 22 ;;
esac`)
}

// registeredHost is a host of the infra-env whose inventory lists macs.
func registeredHost(id string, macs []string, installerArgs string) map[string]any {
	var itfs []map[string]any
	for _, m := range macs {
		itfs = append(itfs, map[string]any{"name": "eth", "mac_address": m})
	}
	inv, _ := json.Marshal(map[string]any{"interfaces": itfs})
	h := map[string]any{"id": id, "status": "known", "inventory": string(inv)}
	if installerArgs != "" {
		h["installer_args"] = installerArgs
	}
	return h
}

// hostArgs returns the installer arguments the fake service holds for id.
func (h *scriptHost) hostArgs(id string) []string {
	h.t.Helper()
	var hosts []map[string]any
	b, err := os.ReadFile(h.path("hosts.json"))
	require.NoError(h.t, err)
	require.NoError(h.t, json.Unmarshal(b, &hosts))
	for _, host := range hosts {
		if host["id"] == id {
			s, _ := host["installer_args"].(string)
			if s == "" {
				return nil
			}
			var args []string
			require.NoError(h.t, json.Unmarshal([]byte(s), &args))
			return args
		}
	}
	h.t.Fatalf("no host %s", id)
	return nil
}

// copyNetworkHost is a host with NICs (name -> MAC) and the keyfiles given
// in /etc/NetworkManager/system-connections.
func copyNetworkHost(t *testing.T, nics map[string]string, keyfiles map[string]string) *scriptHost {
	t.Helper()
	cfg, _ := mustBuild(t, haInput())
	h := newScriptHost(t, cfg)
	nics["lo"] = "00:00:00:00:00:00"
	for name, mac := range nics {
		h.write("/sys/class/net/"+name+"/address", mac+"\n", 0o644)
	}
	require.NoError(t, os.MkdirAll(h.file("/etc/NetworkManager/system-connections"), 0o755))
	for name, body := range keyfiles {
		h.write("/etc/NetworkManager/system-connections/"+name, body, 0o600)
	}
	h.fake("sleep", `n=$(grep -c '^sleep ' `+shellQuoted(h.path("calls.log"))+`)
if [ "${n}" -ge 40 ]; then kill -TERM "${PPID}"; fi`)
	h.env = append(h.env, strings.Split(strings.TrimSpace(h.read(RendezvousEnvPath)), "\n")...)
	return h
}

const handKeyfile = "[connection]\nid=enp1s0\ntype=ethernet\ninterface-name=enp1s0\n\n[ipv4]\nmethod=manual\naddress1=192.168.111.90/24\n"

func TestCopyNetworkForHandMadeKeyfiles(t *testing.T) {
	nics := map[string]string{"enp1s0": "52:54:01:AA:AA:B1", "enp2s0": "52:54:01:aa:aa:b2"}
	h := copyNetworkHost(t, nics, map[string]string{"enp1s0.nmconnection": handKeyfile})
	// Not registered at first (no inventory yet); another host has other
	// MACs; this host already carries a user's installer arguments.
	h.fakeHostsService([]map[string]any{
		registeredHost("other", []string{"52:54:01:aa:aa:c1"}, ""),
		{"id": "self", "status": "discovering"},
	}, "")
	// The host registers while the script waits.
	h.fake("sleep", `n=$(grep -c '^sleep ' `+shellQuoted(h.path("calls.log"))+`)
if [ "${n}" -eq 2 ]; then
	jq 'map(if .id == "self" then . + `+mustJSON(t, registeredHost("self", []string{"52:54:01:aa:aa:b2"}, `["--append-karg","ip=enp1s0:dhcp"]`))+` else . end)' `+shellQuoted(h.path("hosts.json"))+` >`+shellQuoted(h.path("hosts.tmp"))+`
	mv `+shellQuoted(h.path("hosts.tmp"))+` `+shellQuoted(h.path("hosts.json"))+`
fi
if [ "${n}" -ge 40 ]; then kill -TERM "${PPID}"; fi`)
	out, err := h.run(copyNetworkScript)
	require.NoError(t, err, out)
	assert.Equal(t, []string{"--append-karg", "ip=enp1s0:dhcp", "--copy-network"}, h.hostArgs("self"), out)
	assert.Nil(t, h.hostArgs("other"))
	assert.Contains(t, out, "Hand-made NetworkManager keyfiles: enp1s0.nmconnection")
	assert.Contains(t, out, "Host self has --copy-network")

	// Run again (a restart): nothing to change.
	patches, _ := os.ReadFile(h.path("patches.log"))
	out, err = h.run(copyNetworkScript)
	require.NoError(t, err, out)
	again, _ := os.ReadFile(h.path("patches.log"))
	assert.Equal(t, string(patches), string(again), "no second PATCH")
}

func TestCopyNetworkNotForGeneratedOrNoKeyfiles(t *testing.T) {
	for name, keyfiles := range map[string]map[string]string{
		"none": {},
		"nm-initrd-generator only": {
			"default_connection.nmconnection": "[connection]\nid=Wired Connection\ntype=ethernet\n\n[user]\norg.freedesktop.NetworkManager.origin=nm-initrd-generator\n",
			"stray.tmp":                       "",
			"notes.txt":                       "no connection section here\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := copyNetworkHost(t, map[string]string{"enp1s0": "52:54:01:aa:aa:b1"}, keyfiles)
			h.fakeHostsService([]map[string]any{registeredHost("self", []string{"52:54:01:aa:aa:b1"}, "")}, "")
			out, err := h.run(copyNetworkScript)
			require.NoError(t, err, out)
			assert.Contains(t, out, "No hand-made NetworkManager keyfiles")
			assert.NotContains(t, h.calls(), "curl", "no request without hand-made keyfiles")
			assert.Nil(t, h.hostArgs("self"))
		})
	}
}

func TestCopyNetworkGivesUpWhenRefused(t *testing.T) {
	h := copyNetworkHost(t, map[string]string{"enp1s0": "52:54:01:aa:aa:b1"}, map[string]string{"enp1s0.nmconnection": handKeyfile})
	h.fakeHostsService([]map[string]any{registeredHost("self", []string{"52:54:01:aa:aa:b1"}, "")}, "409")
	out, err := h.run(copyNetworkScript)
	require.Error(t, err, out)
	assert.Contains(t, out, "refused --copy-network 12 times")
	patches, _ := os.ReadFile(h.path("patches.log"))
	assert.Equal(t, 12, strings.Count(string(patches), `{"args":["--copy-network"]}`))
}

func TestCopyNetworkUnit(t *testing.T) {
	assert.True(t, slices.Contains(EnabledUnits(), "agent-set-host-copy-network-arg.service"))
	cfg, _ := mustBuild(t, snoInput())
	u, ok := unitContents(cfg, "agent-set-host-copy-network-arg.service")
	require.True(t, ok)
	// Every host (no node0 condition), once its agent runs, and before the
	// rendezvous host starts the installation.
	assert.NotContains(t, u, "ConditionPathExists")
	assert.Contains(t, unitKeys(u, "After"), "network-online.target agent.service")
	assert.Contains(t, unitKeys(u, "Before"), "start-cluster-installation.service")
	assert.Equal(t, []string{"/usr/local/bin/agent-set-host-copy-network-arg.sh"}, unitKeys(u, "ExecStart"))
	_, ok = fileContents(t, cfg, copyNetworkScript)
	assert.True(t, ok)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestApplyHostOverridesKeepsCopyNetwork(t *testing.T) {
	// master-0 of the HA fixture has installer arguments and an Ignition
	// override. The copy-network script ran first on that host: its
	// --copy-network must survive the user's arguments.
	cfg, _ := mustBuild(t, haInput())
	h := newScriptHost(t, cfg)
	h.env = append(h.env, strings.Split(strings.TrimSpace(h.read(RendezvousEnvPath)), "\n")...)
	h.env = append(h.env, "INFRA_ENV_ID="+testInfraEnv)
	h.fake("sleep", `kill -TERM "${PPID}"`)
	h.fakeHostsService([]map[string]any{
		registeredHost("m0", []string{"52:54:01:BB:BB:A1"}, `["--copy-network"]`),
		registeredHost("m1", []string{"52:54:01:aa:aa:a2"}, ""),
	}, "")
	out, err := h.run("/usr/local/bin/apply-host-overrides.sh")
	require.NoError(t, err, out)
	assert.Equal(t, []string{"--append-karg", "ip=eth0:dhcp", "--save-partlabel", "data*", "--copy-network"}, h.hostArgs("m0"), out)
	assert.Nil(t, h.hostArgs("m1"))

	// Without --copy-network set, the user's arguments alone.
	h = newScriptHost(t, cfg)
	h.env = append(h.env, strings.Split(strings.TrimSpace(h.read(RendezvousEnvPath)), "\n")...)
	h.env = append(h.env, "INFRA_ENV_ID="+testInfraEnv)
	h.fake("sleep", `kill -TERM "${PPID}"`)
	h.fakeHostsService([]map[string]any{registeredHost("m0", []string{"52:54:01:aa:aa:a1"}, "")}, "")
	out, err = h.run("/usr/local/bin/apply-host-overrides.sh")
	require.NoError(t, err, out)
	assert.Equal(t, []string{"--append-karg", "ip=eth0:dhcp", "--save-partlabel", "data*"}, h.hostArgs("m0"), out)
	assert.Contains(t, out, "Ignition config override set on host m0")
}

// overridesHost is the HA fixture's node zero, ready to run
// apply-host-overrides.sh; a sleep ends the script (a retry loop).
func overridesHost(t *testing.T) *scriptHost {
	t.Helper()
	cfg, _ := mustBuild(t, haInput())
	h := newScriptHost(t, cfg)
	h.env = append(h.env, strings.Split(strings.TrimSpace(h.read(RendezvousEnvPath)), "\n")...)
	h.env = append(h.env, "INFRA_ENV_ID="+testInfraEnv)
	h.fake("sleep", `kill -TERM "${PPID}"`)
	return h
}

// TestApplyHostOverridesSkipsDirWithoutMACs: a host directory without
// mac_addresses can never be matched to a host; it is reported and
// skipped, the others applied, and the script ends (it used to retry it
// forever).
func TestApplyHostOverridesSkipsDirWithoutMACs(t *testing.T) {
	h := overridesHost(t)
	h.write(HostConfigDir+"/ghost/"+InstallerArgsFile, `["--append-karg","nosmt"]`, 0o644)
	h.write(HostConfigDir+"/ghost/role", "worker", 0o644)
	h.fakeHostsService([]map[string]any{registeredHost("m0", []string{"52:54:01:aa:aa:a1"}, "")}, "")
	out, err := h.run("/usr/local/bin/apply-host-overrides.sh")
	require.NoError(t, err, out)
	assert.Contains(t, out, "ghost: no mac_addresses file, so no host can be matched to it: its installer arguments and Ignition override are NOT applied")
	assert.Equal(t, []string{"--append-karg", "ip=eth0:dhcp", "--save-partlabel", "data*"}, h.hostArgs("m0"), out)
	assert.NotContains(t, h.calls(), "sleep", "nothing left to retry")
	assert.Contains(t, out, "All installer arguments and Ignition overrides applied")
}

// TestApplyHostOverridesStopsOnRefusal: HTTP 400 is assisted-service
// refusing the arguments (or the override) for good: reported with the
// service's reason, not retried.
func TestApplyHostOverridesStopsOnRefusal(t *testing.T) {
	h := overridesHost(t)
	h.fakeHostsService([]map[string]any{registeredHost("m0", []string{"52:54:01:aa:aa:a1"}, "")}, "400")
	out, err := h.run("/usr/local/bin/apply-host-overrides.sh")
	require.NoError(t, err, out)
	assert.Contains(t, out, "PATCH installer-args for host m0 refused with HTTP 400")
	assert.Contains(t, out, "installer arguments NOT applied to host m0")
	assert.Contains(t, out, "Ignition config override NOT applied to host m0")
	assert.NotContains(t, h.calls(), "sleep", "a refusal is not retried")
	patches, _ := os.ReadFile(h.path("patches.log"))
	assert.Equal(t, 2, strings.Count(string(patches), "\n"), "one PATCH each: %s", patches)
}

// TestApplyHostOverridesRetriesServerErrors: anything but 201 and 400 (the
// service not ready, a 5xx) is retried.
func TestApplyHostOverridesRetriesServerErrors(t *testing.T) {
	h := overridesHost(t)
	h.fakeHostsService([]map[string]any{registeredHost("m0", []string{"52:54:01:aa:aa:a1"}, "")}, "503")
	out, err := h.run("/usr/local/bin/apply-host-overrides.sh")
	require.Error(t, err, "ended by the fake sleep: %s", out)
	assert.Contains(t, out, "PATCH installer-args for host m0 returned HTTP 503")
	assert.Contains(t, h.calls(), "sleep 15")
}
