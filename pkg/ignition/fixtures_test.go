package ignition

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/require"
)

// Fixtures are built in Go so every test sees the same inputs. Secrets are
// dummies of realistic shape and size.

const (
	testPullSecret = `{"auths":{"quay.io":{"auth":"dXNlcjpwYXNzd29yZA==","email":"user@example.com"},"registry.redhat.io":{"auth":"dXNlcjpwYXNzd29yZA=="}}}`
	testSSHKey     = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFakeKeyForTestsOnlyFakeKeyForTestsOnly00 user@example.com"
	testHash       = "$2a$10$abcdefghijklmnopqrstuuLh0q9PpAJvKvhI2mHb0u5ZQzF8CqZ3e"
	testPubKey     = "-----BEGIN EC PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEFakeFakeFakeFakeFakeFakeFakeFakeFake\nFakeFakeFakeFakeFakeFakeFakeFakeFakeFakeFakeFakeFakeFakeFakeFakeFake==\n-----END EC PUBLIC KEY-----\n"
	testInfraEnv   = "4f3b9e2c-1d2a-4b6e-9f10-2a3b4c5d6e7f"
)

func testJWT(scheme string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"ES256","typ":"JWT"}`)) + "." +
		enc.EncodeToString([]byte(`{"auth_scheme":"`+scheme+`"}`)) + "." +
		enc.EncodeToString(bytes.Repeat([]byte{7}, 64))
}

func testPEM(kind string, n int) []byte {
	body := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte(kind), n))
	var b strings.Builder
	fmt.Fprintf(&b, "-----BEGIN %s-----\n", kind)
	for len(body) > 64 {
		b.WriteString(body[:64] + "\n")
		body = body[64:]
	}
	b.WriteString(body + "\n")
	fmt.Fprintf(&b, "-----END %s-----\n", kind)
	return []byte(b.String())
}

func testSigners() []Signer {
	var out []Signer
	for _, name := range []string{"admin-kubeconfig-signer", "kube-apiserver-lb-signer", "kube-apiserver-localhost-signer", "kube-apiserver-service-network-signer"} {
		out = append(out, Signer{Name: name, CertPEM: testPEM("CERTIFICATE", 800), KeyPEM: testPEM("RSA PRIVATE KEY", 1190)})
	}
	return out
}

func ztpManifests(name string, nmstate bool) []Manifest {
	m := []Manifest{
		{"agent-cluster-install.yaml", []byte("apiVersion: extensions.hive.openshift.io/v1beta1\nkind: AgentClusterInstall\nmetadata:\n  name: " + name + "\n  namespace: cluster0\nspec:\n  clusterDeploymentRef:\n    name: " + name + "\n  imageSetRef:\n    name: openshift-4.19.3\n  networking:\n    clusterNetwork:\n    - cidr: 10.128.0.0/14\n      hostPrefix: 23\n    machineNetwork:\n    - cidr: 192.168.111.0/24\n    serviceNetwork:\n    - 172.30.0.0/16\n  provisionRequirements:\n    controlPlaneAgents: 1\n  sshPublicKey: " + testSSHKey + "\n")},
		{"cluster-deployment.yaml", []byte("apiVersion: hive.openshift.io/v1\nkind: ClusterDeployment\nmetadata:\n  name: " + name + "\n  namespace: cluster0\nspec:\n  baseDomain: example.com\n  clusterInstallRef:\n    group: extensions.hive.openshift.io\n    kind: AgentClusterInstall\n    name: " + name + "\n    version: v1beta1\n  clusterName: " + name + "\n  platform:\n    agentBareMetal:\n      agentSelector: {}\n  pullSecretRef:\n    name: pull-secret\n")},
		{"cluster-image-set.yaml", []byte("apiVersion: hive.openshift.io/v1\nkind: ClusterImageSet\nmetadata:\n  name: openshift-4.19.3\nspec:\n  releaseImage: quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64\n")},
		{"infraenv.yaml", []byte("apiVersion: agent-install.openshift.io/v1beta1\nkind: InfraEnv\nmetadata:\n  name: " + name + "\n  namespace: cluster0\nspec:\n  clusterRef:\n    name: " + name + "\n    namespace: cluster0\n  cpuArchitecture: x86_64\n  pullSecretRef:\n    name: pull-secret\n  sshAuthorizedKey: " + testSSHKey + "\n")},
		{"pull-secret.yaml", []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: pull-secret\n  namespace: cluster0\nstringData:\n  .dockerconfigjson: '" + testPullSecret + "'\n")},
	}
	if nmstate {
		m = append(m, Manifest{"nmstateconfig.yaml", []byte("apiVersion: agent-install.openshift.io/v1beta1\nkind: NMStateConfig\nmetadata:\n  name: master-0\n  namespace: cluster0\n  labels:\n    infraenvs.agent-install.openshift.io: " + name + "\nspec:\n  config:\n    interfaces:\n    - name: eth0\n      type: ethernet\n      state: up\n  interfaces:\n  - name: eth0\n    macAddress: 52:54:01:aa:aa:a1\n")})
	}
	return m
}

func baseInput(name string) Input {
	return Input{
		ClusterName:    name,
		BaseDomain:     "example.com",
		ReleaseImage:   "quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64",
		ReleaseVersion: "4.19.3",
		Arch:           "x86_64",
		OSImages: []OSImage{{
			URL:     "https://rhcos.mirror.openshift.com/art/storage/prod/streams/4.19-9.6/builds/9.6.20250523-0/x86_64/rhcos-9.6.20250523-0-live-iso.x86_64.iso",
			Version: "9.6.20250523-0",
		}},
		InfraEnvID:   testInfraEnv,
		PullSecret:   testPullSecret,
		SSHKey:       testSSHKey,
		PasswordHash: testHash,
		Auth: Auth{
			PublicKeyPEM: testPubKey,
			AgentToken:   testJWT("agentAuth"),
			UserToken:    testJWT("userAuth"),
			WatcherToken: testJWT("watcherAuth"),
		},
		Signers: testSigners(),
	}
}

// snoInput: single node, DHCP, one host with a hostname and root device
// hints.
func snoInput() Input {
	in := baseInput("sno")
	in.RendezvousIP = "192.168.111.80"
	in.ControlPlaneAgents = 1
	in.ZTPManifests = ztpManifests("sno", false)
	in.AgentConfigYAML = []byte("apiVersion: v1beta1\nkind: AgentConfig\nmetadata:\n  name: sno\nrendezvousIP: 192.168.111.80\nhosts:\n- hostname: master-0\n  role: master\n  interfaces:\n  - name: eth0\n    macAddress: 52:54:01:AA:AA:A1\n  rootDeviceHints:\n    deviceName: /dev/vda\n")
	in.Hosts = []Host{{
		Hostname:            "master-0",
		Role:                "master",
		MACs:                []string{"52:54:01:AA:AA:A1"},
		RootDeviceHintsYAML: []byte("deviceName: /dev/vda\n"),
	}}
	return in
}

func keyfile(id, iface, addr string) []byte {
	return []byte("[connection]\nid=" + id + "\nuuid=6d5e7f2a-0000-4000-8000-00000000" + fmt.Sprintf("%04x", len(id)+len(addr)) + "\ntype=ethernet\ninterface-name=" + iface + "\nautoconnect=true\nautoconnect-priority=1\n\n[ethernet]\n\n[ipv4]\naddress0=" + addr + "/24\ndns=192.168.111.1;\ndns-priority=40\ngateway=192.168.111.1\nmethod=manual\n\n[ipv6]\naddr-gen-mode=0\ndhcp-timeout=2147483647\nmethod=disabled\n\n[proxy]\n")
}

// haInput: three masters and two workers with static networking, a proxy,
// NTP, extra manifests, installer args and an Ignition override.
func haInput() Input {
	in := baseInput("ha")
	in.RendezvousIP = "192.168.111.80"
	in.ControlPlaneAgents = 3
	in.WorkerAgents = 2
	in.ZTPManifests = ztpManifests("ha", true)
	in.MachineNetworks = []string{"192.168.111.0/24"}
	in.Proxy = &Proxy{HTTPProxy: "http://proxy.example.com:3128", HTTPSProxy: "http://proxy.example.com:3128", NoProxy: ".example.com,10.0.0.0/8"}
	in.NTPSources = []string{"ntp1.example.com", "192.168.111.1"}
	in.DisabledHostValidations = []string{"belongs-to-majority-group", "belongs-to-machine-cidr"}
	in.ExtraManifests = []Manifest{
		{"99-chrony-0.yaml", []byte(strings.Repeat("# chrony machine config for masters, padded to look like a real manifest\n", 40) + "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: 99-master-chrony\n")},
		{"99-chrony-1.yaml", []byte("apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: 99-worker-chrony\n")},
	}
	roles := []string{"master", "master", "master", "worker", "worker"}
	for i, role := range roles {
		mac := fmt.Sprintf("52:54:01:AA:AA:%02X", 0xa1+i)
		h := Host{Role: role, MACs: []string{mac, fmt.Sprintf("52:54:01:BB:BB:%02X", 0xa1+i)}}
		if i < 4 {
			h.Hostname = fmt.Sprintf("%s-%d", role, i%3)
		}
		if i == 0 {
			h.InstallerArgs = []string{"--append-karg", "ip=eth0:dhcp", "--save-partlabel", "data*"}
			h.IgnitionConfigOverride = `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/example","contents":{"source":"data:,hello"}}]}}`
		}
		in.Hosts = append(in.Hosts, h)
		dir := fmt.Sprintf("/etc/assisted/network/host%d/", i)
		addr := fmt.Sprintf("192.168.111.%d", 80+i)
		in.NetworkFiles = append(in.NetworkFiles,
			NetworkFile{Path: dir + "eth0.nmconnection", Mode: 0o600, Contents: keyfile("eth0", "eth0", addr)},
			NetworkFile{Path: dir + "mac_interface.ini", Contents: []byte(mac + "=eth0")},
		)
	}
	return in
}

