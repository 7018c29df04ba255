package manifests

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeStrictUnknownFieldNamesLineAndSuggestion(t *testing.T) {
	in := []byte("apiVersion: v1beta1\nkind: AgentConfig\nrendezvousIp: 192.168.111.20\nhosts:\n- hostname: a\n  interfacez: []\n")
	var ac AgentConfig
	_, err := DecodeStrict("agent-config.yaml", in, &ac)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `agent-config.yaml:6: hosts[0].interfacez: Unknown field: unknown field "interfacez", did you mean "interfaces"?`)
}

func TestDecodeStrictCaseInsensitiveWarns(t *testing.T) {
	in := []byte("apiVersion: v1\nmetadata:\n  name: c\nplatform:\n  baremetal:\n    apiVips: [10.0.0.5]\n    ingressVips: [10.0.0.6]\n")
	var ic InstallConfig
	d, err := DecodeStrict("install-config.yaml", in, &ic)
	require.NoError(t, err)
	assert.Equal(t, []string{"10.0.0.5"}, ic.Platform.BareMetal.APIVIPs)
	assert.Equal(t, []string{"10.0.0.6"}, ic.Platform.BareMetal.IngressVIPs)
	require.Len(t, d.Warnings, 2)
	assert.Equal(t, `install-config.yaml:6: platform.baremetal.apiVips: field name matched case-insensitively; the canonical spelling is "apiVIPs"`, d.Warnings[0].String())
}

func TestDecodeStrictTypeMismatchPointsAtField(t *testing.T) {
	in := []byte("apiVersion: v1\nmetadata:\n  name: c\ncontrolPlane:\n  name: master\n  replicas: three\n")
	var ic InstallConfig
	_, err := DecodeStrict("install-config.yaml", in, &ic)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "install-config.yaml:6: controlPlane.replicas: Invalid value: expected a whole number, got a string")
}

func TestDecodeStrictRejectsNonMappingAndBadYAML(t *testing.T) {
	var ic InstallConfig
	_, err := DecodeStrict("install-config.yaml", []byte("- a\n- b\n"), &ic)
	assert.EqualError(t, err, "install-config.yaml:1: expected a YAML mapping (key: value pairs) at the top level")
	_, err = DecodeStrict("install-config.yaml", []byte("a: [\n"), &ic)
	assert.ErrorContains(t, err, "install-config.yaml: not valid YAML")
	_, err = DecodeStrict("install-config.yaml", []byte(""), &ic)
	assert.EqualError(t, err, "install-config.yaml: file is empty")
}

func TestDecodeStrictAllMultiDoc(t *testing.T) {
	in := []byte("---\nmetadata:\n  name: a\nspec:\n  interfaces:\n  - name: eth0\n    macAddress: 00:11:22:33:44:55\n---\n---\nmetadata:\n  name: b\nspec: {}\n")
	outs, _, err := DecodeStrictAll("nmstateconfig.yaml", in, func() any { return &NMStateConfig{} })
	require.NoError(t, err)
	require.Len(t, outs, 2)
	assert.Equal(t, "b", outs[1].(*NMStateConfig).Metadata.Name)
}

func FuzzDecodeStrict(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nmetadata:\n  name: c\n"))
	f.Add([]byte("apiVersion: v1beta1\nhosts:\n- interfaces: [{name: eth0, macAddress: x}]\n  networkConfig: {interfaces: []}\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("{{{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ic InstallConfig
		_, err1 := DecodeStrict("install-config.yaml", data, &ic)
		var ac AgentConfig
		_, err2 := DecodeStrict("agent-config.yaml", data, &ac)
		var ps Secret
		_, err3 := DecodeStrict("pull-secret.yaml", data, &ps)
		_, _, err4 := DecodeStrictAll("nmstateconfig.yaml", data, func() any { return &NMStateConfig{} })
		for _, err := range []error{err1, err2, err3, err4} {
			if err != nil && err.Error() == "" {
				t.Fatal("error with empty message")
			}
		}
	})
}
