package ignition

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/configimage"
)

// unconfiguredOf is the generic ISO's input for the release, mirrors and
// NTP of full: only what names no cluster.
func unconfiguredOf(full Input) Input {
	in := Input{
		Unconfigured:              true,
		ReleaseImage:              full.ReleaseImage,
		ReleaseVersion:            full.ReleaseVersion,
		ReleaseImageMirror:        full.ReleaseImageMirror,
		Arch:                      full.Arch,
		OSImages:                  full.OSImages,
		RegistriesConf:            full.RegistriesConf,
		CABundle:                  full.CABundle,
		PublicContainerRegistries: full.PublicContainerRegistries,
		NTPSources:                full.NTPSources,
		PullSecret:                full.PullSecret,
		SSHKey:                    full.SSHKey,
		RendezvousIP:              full.RendezvousIP,
	}
	for _, m := range full.ZTPManifests {
		switch m.FileName {
		case "cluster-image-set.yaml", "infraenv.yaml", "pull-secret.yaml":
			in.ZTPManifests = append(in.ZTPManifests, m)
		}
	}
	return in
}

func enabledUnits(cfg types.Config) map[string]bool {
	out := map[string]bool{}
	for _, u := range cfg.Systemd.Units {
		out[u.Name] = u.Enabled != nil && *u.Enabled
	}
	return out
}

func filePaths(cfg types.Config) map[string]bool {
	out := map[string]bool{}
	for _, f := range cfg.Storage.Files {
		out[f.Path] = true
	}
	return out
}

func TestUnconfiguredContents(t *testing.T) {
	for _, tc := range []struct {
		name    string
		network bool
	}{{"no-nmstateconfig", false}, {"with-nmstateconfig", true}} {
		t.Run(tc.name, func(t *testing.T) {
			in := unconfiguredOf(snoInput())
			if tc.network {
				in.NetworkFiles = haInput().NetworkFiles[:2]
			}
			cfg, _ := mustBuild(t, in)
			files := filePaths(cfg)
			for _, p := range []string{"/etc/assisted/manifests/pull-secret.yaml", "/etc/assisted/manifests/cluster-image-set.yaml",
				"/etc/assisted/manifests/infraenv.yaml", PreNetworkScript, "/usr/local/bin/oci-eval-user-data.sh",
				UnconfiguredEnvPath, "/usr/local/bin/agent-config-image-wait.sh", "/usr/local/bin/set-node-zero.sh"} {
				assert.True(t, files[p], "missing %s", p)
			}
			// The files of data/agent are all there, as upstream's (the
			// config image replaces those that name the cluster), with no
			// cluster in them.
			for _, p := range []string{"/etc/issue", "/etc/multipath.conf", "/etc/containers/containers.conf",
				"/etc/NetworkManager/conf.d/clientid.conf", "/root/.docker/config.json", "/root/assisted.te",
				"/usr/local/bin/agent-config-image-wait.sh", "/usr/local/bin/agent-gather", "/usr/local/bin/extract-agent.sh",
				"/usr/local/bin/get-container-images.sh", "/usr/local/bin/set-hostname.sh", "/usr/local/bin/start-agent.sh",
				"/usr/local/bin/start-cluster-installation.sh", "/usr/local/bin/wait-for-assisted-service.sh",
				"/usr/local/share/assisted-service/assisted-db.env", "/usr/local/share/assisted-service/assisted-service.env",
				"/usr/local/share/start-cluster/start-cluster.env", "/usr/local/share/assisted-service/images.env",
				"/etc/assisted/agent-installer.env", "/etc/motd.d/10-agent-installer"} {
				assert.True(t, files[p], "missing %s", p)
			}
			env, _ := fileContents(t, cfg, "/usr/local/share/assisted-service/assisted-service.env")
			assert.NotContains(t, string(env), "eyJ", "no token")
			assert.NotContains(t, string(env), testInfraEnv)
			// Nothing generated for a cluster: no rendezvous env, no
			// credentials, no host settings, no cluster manifests.
			for p := range files {
				for _, dir := range []string{TLSDir, HostConfigDir, HostnamesDir, ExtraManifestsDir, "/etc/assisted/config-image"} {
					assert.False(t, strings.HasPrefix(p, dir+"/"), "%s names a cluster", p)
				}
			}
			// With the rendezvous IP known, rendezvous-host.env without
			// tokens (as upstream); the config image replaces it.
			renv, ok := fileContents(t, cfg, RendezvousEnvPath)
			require.True(t, ok)
			assert.Contains(t, string(renv), "NODE_ZERO_IP=192.168.111.80\n")
			assert.Contains(t, string(renv), "PULL_SECRET_TOKEN=\nUSER_AUTH_TOKEN=\n")
			for _, p := range []string{"/etc/assisted/manifests/agent-cluster-install.yaml",
				"/etc/assisted/manifests/cluster-deployment.yaml", "/etc/assisted/manifests/agent-config.yaml"} {
				assert.False(t, files[p], "%s must not be in the generic ISO", p)
			}
			assert.Equal(t, tc.network, files["/etc/assisted/network/host0/eth0.nmconnection"])
			// Static networking is the keyfiles alone: nmstateconfig.yaml is
			// what agent-installer-client registers with the cluster's
			// InfraEnv, so it comes with the config image (upstream writes
			// only the InfraEnv, ClusterImageSet and pull secret manifests:
			// openshift/installer pkg/asset/agent/image/unconfigured_ignition.go).
			assert.False(t, files["/etc/assisted/manifests/nmstateconfig.yaml"], "nmstateconfig.yaml must not be in the generic ISO")
			units := enabledUnits(cfg)
			assert.True(t, units[ConfigCheckUnit])
			assert.True(t, units["oci-eval-user-data.service"])
			assert.Equal(t, tc.network, units[PreNetworkUnit])
			for _, u := range EnabledUnits() {
				assert.True(t, units[u], u)
			}
			env, _ = fileContents(t, cfg, UnconfiguredEnvPath)
			assert.Equal(t, "RELEASE_IMAGE=quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64\nRELEASE_VERSION=4.19.3\nCPU_ARCH=x86_64\nRENDEZVOUS_IP=192.168.111.80\n", string(env))
			require.Len(t, cfg.Passwd.Users, 1)
			assert.Nil(t, cfg.Passwd.Users[0].PasswordHash)
			assert.Equal(t, []types.SSHAuthorizedKey{testSSHKey}, cfg.Passwd.Users[0].SSHAuthorizedKeys)
		})
	}
}

