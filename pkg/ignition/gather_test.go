package ignition

import (
	"encoding/base64"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const gatherScript = "/usr/local/bin/agent-gather"

// gatherSecrets are credentials a rendezvous host holds; none may reach
// the archive.
var gatherSecrets = struct{ user, password, fence, override, extra, dot1x, proxy string }{
	user:     "gatherUser",
	password: "Zq8-pull-secret-password-7Hk",
	fence:    "fence-bmc-password-Jx42",
	override: "data:,override-with-a-credential-4Rt",
	extra:    "c2VjcmV0LWluLWFuLWV4dHJhLW1hbmlmZXN0",
	dot1x:    "dot1x-secret-Qw9",
	proxy:    "proxyuser:Pr0xy%40pass",
}

func gatherHost(t *testing.T) *scriptHost {
	t.Helper()
	in := haInput()
	in.Proxy = &Proxy{HTTPProxy: "http://" + gatherSecrets.proxy + "@proxy.example.com:3128", HTTPSProxy: "http://" + gatherSecrets.proxy + "@proxy.example.com:3128"}
	in.FencingCredentialsYAML = []byte("credentials:\n- hostname: master-0\n  username: admin\n  password: " + gatherSecrets.fence + "\n  address: redfish+https://192.168.111.1:8000/redfish/v1/Systems/1\n")
	in.Hosts[0].IgnitionConfigOverride = `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/token","contents":{"source":"` + gatherSecrets.override + `"}}]}}`
	in.ExtraManifests = append(in.ExtraManifests, Manifest{"secret.yaml", []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  token: " + gatherSecrets.extra + "\n")})
	cfg, _ := mustBuild(t, in)
	h := newScriptHost(t, cfg)
	auth := base64.StdEncoding.EncodeToString([]byte(gatherSecrets.user + ":" + gatherSecrets.password))
	pullSecret := `{"auths":{"quay.io":{"auth":"` + auth + `","email":"user@example.com"}}}`
	h.write("/root/.docker/config.json", pullSecret, 0o600)
	h.write("/etc/assisted/manifests/pull-secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: pull-secret\nstringData:\n  .dockerconfigjson: '"+pullSecret+"'\n", 0o600)
	h.write("/etc/containers/registries.conf", "[[registry]]\nlocation = \"quay.io/openshift-release-dev/ocp-release\"\n", 0o644)
	h.write("/var/log/openshift/assisted-service-pod.json", `[{"timestamp":"2026-11-24T12:00:00Z","phase":"service start"}]`, 0o644)
	h.write("/etc/issue.d/50_release-image.issue", "Unable to pull the OpenShift release image\n", 0o644)
	h.write("/run/agent-installer/host-config-failures", "master-1: disk not found\n", 0o644)
	h.write("/etc/assisted/network/host0/eth1.nmconnection", "[connection]\nid=eth1\n\n[802-1x]\neap=peap;\nidentity=host0\npassword="+gatherSecrets.dot1x+"\n", 0o600)
	h.write("/etc/assisted/manifests/infraenv.yaml", "kind: InfraEnv\nspec:\n  proxy:\n    httpProxy: http://"+gatherSecrets.proxy+"@proxy.example.com:3128\n", 0o600)
	h.write("/etc/resolv.conf", "nameserver 192.168.111.1\n", 0o644)
	h.write("/proc/self/mounts", "tmpfs / tmpfs rw 0 0\n", 0o644)
	h.write("/etc/systemd/system/agent.service", "[Service]\n", 0o644)

	env := envMap(t, []byte(h.read(RendezvousEnvPath)))
	// The journal and podman repeat the secrets, as real logs may.
	h.fake("journalctl", `printf '__CURSOR=s=1\nMESSAGE=podman login `+gatherSecrets.user+`:`+gatherSecrets.password+`\n\n'
printf 'MESSAGE=curl -H Authorization: %s\n\n' `+shellQuoted(env["USER_AUTH_TOKEN"])+`
printf 'MESSAGE=pull secret %s token %s\n\n' `+shellQuoted(auth)+` `+shellQuoted(env["PULL_SECRET_TOKEN"])+`
printf 'MESSAGE=HTTPS_PROXY=http://%s@proxy.example.com:3128\n\n' `+shellQuoted(gatherSecrets.proxy))
	h.fake("podman", `case "$1 $2" in
"container exists") exit 0 ;;
"ps --all") echo "abc123 assisted-service agent-installer-client configure --token `+env["USER_AUTH_TOKEN"]+`" ;;
"exec assisted-db") echo " id | status | status_info"; echo " h1 | insufficient | Host does not meet the minimum hardware requirements" ;;
*) exit 125 ;;
esac`)
	for _, cmd := range []string{"ip", "nmcli", "lsblk", "df", "systemctl"} {
		h.fake(cmd, `echo "`+cmd+` output"`)
	}
	h.fake("sudo", `exec "$@"`)
	return h
}

// unpack extracts the archive into a new directory and returns the
// contents of every file by path.
func unpack(t *testing.T, archive string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("tar", "-xJf", archive, "-C", dir).CombinedOutput()
	require.NoError(t, err, string(out))
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			rel, _ := filepath.Rel(dir, p)
			files[rel] = string(b)
		}
		return nil
	}))
	return files
}

