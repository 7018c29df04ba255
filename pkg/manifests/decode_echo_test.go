package manifests

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A file that is not what the user meant (a symlink to /etc/shadow, an
// htpasswd or credentials file) must not have its contents echoed by the
// errors that reject it. Keys that are not field names are not shown; keys
// that are (a typo of a real field) still are, with their suggestion.
func TestDecodeErrorsDoNotEchoForeignContent(t *testing.T) {
	const shadow = "root:$6$SALTSECRET$HASHSECRETHASH:19000:0:99999:7:::\n" +
		"daemon:*:19000:0:99999:7:::\n" +
		"root:$6$SALTSECRET$HASHSECRETHASH:19000:0:99999:7:::\n"
	for _, tc := range []struct {
		file string
		out  func() any
	}{
		{"install-config.yaml", func() any { return &InstallConfig{} }},
		{"agent-config.yaml", func() any { return &AgentConfig{} }},
		{"cluster-manifests/infraenv.yaml", func() any { return &InfraEnv{} }},
		{"cluster-manifests/agent-cluster-install.yaml", func() any { return &AgentClusterInstall{} }},
		{"cluster-manifests/nmstateconfig.yaml", func() any { return &NMStateConfig{} }},
	} {
		_, err := DecodeStrict(tc.file, []byte(shadow), tc.out())
		require.Error(t, err, tc.file)
		msg := err.Error()
		for _, secret := range []string{"SALTSECRET", "HASHSECRET", "19000", "daemon", "root:"} {
			assert.NotContains(t, msg, secret, tc.file)
		}
		assert.Contains(t, msg, tc.file+":1: Unknown field: a key of 51 characters that is not a field name (not shown: is this the file you meant?)", tc.file)
		assert.Contains(t, msg, tc.file+":2: Unknown field: a key of ", tc.file)
		assert.Contains(t, msg, tc.file+":3: Invalid value: a key that is not a field name is given twice (first on line 1)", tc.file)

		_, _, err = DecodeStrictAll(tc.file, []byte(shadow), tc.out)
		require.Error(t, err, tc.file)
		assert.NotContains(t, err.Error(), "SECRET", tc.file)
	}
}

func TestDecodeUnknownFieldNameStillShown(t *testing.T) {
	in := "apiVersion: v1\nmetadata:\n  name: c\nbaseDomian: example.com\nplatform:\n  none: {}\n"
	_, err := DecodeStrict("install-config.yaml", []byte(in), &InstallConfig{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `install-config.yaml:4: baseDomian: Unknown field: did you mean "baseDomain"?`)

	// Label-like keys in maps stay visible in duplicate-key errors.
	dup := "apiVersion: v1\nmetadata:\n  name: c\n  labels:\n    node-role.kubernetes.io/master: \"\"\n    node-role.kubernetes.io/master: x\n"
	_, err = DecodeStrict("install-config.yaml", []byte(dup), &InstallConfig{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `install-config.yaml:6: metadata.labels.node-role.kubernetes.io/master: Invalid value: duplicate key "node-role.kubernetes.io/master" (first given on line 5)`)
}
