package nmstate

import (
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
