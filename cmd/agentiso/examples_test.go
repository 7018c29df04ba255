package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	v32 "github.com/coreos/ignition/v2/config/v3_2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyDir copies the regular files of an example into a scratch dir.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	}))
}

// TestExamplesIgnitionValidates builds agent.ign for every bundled example
// and checks it with Ignition's own parser/validator and, where installed
// (always in CI), with the ignition-validate tool.
func TestExamplesIgnitionValidates(t *testing.T) {
	examples, err := filepath.Glob("../../examples/*")
	require.NoError(t, err)
	require.NotEmpty(t, examples)
	tool, lookErr := exec.LookPath("ignition-validate")
	if lookErr != nil && os.Getenv("CI") != "" {
		t.Fatalf("ignition-validate is required in CI (hack/install-deps.sh installs Debian package ignition): %v", lookErr)
	}
	for _, ex := range examples {
		t.Run(filepath.Base(ex), func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, ex, dir)
			var stderr bytes.Buffer
			code := run(withTestRelease("create", "ignition", "--dir", dir), nil, &bytes.Buffer{}, &stderr)
			require.Equal(t, 0, code, stderr.String())
			assert.Contains(t, stderr.String(), "The rendezvous host IP (node0 IP) is ")
			b, err := os.ReadFile(filepath.Join(dir, "agent.ign"))
			require.NoError(t, err)
			cfg, rpt, err := v32.Parse(b)
			require.NoError(t, err, rpt.String())
			assert.False(t, rpt.IsFatal(), rpt.String())
			if filepath.Base(ex) == "oci-sno" {
				// Platform external: the minimal ISO, as assisted-service
				// is told.
				assert.Contains(t, string(b), "IMAGE_TYPE_ISO=minimal-iso")
			}
			if filepath.Base(ex) == "ha" {
				// The HA example's bond + VLAN static networking travels as
				// keyfiles, one directory per host.
				paths := map[string]bool{}
				for _, f := range cfg.Storage.Files {
					paths[f.Path] = true
				}
				for h := 0; h < 5; h++ {
					for _, n := range []string{"bond0.111.nmconnection", "bond0.nmconnection", "eno1.nmconnection", "eno2.nmconnection", "mac_interface.ini"} {
						p := fmt.Sprintf("/etc/assisted/network/host%d/%s", h, n)
						assert.True(t, paths[p], "missing %s", p)
					}
				}
			}
			fi, err := os.Stat(filepath.Join(dir, "agent.ign"))
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
			if tool == "" {
				t.Log("ignition-validate not installed; skipped the external check")
				return
			}
			out, err := exec.Command(tool, filepath.Join(dir, "agent.ign")).CombinedOutput()
			assert.NoError(t, err, string(out))
		})
	}
}
