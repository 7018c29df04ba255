package ignition

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/seed-a052040e/agentiso/pkg/isoeditor"

	v32 "github.com/coreos/ignition/v2/config/v3_2"
	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

func TestConfigsPassIgnitionValidation(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			cfg, _ := mustBuild(t, fx.input())
			raw, err := MarshalIndent(cfg)
			require.NoError(t, err)
			parsed, rpt, err := v32.Parse(raw)
			require.NoError(t, err, "ignition rejected the config: %s", rpt.String())
			assert.Empty(t, rpt.Entries, "ignition reported: %s", rpt.String())
			assert.Equal(t, "3.2.0", parsed.Ignition.Version)

			indented, err := MarshalIndent(cfg)
			require.NoError(t, err)
			_, rpt, err = v32.Parse(indented)
			require.NoError(t, err, rpt.String())
		})
	}
}

// listing renders what the golden files record: the user, every directory
// and file with mode, owner and encoding, and every unit with its state.
func listing(cfg types.Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ignition %s\n", cfg.Ignition.Version)
	for _, u := range cfg.Passwd.Users {
		fmt.Fprintf(&b, "user %s ssh-keys=%d password-hash=%t\n", u.Name, len(u.SSHAuthorizedKeys), u.PasswordHash != nil && *u.PasswordHash != "")
	}
	owner := func(n types.Node) string {
		if n.User.Name != nil {
			return *n.User.Name
		}
		return "-"
	}
	for _, d := range cfg.Storage.Directories {
		fmt.Fprintf(&b, "dir  %04o %s %s\n", *d.Mode, owner(d.Node), d.Path)
	}
	for _, f := range cfg.Storage.Files {
		var flags []string
		if len(f.Append) > 0 {
			flags = append(flags, "append")
		}
		if f.Contents.Compression != nil {
			flags = append(flags, *f.Contents.Compression)
		}
		if f.Overwrite != nil && *f.Overwrite {
			flags = append(flags, "overwrite")
		}
		fmt.Fprintf(&b, "file %04o %s %s [%s]\n", *f.Mode, owner(f.Node), f.Path, strings.Join(flags, ","))
	}
	for _, u := range cfg.Systemd.Units {
		state := "disabled"
		if u.Enabled != nil && *u.Enabled {
			state = "enabled"
		}
		fmt.Fprintf(&b, "unit %s %s dropins=%d\n", state, u.Name, len(u.Dropins))
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			cfg, _ := mustBuild(t, fx.input())
			got := listing(cfg)
			golden := filepath.Join("testdata", fx.name+".golden")
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./pkg/ignition -run TestGolden -update")
			assert.Equal(t, string(want), got)
		})
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	for _, fx := range fixtures {
		a, _ := mustBuild(t, fx.input())
		b, _ := mustBuild(t, fx.input())
		ra, err := MarshalIndent(a)
		require.NoError(t, err)
		rb, err := MarshalIndent(b)
		require.NoError(t, err)
		assert.Equal(t, ra, rb, fx.name)
	}
}

func TestRendezvousEnv(t *testing.T) {
	cfg, _ := mustBuild(t, snoInput())
	env, ok := fileContents(t, cfg, RendezvousEnvPath)
	require.True(t, ok)
	in := snoInput()
	assert.Equal(t, "NODE_ZERO_IP=192.168.111.80\n"+
		"SERVICE_BASE_URL=http://192.168.111.80:8090/\n"+
		"IMAGE_SERVICE_BASE_URL=http://192.168.111.80:8888/\n"+
		"PULL_SECRET_TOKEN="+in.Auth.AgentToken+"\n"+
		"USER_AUTH_TOKEN="+in.Auth.UserToken+"\n"+
		"WORKFLOW_TYPE=install\n"+
		"AIUI_APP_API_URL=http://192.168.111.80:8090/\n"+
		"AIUI_URL=http://192.168.111.80:3001/\n", string(env))

	cfg, _ = mustBuild(t, disconnectedInput())
	env, ok = fileContents(t, cfg, RendezvousEnvPath)
	require.True(t, ok)
	assert.Contains(t, string(env), "NODE_ZERO_IP=fd2e:6f44:5dd8:c956::50\n")
	assert.Contains(t, string(env), "SERVICE_BASE_URL=http://[fd2e:6f44:5dd8:c956::50]:8090/\n")
}

