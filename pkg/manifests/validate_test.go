package manifests

import (
	"strings"
	"testing"

	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decodeT decodes y strictly into a new T, failing the test on decode errors.
func decodeT[T any](t *testing.T, file, y string) (*T, Lines) {
	t.Helper()
	v := new(T)
	d, err := DecodeStrict(file, []byte(y), v)
	require.NoError(t, err)
	return v, d.Lines
}

// assertErrs checks err against want: nil when want is empty, else every
// fragment must appear, and the number of reported problems must match.
func assertErrs(t *testing.T, err error, want ...string) {
	t.Helper()
	if len(want) == 0 {
		assert.NoError(t, err)
		return
	}
	require.Error(t, err)
	for _, w := range want {
		assert.Contains(t, err.Error(), w)
	}
	if l, ok := err.(ErrorList); ok {
		assert.Len(t, l, len(want), "reported problems: %v", err)
	}
}

// edit applies old->new replacements to base; each old must be present.
func edit(t *testing.T, base string, pairs ...string) string {
	t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		require.Contains(t, base, pairs[i])
		base = strings.Replace(base, pairs[i], pairs[i+1], 1)
	}
	return base
}

const baseAgentConfig = `apiVersion: v1beta1
kind: AgentConfig
rendezvousIP: 192.168.111.20
hosts:
- hostname: master-0
  role: master
  rootDeviceHints:
    deviceName: /dev/sda
  interfaces:
  - name: eth0
    macAddress: 52:54:00:00:00:01
  networkConfig:
    interfaces:
    - name: eth0
      type: ethernet
      ipv4:
        enabled: true
        address:
        - ip: 192.168.111.20
          prefix-length: 24
- hostname: master-1
  role: master
  interfaces:
  - name: eth0
    macAddress: 52:54:00:00:00:02
  networkConfig:
    interfaces:
    - name: eth0
      type: ethernet
      ipv4:
        enabled: true
        address:
        - ip: 192.168.111.21
          prefix-length: 24
`

