package manifests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

func TestCheckInstallerArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string // one message fragment per problem, in order
	}{
		{"none", nil, nil},
		{"every allowed flag", []string{"--append-karg", "ip=eth0:dhcp", "--delete-karg", "quiet", "-n", "--copy-network",
			"--network-dir", "/etc/NetworkManager/system-connections", "--save-partlabel", "data*", "--save-partindex", "5-",
			"--image-url", "http://10.0.0.1:8080/rhcos.raw.xz", "--image-file", "/run/media/rhcos.raw.xz"}, nil},
		{"every accepted value character", []string{"--append-karg", `aZ09@!#$%*()_+,-./:;<="'{}[]`}, nil},
		{"flag not allowed", []string{"--firstboot-args", "console=ttyS0"}, []string{`flag "--firstboot-args" is not one assisted-service accepts; allowed flags are --append-karg, --delete-karg, -n, --copy-network, --network-dir, --save-partlabel, --save-partindex, --image-url, --image-file`}},
		{"flag=value form", []string{"--append-karg=nosmt"}, []string{"flag \"--append-karg=nosmt\" is not one assisted-service accepts\x00give the value as the next list entry: [\"--append-karg\", \"nosmt\"]"}},
		{"single dash long flag", []string{"-copy-network"}, []string{`flag "-copy-network" is not one`}},
		{"missing value at the end", []string{"--copy-network", "--append-karg"}, []string{`flag --append-karg needs a value as the next list entry`}},
		{"missing value before a flag", []string{"--delete-karg", "-n"}, []string{`flag --delete-karg needs a value`}},
		{"space in a value", []string{"--append-karg", "console=tty0 console=ttyS0"}, []string{`value "console=tty0 console=ttyS0" contains a space, which assisted-service refuses; a value may hold only ASCII letters, digits and @!#$%*()_+,-./:;<="'{}[]`}},
		{"several bad characters", []string{"--append-karg", "a>b?c>d"}, []string{`contains '>', '?', which`}},
		{"non-ASCII", []string{"--append-karg", "é=1"}, []string{`contains 'é'`}},
		{"line break", []string{"--append-karg", "a\nb"}, []string{`contains a line break`}},
		{"empty", []string{"--append-karg", "x", ""}, []string{`empty argument`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckInstallerArgs(tc.args)
			require.Len(t, got, len(tc.want), "%v", got)
			for i, w := range tc.want {
				for _, frag := range strings.Split(w, "\x00") {
					assert.Contains(t, got[i].Msg, frag)
				}
			}
		})
	}
	// The flag=value hint comes with the flag problem, not as a second one.
	got := CheckInstallerArgs([]string{"--append-karg=nosmt"})
	require.Len(t, got, 1)
	assert.Contains(t, got[0].Msg, `give the value as the next list entry: ["--append-karg", "nosmt"]`)
}

// TestInstallerArgValueCharacters pins the accepted value characters, each
// printable ASCII character one by one, as assisted-service's rule
// (pkg/validations/validations.go, release-4.18 ... master) reads.
func TestInstallerArgValueCharacters(t *testing.T) {
	const accepted = `abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@!#$%*()_+,-./:;<="'{}[]`
	for c := byte(0); c < 0x80; c++ {
		v := "x" + string(rune(c))
		ok := len(CheckInstallerArgs([]string{"--append-karg", v})) == 0
		assert.Equal(t, strings.IndexByte(accepted, c) >= 0, ok, "character %q", c)
	}
}

func TestAgentConfigInstallerArgsRefused(t *testing.T) {
	y := baseAgentConfig + `  installerArgs:
  - --append-karg
  - console=tty0 console=ttyS0
  - --firstboot-args
`
	ac, lines := decodeT[AgentConfig](t, assetdir.AgentConfig, y)
	err := ValidateAgentConfig(ac, lines)
	assertErrs(t, err,
		`agent-config.yaml:37: hosts[1].installerArgs[1]: Invalid value: "console=tty0 console=ttyS0": value "console=tty0 console=ttyS0" contains a space`,
		`agent-config.yaml:38: hosts[1].installerArgs[2]: Invalid value: "--firstboot-args": flag "--firstboot-args" is not one assisted-service accepts; allowed flags are --append-karg,`)
}

func FuzzCheckInstallerArgs(f *testing.F) {
	f.Add("--append-karg", "ip=eth0:dhcp")
	f.Add("--append-karg=x", "é")
	f.Add("-", "")
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, p := range CheckInstallerArgs([]string{a, b}) {
			require.True(t, p.Index == 0 || p.Index == 1)
			require.NotEmpty(t, p.Msg)
		}
	})
}