func envMap(t *testing.T, b []byte) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		k, v, ok := strings.Cut(line, "=")
		require.True(t, ok, "line %q is not KEY=value", line)
		_, dup := m[k]
		require.False(t, dup, "duplicate key %s", k)
		m[k] = v
	}
	return m
}

func TestAssistedServiceEnv(t *testing.T) {
	in := haInput()
	cfg, _ := mustBuild(t, in)
	raw, ok := fileContents(t, cfg, "/usr/local/share/assisted-service/assisted-service.env")
	require.True(t, ok)
	env := envMap(t, raw)
	assert.Equal(t, "agent-installer-local", env["AUTH_TYPE"])
	assert.Equal(t, testInfraEnv, env["INFRA_ENV_ID"])
	assert.Equal(t, in.Auth.UserToken, env["USER_AUTH_TOKEN"])
	assert.Equal(t, in.Auth.WatcherToken, env["WATCHER_AUTH_TOKEN"])
	assert.Equal(t, "belongs-to-majority-group,belongs-to-machine-cidr", env["DISABLED_HOST_VALIDATIONS"])
	assert.Equal(t, "/opt/agent/tls", env["EPHEMERAL_INSTALLER_CLUSTER_TLS_CERTS_OVERRIDE_DIR"])
	assert.Equal(t, "quay.io", env["PUBLIC_CONTAINER_REGISTRIES"])
	assert.Equal(t, "TO_BE_REPLACED_BY_SYSTEMD", env["HW_VALIDATOR_REQUIREMENTS"])
	// EC_PUBLIC_KEY_PEM is base64 of the PEM text, on one line.
	assert.Equal(t, testPubKey, string(mustB64(t, env["EC_PUBLIC_KEY_PEM"])))

	var releases []map[string]any
	require.NoError(t, json.Unmarshal([]byte(env["RELEASE_IMAGES"]), &releases))
	require.Len(t, releases, 1)
	assert.Equal(t, "4.19", releases[0]["openshift_version"])
	assert.Equal(t, "x86_64", releases[0]["cpu_architecture"])
	assert.Equal(t, []any{"x86_64"}, releases[0]["cpu_architectures"])
	assert.Equal(t, in.ReleaseImage, releases[0]["url"])
	assert.Equal(t, "4.19.3", releases[0]["version"])

	// Without disabled validations the key is absent.
	cfg, _ = mustBuild(t, snoInput())
	raw, _ = fileContents(t, cfg, "/usr/local/share/assisted-service/assisted-service.env")
	assert.NotContains(t, envMap(t, raw), "DISABLED_HOST_VALIDATIONS")

	images, ok := fileContents(t, cfg, "/usr/local/share/assisted-service/images.env")
	require.True(t, ok)
	ienv := envMap(t, images)
	var osImages []OSImage
	require.NoError(t, json.Unmarshal([]byte(ienv["OS_IMAGES"]), &osImages))
	require.Len(t, osImages, 1)
	assert.Equal(t, OSImage{OpenshiftVersion: "4.19.3", CPUArchitecture: "x86_64", URL: snoInput().OSImages[0].URL, Version: "9.6.20250523-0"}, osImages[0])

	start, ok := fileContents(t, cfg, "/usr/local/share/start-cluster/start-cluster.env")
	require.True(t, ok)
	assert.Equal(t, map[string]string{"REQUIRED_MASTER_NODES": "1", "REQUIRED_ARBITER_NODES": "0", "REQUIRED_WORKER_NODES": "0"}, envMap(t, start))
}