func TestValidateAgentConfig(t *testing.T) {
	tests := []struct {
		name  string
		pairs []string
		want  []string
	}{
		{"valid", nil, nil},
		{"v1alpha1 accepted", []string{"v1beta1", "v1alpha1"}, nil},
		{"missing apiVersion", []string{"apiVersion: v1beta1\n", ""}, []string{"agent-config.yaml: apiVersion: Required value: no version was provided"}},
		{"bad apiVersion", []string{"v1beta1", "v1"}, []string{`agent-config.yaml:1: apiVersion: Invalid value: "v1": cannot upconvert from version v1`}},
		{"rendezvousIP not an IP", []string{"rendezvousIP: 192.168.111.20", "rendezvousIP: 192.168.111.300"}, []string{`agent-config.yaml:3: rendezvousIP: Invalid value: "192.168.111.300": "192.168.111.300" is not a valid IP`}},
		{"bootArtifactsBaseURL without scheme", []string{"hosts:\n", "bootArtifactsBaseURL: example.com/boot\nhosts:\n"}, []string{`agent-config.yaml:4: bootArtifactsBaseURL: Invalid value: "example.com/boot": invalid URI "example.com/boot" (no scheme)`}},
		{"bootArtifactsBaseURL not http", []string{"hosts:\n", "bootArtifactsBaseURL: ftp://10.0.0.1/boot\nhosts:\n"}, []string{`agent-config.yaml:4: bootArtifactsBaseURL: Invalid value: "ftp://10.0.0.1/boot": hosts download boot artifacts over http or https, not ftp`}},
		{"bootArtifactsBaseURL with $", []string{"hosts:\n", "bootArtifactsBaseURL: http://10.0.0.1/$boot\nhosts:\n"}, []string{`agent-config.yaml:4: bootArtifactsBaseURL: Invalid value: "http://10.0.0.1/$boot": the URL goes into kernel arguments and an iPXE script`}},
		{"bootArtifactsBaseURL with empty query", []string{"hosts:\n", "bootArtifactsBaseURL: http://10.0.0.1/boot?\nhosts:\n"}, []string{`agent-config.yaml:4: bootArtifactsBaseURL: Invalid value: "http://10.0.0.1/boot?": it has a query or a fragment ("?" or "#"), even an empty one: the file names are appended to the URL, so http://10.0.0.1/boot?/agent.x86_64-rootfs.img would fetch the base URL itself; serve the files under a plain path`}},
		{"bootArtifactsBaseURL with empty fragment", []string{"hosts:\n", "bootArtifactsBaseURL: http://10.0.0.1/boot#\nhosts:\n"}, []string{`agent-config.yaml:4: bootArtifactsBaseURL: Invalid value: "http://10.0.0.1/boot#": it has a query or a fragment`}},
		{"bootArtifactsBaseURL with ;", []string{"hosts:\n", "bootArtifactsBaseURL: http://10.0.0.1/a;reboot\nhosts:\n"}, []string{`agent-config.yaml:4: bootArtifactsBaseURL: Invalid value: "http://10.0.0.1/a;reboot": it contains ";", which GRUB's linux line in the minimal ISO would take as a command separator or redirection; percent-encode it (%3B) or serve the files under a path without it`}},
		{"bootArtifactsBaseURL with |", []string{"hosts:\n", "bootArtifactsBaseURL: 'http://10.0.0.1/a|b'\nhosts:\n"}, []string{`it contains "|", which GRUB's linux line`}},
		{"bootArtifactsBaseURL with &", []string{"hosts:\n", "bootArtifactsBaseURL: http://10.0.0.1/a&b\nhosts:\n"}, []string{`it contains "&", which GRUB's linux line`}},
		{"bootArtifactsBaseURL with <>", []string{"hosts:\n", "bootArtifactsBaseURL: http://10.0.0.1/<a>\nhosts:\n"}, []string{`it contains "<", which GRUB's linux line`}},
		{"bootArtifactsBaseURL https accepted", []string{"hosts:\n", "bootArtifactsBaseURL: https://boot.example.com:8443/agent/\nhosts:\n"}, nil},
		{"NTP sources", []string{"hosts:\n", "additionalNTPSources: [pool.ntp.org, 10.0.0.1, 'fd00::1', bad_name.example.com]\nhosts:\n"}, []string{`additionalNTPSources[3]: Invalid value: "bad_name.example.com": NTP source is not a valid domain name nor a valid IP`}},
		{"bad role", []string{"role: master\n  interfaces", "role: bootstrap\n  interfaces"}, []string{"hosts[1].role: Forbidden: host role has incorrect value \"bootstrap\""}},
		{"arbiter role accepted", []string{"role: master\n  interfaces", "role: arbiter\n  interfaces"}, nil},
		{"bad MAC", []string{"52:54:00:00:00:02", "52:54:00:00:00"}, []string{`agent-config.yaml:25: hosts[1].interfaces[0].macAddress: Invalid value: "52:54:00:00:00": address 52:54:00:00:00: invalid MAC address: it has 5 octets, a MAC address has 6 (XX:XX:XX:XX:XX:XX)`}},
		// One error, at the MAC written wrong: that it now differs from the
		// networkConfig's mac-address only repeats it.
		{"bad MAC also in networkConfig: no derived mismatch", []string{"    - name: eth0\n      type: ethernet\n      ipv4:\n        enabled: true\n        address:\n        - ip: 192.168.111.21", "    - name: eth0\n      type: ethernet\n      mac-address: 52:54:00:00:00:02\n      ipv4:\n        enabled: true\n        address:\n        - ip: 192.168.111.21", "macAddress: 52:54:00:00:00:02", "macAddress: 52:54:00:00:00"}, []string{
			`agent-config.yaml:25: hosts[1].interfaces[0].macAddress: Invalid value: "52:54:00:00:00": address 52:54:00:00:00: invalid MAC address: it has 5 octets`}},
		{"MAC with a one-digit octet", []string{"52:54:00:00:00:02", "52:54:0:00:00:02"}, []string{`invalid MAC address: each of the 6 octets is two hex digits ("0" is not), as 52:54:00:12:34:56`}},
		{"MAC with a non-hex octet", []string{"52:54:00:00:00:02", "52:54:00:00:00:0g"}, []string{`invalid MAC address: "0g" is not a hex octet (digits 0-9 and a-f only)`}},
		{"dash MAC", []string{"52:54:00:00:00:02", "52-54-00-00-00-02"}, []string{"MAC address 52-54-00-00-00-02 is incorrectly formatted, use XX:XX:XX:XX:XX:XX format"}},
		{"duplicate MAC, case-insensitive", []string{"52:54:00:00:00:02", "52:54:00:00:00:01"}, []string{`hosts[1].interfaces[0].macAddress: Duplicate value: "52:54:00:00:00:01": duplicate MAC address found`}},
		{"duplicate hostname", []string{"hostname: master-1", "hostname: master-0"}, []string{`agent-config.yaml:21: hosts[1].hostname: Duplicate value: "master-0"`}},
		{"duplicate static IP", []string{"ip: 192.168.111.21", "ip: 192.168.111.20"}, []string{`hosts[1].networkConfig: Duplicate value: "192.168.111.20": static IP also assigned to hosts[0]`}},
		{"interface not in networkConfig", []string{"  - name: eth0\n    macAddress: 52:54:00:00:00:02", "  - name: eno9\n    macAddress: 52:54:00:00:00:02"}, []string{`hosts[1].interfaces[0].name: Invalid value: "eno9": not used in this host's networkConfig, so it would never be configured; interfaces there are: eth0`,
			`agent-config.yaml:28: hosts[1].networkConfig.interfaces[0].name: Invalid value: "eth0": NIC eth0 has no MAC in hosts[1].interfaces and is not a predictable physical NIC name`}},
		{"ethernet NIC without a MAC mapping", []string{"        - ip: 192.168.111.21\n          prefix-length: 24\n", "        - ip: 192.168.111.21\n          prefix-length: 24\n    - name: eth1\n      type: ethernet\n      ipv4:\n        enabled: true\n        dhcp: true\n    - name: enp2s0\n      type: ethernet\n    - name: nic9\n      type: ethernet\n      identifier: mac-address\n      mac-address: 52:54:00:00:00:09\n    - name: bond0\n      type: bond\n      link-aggregation:\n        mode: active-backup\n        port: [eno1, eth7, nic9]\n    - name: eth8\n"}, []string{
			`agent-config.yaml:35: hosts[1].networkConfig.interfaces[1].name: Invalid value: "eth1": NIC eth1 has no MAC in hosts[1].interfaces and is not a predictable physical NIC name (en followed by one of PsvxXbucaipod), so assisted-service refuses the static network configuration with HTTP 400 (mac-interface mapping for interface eth1 is missing); add {name: eth1, macAddress: <its MAC>} to hosts[1].interfaces, or identify it by MAC (identifier: mac-address and mac-address)`,
			`hosts[1].networkConfig.interfaces[4].link-aggregation.port[1]: Invalid value: "eth7": NIC eth7 has no MAC in hosts[1].interfaces`}},
		{"networkConfig without interfaces table", []string{"  interfaces:\n  - name: eth0\n    macAddress: 52:54:00:00:00:02\n", ""}, []string{"hosts[1].interfaces: Required value: at least one interface for host 1 must be provided"}},
		{"interfaces[] MAC differs from networkConfig mac-address", []string{"    - name: eth0\n      type: ethernet\n      ipv4:\n        enabled: true\n        address:\n        - ip: 192.168.111.21", "    - name: eth0\n      type: ethernet\n      mac-address: 52:54:00:00:00:99\n      ipv4:\n        enabled: true\n        address:\n        - ip: 192.168.111.21"}, []string{
			`agent-config.yaml:25: hosts[1].interfaces[0].macAddress: Invalid value: "52:54:00:00:00:02": interface eth0 has MAC 52:54:00:00:00:02 here but mac-address 52:54:00:00:00:99 in agent-config.yaml:30 hosts[1].networkConfig.interfaces[0].mac-address: the ISO's mac_interface.ini would map eth0 to one NIC while its keyfile binds to another; write the same MAC in both places`}},
		{"same MAC in other case and spelling accepted", []string{"    - name: eth0\n      type: ethernet\n      ipv4:\n        enabled: true\n        address:\n        - ip: 192.168.111.21", "    - name: eth0\n      type: ethernet\n      mac-address: 52:54:00:00:00:02\n      ipv4:\n        enabled: true\n        address:\n        - ip: 192.168.111.21", "macAddress: 52:54:00:00:00:02", "macAddress: 52:54:00:00:00:02"}, nil},
		{"deviceName by-id", []string{"/dev/sda", "/dev/disk/by-id/wwn-0x1"}, []string{`hosts[0].rootDeviceHints.deviceName: Invalid value: "/dev/disk/by-id/wwn-0x1": Device Name of root device hint must be path in /dev/ or /dev/disk/by-path/`}},
		{"deviceName not a path", []string{"/dev/sda", "sda"}, []string{"Device Name of root device hint must be path in /dev/ or /dev/disk/by-path/"}},
		{"deviceName by-path accepted", []string{"/dev/sda", "/dev/disk/by-path/pci-0000:00:1f.2-ata-1"}, nil},
		{"wwn extensions", []string{"deviceName: /dev/sda", "wwnWithExtension: \"0x1\"\n    wwnVendorExtension: \"0x2\""}, []string{
			"hosts[0].rootDeviceHints.wwnWithExtension: Forbidden: WWN extensions are not supported in root device hints",
			"hosts[0].rootDeviceHints.wwnVendorExtension: Forbidden: WWN vendor extensions are not supported in root device hints"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ac, lines := decodeT[AgentConfig](t, assetdir.AgentConfig, edit(t, baseAgentConfig, tc.pairs...))
			assertErrs(t, ValidateAgentConfig(ac, lines), tc.want...)
		})
	}
}

