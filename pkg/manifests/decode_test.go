package manifests

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

func TestDecodeStrictUnknownFieldNamesLineAndSuggestion(t *testing.T) {
	in := []byte("apiVersion: v1beta1\nkind: AgentConfig\nrendezvousIp: 192.168.111.20\nhosts:\n- hostname: a\n  interfacez: []\n")
	var ac AgentConfig
	_, err := DecodeStrict("agent-config.yaml", in, &ac)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `agent-config.yaml:6: hosts[0].interfacez: Unknown field: did you mean "interfaces"?`)
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
	assert.EqualError(t, err, "install-config.yaml:1: not valid YAML: did not find expected node content")
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
		check := func(err error) {
			if err != nil && err.Error() == "" {
				t.Fatal("error with empty message")
			}
		}
		var ic InstallConfig
		if d, err := DecodeStrict("install-config.yaml", data, &ic); err == nil {
			ic.SetDefaults()
			check(ValidateInstallConfig(&ic, d.Lines))
		} else {
			check(err)
		}
		var ac AgentConfig
		if d, err := DecodeStrict("agent-config.yaml", data, &ac); err == nil {
			check(ValidateAgentConfig(&ac, d.Lines))
			hosts, _ := ResolveHosts(&ic, &ac)
			ip, err := ChooseRendezvousIP(ac.RendezvousIP, hosts, nil)
			check(err)
			_, err = ValidateCluster(&ic, hosts, ip, nil)
			check(err)
		} else {
			check(err)
		}
		var ps Secret
		if d, err := DecodeStrict("pull-secret.yaml", data, &ps); err == nil {
			NormalizeSecret(&ps)
			check(ValidateSecret(&ps, d.Lines))
		}
		var ie InfraEnv
		if d, err := DecodeStrict("infraenv.yaml", data, &ie); err == nil {
			NormalizeInfraEnv(&ie)
			check(ValidateInfraEnv(&ie, d.Lines))
		}
		var aci AgentClusterInstall
		if d, err := DecodeStrict("agent-cluster-install.yaml", data, &aci); err == nil {
			NormalizeACI(&aci)
			check(ValidateACI(&aci, d.Lines))
		}
		var cd ClusterDeployment
		if d, err := DecodeStrict("cluster-deployment.yaml", data, &cd); err == nil {
			check(ValidateClusterDeployment(&cd, d.Lines))
		}
		var cis ClusterImageSet
		if d, err := DecodeStrict("cluster-image-set.yaml", data, &cis); err == nil {
			check(ValidateClusterImageSet(&cis, d.Lines, "quay.io/x:1"))
		}
		if outs, infos, err := DecodeStrictAll("nmstateconfig.yaml", data, func() any { return &NMStateConfig{} }); err == nil {
			var list []NMStateConfig
			var lines []Lines
			for i, o := range outs {
				list = append(list, *o.(*NMStateConfig))
				lines = append(lines, infos[i].Lines)
			}
			check(ValidateNMStateConfigs(list, lines))
			check(CheckNMStateConfigLabels(list, lines, &ie, nil, false))
		}
		_, err := SplitManifests("openshift/x.yaml", data)
		check(err)
	})
}

func TestDecodeStrictReadsScalarsAsTextForStringFields(t *testing.T) {
	var ac AgentConfig
	_, err := DecodeStrict("agent-config.yaml", []byte("apiVersion: v1beta1\nrendezvousIP: true\nhosts:\n- hostname: a\n- hostname: b\n  interfaces:\n  - name: eth0\n    macAddress: 000000\n  rootDeviceHints: {serialNumber: 12345}\n"), &ac)
	require.NoError(t, err)
	assert.Equal(t, "true", ac.RendezvousIP)
	assert.Equal(t, "000000", ac.Hosts[1].Interfaces[0].MACAddress, "text is kept exactly as written")
	assert.Equal(t, "12345", ac.Hosts[1].RootDeviceHints.SerialNumber)
}

func TestDecodeStrictTypeMismatchInListHasIndexAndLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"scalar for a list", "apiVersion: v1beta1\nhosts:\n- hostname: a\n  interfaces: 3\n",
			"agent-config.yaml:4: hosts[0].interfaces: Invalid value: expected a list, got a number"},
		{"list for a mapping", "apiVersion: v1beta1\nhosts:\n- hostname: a\n  rootDeviceHints: [a]\n",
			"agent-config.yaml:4: hosts[0].rootDeviceHints: Invalid value: expected a mapping, got a list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ac AgentConfig
			_, err := DecodeStrict(assetdir.AgentConfig, []byte(tc.in), &ac)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
	// Quoted digits and free-form networkConfig stay accepted.
	var ac AgentConfig
	_, err := DecodeStrict(assetdir.AgentConfig, []byte("apiVersion: v1beta1\nhosts:\n- hostname: \"123\"\n  networkConfig:\n    interfaces: 3\n"), &ac)
	require.NoError(t, err)
	assert.Equal(t, "123", ac.Hosts[0].Hostname)
}

// Issue 37 item 15: a field given at the wrong level is pointed to where it
// belongs, and a JSON value written unquoted where a string is expected
// (the pull secret) gets the hint to quote it.
func TestDecodeHintsForMisplacedFieldAndUnquotedJSON(t *testing.T) {
	y := "apiVersion: v1\nmetadata:\n  name: sno\nbaseDomain: example.com\nmachineNetwork: [{cidr: 192.168.122.0/24}]\n" +
		"pullSecret: {\"auths\":{\"quay.io\":{\"auth\":\"dXNlcjpwYXNz\"}}}\n"
	var ic InstallConfig
	_, err := DecodeStrict("install-config.yaml", []byte(y), &ic)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `install-config.yaml:5: machineNetwork: Unknown field: did you mean "networking.machineNetwork"?`)
	assert.Contains(t, err.Error(), `install-config.yaml:6: pullSecret: Invalid value: expected a string, got a mapping: JSON must be quoted here, in single quotes: pullSecret: '{"auths": ...}'`)
}

// Issue 37 item 15: a line indented to no level of the lines above it is
// named, not the start of the mapping the parser gave up on (3 lines
// early); sequence items' content columns and block scalars are levels.
func TestYAMLIndentationErrorNamesTheLine(t *testing.T) {
	y := "apiVersion: v1\nmetadata:\n  name: sno\nbaseDomain: example.com\nsshKey: |\n    ssh-ed25519 AAAA\n      x\n" +
		"networking:\n  machineNetwork:\n  - cidr: 192.168.122.0/24\n    # a comment\n   clusterNetwork:\n  - cidr: 10.128.0.0/14\n"
	var ic InstallConfig
	_, err := DecodeStrict("install-config.yaml", []byte(y), &ic)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "install-config.yaml:12: not valid YAML: did not find expected key: this line is indented 3 spaces, which matches no level above it (0, 2, 4)")
	// A parser error of another kind keeps its line.
	_, err = DecodeStrict("install-config.yaml", []byte("a: [\n"), &ic)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "indented")
}

// A new, deeper level under a key is no misindentation.
func TestMisindentedAcceptsNewLevels(t *testing.T) {
	y := "a:\n  b:\n      c: 1\n  d:\n   - x\n"
	_, _, _, ok := misindented([]byte(y), 1)
	assert.False(t, ok)
	l, ind, _, ok := misindented([]byte("a:\n  b: 1\n c: 2\n"), 1)
	assert.True(t, ok)
	assert.Equal(t, 3, l)
	assert.Equal(t, 1, ind)
}