func TestMultiArchReleaseImages(t *testing.T) {
	in := snoInput()
	in.Arch = "multi"
	in.ReleaseVersion = "4.20.0-ec.3"
	cfg, _ := mustBuild(t, in)
	raw, _ := fileContents(t, cfg, "/usr/local/share/assisted-service/assisted-service.env")
	var releases []map[string]any
	require.NoError(t, json.Unmarshal([]byte(envMap(t, raw)["RELEASE_IMAGES"]), &releases))
	assert.Equal(t, "4.20", releases[0]["openshift_version"])
	assert.Equal(t, "multi", releases[0]["cpu_architecture"])
	assert.Equal(t, []any{"aarch64", "x86_64", "ppc64le", "s390x"}, releases[0]["cpu_architectures"])
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	r := types.Resource{Source: strPtr("data:;base64," + s)}
	return decodeResource(t, r)
}

func TestHostFiles(t *testing.T) {
	cfg, _ := mustBuild(t, haInput())
	get := func(p string) string {
		b, ok := fileContents(t, cfg, p)
		require.True(t, ok, "missing %s", p)
		return string(b)
	}
	assert.Equal(t, "52:54:01:aa:aa:a1\n52:54:01:bb:bb:a1", get("/etc/assisted/hostconfig/master-0/mac_addresses"))
	assert.Equal(t, "master", get("/etc/assisted/hostconfig/master-0/role"))
	assert.Equal(t, "worker", get("/etc/assisted/hostconfig/host-4/role"))
	assert.Equal(t, "master-0", get("/etc/assisted/hostnames/52:54:01:aa:aa:a1"))
	_, ok := fileContents(t, cfg, "/etc/assisted/hostnames/52:54:01:aa:aa:a5")
	assert.False(t, ok, "a host without hostname gets no hostnames file")

	var args []string
	require.NoError(t, json.Unmarshal([]byte(get("/etc/assisted/hostconfig/master-0/installer-args.json")), &args))
	assert.Equal(t, []string{"--append-karg", "ip=eth0:dhcp", "--save-partlabel", "data*"}, args)
	override := get("/etc/assisted/hostconfig/master-0/ignition-config-overrides.json")
	assert.Equal(t, haInput().Hosts[0].IgnitionConfigOverride, override)
	_, ok = fileContents(t, cfg, "/etc/assisted/hostconfig/master-1/installer-args.json")
	assert.False(t, ok)

	assert.Equal(t, "52:54:01:AA:AA:A1=eth0", get("/etc/assisted/network/host0/mac_interface.ini"))
	assert.Equal(t, "server ntp1.example.com iburst\nserver 192.168.111.1 iburst\nmakestep 1.0 3\nrtcsync\nlogdir /var/log/chrony\n", get(ChronyPath))

	proxy := get("/etc/systemd/system.conf.d/10-default-env.conf")
	assert.Equal(t, "[Manager]\n"+
		"DefaultEnvironment=\"HTTP_PROXY=http://proxy.example.com:3128\"\n"+
		"DefaultEnvironment=\"HTTPS_PROXY=http://proxy.example.com:3128\"\n"+
		"DefaultEnvironment=\"NO_PROXY=.example.com,10.0.0.0/8,192.168.111.0/24\"\n", proxy)

	// Each ZTP manifest and the extra manifests arrive byte for byte.
	for _, m := range haInput().ZTPManifests {
		assert.Equal(t, string(m.Contents), get("/etc/assisted/manifests/"+m.FileName))
	}
	for _, m := range haInput().ExtraManifests {
		assert.Equal(t, string(m.Contents), get("/etc/assisted/extra-manifests/"+m.FileName))
	}
	assert.Equal(t, testPullSecret+"\n", get("/root/.docker/config.json"))
}