func TestUnconfiguredWithoutRendezvousIP(t *testing.T) {
	in := unconfiguredOf(snoInput())
	in.RendezvousIP = ""
	cfg, _ := mustBuild(t, in)
	assert.False(t, filePaths(cfg)[RendezvousEnvPath])
	env, _ := fileContents(t, cfg, UnconfiguredEnvPath)
	assert.NotContains(t, string(env), "RENDEZVOUS_IP")
}

func TestUnconfiguredRefusesClusterInput(t *testing.T) {
	full := snoInput()
	full.Unconfigured = true
	_, _, err := Build(full)
	require.Error(t, err)
	for _, want := range []string{"agent-cluster-install.yaml names a cluster", "ClusterName: must be empty", "Hosts: must be empty",
		"Auth: must be empty", "Signers: must be empty", "PasswordHash: must be empty", "InfraEnvID: must be empty"} {
		assert.Contains(t, err.Error(), want)
	}
	in := unconfiguredOf(snoInput())
	in.ZTPManifests = in.ZTPManifests[:1]
	in.PullSecret = ""
	_, _, err = Build(in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "infraenv.yaml is missing")
	assert.Contains(t, err.Error(), "PullSecret: required")
	in = unconfiguredOf(haInput())
	in.ZTPManifests = append(in.ZTPManifests, ztpManifests("ha", true)[5])
	_, _, err = Build(in)
	assert.ErrorContains(t, err, "ZTPManifests: nmstateconfig.yaml is registered with the cluster's InfraEnv; it belongs in the config image")
	_, err = ConfigImageFiles(unconfiguredOf(snoInput()))
	assert.ErrorContains(t, err, "generic ISO")
}

