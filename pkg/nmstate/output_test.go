package nmstate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

func TestGCYAMLRoundTrip(t *testing.T) {
	for _, v := range loadVectors(t) {
		if _, err := os.Stat(filepath.Join(v.dir, "order.txt")); err != nil {
			continue
		}
		t.Run(v.name, func(t *testing.T) {
			files, err := Generate(v.input, Options{Lenient: true})
			require.NoError(t, err)
			out, err := GCYAML(files)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(string(out), "NetworkManager:\n- - "), string(out))
			back, err := ParseGCYAML(out)
			require.NoError(t, err)
			order, raw, _ := readExpected(t, v.dir)
			checkOutput(t, back, order, raw)
		})
	}
}

func TestGCYAMLEmpty(t *testing.T) {
	out, err := GCYAML(nil)
	require.NoError(t, err)
	assert.Equal(t, "NetworkManager: []\n", string(out))
}

func TestParseGCYAMLErrors(t *testing.T) {
	_, err := ParseGCYAML([]byte("NetworkManager:\n- [a]\n"))
	assert.ErrorContains(t, err, "NetworkManager[0]: expected [name, content], got 1 items")
	_, err = ParseGCYAML([]byte("Other: []\n"))
	assert.ErrorContains(t, err, "parsing gc YAML")
}

func TestWriteKeyfiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	files := []Keyfile{{Name: "eth0.nmconnection", Content: []byte("[connection]\nid=eth0\n")}, {Name: "eth0.100.nmconnection", Content: []byte("x\n")}}
	require.NoError(t, WriteKeyfiles(dir, files))
	// overwrite in place
	files[0].Content = []byte("[connection]\nid=eth1\n")
	require.NoError(t, WriteKeyfiles(dir, files))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2, "no temporary files left behind")
	for _, f := range files {
		st, err := os.Stat(filepath.Join(dir, f.Name))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), f.Name)
		b, err := os.ReadFile(filepath.Join(dir, f.Name))
		require.NoError(t, err)
		assert.Equal(t, f.Content, b)
	}
	for _, bad := range []string{"../x.nmconnection", "a/b.nmconnection", "", ".hidden"} {
		assert.ErrorContains(t, WriteKeyfiles(dir, []Keyfile{{Name: bad}}), "unsafe name", bad)
	}
}

func TestErrorsSplit(t *testing.T) {
	assert.Nil(t, Errors(nil))
	e1, e2 := errors.New("a"), errors.New("b")
	assert.Equal(t, []error{e1, e2}, Errors(errors.Join(e1, errors.Join(e2))))
	assert.Equal(t, []error{e1}, Errors(e1))
}

// ParseGCYAML reads nmstatectl gc's YAML output back into keyfiles.
func ParseGCYAML(data []byte) ([]Keyfile, error) {
	var doc struct {
		NetworkManager [][]string `json:"NetworkManager"`
	}
	if err := yaml.UnmarshalStrict(data, &doc); err != nil {
		return nil, fmt.Errorf("parsing gc YAML: %w", err)
	}
	var out []Keyfile
	for i, p := range doc.NetworkManager {
		if len(p) != 2 {
			return nil, fmt.Errorf("parsing gc YAML: NetworkManager[%d]: expected [name, content], got %d items", i, len(p))
		}
		out = append(out, Keyfile{Name: p[0], Content: []byte(p[1])})
	}
	return out, nil
}

func TestCheckNotWrapped(t *testing.T) {
	err := CheckNotWrapped([]byte("apiVersion: v1beta1\nkind: AgentConfig\nrendezvousIP: 192.0.2.1\nhosts: []\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "this is an agent-config.yaml (kind: AgentConfig), not NMState YAML; its NMState is in hosts[].networkConfig")
	err = CheckNotWrapped([]byte("apiVersion: agent-install.openshift.io/v1beta1\nkind: NMStateConfig\nspec:\n  config: {}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "its NMState is in spec.config")
	assert.NoError(t, CheckNotWrapped([]byte("interfaces:\n- name: eth0\n  type: ethernet\n")))
	assert.NoError(t, CheckNotWrapped([]byte("kind: x\n")), "NMState has no kind, but only both together mark a manifest")
	assert.NoError(t, CheckNotWrapped([]byte(":\n\t-")))
}
