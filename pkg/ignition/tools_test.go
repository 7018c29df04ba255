package ignition

// Tests that run external tools (installed by hack/install-deps.sh):
// shellcheck, systemd-analyze, ignition-validate and ignition itself.

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/data"
)

const ignitionBinary = "/usr/lib/dracut/modules.d/30ignition/ignition"

// scripts returns every shell script the fixtures put in /usr/local/bin,
// rendered, keyed by path (templates are covered through their output).
func scripts(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	all := append([]struct {
		name  string
		input func() Input
	}{{"unconfigured", func() Input { return unconfiguredOf(snoInput()) }}}, fixtures...)
	for _, fx := range all {
		cfg, _ := mustBuild(t, fx.input())
		for _, f := range cfg.Storage.Files {
			if !strings.HasPrefix(f.Path, "/usr/local/bin/") {
				continue
			}
			body, _ := fileContents(t, cfg, f.Path)
			key := fx.name + f.Path
			out[key] = body
		}
	}
	return out
}

func TestEmbeddedScriptsAreAllShipped(t *testing.T) {
	// Every script under data/ reaches some fixture's config, so the
	// shellcheck test below covers all of them.
	shipped := scripts(t)
	err := fs.WalkDir(data.Agent(), ".", func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() || !strings.Contains(p, "/usr/local/bin/") {
			return nil
		}
		dest := "/usr/local/bin/" + strings.TrimSuffix(filepath.Base(p), ".template")
		found := false
		for k := range shipped {
			if strings.HasSuffix(k, dest) {
				found = true
			}
		}
		assert.True(t, found, "%s is not shipped by any fixture", p)
		return nil
	})
	require.NoError(t, err)
}

func TestScriptsPassShellcheck(t *testing.T) {
	shellcheck := requireTool(t, "shellcheck")
	dir := t.TempDir()
	var files []string
	for key, body := range scripts(t) {
		require.True(t, bytes.HasPrefix(body, []byte("#!/bin/bash\n")), "%s must start with #!/bin/bash", key)
		p := filepath.Join(dir, strings.NewReplacer("/", "_").Replace(key))
		require.NoError(t, os.WriteFile(p, body, 0o600))
		files = append(files, p)
	}
	sort.Strings(files)
	cmd := exec.Command(shellcheck, append([]string{"--shell=bash", "--severity=style", "--format=gcc"}, files...)...)
	out, err := cmd.CombinedOutput()
	assert.NoError(t, err, "shellcheck findings:\n%s", out)
	assert.Empty(t, string(out))
}

// writeRoot writes the config's files into root (modes as configured) and
// its units into root/etc/systemd/system.
func writeRoot(t *testing.T, cfg types.Config, root string) {
	t.Helper()
	for _, f := range cfg.Storage.Files {
		body, _ := fileContents(t, cfg, f.Path)
		p := filepath.Join(root, f.Path)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, body, fs.FileMode(*f.Mode)))
		require.NoError(t, os.Chmod(p, fs.FileMode(*f.Mode)))
	}
	unitDir := filepath.Join(root, "etc/systemd/system")
	require.NoError(t, os.MkdirAll(unitDir, 0o755))
	for _, u := range cfg.Systemd.Units {
		if u.Contents == nil {
			continue // an RHCOS unit, only enabled
		}
		require.NoError(t, os.WriteFile(filepath.Join(unitDir, u.Name), []byte(*u.Contents), 0o644))
	}
}