// TestGenericPlusConfigImageIsAgentISO: a host booted from the generic
// ISO that installs the config image ends with the files of the agent ISO
// built from the same inputs.
func TestGenericPlusConfigImageIsAgentISO(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			full := fx.input()
			if full.AddNodes != nil {
				t.Skip("an add-nodes ISO has no generic form: it is built from the installed cluster")
			}
			if full.Payload != nil {
				t.Skip("an extended ISO carries its release: it has no generic form")
			}
			fullCfg, _ := mustBuild(t, full)
			u := unconfiguredOf(full)
			u.Proxy = nil
			genCfg, _ := mustBuild(t, u)
			image, err := ConfigImageFiles(full)
			require.NoError(t, err)
			inImage := map[string]File{}
			for _, f := range image {
				inImage[f.Path] = f
			}
			for _, f := range fullCfg.Storage.Files {
				want, _ := fileContents(t, fullCfg, f.Path)
				if InConfigImage(f.Path) {
					got, ok := inImage[f.Path]
					require.True(t, ok, "%s is not in the config image", f.Path)
					assert.Equal(t, string(want), string(got.Contents), f.Path)
					assert.Equal(t, *f.Mode, got.Mode, f.Path)
					continue
				}
				got, ok := fileContents(t, genCfg, f.Path)
				require.True(t, ok, "%s is neither in the generic ISO nor in the config image", f.Path)
				assert.Equal(t, string(want), string(got), f.Path)
			}
			// The same units, with the same contents; enabled alike but for
			// the loader and the static network unit (the loader runs that
			// script itself when the image brings keyfiles).
			fullUnits, genUnits := enabledUnits(fullCfg), enabledUnits(genCfg)
			for name, enabled := range fullUnits {
				want, _ := unitContents(fullCfg, name)
				got, _ := unitContents(genCfg, name)
				assert.Equal(t, want, got, name)
				if name != PreNetworkUnit {
					assert.Equal(t, enabled, genUnits[name], name)
				}
			}
		})
	}
}

// configHost is a scratch host booted from the generic ISO of full, with
// the fakes the loader calls.
func configHost(t *testing.T, full Input) *scriptHost {
	t.Helper()
	requireTool(t, "cpio")
	genCfg, _ := mustBuild(t, unconfiguredOf(full))
	h := newScriptHost(t, genCfg)
	for _, name := range []string{"usermod", "nm-online", "agetty"} {
		h.fake(name, "exit 0")
	}
	h.fake("systemctl", `[ "$1" = is-failed ] && exit 1; exit 0`)
	return h
}

func configArchive(t *testing.T, full Input, info configimage.Info) string {
	t.Helper()
	files, err := ConfigImageFiles(full)
	require.NoError(t, err)
	var members []configimage.Member
	for _, f := range files {
		members = append(members, configimage.Member{Path: f.Path, Mode: int64(f.Mode), Data: f.Contents})
	}
	a, err := configimage.Archive(members, info)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "config.gz")
	require.NoError(t, os.WriteFile(p, a, 0o600))
	return p
}

func infoOf(in Input) configimage.Info {
	return configimage.Info{ReleaseImage: in.ReleaseImage, ReleaseVersion: in.ReleaseVersion, Arch: in.Arch,
		Cluster: in.ClusterName + "." + in.BaseDomain, RendezvousIP: in.RendezvousIP, CreatedBy: "test"}
}

func TestLoadConfigImageInstalls(t *testing.T) {
	full := snoInput()
	h := configHost(t, full)
	out, err := h.run("/usr/local/bin/agent-config-image-wait.sh", "--archive", configArchive(t, full, infoOf(full)))
	require.NoError(t, err, out)
	assert.Contains(t, out, "agent-check-config-image: installed the configuration of cluster sno.example.com (release 4.19.3)")
	fullCfg, _ := mustBuild(t, full)
	for _, f := range fullCfg.Storage.Files {
		if !InConfigImage(f.Path) {
			continue
		}
		want, _ := fileContents(t, fullCfg, f.Path)
		assert.Equal(t, string(want), h.read(f.Path), f.Path)
		st, err := os.Stat(h.file(f.Path))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(*f.Mode), st.Mode().Perm(), f.Path)
	}
	assert.FileExists(t, h.file("/etc/assisted/config-image-loaded"))
	assert.Contains(t, h.calls(), "usermod --password "+testHash+" core\n")
	assert.Contains(t, h.calls(), "systemctl daemon-reload\n")
	assert.NotContains(t, h.calls(), "restart NetworkManager.service", "no static networking in this config image")
	assert.Contains(t, h.calls(), "systemctl is-failed --quiet NetworkManager-wait-online.service\n")
	// A second start finds the host configured.
	out, err = h.run("/usr/local/bin/agent-config-image-wait.sh")
	require.NoError(t, err, out)
	assert.Contains(t, out, "configured already")
}