// disconnectedInput: compact cluster pulling from a mirror registry with
// its own CA, IPv6 rendezvous IP.
func disconnectedInput() Input {
	in := baseInput("disconnected")
	in.ReleaseImage = "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("ab", 32)
	in.ReleaseImageMirror = "mirror.example.com:5000/ocp/release@sha256:" + strings.Repeat("ab", 32)
	in.RendezvousIP = "fd2e:6f44:5dd8:c956::50"
	in.ControlPlaneAgents = 3
	in.ZTPManifests = ztpManifests("disconnected", false)
	in.PublicContainerRegistries = []string{"mirror.example.com:5000"}
	in.RegistriesConf = []byte("unqualified-search-registries = []\n\n[[registry]]\n  location = \"quay.io/openshift-release-dev/ocp-release\"\n  mirror-by-digest-only = true\n  prefix = \"\"\n\n  [[registry.mirror]]\n    location = \"mirror.example.com:5000/ocp/release\"\n\n[[registry]]\n  location = \"quay.io/openshift-release-dev/ocp-v4.0-art-dev\"\n  mirror-by-digest-only = true\n  prefix = \"\"\n\n  [[registry.mirror]]\n    location = \"mirror.example.com:5000/ocp/release\"\n")
	in.CABundle = append(testPEM("CERTIFICATE", 1000), testPEM("CERTIFICATE", 1100)...)
	for i := range 3 {
		in.Hosts = append(in.Hosts, Host{
			Hostname: fmt.Sprintf("master-%d", i),
			Role:     "master",
			MACs:     []string{fmt.Sprintf("52:54:01:CC:CC:%02X", 0xa1+i)},
		})
	}
	return in
}