func TestAgentGatherCollectsWithoutSecrets(t *testing.T) {
	requireTool(t, "xz")
	h := gatherHost(t)
	out, err := h.run(gatherScript, "-i", "case1")
	require.NoError(t, err, out)
	archive := h.path("agent-gather-case1.tar.xz")
	require.FileExists(t, archive, out)
	files := unpack(t, archive)

	for _, want := range []string{
		"agent-gather/journal.export",
		"agent-gather/etc/assisted/rendezvous-host.env",
		"agent-gather/etc/assisted/manifests/agent-cluster-install.yaml",
		"agent-gather/etc/assisted/manifests/pull-secret.yaml",
		"agent-gather/etc/assisted/hostconfig/fencing-credentials.yaml",
		"agent-gather/etc/containers/registries.conf",
		"agent-gather/usr/local/share/assisted-service/assisted-service.env",
		"agent-gather/usr/local/share/start-cluster/start-cluster.env",
		"agent-gather/etc/systemd/system/agent.service",
		"agent-gather/etc/issue.d/50_release-image.issue",
		"agent-gather/var/log/openshift/assisted-service-pod.json",
		"agent-gather/run/agent-installer/host-config-failures",
		"agent-gather/network/ip-address.json",
		"agent-gather/network/resolv.conf",
		"agent-gather/storage/lsblk",
		"agent-gather/storage/mounts",
		"agent-gather/systemd/failed",
		"agent-gather/containers/podman-ps",
		"agent-gather/containers/hosts-status",
		"agent-gather/containers/clusters-status",
	} {
		assert.Contains(t, files, want)
	}
	assert.Contains(t, files["agent-gather/containers/hosts-status"], "minimum hardware requirements")
	assert.Contains(t, files["agent-gather/var/log/openshift/assisted-service-pod.json"], "service start")

	env := envMap(t, []byte(h.read(RendezvousEnvPath)))
	auth := base64.StdEncoding.EncodeToString([]byte(gatherSecrets.user + ":" + gatherSecrets.password))
	secrets := map[string]string{
		"pull secret auth":     auth,
		"pull secret password": gatherSecrets.password,
		"user token":           env["USER_AUTH_TOKEN"],
		"agent token":          env["PULL_SECRET_TOKEN"],
		"fencing password":     gatherSecrets.fence,
		"ignition override":    gatherSecrets.override,
		"extra manifest":       gatherSecrets.extra,
		"802.1x password":      gatherSecrets.dot1x,
		"proxy credentials":    gatherSecrets.proxy,
	}
	for p, body := range files {
		for what, s := range secrets {
			require.NotEmpty(t, s)
			assert.False(t, strings.Contains(body, s), "%s: the %s is in the archive", p, what)
		}
		assert.NotContains(t, p, "/opt/agent/tls", "no keys")
		assert.NotContains(t, p, ".docker", "no pull secret")
	}
	// Masks keep the length: the journal export format counts bytes.
	journal := files["agent-gather/journal.export"]
	assert.Contains(t, journal, "MESSAGE=curl -H Authorization: <redacted>"+strings.Repeat("x", len(env["USER_AUTH_TOKEN"])-len("<redacted>"))+"\n")
	assert.Contains(t, files["agent-gather/etc/assisted/hostconfig/fencing-credentials.yaml"], "password: <redacted>")
	assert.Contains(t, files["agent-gather/etc/assisted/manifests/infraenv.yaml"], "httpProxy: http://<redacted>@proxy.example.com:3128")
	assert.Contains(t, journal, "MESSAGE=HTTPS_PROXY=http://<redacted>xxxxxxxxxxxx@proxy.example.com:3128\n")
	assert.Contains(t, files["agent-gather/etc/assisted/network/host0/eth1.nmconnection"], "identity=host0\npassword=<redacted>\n")
	assert.Contains(t, files["agent-gather/etc/assisted/network/host0/eth0.nmconnection"], "address0=192.168.111.80/24")
	assert.Contains(t, files["agent-gather/etc/assisted/manifests/pull-secret.yaml"], ".dockerconfigjson: <redacted>")
	assert.Contains(t, files["agent-gather/etc/assisted/manifests/agent-cluster-install.yaml"], "kind: AgentClusterInstall")
	assert.Contains(t, out, "Wrote "+archive)
}

func TestAgentGatherOptions(t *testing.T) {
	h := gatherHost(t)
	out, err := h.run(gatherScript, "-h")
	require.NoError(t, err, out)
	assert.Contains(t, out, "Usage: agent-gather")
	_, err = h.run(gatherScript, "-i", "../x")
	require.Error(t, err)
	_, err = h.run(gatherScript, "-x")
	require.Error(t, err)

	// -O: the archive on standard output, messages on standard error.
	cmd := exec.Command("bash", h.file(gatherScript), "-O")
	cmd.Dir = h.dir
	cmd.Env = append([]string{"PATH=" + h.bin + ":" + os.Getenv("PATH"), "AGENT_ROOT=" + h.root, "HOME=" + h.dir, "TMPDIR=" + h.dir}, h.env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	archive, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	p := h.path("stdout.tar.xz")
	require.NoError(t, os.WriteFile(p, archive, 0o600))
	assert.Contains(t, unpack(t, p), "agent-gather/journal.export")
	assert.Contains(t, stderr.String(), "Gathering the journal")
}

func TestAgentGatherIsPointedTo(t *testing.T) {
	cfg, _ := mustBuild(t, snoInput())
	motd, ok := fileContents(t, cfg, "/etc/motd.d/10-agent-installer")
	require.True(t, ok)
	assert.Contains(t, string(motd), "agent-gather")
	for _, f := range cfg.Storage.Files {
		if f.Path == gatherScript {
			assert.Equal(t, 0o555, *f.Mode)
			return
		}
	}
	t.Fatalf("%s is not in the config", gatherScript)
}