func TestValidateInstallConfig(t *testing.T) {
	const bm = "  baremetal:\n    apiVIPs: [192.168.111.5]\n    ingressVIPs: [192.168.111.4]\n"
	sno := []string{"replicas: 3", "replicas: 1", "replicas: 2", "replicas: 0", bm, "  none: {}\n"}
	tests := []struct {
		name  string
		pairs []string
		want  []string
	}{
		{"valid", nil, nil},
		{"SNO none", sno, nil},
		{"bad apiVersion", []string{"apiVersion: v1\n", "apiVersion: v2\n"}, []string{`install-config.yaml:1: apiVersion: Invalid value: "v2": install-config version must be "v1"`}},
		{"unsupported platform", []string{bm, "  aws: {}\n"}, []string{`platform: Unsupported value: "aws": supported values: "baremetal", "vsphere", "nutanix", "none", "external"`}},
		{"ppc64le on baremetal", []string{"  replicas: 3\n", "  replicas: 3\n  architecture: ppc64le\n", "  replicas: 2\n", "  replicas: 2\n  architecture: ppc64le\n"}, []string{`platform: Invalid value: "baremetal": CPU architecture "ppc64le" only supports platform "none".`}},
		{"x86_64: did you mean amd64", []string{"  replicas: 3\n", "  replicas: 3\n  architecture: x86_64\n"}, []string{`install-config.yaml:9: controlPlane.architecture: Unsupported value: "x86_64": did you mean "amd64"? install-config.yaml names architectures as Go does (x86_64 is amd64); supported values: "amd64", "arm64", "ppc64le", "s390x"`}},
		// One error, at the line written: compute[0] only copied the default.
		{"x86-64: one error, no derived one", []string{"  replicas: 3\n", "  replicas: 3\n  architecture: x86-64\n"}, []string{`install-config.yaml:9: controlPlane.architecture: Unsupported value: "x86-64": did you mean "amd64"?`}},
		{"both pools written wrong: both reported", []string{"  replicas: 3\n", "  replicas: 3\n  architecture: aarch64\n", "  replicas: 2\n", "  replicas: 2\n  architecture: aarch64\n"}, []string{`controlPlane.architecture: Unsupported value: "aarch64": did you mean "arm64"?`, `compute[0].architecture: Unsupported value: "aarch64": did you mean "arm64"?`}},
		{"replicas 2", []string{"replicas: 3", "replicas: 2"}, []string{`install-config.yaml:8: controlPlane.replicas: Unsupported value: 2: supported values: "3", "1", "4", "5"`}},
		{"replicas 0", []string{"replicas: 3", "replicas: 0"}, []string{"controlPlane.replicas: Invalid value: 0: number of control plane replicas must be positive"}},
		{"replicas 5", []string{"replicas: 3", "replicas: 5"}, nil},
		{"SNO on baremetal", []string{"replicas: 3", "replicas: 1", "replicas: 2", "replicas: 0"}, []string{`platform: Invalid value: "baremetal": Only platform none and external supports 1 ControlPlane and 0 Compute nodes`}},
		{"SNO with workers", []string{"replicas: 3", "replicas: 1", bm, "  none: {}\n"}, []string{"compute.replicas: Forbidden: Total number of compute replicas must be 0 when controlPlane.replicas is 1 for platform none or external. Found 2"}},
		{"SNO with OpenShiftSDN", append(append([]string{}, sno...), "networking:\n", "networking:\n  networkType: OpenShiftSDN\n"), []string{`networking.networkType: Invalid value: "OpenShiftSDN": Only OVNKubernetes network type is allowed for Single Node OpenShift (SNO) cluster`}},
		{"missing VIPs", []string{bm, "  baremetal: {}\n"}, []string{"platform.baremetal.apiVIPs: Required value: must specify at least one VIP for the API", "platform.baremetal.ingressVIPs: Required value: must specify at least one VIP for the Ingress"}},
		{"only API VIP", []string{"    ingressVIPs: [192.168.111.4]\n", ""}, []string{"platform.baremetal.ingressVIPs: Required value: must specify VIP for ingress, when VIP for API is set"}},
		{"VIP not an IP", []string{"[192.168.111.5]", "[192.168.111.05]"}, []string{`platform.baremetal.apiVIPs[0]: Invalid value: "192.168.111.05": "192.168.111.05" is not a valid IP`}},
		{"VIP outside machine network", []string{"[192.168.111.5]", "[10.0.0.5]"}, []string{`platform.baremetal.apiVIPs[0]: Invalid value: "10.0.0.5": IP expected to be in one of the machine networks: 192.168.111.0/24`}},
		{"VIP outside machine network, UserManaged LB", []string{"[192.168.111.5]", "[10.0.0.5]\n    loadBalancer:\n      type: UserManaged"}, nil},
		{"API VIP equals Ingress VIP", []string{"[192.168.111.4]", "[192.168.111.5]"}, []string{`platform.baremetal.apiVIPs[0]: Invalid value: "192.168.111.5": VIP for API must not be one of the Ingress VIPs`}},
		{"two IPv4 API VIPs", []string{"[192.168.111.5]", "[192.168.111.5, 192.168.111.6]"}, []string{"If two API VIPs are given, one must be an IPv4 address, the other an IPv6"}},
		{"pull secret not JSON", []string{`'{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}'`, "'{auths'"}, []string{"install-config.yaml:19: pullSecret: Invalid value: the pull secret is not valid JSON"}},
		{"pull secret without auths", []string{`'{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}'`, `'{"auths":{}}'`}, []string{"pullSecret: Invalid value: auths required"}},
		{"pull secret entry without auth", []string{`{"auth":"dXNlcjpwYXNz"}`, `{"email":"a@b.c"}`}, []string{`pullSecret: Invalid value: "quay.io" requires either auth or credsStore`}},
		{"bad SSH key", []string{"AAAAC3NzaC1lZDI1NTE5AAAAIGqSD39lBCzJKKW6OKTsxkQCW+GbT/f+OhO9xZLMB4i7", "AAAA"}, []string{"install-config.yaml:20: sshKey: Invalid value: not a valid SSH public key"}},
		{"ICS and IDS together", []string{"pullSecret:", "imageContentSources: [{source: quay.io/a, mirrors: [m.example.com/a]}]\nimageDigestSources: [{source: quay.io/a, mirrors: [m.example.com/a]}]\npullSecret:"}, []string{"imageContentSources: Forbidden: cannot set imageContentSources and imageDigestSources at the same time"}},
		{"bad cluster name", []string{"name: ostest", "name: OSTest_1"}, []string{`metadata.name: Invalid value: "OSTest_1": cluster name must be lower-case letters, digits and '-'`}},
		{"dual-stack needs two service networks", []string{"  - cidr: 192.168.111.0/24\n", "  - cidr: 192.168.111.0/24\n  - cidr: fd00::/64\n  serviceNetwork: [172.30.0.0/16]\n"}, []string{"when installing dual-stack IPv4/IPv6 you must provide two service networks, one for each IP address type"}},
		{"external oci without CCM", []string{bm, "  external:\n    platformName: oci\n"}, []string{`platform.external.cloudControllerManager: Invalid value: "": When using external oci platform, platform.external.cloudControllerManager must be set to External`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ic, lines := decodeT[InstallConfig](t, assetdir.InstallConfig, edit(t, testfixture.InstallConfig, tc.pairs...))
			ic.SetDefaults()
			assertErrs(t, ValidateInstallConfig(ic, lines), tc.want...)
		})
	}
}