func TestUnitsPassSystemdAnalyzeVerify(t *testing.T) {
	analyze := requireTool(t, "systemd-analyze")
	// systemd-analyze verify checks syntax, dependencies and that every
	// command exists. It runs against a scratch root holding the host's
	// stock units (for targets like network-online.target), the config's
	// files and units, and stubs for the RHCOS commands this host lacks
	// (podman, semodule, ...). Scripts in /usr/local/bin are never
	// stubbed: they must come from the config.
	var systemUnits string
	for _, d := range []string{"/usr/lib/systemd/system", "/lib/systemd/system"} {
		if st, err := os.Stat(filepath.Join(d, "sysinit.target")); err == nil && !st.IsDir() {
			systemUnits = d
			break
		}
	}
	if systemUnits == "" {
		if os.Getenv("CI") == "" {
			t.Skip("no systemd unit directory with sysinit.target; install the systemd package")
		}
		t.Fatal("no systemd unit directory with sysinit.target but CI is set")
	}
	execLine := regexp.MustCompile(`(?m)^Exec[A-Za-z]*=[-@:+!]*(/\S+)`)
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			cfg, _ := mustBuild(t, fx.input())
			root := t.TempDir()
			require.NoError(t, os.CopyFS(filepath.Join(root, "usr/lib/systemd/system"), os.DirFS(systemUnits)))
			writeRoot(t, cfg, root)
			var names []string
			for _, u := range cfg.Systemd.Units {
				if u.Contents == nil {
					continue // an RHCOS unit, only enabled
				}
				names = append(names, filepath.Join(root, "etc/systemd/system", u.Name))
				for _, m := range execLine.FindAllStringSubmatch(*u.Contents, -1) {
					cmd := m[1]
					if strings.HasPrefix(cmd, "/usr/local/bin/") {
						continue
					}
					stub := filepath.Join(root, cmd)
					if _, err := os.Stat(stub); err == nil {
						continue
					}
					require.NoError(t, os.MkdirAll(filepath.Dir(stub), 0o755))
					require.NoError(t, os.WriteFile(stub, []byte("#!/bin/sh\n"), 0o755))
				}
			}
			if len(fx.input().NetworkFiles) == 0 {
				// The unit is written but disabled and guarded by
				// ConditionPathExists; give verify the script it names.
				stub := filepath.Join(root, PreNetworkScript)
				require.NoError(t, os.WriteFile(stub, []byte("#!/bin/sh\n"), 0o755))
			}
			sort.Strings(names)
			cmd := exec.Command(analyze, append([]string{"verify", "--man=no", "--root=" + root}, names...)...)
			out, err := cmd.CombinedOutput()
			assert.NoError(t, err, "systemd-analyze verify:\n%s", out)
			assert.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify reported problems")
		})
	}
}

func TestIgnitionValidateAcceptsConfigs(t *testing.T) {
	validate := requireTool(t, "ignition-validate")
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			cfg, _ := mustBuild(t, fx.input())
			raw, err := MarshalIndent(cfg)
			require.NoError(t, err)
			p := filepath.Join(t.TempDir(), "agent.ign")
			require.NoError(t, os.WriteFile(p, raw, 0o600))
			out, err := exec.Command(validate, p).CombinedOutput()
			assert.NoError(t, err, "ignition-validate:\n%s", out)
			assert.Empty(t, strings.TrimSpace(string(out)))
		})
	}
}