// TestChronyIsWrittenAsUpstream (issue 37 item 5): with extra NTP
// sources the live system's /etc/chrony.conf is the file upstream writes
// (openshift/installer pkg/asset/agent/image/ignition.go addNTPSources; its
// testscript agent/image/assets/with_additional_ntp_sources expects it byte
// for byte): the server lines, then makestep 1.0 3, rtcsync and logdir,
// replacing RHCOS's file.
func TestChronyIsWrittenAsUpstream(t *testing.T) {
	in := snoInput()
	in.NTPSources = []string{"0.clock.ntp.org", "1.clock.ntp.org"}
	cfg, _ := mustBuild(t, in)
	var found bool
	for _, f := range cfg.Storage.Files {
		if f.Path != ChronyPath {
			continue
		}
		found = true
		require.NotNil(t, f.Contents.Source, "chrony.conf is written whole")
		assert.True(t, f.Overwrite != nil && *f.Overwrite, "chrony.conf replaces RHCOS's")
		assert.Empty(t, f.Append)
		require.NotNil(t, f.Mode)
		assert.Equal(t, 0o644, *f.Mode)
	}
	require.True(t, found, "the NTP sources reach chrony.conf")
	got, _ := fileContents(t, cfg, ChronyPath)
	assert.Equal(t, "server 0.clock.ntp.org iburst\nserver 1.clock.ntp.org iburst\nmakestep 1.0 3\nrtcsync\nlogdir /var/log/chrony\n", string(got))
}

func TestNoProxyFileWithoutProxy(t *testing.T) {
	cfg, _ := mustBuild(t, snoInput())
	b, ok := fileContents(t, cfg, "/etc/systemd/system.conf.d/10-default-env.conf")
	require.True(t, ok)
	assert.Empty(t, string(b))
	_, ok = fileContents(t, cfg, ChronyPath)
	assert.False(t, ok, "no chrony.conf without NTP sources")
}

func TestMirrorConfig(t *testing.T) {
	in := disconnectedInput()
	cfg, _ := mustBuild(t, in)
	reg, ok := fileContents(t, cfg, RegistriesPath)
	require.True(t, ok)
	assert.Equal(t, string(in.RegistriesConf), string(reg))
	ca, ok := fileContents(t, cfg, CABundlePath)
	require.True(t, ok)
	assert.Equal(t, string(in.CABundle), string(ca))

	svc, ok := unitContents(cfg, "assisted-service.service")
	require.True(t, ok)
	assert.Contains(t, svc, " -v /etc/containers:/etc/containers ")
	assert.Contains(t, svc, " -v "+CABundlePath+":/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem:z ")
	reg2, _ := unitContents(cfg, "agent-register-cluster.service")
	assert.Contains(t, reg2, "Environment=OPENSHIFT_INSTALL_RELEASE_IMAGE_MIRROR="+in.ReleaseImageMirror+"\n")
	assert.Contains(t, reg2, " -v /etc/containers:/etc/containers ")

	raw, _ := fileContents(t, cfg, "/usr/local/share/assisted-service/assisted-service.env")
	env := envMap(t, raw)
	assert.Equal(t, "mirror.example.com:5000", env["PUBLIC_CONTAINER_REGISTRIES"])
	assert.Equal(t, in.ReleaseImageMirror, env["OPENSHIFT_INSTALL_RELEASE_IMAGE_MIRROR"])

	// Without a mirror: no /etc/containers mount, the default CA bundle mount.
	cfg, _ = mustBuild(t, snoInput())
	svc, _ = unitContents(cfg, "assisted-service.service")
	assert.NotContains(t, svc, "/etc/containers")
	assert.Contains(t, svc, " "+defaultCABundle+" ")
}