func TestValidatePullSecret(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{`{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}`, ""},
		{`{"auths":{"local":{"credsStore":"pass"}}}`, ""},
		{"", "the pull secret is empty"},
		{"not json", "the pull secret is not valid JSON"},
		{`{"auths":{}}`, "auths required"},
		{`{"auths":{"quay.io":{}}}`, `"quay.io" requires either auth or credsStore`},
		{`{"auths":{"quay.io":{"auth":"%%%"}}}`, `the auth of "quay.io" is not valid base64`},
	}
	for _, tc := range tests {
		err := ValidatePullSecret(tc.in)
		if tc.want == "" {
			assert.NoError(t, err, tc.in)
		} else {
			assert.ErrorContains(t, err, tc.want, tc.in)
		}
	}
}

func TestValidateSSHKey(t *testing.T) {
	const good = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGqSD39lBCzJKKW6OKTsxkQCW+GbT/f+OhO9xZLMB4i7 admin@laptop"
	assert.NoError(t, ValidateSSHKey(good))
	assert.NoError(t, ValidateSSHKey(good+"\n"), "a trailing newline is fine")
	assert.ErrorContains(t, ValidateSSHKey("ssh-ed25519 AAAA"), "not a valid SSH public key")
	assert.ErrorContains(t, ValidateSSHKey("hello"), "not a valid SSH public key")
	assert.Error(t, ValidateSSHKey("-----BEGIN OPENSSH PRIVATE KEY-----"), "a private key is not a public key")
}

