package nmstate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// strictRejects maps vectors nmstate accepts but agentiso rejects by default
// to a substring of agentiso's own error.
var strictRejects = map[string]string{
	"31-enabled-omitted-gotcha":        `interface eth0: addresses are given but ipv4.enabled is omitted`,
	"70-lenient-unknown-type":          `interface foo0: unknown interface type "foo"`,
	"71-lenient-duplicate-name":        `interfaces[1].name: interface eth0: duplicate interface name, also defined at interfaces[0]`,
	"73-lenient-bad-mac":               `interfaces[0].mac-address: interface eth0: "zz:zz" is not a MAC address`,
	"75-lenient-route-undefined-iface": `routes.config[0]: next-hop-interface "eth9" is not defined in interfaces`,
}

type vector struct {
	name, dir string
	input     []byte
}

func loadVectors(t testing.TB) []vector {
	dirs, err := filepath.Glob("testdata/vectors/[0-9]*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	var out []vector
	for _, d := range dirs {
		in, err := os.ReadFile(filepath.Join(d, "input.yml"))
		require.NoError(t, err)
		out = append(out, vector{name: filepath.Base(d), dir: d, input: in})
	}
	return out
}

func readExpected(t *testing.T, dir string) (order []string, raw, inst map[string]string) {
	t.Helper()
	o, err := os.ReadFile(filepath.Join(dir, "order.txt"))
	require.NoError(t, err)
	order = strings.Fields(string(o))
	raw, inst = map[string]string{}, map[string]string{}
	for _, n := range order {
		b, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(t, err)
		raw[n] = string(b)
		b, err = os.ReadFile(filepath.Join(dir, "installer", n))
		require.NoError(t, err)
		inst[n] = string(b)
	}
	return order, raw, inst
}

func checkOutput(t *testing.T, files []Keyfile, order []string, want map[string]string) {
	t.Helper()
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	require.Equal(t, order, names, "file order")
	for _, f := range files {
		assert.Equal(t, want[f.Name], string(f.Content), f.Name)
	}
}

func TestVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.name, func(t *testing.T) {
			gist, err := os.ReadFile(filepath.Join(v.dir, "expected-error-gist.txt"))
			if err == nil {
				for _, lenient := range []bool{false, true} {
					_, gerr := Generate(v.input, Options{Lenient: lenient})
					require.Error(t, gerr, "lenient=%v", lenient)
					assert.Contains(t, gerr.Error(), strings.TrimSpace(string(gist)), "lenient=%v", lenient)
				}
				return
			}
			order, raw, inst := readExpected(t, v.dir)
			if want, ok := strictRejects[v.name]; ok {
				_, serr := Generate(v.input, Options{})
				require.Error(t, serr)
				assert.Contains(t, serr.Error(), want)
				// nmstate's own behaviour is reproduced in lenient mode.
				files, err := Generate(v.input, Options{Lenient: true})
				require.NoError(t, err)
				checkOutput(t, files, order, raw)
				files, err = Generate(v.input, Options{Lenient: true, Installer: true})
				require.NoError(t, err)
				checkOutput(t, files, order, inst)
				return
			}
			require.True(t, strings.HasPrefix(v.name, "0") || v.name < "70", "vector %s has expected output but is not in strictRejects", v.name)
			for _, lenient := range []bool{false, true} {
				files, err := Generate(v.input, Options{Lenient: lenient})
				require.NoError(t, err)
				checkOutput(t, files, order, raw)
				files, err = Generate(v.input, Options{Lenient: lenient, Installer: true})
				require.NoError(t, err)
				checkOutput(t, files, order, inst)
			}
			// The installer post-processing of the raw files gives the same bytes.
			for n, content := range raw {
				got, err := InstallerKeyfile([]byte(content))
				require.NoError(t, err)
				assert.Equal(t, inst[n], string(got), n)
			}
		})
	}
}

func BenchmarkGenerate(b *testing.B) {
	in, err := os.ReadFile("testdata/vectors/26-bond-bridge-vlan-nested/input.yml")
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Generate(in, Options{Installer: true}); err != nil {
			b.Fatal(err)
		}
	}
}
