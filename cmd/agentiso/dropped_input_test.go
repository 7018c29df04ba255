package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runIn(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, nil, &out, &errOut)
	return code, errOut.String()
}

// No input is dropped without a word: an openshift/ that cannot be read is
// an error, extra manifests with a name openshift-install agent ignores
// get a warning, and a key given twice is an error (upstream's strict
// decoding refuses it too).
func TestInputIsNeverDroppedSilently(t *testing.T) {
	t.Run("unreadable openshift dir", func(t *testing.T) {
		dir := t.TempDir()
		copyDir(t, "../../examples/ha", dir)
		require.NoError(t, os.Symlink("openshift", filepath.Join(dir, "openshift"))) // a loop
		code, stderr := runIn(t, withTestRelease("create", "ignition", "--dir", dir)...)
		assert.Equal(t, 1, code, stderr)
		assert.Contains(t, stderr, "openshift", stderr)
	})
	t.Run("ignored manifest names", func(t *testing.T) {
		dir := t.TempDir()
		copyDir(t, "../../examples/ha", dir)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "openshift"), 0o755))
		cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: default\n"
		for _, n := range []string{"a.json", "b.YAML", "c.yaml"} {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "openshift", n), []byte(cm), 0o644))
		}
		code, stderr := runIn(t, withTestRelease("create", "ignition", "--dir", dir)...)
		assert.Equal(t, 0, code, stderr)
		assert.Regexp(t, `WARNING .*openshift/a\.json.*ignored`, stderr)
		assert.Regexp(t, `WARNING .*openshift/b\.YAML.*ignored`, stderr)
		assert.NotContains(t, stderr, "c.yaml")
	})
	t.Run("duplicate keys", func(t *testing.T) {
		dir := t.TempDir()
		copyDir(t, "../../examples/ha", dir)
		p := filepath.Join(dir, "agent-config.yaml")
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		s := strings.Replace(string(b), "rendezvousIP: 192.168.111.20\n", "rendezvousIP: 192.168.111.20\nrendezvousIP: 192.168.111.21\n", 1)
		require.NotEqual(t, string(b), s)
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
		code, stderr := runIn(t, withTestRelease("create", "cluster-manifests", "--dir", dir)...)
		assert.Equal(t, 1, code, stderr)
		assert.Regexp(t, `agent-config\.yaml:\d+: rendezvousIP: .*duplicate key "rendezvousIP".*line \d+`, stderr)
	})
}