const testCA = `-----BEGIN CERTIFICATE-----
MIIBmDCCAT2gAwIBAgIUFuH9tKzMbMgANNlQvVzCaKy5GF8wCgYIKoZIzj0EAwIw
IDEeMBwGA1UEAwwVbWlycm9yLmV4YW1wbGUuY29tIENBMCAXDTI2MTEyMjAyNDE0
M1oYDzIxMjYxMDI5MDI0MTQzWjAgMR4wHAYDVQQDDBVtaXJyb3IuZXhhbXBsZS5j
b20gQ0EwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQG5cywpSfdfQbGHPuGnKUB
I/UEHdo6y1wQoZFJHAfjKIp7Kn97NEusnpJpjMQGBAab9cSxyj6E6nCS7Ad3Zn8D
o1MwUTAdBgNVHQ4EFgQU7fihBfOZn4Jec45sjpHCyAROvBIwHwYDVR0jBBgwFoAU
7fihBfOZn4Jec45sjpHCyAROvBIwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQD
AgNJADBGAiEAtnce29a/c2bYoKTUMZZvZbTMXD0ne5vHQq77TGYyUoQCIQDScWEB
oBgwM2YZE1KltNPtRhAU3fT3L8mX/9e0dOtOmg==
-----END CERTIFICATE-----
`

func TestValidateCABundle(t *testing.T) {
	assert.NoError(t, ValidateCABundle([]byte(testCA)))
	assert.NoError(t, ValidateCABundle([]byte(testCA+testCA)), "a bundle of several certificates")
	assert.ErrorContains(t, ValidateCABundle([]byte("hello")), "no PEM certificate found")
	assert.ErrorContains(t, ValidateCABundle([]byte(strings.Replace(testCA, "CERTIFICATE", "PRIVATE KEY", 2))), `unexpected PEM block "PRIVATE KEY"`)
	assert.ErrorContains(t, ValidateCABundle([]byte(strings.Replace(testCA, "MIIBmDCC", "MIIBmDCD", 1))), "certificate 1 does not parse")
	assert.ErrorContains(t, ValidateCABundle([]byte(testCA+"trailing junk\n")), "unexpected text after the last certificate")
}

func TestValidateSecret(t *testing.T) {
	const base = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ostest-pull-secret\n  namespace: cluster0\n"
	tests := []struct {
		name, body string
		want       []string
	}{
		{"stringData", "stringData:\n  .dockerconfigjson: '{\"auths\":{\"quay.io\":{\"auth\":\"dXNlcjpwYXNz\"}}}'\n", nil},
		{"base64 data", "data:\n  .dockerconfigjson: eyJhdXRocyI6eyJxdWF5LmlvIjp7ImF1dGgiOiJkWE5sY2pwd1lYTnoifX19\n", nil},
		{"empty", "", []string{"pull-secret.yaml: stringData: Required value: the pull secret is empty"}},
		{"wrong key", "stringData:\n  config.json: '{}'\n", []string{"the pull secret key '.dockerconfigjson' is not defined"}},
		{"blank", "stringData:\n  .dockerconfigjson: ' '\n", []string{"the pull secret does not contain any data"}},
		{"not JSON", "stringData:\n  .dockerconfigjson: foo\n", []string{"pull-secret.yaml:7: stringData: Invalid value: the pull secret is not valid JSON"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, lines := decodeT[Secret](t, assetdir.PullSecret, base+tc.body)
			NormalizeSecret(s)
			assertErrs(t, ValidateSecret(s, lines), tc.want...)
		})
	}
}

func TestValidateClusterImageSet(t *testing.T) {
	const rel = "quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64"
	const base = "apiVersion: hive.openshift.io/v1\nkind: ClusterImageSet\nmetadata:\n  name: openshift-4.19.0\nspec:\n  releaseImage: " + rel + "\n"
	cis, lines := decodeT[ClusterImageSet](t, assetdir.ClusterImageSet, base)
	assert.NoError(t, ValidateClusterImageSet(cis, lines, rel))

	cis, lines = decodeT[ClusterImageSet](t, assetdir.ClusterImageSet, strings.Replace(base, "4.19.0-x86_64", "4.18.1-x86_64", 1))
	assertErrs(t, ValidateClusterImageSet(cis, lines, rel), "cluster-manifests/cluster-image-set.yaml:6: spec.releaseImage: Forbidden: value must be equal to "+rel)

	cis, lines = decodeT[ClusterImageSet](t, assetdir.ClusterImageSet, strings.Replace(base, "  releaseImage: "+rel+"\n", "  releaseImage: \"\"\n", 1))
	assertErrs(t, ValidateClusterImageSet(cis, lines, rel), "spec.releaseImage: Required value")
}