func TestCompression(t *testing.T) {
	cfg, size := mustBuild(t, haInput())
	compressed := map[string]bool{}
	for _, f := range cfg.Storage.Files {
		if f.Contents.Compression != nil {
			require.Equal(t, "gzip", *f.Contents.Compression)
			compressed[f.Path] = true
		}
	}
	// The large extra manifest is compressed, and compression is only used
	// where it makes the config smaller.
	assert.True(t, compressed["/etc/assisted/extra-manifests/99-chrony-0.yaml"])
	for _, f := range cfg.Storage.Files {
		if compressed[f.Path] {
			plain, _ := fileContents(t, cfg, f.Path)
			assert.Less(t, len(*f.Contents.Source)+len(`,"compression":"gzip"`), len(textDataURL)+base64Len(len(plain)), f.Path)
		}
	}
	// Files over the threshold are compressed.
	for _, f := range cfg.Storage.Files {
		if f.Contents.Source == nil {
			continue
		}
		plain, _ := fileContents(t, cfg, f.Path)
		if len(plain) > DefaultCompressThreshold*2 {
			assert.True(t, compressed[f.Path], "%s (%d bytes) should be compressed", f.Path, len(plain))
		}
	}

	// Disabling the threshold keeps ordinary files plain and makes the
	// config larger.
	in := haInput()
	in.CompressThreshold = -1
	cfg2, size2 := mustBuild(t, in)
	for _, f := range cfg2.Storage.Files {
		if f.Contents.Compression != nil {
			assert.Contains(t, f.Path, "/extra-manifests/", "only always-compressed files may be compressed")
		}
	}
	assert.Greater(t, size2.JSONBytes, size.JSONBytes)
}

func TestSize(t *testing.T) {
	for _, fx := range fixtures {
		cfg, size := mustBuild(t, fx.input())
		raw, err := MarshalIndent(cfg)
		require.NoError(t, err)
		assert.Equal(t, len(raw), size.JSONBytes)
		archive, err := isoeditor.IgnitionArchive(raw)
		require.NoError(t, err)
		assert.Equal(t, len(archive), size.CompressedBytes)
		// Typical configs fit the embed area with room to spare.
		assert.Less(t, size.CompressedBytes, EmbedAreaSize/4, fx.name)
		require.Len(t, size.Top, topContributors)
		for i := 1; i < len(size.Top); i++ {
			assert.GreaterOrEqual(t, size.Top[i-1].Bytes, size.Top[i].Bytes)
		}
		t.Logf("%s: %s; largest %s (%d bytes)", fx.name, size, size.Top[0].Path, size.Top[0].Bytes)
	}
}

func TestUsersAndSecretsModes(t *testing.T) {
	cfg, _ := mustBuild(t, snoInput())
	require.Len(t, cfg.Passwd.Users, 1)
	core := cfg.Passwd.Users[0]
	assert.Equal(t, "core", core.Name)
	assert.Equal(t, []types.SSHAuthorizedKey{testSSHKey}, core.SSHAuthorizedKeys)
	require.NotNil(t, core.PasswordHash)
	assert.Equal(t, testHash, *core.PasswordHash)

	secret := regexp.MustCompile(`^(/opt/agent/tls/|/root/\.docker/config\.json$|/etc/assisted/manifests/|/usr/local/share/assisted-service/assisted-service\.env$)`)
	for _, f := range cfg.Storage.Files {
		if secret.MatchString(f.Path) {
			assert.Equal(t, 0o600, *f.Mode, f.Path)
		}
		require.NotNil(t, f.User.Name)
		assert.Equal(t, "root", *f.User.Name)
	}
	hash, ok := fileContents(t, cfg, "/opt/agent/tls/kubeadmin-password.hash")
	require.True(t, ok)
	assert.Equal(t, testHash, string(hash))

	in := snoInput()
	in.SSHKey = ""
	in.PasswordHash = ""
	cfg, _ = mustBuild(t, in)
	assert.Empty(t, cfg.Passwd.Users[0].SSHAuthorizedKeys)
	assert.Nil(t, cfg.Passwd.Users[0].PasswordHash)
	_, ok = fileContents(t, cfg, "/opt/agent/tls/kubeadmin-password.hash")
	assert.False(t, ok)
}

