package nmstate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRejectsCorpus is the differential corpus: NMState inputs that
// nmstate itself refuses, taken from nmstate's own tests and rules (each
// case's source.txt names the file and test at the commit the vectors were
// made with). assisted-service refuses such a networkConfig with HTTP 400
// when the infra-env is registered, so agentiso must refuse every one when
// the ISO is built, in both modes (lenient mode is nmstate's own
// behaviour), with the error of error.txt: line, field path and message.
func TestRejectsCorpus(t *testing.T) {
	dirs, err := filepath.Glob("testdata/rejects/[0-9]*")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(dirs), 30, "the corpus is in testdata/rejects")
	for _, d := range dirs {
		t.Run(filepath.Base(d), func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join(d, "input.yml"))
			require.NoError(t, err)
			src, err := os.ReadFile(filepath.Join(d, "source.txt"))
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(src), "nmstate/nmstate@614c66dc7a0f: "), "source.txt cites nmstate: %s", src)
			assert.Regexp(t, `(rust/src/lib/\S+\.rs|tests/integration/\S+\.py) \S+`, string(src), "source.txt names an nmstate file and test or function")
			want, err := os.ReadFile(filepath.Join(d, "error.txt"))
			require.NoError(t, err)
			w := strings.TrimSpace(string(want))
			require.NotEmpty(t, w)
			for _, lenient := range []bool{false, true} {
				_, gerr := Generate(in, Options{Lenient: lenient})
				require.Error(t, gerr, "lenient=%v: nmstate refuses this input", lenient)
				assert.Contains(t, gerr.Error(), w, "lenient=%v", lenient)
			}
		})
	}
}

// TestNMStateSpellingsAccepted: the other spellings nmstate accepts for
// fields of the corpus's rules are accepted too (they used to be refused
// as unknown fields): bridge `ports`, `group-fwd-mask` (nmstate's preferred
// name), bond option `balance-slb`.
func TestNMStateSpellingsAccepted(t *testing.T) {
	br := genFile(t, "interfaces:\n- {name: br0, type: linux-bridge, bridge: {options: {group-fwd-mask: 8}, ports: [{name: eth1}]}}\n", "br0.nmconnection")
	assert.Contains(t, br, "[bridge]\ngroup-forward-mask=8\n")
	port := genFile(t, "interfaces:\n- {name: br0, type: linux-bridge, bridge: {ports: [{name: eth1}]}}\n", "eth1.nmconnection")
	assert.Contains(t, port, "master=br0\n")
	same := genFile(t, "interfaces:\n- {name: br0, type: linux-bridge, bridge: {options: {group-fwd-mask: 8, group-forward-mask: 8}}}\n", "br0.nmconnection")
	assert.Contains(t, same, "group-forward-mask=8\n")
	bond := genFile(t, "interfaces:\n- {name: bond0, type: bond, link-aggregation: {mode: balance-xor, port: [eth1], options: {balance-slb: 1, xmit_hash_policy: vlan+srcmac}}}\n", "bond0.nmconnection")
	assert.Contains(t, bond, "balance-slb=1\n", "NetworkManager's name for the option, as nmstate writes it")
}