func TestValidateNMStateConfigs(t *testing.T) {
	const doc = `apiVersion: agent-install.openshift.io/v1beta1
kind: NMStateConfig
metadata:
  name: master-0
  namespace: cluster0
  labels:
    infraenvs.agent-install.openshift.io: ostest
spec:
  config:
    interfaces:
    - name: eth0
      type: ethernet
  interfaces:
  - name: eth0
    macAddress: 52:54:00:00:00:01
`
	tests := []struct {
		name  string
		pairs []string
		want  []string
	}{
		{"valid", nil, nil},
		{"no labels", []string{"  labels:\n    infraenvs.agent-install.openshift.io: ostest\n", ""}, []string{"metadata.labels: Required value: document 1 (master-0) does not have any label set"}},
		{"dash MAC", []string{"52:54:00:00:00:01", "52-54-00-00-00-01"}, []string{"MAC address 52-54-00-00-00-01 for host 0 is incorrectly formatted, use XX:XX:XX:XX:XX:XX format"}},
		{"duplicate interface", []string{"    macAddress: 52:54:00:00:00:01\n", "    macAddress: 52:54:00:00:00:01\n  - name: eth0\n    macAddress: 52:54:00:00:00:02\n"}, []string{"MACs and Interfaces for host 0 must be unique"}},
		{"spec.interfaces MAC differs from spec.config mac-address", []string{"      type: ethernet\n", "      type: ethernet\n      mac-address: 52:54:00:00:00:99\n"}, []string{
			`nmstateconfig.yaml:16: spec.interfaces[0].macAddress: Invalid value: "52:54:00:00:00:01": document 1 (master-0): interface eth0 has MAC 52:54:00:00:00:01 here but mac-address 52:54:00:00:00:99 in cluster-manifests/nmstateconfig.yaml:13 spec.config.interfaces[0].mac-address`}},
		{"spec.config ethernet NIC without a MAC mapping", []string{"      type: ethernet\n", "      type: ethernet\n    - name: lan1\n      type: ethernet\n"}, []string{
			`nmstateconfig.yaml:13: spec.config.interfaces[1].name: Invalid value: "lan1": document 1 (master-0): NIC lan1 has no MAC in spec.interfaces and is not a predictable physical NIC name`}},
		{"config without interface table", []string{"  interfaces:\n  - name: eth0\n    macAddress: 52:54:00:00:00:01\n", ""}, []string{"spec.interfaces: Required value: at least one interface for host 0 must be provided"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, lines := decodeT[NMStateConfig](t, assetdir.NMStateConfig, edit(t, doc, tc.pairs...))
			assertErrs(t, ValidateNMStateConfigs([]NMStateConfig{*n}, []Lines{lines}), tc.want...)
		})
	}
}