// TestUnitReferencesResolve checks that every script a unit runs and every
// environment file it reads is in the config (or is created at boot).
func TestUnitReferencesResolve(t *testing.T) {
	runtimeFiles := map[string]bool{
		"/usr/local/share/assisted-service/agent-images.env": true, // get-container-images.sh
		"/etc/assisted/node0":                                true, // set-node-zero.sh
	}
	scriptRef := regexp.MustCompile(`/usr/local/bin/[A-Za-z0-9._-]+`)
	envRef := regexp.MustCompile(`(?m)(?:^EnvironmentFile=-?|--env-file=)(\S+)`)
	for _, fx := range fixtures {
		cfg, _ := mustBuild(t, fx.input())
		have := map[string]bool{}
		for _, f := range cfg.Storage.Files {
			have[f.Path] = true
		}
		for _, u := range cfg.Systemd.Units {
			if u.Contents == nil {
				continue // an RHCOS unit, only enabled
			}
			for _, ref := range scriptRef.FindAllString(*u.Contents, -1) {
				if ref == "/usr/local/bin/agent-installer-client" {
					continue // runs inside the agent-installer-api-server image
				}
				if ref == PreNetworkScript && len(fx.input().NetworkFiles) == 0 {
					// The unit is written but not enabled, and has a
					// ConditionPathExists on the script.
					continue
				}
				assert.True(t, have[ref], "%s: %s runs %s, which is not in the config", fx.name, u.Name, ref)
			}
			for _, m := range envRef.FindAllStringSubmatch(*u.Contents, -1) {
				assert.True(t, have[m[1]] || runtimeFiles[m[1]], "%s: %s reads %s, which is not in the config", fx.name, u.Name, m[1])
			}
		}
		// Scripts sourced by other scripts exist too.
		for _, f := range cfg.Storage.Files {
			if !strings.HasPrefix(f.Path, "/usr/local/bin/") {
				continue
			}
			body, _ := fileContents(t, cfg, f.Path)
			for _, ref := range scriptRef.FindAllString(string(body), -1) {
				if ref == "/usr/local/bin/agent" {
					continue // extracted from the node-agent image at boot
				}
				assert.True(t, have[ref], "%s: %s uses %s, which is not in the config", fx.name, f.Path, ref)
			}
		}
	}
}

func TestEnabledUnits(t *testing.T) {
	enabled := func(cfg types.Config) []string {
		var out []string
		for _, u := range cfg.Systemd.Units {
			if u.Enabled != nil && *u.Enabled {
				out = append(out, u.Name)
			}
		}
		sort.Strings(out)
		return out
	}
	cfg, _ := mustBuild(t, snoInput())
	want := append(EnabledStockUnits(), EnabledUnits()...)
	sort.Strings(want)
	assert.Equal(t, want, enabled(cfg))
	_, ok := fileContents(t, cfg, PreNetworkScript)
	assert.False(t, ok, "no pre-network script without static networking")

	cfg, _ = mustBuild(t, haInput())
	want = append([]string{PreNetworkUnit}, want...)
	sort.Strings(want)
	assert.Equal(t, want, enabled(cfg))
	for _, f := range cfg.Storage.Files {
		if f.Path == PreNetworkScript {
			assert.Equal(t, 0o755, *f.Mode)
		}
	}
}

func TestNoUnrenderedTemplates(t *testing.T) {
	for _, fx := range fixtures {
		cfg, _ := mustBuild(t, fx.input())
		check := func(where, s string) {
			assert.NotContains(t, s, "<no value>", where)
			// Go template actions never survive rendering; the only "{{"
			// left is the podman --format argument in release-image.sh.
			if !strings.HasSuffix(where, "/release-image.sh") {
				assert.NotContains(t, s, "{{", where)
			}
		}
		for _, f := range cfg.Storage.Files {
			b, _ := fileContents(t, cfg, f.Path)
			check(f.Path, string(b))
			assert.False(t, strings.HasSuffix(f.Path, ".template"), f.Path)
		}
		for _, u := range cfg.Systemd.Units {
			if u.Contents == nil {
				continue // an RHCOS unit, only enabled
			}
			check(u.Name, *u.Contents)
			assert.False(t, strings.HasSuffix(u.Name, ".template"), u.Name)
		}
	}
}