func TestLoadConfigImageStaticNetwork(t *testing.T) {
	full := haInput()
	h := configHost(t, full)
	h.env = append(h.env, "PRE_NM_NETWORK_DIR="+h.file(NetworkDir), "PRE_NM_SYS_CLASS_NET="+h.path("sys"), "PRE_NM_TARGET_DIR="+h.path("nm"))
	require.NoError(t, os.MkdirAll(h.path("sys/ens3"), 0o755))
	require.NoError(t, os.WriteFile(h.path("sys/ens3/address"), []byte("52:54:01:aa:aa:a2\n"), 0o644))
	require.NoError(t, os.MkdirAll(h.path("nm"), 0o755))
	h.fake("nmcli", `[ "$1" = -t ] && printf '%s\n' 'bond0:/etc/NetworkManager/system-connections/bond0.nmconnection' 'Wired connection 1:/run/NetworkManager/system-connections/x.nmconnection'; exit 0`)
	out, err := h.run("/usr/local/bin/agent-config-image-wait.sh", "--archive", configArchive(t, full, infoOf(full)))
	require.NoError(t, err, out)
	assert.Contains(t, h.calls(), "systemctl restart NetworkManager.service\n")
	assert.Contains(t, h.calls(), "nmcli --wait 60 connection up bond0\n")
	assert.NotContains(t, h.calls(), "restart NetworkManager-wait-online", "it had not failed")
	assert.NotContains(t, h.calls(), "connection up Wired")
	assert.FileExists(t, h.path("nm/ens3.nmconnection"), out)
}

// TestLoadConfigImageWaitOnlineAgain: a host without network before its
// configuration saw NetworkManager-wait-online fail at boot; once
// configured, it is run again.
func TestLoadConfigImageWaitOnlineAgain(t *testing.T) {
	full := snoInput()
	h := configHost(t, full)
	h.fake("systemctl", `[ "$1" = is-failed ] && exit 0; exit 0`)
	out, err := h.run("/usr/local/bin/agent-config-image-wait.sh", "--archive", configArchive(t, full, infoOf(full)))
	require.NoError(t, err, out)
	assert.Contains(t, h.calls(), "systemctl restart NetworkManager-wait-online.service\n")
	assert.Contains(t, out, "checking again that the network is online")
}

func TestLoadConfigImageRefuses(t *testing.T) {
	full := snoInput()
	other := infoOf(full)
	other.ReleaseImage = "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("9", 64)
	otherIP := infoOf(full)
	otherIP.RendezvousIP = "192.168.111.99"
	otherArch := infoOf(full)
	otherArch.Arch = "aarch64"
	for _, tc := range []struct {
		name    string
		archive func(t *testing.T) string
		want    string
	}{
		{"other-release", func(t *testing.T) string { return configArchive(t, full, other) },
			"it is for another cluster: its RELEASE_IMAGE is quay.io/openshift-release-dev/ocp-release@sha256:9999"},
		{"other-rendezvous-ip", func(t *testing.T) string { return configArchive(t, full, otherIP) },
			"its RENDEZVOUS_IP is 192.168.111.99 (cluster sno.example.com), this ISO's RENDEZVOUS_IP is 192.168.111.80"},
		{"other-arch", func(t *testing.T) string { return configArchive(t, full, otherArch) }, "its CPU_ARCH is aarch64"},
		{"corrupt", func(t *testing.T) string {
			p := configArchive(t, full, infoOf(full))
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			b[len(b)/2] ^= 0xff
			require.NoError(t, os.WriteFile(p, b, 0o600))
			return p
		}, "config.gz is corrupt: invalid compressed data--crc error"},
		{"not-gzip", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "config.gz")
			require.NoError(t, os.WriteFile(p, []byte("hello"), 0o600))
			return p
		}, "config.gz is corrupt"},
		{"outside-paths", func(t *testing.T) string {
			a, err := configimage.Archive([]configimage.Member{{Path: "/etc/passwd", Mode: 0o644, Data: []byte("root::0:0::/:/bin/sh\n")},
				{Path: RendezvousEnvPath, Mode: 0o600, Data: []byte("NODE_ZERO_IP=1.2.3.4\n")}}, infoOf(full))
			require.NoError(t, err)
			p := filepath.Join(t.TempDir(), "config.gz")
			require.NoError(t, os.WriteFile(p, a, 0o600))
			return p
		}, "holds /etc/passwd, outside the paths a config image may write"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := configHost(t, full)
			before := h.read(RendezvousEnvPath)
			out, err := h.run("/usr/local/bin/agent-config-image-wait.sh", "--archive", tc.archive(t))
			require.Error(t, err, out)
			assert.Contains(t, out, "agent-check-config-image: refused the config image on ")
			assert.Contains(t, out, tc.want)
			assert.Equal(t, before, h.read(RendezvousEnvPath), "nothing is installed from a refused image")
			assert.NoFileExists(t, h.file("/opt/agent/tls/kubeadmin-password.hash"))
			assert.NoFileExists(t, h.file("/etc/assisted/config-image-loaded"))
			issue := h.read("/etc/issue.d/60-config-image.issue")
			assert.Contains(t, issue, "was refused: ")
		})
	}
}