// TestIgnitionFilesStage applies each config to a scratch root with the real
// ignition binary and checks what lands there.
func TestIgnitionFilesStage(t *testing.T) {
	ignition := requireTool(t, "ignition", ignitionBinary)
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "" {
			t.Skip("the ignition files stage runs useradd/chown and needs root")
		}
		t.Fatal("the ignition files stage needs root, but CI is set and the tests do not run as root")
	}
	for _, tool := range []string{"useradd", "usermod"} {
		requireTool(t, tool, "/usr/sbin/"+tool, "/sbin/"+tool)
	}
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			cfg, _ := mustBuild(t, fx.input())
			raw, err := MarshalIndent(cfg)
			require.NoError(t, err)
			work := t.TempDir()
			// Ignition writes the SSH keys as the core user, who must be able
			// to reach the root; t.TempDir creates 0700 directories.
			require.NoError(t, os.Chmod(work, 0o755))
			require.NoError(t, os.Chmod(filepath.Dir(work), 0o755))
			root := filepath.Join(work, "root")
			etc := filepath.Join(root, "etc")
			require.NoError(t, os.MkdirAll(filepath.Join(etc, "selinux"), 0o755))
			for _, f := range []string{"passwd", "group", "shadow", "gshadow"} {
				b, err := os.ReadFile("/etc/" + f)
				if os.IsNotExist(err) {
					b = nil
				} else {
					require.NoError(t, err)
				}
				require.NoError(t, os.WriteFile(filepath.Join(etc, f), b, 0o644))
			}
			require.NoError(t, os.WriteFile(filepath.Join(etc, "selinux/config"), []byte("SELINUX=disabled\nSELINUXTYPE=targeted\n"), 0o644))
			bin := filepath.Join(work, "bin")
			require.NoError(t, os.MkdirAll(bin, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(bin, "setfiles"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
			ign := filepath.Join(work, "agent.ign")
			require.NoError(t, os.WriteFile(ign, raw, 0o600))

			// fetch-offline reads IGNITION_CONFIG_FILE into the config cache;
			// files applies the cached config under root.
			for _, stage := range []string{"fetch-offline", "files"} {
				cmd := exec.Command(ignition, "--platform=file", "--stage="+stage, "--root="+root, "--log-to-stdout",
					"--config-cache="+filepath.Join(work, "cache.json"),
					"--state-file="+filepath.Join(work, "state"),
					"--neednet="+filepath.Join(work, "neednet"))
				cmd.Env = append(os.Environ(), "IGNITION_CONFIG_FILE="+ign, "PATH="+bin+":/usr/sbin:/usr/bin:/sbin:/bin")
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "ignition %s stage:\n%s", stage, out)
			}

			for _, f := range cfg.Storage.Files {
				p := filepath.Join(root, f.Path)
				st, err := os.Stat(p)
				require.NoError(t, err, f.Path)
				assert.Equal(t, fs.FileMode(*f.Mode), st.Mode().Perm(), f.Path)
				want, _ := fileContents(t, cfg, f.Path)
				got, err := os.ReadFile(p)
				require.NoError(t, err)
				if len(f.Append) > 0 {
					assert.True(t, bytes.HasSuffix(got, want), "%s: appended contents missing", f.Path)
				} else {
					assert.Equal(t, string(want), string(got), f.Path)
				}
			}
			for _, d := range cfg.Storage.Directories {
				st, err := os.Stat(filepath.Join(root, d.Path))
				require.NoError(t, err, d.Path)
				assert.True(t, st.IsDir())
				assert.Equal(t, fs.FileMode(*d.Mode), st.Mode().Perm(), d.Path)
			}
			preset, err := os.ReadFile(filepath.Join(root, "etc/systemd/system-preset/20-ignition.preset"))
			require.NoError(t, err)
			for _, u := range cfg.Systemd.Units {
				body, err := os.ReadFile(filepath.Join(root, "etc/systemd/system", u.Name))
				if u.Contents == nil {
					assert.True(t, os.IsNotExist(err), "%s: an RHCOS unit must not be overwritten", u.Name)
				} else {
					require.NoError(t, err, u.Name)
					assert.Equal(t, *u.Contents, string(body))
				}
				enabled := u.Enabled != nil && *u.Enabled
				assert.Equal(t, enabled, strings.Contains(string(preset), "enable "+u.Name+"\n"), "preset for %s", u.Name)
			}
			passwd, err := os.ReadFile(filepath.Join(etc, "passwd"))
			require.NoError(t, err)
			assert.Regexp(t, `(?m)^core:`, string(passwd))
			shadow, err := os.ReadFile(filepath.Join(etc, "shadow"))
			require.NoError(t, err)
			if fx.input().PasswordHash != "" {
				assert.Contains(t, string(shadow), "core:"+testHash+":")
			} else {
				assert.NotContains(t, string(shadow), testHash, "an add-nodes ISO sets no password")
			}
			keys, err := os.ReadFile(filepath.Join(root, "home/core/.ssh/authorized_keys.d/ignition"))
			if os.IsNotExist(err) {
				keys, err = os.ReadFile(filepath.Join(root, "home/core/.ssh/authorized_keys"))
			}
			require.NoError(t, err)
			assert.Contains(t, string(keys), testSSHKey)
		})
	}
}