// TestCheckNMStateConfigLabels: the labels must equal the selector
// exactly, as the real agent-installer-client compares them
// (cmd/agentbasedinstaller/register.go, release-4.18 ... master).
func TestCheckNMStateConfigLabels(t *testing.T) {
	const doc = `apiVersion: agent-install.openshift.io/v1beta1
kind: NMStateConfig
metadata:
  name: master-0
  namespace: cluster0
  labels:
    infraenvs.agent-install.openshift.io: ostest
spec:
  interfaces:
  - name: eth0
    macAddress: 52:54:00:00:00:01
`
	const infraEnv = `apiVersion: agent-install.openshift.io/v1beta1
kind: InfraEnv
metadata:
  name: ostest
  namespace: cluster0
spec:
  pullSecretRef:
    name: ostest-pull-secret
  nmStateConfigLabelSelector:
    matchLabels:
      infraenvs.agent-install.openshift.io: ostest
`
	tests := []struct {
		name      string
		docPairs  []string
		iePairs   []string
		generated bool
		want      []string
	}{
		{"equal", nil, nil, false, nil},
		{"extra label on the NMStateConfig", []string{"io: ostest\n", "io: ostest\n    site: a\n"}, nil, false, []string{
			`nmstateconfig.yaml:7: metadata.labels: Invalid value: "{infraenvs.agent-install.openshift.io: ostest, site: a}": labels do not match the InfraEnv: document 1 (master-0) must carry exactly the labels of cluster-manifests/infraenv.yaml:11 spec.nmStateConfigLabelSelector.matchLabels {infraenvs.agent-install.openshift.io: ostest} (no label missing, none extra)`}},
		{"label missing", nil, []string{"io: ostest\n", "io: ostest\n      site: a\n"}, false, []string{
			`metadata.labels: Invalid value: "{infraenvs.agent-install.openshift.io: ostest}": labels do not match the InfraEnv`}},
		{"other value", []string{"io: ostest", "io: other"}, nil, false, []string{
			`set metadata.labels to {infraenvs.agent-install.openshift.io: ostest}`}},
		{"empty selector", nil, []string{"  nmStateConfigLabelSelector:\n    matchLabels:\n      infraenvs.agent-install.openshift.io: ostest\n", ""}, false, []string{
			`cluster-manifests/infraenv.yaml:7: spec.nmStateConfigLabelSelector.matchLabels: Required value: cluster-manifests/nmstateconfig.yaml holds 1 NMStateConfig(s)`}},
		{"generated, selector equal", nil, nil, true, nil},
		{"generated, user selector differs", nil, []string{"io: ostest\n", "io: ostest\n      site: a\n"}, true, []string{
			`cluster-manifests/infraenv.yaml:11: spec.nmStateConfigLabelSelector.matchLabels: Invalid value: "{infraenvs.agent-install.openshift.io: ostest, site: a}": the NMStateConfigs agentiso generates from the hosts' networkConfig carry the labels {infraenvs.agent-install.openshift.io: ostest}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, lines := decodeT[NMStateConfig](t, assetdir.NMStateConfig, edit(t, doc, tc.docPairs...))
			ie, ieLines := decodeT[InfraEnv](t, assetdir.InfraEnv, edit(t, infraEnv, tc.iePairs...))
			assertErrs(t, CheckNMStateConfigLabels([]NMStateConfig{*n}, []Lines{lines}, ie, ieLines, tc.generated), tc.want...)
		})
	}
	// No NMStateConfig: nothing to compare, whatever the selector.
	assert.NoError(t, CheckNMStateConfigLabels(nil, nil, &InfraEnv{}, nil, false))
}

// TestGeneratedLabelsEqualSelector: what agentiso generates from
// install-config.yaml and agent-config.yaml always passes the client's rule.
func TestGeneratedLabelsEqualSelector(t *testing.T) {
	ic, _ := decodeT[InstallConfig](t, assetdir.InstallConfig, testfixture.InstallConfig)
	ic.SetDefaults()
	ac, _ := decodeT[AgentConfig](t, assetdir.AgentConfig, baseAgentConfig)
	hosts, _ := ResolveHosts(ic, ac)
	ie := GenerateInfraEnv(ic, ac, "192.168.111.20")
	list := GenerateNMStateConfigs(ic, hosts)
	require.Len(t, list, 2)
	for _, n := range list {
		assert.Equal(t, ie.Spec.NMStateConfigLabelSelector.MatchLabels, n.Metadata.Labels)
	}
	assert.NoError(t, CheckNMStateConfigLabels(list, nil, ie, nil, true))
}

// hostsOf decodes an agent-config hosts list and resolves it.
func hostsOf(t *testing.T, y string) []Host {
	t.Helper()
	ac, _ := decodeT[AgentConfig](t, assetdir.AgentConfig, y)
	hosts, _ := ResolveHosts(nil, ac)
	return hosts
}

func TestValidateCluster(t *testing.T) {
	ic, _ := decodeT[InstallConfig](t, assetdir.InstallConfig, testfixture.InstallConfig)
	ic.SetDefaults()
	worker := edit(t, baseAgentConfig, "hostname: master-1\n  role: master", "hostname: worker-0\n  role: worker")
	tests := []struct {
		name string
		ac   string
		rip  string
		want []string
	}{
		{"valid", baseAgentConfig, "192.168.111.20", nil},
		{"rendezvous IP on a worker", worker, "192.168.111.21", []string{"agent-config.yaml: hosts[1].role: Forbidden: Host worker-0 has role 'worker' and has the rendezvousIP assigned to it"}},
		{"rendezvous IP on no host", baseAgentConfig, "192.168.111.99", []string{`rendezvousIP: Invalid value: "192.168.111.99": is not a static address of any control-plane host's networkConfig`}},
		{"rendezvous IP outside the machine network", baseAgentConfig, "10.1.2.3", []string{
			`rendezvousIP: Invalid value: "10.1.2.3": is not a static address of any control-plane host's networkConfig`,
			`rendezvousIP: Invalid value: "10.1.2.3": is outside every machine network (192.168.111.0/24)`}},
		{"too many masters", edit(t, baseAgentConfig, "role: master\n  interfaces", "role: master\n  interfaces", "hosts:\n", "hosts:\n- {hostname: m2, role: master}\n- {hostname: m3, role: master}\n"), "192.168.111.20", []string{
			"agent-config.yaml: hosts: Forbidden: the number of master hosts defined (4) exceeds the configured ControlPlane replicas (3)"}},
		{"role-less hosts fill masters first", edit(t, baseAgentConfig, "hosts:\n", "hosts:\n- {hostname: a}\n- {hostname: b}\n- {hostname: c}\n- {hostname: d}\n"), "192.168.111.20", []string{
			"the number of worker hosts defined (3) exceeds the configured Compute replicas (2)"}},
		{"host IP is a VIP", edit(t, baseAgentConfig, "ip: 192.168.111.21", "ip: 192.168.111.5"), "192.168.111.20", []string{`hosts[1].networkConfig: Invalid value: "192.168.111.5": is also a VIP in install-config.yaml`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ValidateCluster(ic, hostsOf(t, tc.ac), tc.rip, nil)
			assertErrs(t, err, tc.want...)
		})
	}
}

// ignition.Build checks only what it writes (paths, env values, unit
// lines); what the values mean is checked here, once. Each case is a check
// Build used to repeat: host roles, Ignition overrides, the pull secret's
// JSON and the machine network CIDRs, in every file they come from.
func TestChecksIgnitionBuildLeavesToManifests(t *testing.T) {
	t.Run("agent-config host role and ignitionConfigOverride", func(t *testing.T) {
		y := edit(t, baseAgentConfig, "role: master\n  interfaces", "role: bootstrap\n  ignitionConfigOverride: '[1]'\n  interfaces")
		ac, lines := decodeT[AgentConfig](t, assetdir.AgentConfig, y)
		assertErrs(t, ValidateAgentConfig(ac, lines),
			`agent-config.yaml:22: hosts[1].role: Forbidden: host role has incorrect value "bootstrap"`,
			"agent-config.yaml:23: hosts[1].ignitionConfigOverride: Invalid value: must be an Ignition JSON document with ignition.version set")
	})
	t.Run("install-config host role, pull secret and machine network", func(t *testing.T) {
		y := edit(t, testfixture.InstallConfig,
			"cidr: 192.168.111.0/24", "cidr: 192.168.111.0",
			"    ingressVIPs: [192.168.111.4]\n", "    ingressVIPs: [192.168.111.4]\n    hosts:\n    - name: m0\n      role: bootstrap\n      bootMACAddress: 52:54:00:00:00:01\n",
			`'{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}'`, "'{auths'")
		ic, lines := decodeT[InstallConfig](t, assetdir.InstallConfig, y)
		ic.SetDefaults()
		err := ValidateInstallConfig(ic, lines)
		require.Error(t, err)
		for _, want := range []string{
			`install-config.yaml:14: networking.machineNetwork[0].cidr: Invalid value: "192.168.111.0": not a CIDR`,
			`platform.baremetal.hosts[0].role: Unsupported value: "bootstrap"`,
			"pullSecret: Invalid value: the pull secret is not valid JSON",
		} {
			assert.Contains(t, err.Error(), want)
		}
	})
	t.Run("pull-secret.yaml", func(t *testing.T) {
		s, lines := decodeT[Secret](t, assetdir.PullSecret, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ps\nstringData:\n  .dockerconfigjson: '{auths'\n")
		NormalizeSecret(s)
		assertErrs(t, ValidateSecret(s, lines), "pull-secret.yaml:6: stringData: Invalid value: the pull secret is not valid JSON")
	})
	t.Run("agent-cluster-install.yaml machine network", func(t *testing.T) {
		ic, _ := decodeT[InstallConfig](t, assetdir.InstallConfig, testfixture.InstallConfig)
		ic.SetDefaults()
		aci, err := GenerateAgentClusterInstall(ic, nil, ClusterImageSetName("4.19.0"), "192.168.111.20")
		require.NoError(t, err)
		aci.Spec.Networking.MachineNetwork[0].CIDR = "192.168.111.0"
		assertErrs(t, ValidateACI(aci, nil), `agent-cluster-install.yaml: spec.networking.machineNetwork[0].cidr: Invalid value: "192.168.111.0": not a CIDR`)
	})
}

// Issue 37 item 1: a network CIDR with host bits set, or the unspecified
// address, is refused on the laptop with the installer's words
// (openshift/installer pkg/validate SubnetCIDR, used by
// pkg/types/validation validateNetworking for the machine, cluster and
// service networks), and in agent-cluster-install.yaml with
// assisted-service's (release-4.20 internal/network/cidr_validations.go
// verifySubnetCIDR), not after boot on the rendezvous host.
func TestNetworkCIDRsWithHostBitsAreRefused(t *testing.T) {
	y := edit(t, testfixture.InstallConfig, "  machineNetwork:\n  - cidr: 192.168.111.0/24\n",
		"  machineNetwork:\n  - cidr: 192.168.111.7/24\n  clusterNetwork:\n  - cidr: 10.128.0.9/14\n    hostPrefix: 23\n  - cidr: 0.0.0.0/14\n    hostPrefix: 23\n  serviceNetwork:\n  - 172.30.0.5/16\n")
	ic, lines := decodeT[InstallConfig](t, assetdir.InstallConfig, y)
	ic.SetDefaults()
	err := ValidateInstallConfig(ic, lines)
	require.Error(t, err)
	for _, want := range []string{
		`networking.machineNetwork[0].cidr: Invalid value: "192.168.111.7/24": invalid network address. got 192.168.111.7/24, expecting 192.168.111.0/24`,
		`networking.clusterNetwork[0].cidr: Invalid value: "10.128.0.9/14": invalid network address. got 10.128.0.9/14, expecting 10.128.0.0/14`,
		`networking.clusterNetwork[1].cidr: Invalid value: "0.0.0.0/14": address must be specified`,
		`networking.serviceNetwork[0]: Invalid value: "172.30.0.5/16": invalid network address. got 172.30.0.5/16, expecting 172.30.0.0/16`,
	} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NotContains(t, err.Error(), "overlaps", "the networks do not overlap once masked")

	ic, _ = decodeT[InstallConfig](t, assetdir.InstallConfig, testfixture.InstallConfig)
	ic.SetDefaults()
	aci, err := GenerateAgentClusterInstall(ic, nil, ClusterImageSetName("4.19.0"), "192.168.111.20")
	require.NoError(t, err)
	aci.Spec.Networking.MachineNetwork[0].CIDR = "192.168.111.7/24"
	aci.Spec.Networking.ClusterNetwork[0].CIDR = "10.128.0.9/14"
	aci.Spec.Networking.ServiceNetwork[0] = "0.0.0.0/16"
	assertErrs(t, ValidateACI(aci, nil),
		`agent-cluster-install.yaml: spec.networking.clusterNetwork[0].cidr: Invalid value: "10.128.0.9/14": 10.128.0.9/14 is not a valid network CIDR`,
		`agent-cluster-install.yaml: spec.networking.serviceNetwork[0]: Invalid value: "0.0.0.0/16": the CIDR 0.0.0.0/16 is invalid because its routing prefix is the unspecified address`,
		`agent-cluster-install.yaml: spec.networking.machineNetwork[0].cidr: Invalid value: "192.168.111.7/24": 192.168.111.7/24 is not a valid network CIDR`)
}