var fixtures = []struct {
	name  string
	input func() Input
}{
	{"sno", snoInput},
	{"ha-static", haInput},
	{"disconnected", disconnectedInput},
	{"add-nodes", addNodesInput},
	{"embedded-payload", embeddedPayloadInput},
	{"sno-4.16", sno416Input},
}

// embeddedPayloadInput: the SNO of snoInput booted from an extended ISO
// (docs/airgap.md): the release payload served by every host on
// localhost:22625, which the mirrors name.
func embeddedPayloadInput() Input {
	in := snoInput()
	in.ReleaseVersion = "4.21.3"
	in.Payload = &Payload{
		RegistryImage: "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + strings.Repeat("ab", 32),
		CertPEM:       testPEM("CERTIFICATE", 400),
		KeyPEM:        testPEM("EC PRIVATE KEY", 90),
	}
	in.RegistriesConf = []byte("unqualified-search-registries = []\nshort-name-mode = \"\"\n\n[[registry]]\n  location = \"quay.io/openshift-release-dev/ocp-v4.0-art-dev\"\n  mirror-by-digest-only = true\n\n  [[registry.mirror]]\n    location = \"localhost:22625/openshift/release\"\n\n[[registry]]\n  location = \"quay.io/openshift-release-dev/ocp-release\"\n  mirror-by-digest-only = true\n\n  [[registry.mirror]]\n    location = \"localhost:22625/openshift/release-images\"\n")
	in.PublicContainerRegistries = []string{"quay.io", "localhost:22625"}
	return in
}

