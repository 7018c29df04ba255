package nmstate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every problem names the file; a whole agent-config.yaml is refused with
// where its NMState is.
func TestGenerateFile(t *testing.T) {
	files, err := GenerateFile("host0.yaml", []byte("interfaces:\n- name: eth0\n  type: ethernet\n  state: up\n"), Options{})
	require.NoError(t, err)
	assert.Len(t, files, 1)

	_, err = GenerateFile("host0.yaml", []byte("interfaces:\n- name: eth0\n  type: ethernet\n  bogus: 1\n- name: eth0\n  type: ethernet\n"), Options{})
	require.Error(t, err)
	for _, e := range Errors(err) {
		assert.Regexp(t, `^host0\.yaml: `, e.Error())
	}

	_, err = GenerateFile("agent-config.yaml", []byte("apiVersion: v1beta1\nkind: AgentConfig\nhosts: []\n"), Options{})
	require.Error(t, err)
	assert.Regexp(t, `^agent-config\.yaml: `, err.Error())
}

// GenerateInput reads the file, or standard input for "-", bounded, and
// names what it could not read.
func TestGenerateInput(t *testing.T) {
	doc := "interfaces:\n- name: eth0\n  type: ethernet\n  state: up\n"
	p := filepath.Join(t.TempDir(), "host0.yaml")
	require.NoError(t, os.WriteFile(p, []byte(doc), 0o644))
	files, err := GenerateInput(p, nil, Options{})
	require.NoError(t, err)
	assert.Len(t, files, 1)
	files, err = GenerateInput("-", strings.NewReader(doc), Options{Installer: true})
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.Contains(t, string(files[0].Content), "autoconnect-priority=1")

	_, err = GenerateInput("-", strings.NewReader(strings.Repeat("#", MaxFileSize+1)), Options{})
	assert.ErrorContains(t, err, "reading NMState YAML: ")
	assert.ErrorContains(t, err, "standard input")
	_, err = GenerateInput(filepath.Join(t.TempDir(), "missing.yaml"), nil, Options{})
	assert.ErrorContains(t, err, "reading NMState YAML: ")
	assert.ErrorContains(t, err, "missing.yaml")
	_, err = GenerateInput(t.TempDir(), nil, Options{})
	assert.ErrorContains(t, err, "reading NMState YAML: ", "a directory is refused")
}
