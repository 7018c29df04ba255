package ignition

import (
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInputOf(t *testing.T) {
	for _, tc := range []struct {
		path, input string
		user        bool
	}{
		{"/etc/assisted/extra-manifests/big-0.yaml", InputExtraManifests, true},
		{"/etc/assisted/manifests/agent-config.yaml", InputAgentConfig, true},
		{"/etc/assisted/manifests/nmstateconfig.yaml", InputNetworkConfig, true},
		{"/etc/assisted/network/host0/eth0.nmconnection", InputNetworkConfig, true},
		{"/etc/assisted/manifests/agent-cluster-install.yaml", InputClusterManifests, true},
		{"/etc/assisted/hostconfig/host-0/ignition-config-overrides.json", InputHostSettings, true},
		{"/etc/assisted/hostnames/52:54:01:aa:aa:a1", InputHostSettings, true},
		{CABundlePath, InputTrustBundle, true},
		{RegistriesPath, InputMirrors, true},
		{"/root/.docker/config.json", InputPullSecret, true},
		{"/usr/local/bin/agent-gather", InputOwn, false},
		{"/etc/systemd/system/agent.service", InputOwn, false},
		{"/opt/agent/tls/admin-kubeconfig-signer.crt", InputOwn, false},
	} {
		input, user := InputOf(tc.path)
		assert.Equal(t, tc.input, input, tc.path)
		assert.Equal(t, tc.user, user, tc.path)
	}
}

// ByInput adds up every part of the config (not only the ten largest) by
// the input it comes from, largest first.
func TestSizeByInput(t *testing.T) {
	in := haInput()
	for i := range 20 {
		b := make([]byte, 3000)
		_, _ = rand.Read(b)
		in.ExtraManifests = append(in.ExtraManifests, Manifest{fmt.Sprintf("blob-%d.yaml", i), []byte(fmt.Sprintf("data: %x\n", b))})
	}
	cfg, size := mustBuild(t, in)
	require.NotEmpty(t, size.ByInput)
	assert.Equal(t, InputExtraManifests, size.ByInput[0].Input)
	assert.True(t, size.ByInput[0].User)
	assert.Equal(t, 22, size.ByInput[0].Parts)
	total := 0
	for i, g := range size.ByInput {
		if i > 0 {
			assert.GreaterOrEqual(t, size.ByInput[i-1].Bytes, g.Bytes)
		}
		total += g.Bytes
	}
	parts := 0
	for _, f := range cfg.Storage.Files {
		if f.Contents.Source != nil {
			parts += len(*f.Contents.Source)
		}
		for _, a := range f.Append {
			if a.Source != nil {
				parts += len(*a.Source)
			}
		}
	}
	for _, u := range cfg.Systemd.Units {
		if u.Contents != nil {
			parts += len(*u.Contents)
		}
		for _, d := range u.Dropins {
			if d.Contents != nil {
				parts += len(*d.Contents)
			}
		}
	}
	assert.Equal(t, parts, total, "every byte is attributed to one input")
	var net *InputSize
	for i := range size.ByInput {
		if size.ByInput[i].Input == InputNetworkConfig {
			net = &size.ByInput[i]
		}
	}
	require.NotNil(t, net, "the hosts' network files")
	assert.Equal(t, 11, net.Parts, "two files for each of 5 hosts, and nmstateconfig.yaml")
}