// addNodesInput: a day-2 ISO for two workers of an installed cluster
// (docs/add-nodes.md): no rendezvous host, no cluster credentials.
func addNodesInput() Input {
	in := baseInput("ostest")
	in.RendezvousIP = "127.0.0.1"
	in.WorkerAgents = 2
	in.Signers, in.PasswordHash = nil, ""
	for _, m := range ztpManifests("ostest", false) {
		if m.FileName == "infraenv.yaml" || m.FileName == "pull-secret.yaml" {
			in.ZTPManifests = append(in.ZTPManifests, m)
		}
	}
	in.AddNodes = &AddNodes{ClusterID: "0d6c8d5e-6c2e-4a61-9f39-2b5c1d7e1a10", ClusterName: "ostest", APIDNSName: "api.ostest.example.com",
		IgnitionEndpointURL: "https://api-int.ostest.example.com:22623/config/worker", IgnitionEndpointCA: "-----BEGIN CERTIFICATE-----\nMCS\n-----END CERTIFICATE-----\n",
		Chrony: []byte("server ntp.example.com iburst\n"), AuthTokenExpiry: "2026-11-27T12:00:00Z"}
	in.Hosts = []Host{
		{Hostname: "worker-1", Role: "worker", MACs: []string{"52:54:01:BB:BB:B1"}},
		{Hostname: "worker-2", Role: "worker", MACs: []string{"52:54:01:BB:BB:B2"}},
	}
	return in
}

func mustBuild(t testing.TB, in Input) (types.Config, Size) {
	t.Helper()
	cfg, size, err := Build(in)
	require.NoError(t, err)
	return cfg, size
}

// decodeResource returns the bytes a resource's data URL carries, gunzipped
// when the resource is compressed.
func decodeResource(t testing.TB, r types.Resource) []byte {
	t.Helper()
	require.NotNil(t, r.Source)
	src := *r.Source
	comma := strings.IndexByte(src, ',')
	require.Positive(t, comma, "data URL %q", src)
	require.True(t, strings.HasSuffix(src[:comma], ";base64"), "data URL header %q", src[:comma])
	raw, err := base64.StdEncoding.DecodeString(src[comma+1:])
	require.NoError(t, err)
	if r.Compression != nil && *r.Compression == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		require.NoError(t, err)
		raw, err = io.ReadAll(zr)
		require.NoError(t, err)
	}
	return raw
}

// fileContents returns the decoded contents of path, or nil, false.
func fileContents(t testing.TB, cfg types.Config, path string) ([]byte, bool) {
	t.Helper()
	for _, f := range cfg.Storage.Files {
		if f.Path != path {
			continue
		}
		if f.Contents.Source != nil {
			return decodeResource(t, f.Contents), true
		}
		var out []byte
		for _, a := range f.Append {
			out = append(out, decodeResource(t, a)...)
		}
		return out, true
	}
	return nil, false
}

func unitContents(cfg types.Config, name string) (string, bool) {
	for _, u := range cfg.Systemd.Units {
		if u.Name == name && u.Contents != nil {
			return *u.Contents, true
		}
	}
	return "", false
}

// requireTool returns the path of an external tool. Without it the test is
// skipped, unless CI is set, in which case it fails (hack/install-deps.sh
// installs every tool the tests use).
func requireTool(t *testing.T, name string, candidates ...string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return c
		}
	}
	if os.Getenv("CI") == "" {
		t.Skipf("%s not found; run hack/install-deps.sh (the test is required when CI is set)", name)
	}
	t.Fatalf("%s not found but CI is set; hack/install-deps.sh must install it", name)
	return ""
}