// TestInvalidInput: Build refuses what it cannot write safely or
// consistently. What values mean (a host's role, the pull secret's JSON,
// an Ignition override) is pkg/manifests' to check
// (manifests.TestChecksIgnitionBuildLeavesToManifests).
func TestInvalidInput(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Input)
		want   string
	}{
		{"no cluster name", func(in *Input) { in.ClusterName = "" }, "ClusterName: required"},
		{"bad rendezvous", func(in *Input) { in.RendezvousIP = "300.1.1.1" }, "RendezvousIP"},
		{"bad arch", func(in *Input) { in.Arch = "sparc" }, "Arch"},
		{"bad version", func(in *Input) { in.ReleaseVersion = "latest" }, "ReleaseVersion"},
		{"base64 public key", func(in *Input) { in.Auth.PublicKeyPEM = "LS0tLS1CRUdJTg==" }, "Auth.PublicKeyPEM"},
		{"token with newline", func(in *Input) { in.Auth.UserToken = "a\nb" }, "Auth.UserToken"},
		{"manifest path", func(in *Input) { in.ZTPManifests[0].FileName = "../x.yaml" }, "ZTPManifests[0].FileName"},
		{"bad mac", func(in *Input) { in.Hosts[0].MACs = []string{"zz:zz"} }, "Hosts[0].MACs[0]"},
		{"duplicate host dir", func(in *Input) { in.Hosts = append(in.Hosts, in.Hosts[0]) }, "also used by Hosts[0]"},
		{"network path", func(in *Input) {
			in.NetworkFiles = []NetworkFile{{Path: "/etc/NetworkManager/x.nmconnection"}}
		}, "NetworkFiles[0].Path"},
		{"signer name", func(in *Input) { in.Signers[0].Name = "../evil" }, "Signers[0].Name"},
		{"validation id", func(in *Input) { in.DisabledHostValidations = []string{"Has Spaces"} }, "DisabledHostValidations[0]"},
		{"proxy quote", func(in *Input) { in.Proxy = &Proxy{HTTPProxy: `http://"x"`} }, "Proxy.HTTPProxy"},
		{"missing manifest", func(in *Input) { in.ZTPManifests = in.ZTPManifests[1:] }, "ZTPManifests: agent-cluster-install.yaml is missing"},
		{"no os image", func(in *Input) { in.OSImages = nil }, "OSImages"},
		{"empty installer arg", func(in *Input) { in.Hosts[0].InstallerArgs = []string{""} }, "Hosts[0].InstallerArgs[0]"},
		{"image type", func(in *Input) { in.ImageType = "disconnected-iso" }, "ImageType"},
		{"duplicate manifest", func(in *Input) {
			in.ZTPManifests = append(in.ZTPManifests, Manifest{FileName: "agent-config.yaml", Contents: []byte("x")})
		}, "two files would be written to /etc/assisted/manifests/agent-config.yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := snoInput()
			tc.mutate(&in)
			_, _, err := Build(in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestTreeFileModes(t *testing.T) {
	for _, tc := range []struct {
		path   string
		mode   int
		append bool
	}{
		{"/usr/local/bin/common.sh", 0o555, false},
		{"/etc/NetworkManager/dispatcher.d/30-x", 0o555, false},
		{"/etc/containers/containers.conf", 0o644, true},
		{"/etc/motd", 0o644, true},
		{"/etc/containers/registries.conf", 0o644, false},
		{"/etc/issue", 0o600, false},
		{PreNetworkScript, 0o755, false},
	} {
		mode, app := treeFileMode(tc.path)
		assert.Equal(t, tc.mode, mode, tc.path)
		assert.Equal(t, tc.append, app, tc.path)
	}
}
