package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadCases(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.ign"), []byte("{}"), 0o600))
	cases := `[
  {"name": "sno", "iso": "out/sno.iso", "ignitionFile": "agent.ign",
   "paths": ["/etc/assisted"], "kargs": ["ip=dhcp"]},
  {"name": "compact", "iso": "/abs/compact.iso", "ignitionSHA256": "` + shaA + `",
   "files": {"/etc/x": "` + shaB + `"}, "modes": ["uefi-disk"]}
]`
	p := filepath.Join(dir, "cases.json")
	require.NoError(t, os.WriteFile(p, []byte(cases), 0o644))
	got, err := LoadCases(p)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, filepath.Join(dir, "out/sno.iso"), got[0].ISO)
	// sha256("{}")
	assert.Equal(t, "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a", got[0].IgnitionSHA256)
	assert.Equal(t, []string{"/etc/assisted"}, got[0].Paths)
	assert.Equal(t, []string{"ip=dhcp"}, got[0].Kargs)
	assert.Equal(t, CDModes(), got[0].BootModes())
	assert.Equal(t, "/abs/compact.iso", got[1].ISO)
	assert.Equal(t, shaA, got[1].IgnitionSHA256)
	assert.Equal(t, []Mode{{UEFI, Disk}}, got[1].BootModes())
}

func TestParseCasesErrors(t *testing.T) {
	for in, want := range map[string]string{
		`[]`:                            "no cases",
		`[{"name": "a", "iso": "x"}] x`: "trailing data",
		`[{"name": "a", "iso": "x", "ignitionFile": "/dev/zero"}]`: "not a readable regular file",
		`{}`:                            "cannot unmarshal",
		`[{"name": "a"}]`:               "field iso is required",
		`[{"iso": "x"}]`:                "field name must be non-empty",
		`[{"name": "a/b", "iso": "x"}]`: "without slashes",
		`[{"name": "a", "iso": "x"}, {"name": "a", "iso": "y"}]`:                             "duplicate name",
		`[{"name": "a", "iso": "x", "bogus": 1}]`:                                            "unknown field",
		`[{"name": "a", "iso": "x", "ignitionSHA256": "abc"}]`:                               "64 hex digits",
		`[{"name": "a", "iso": "x", "ignitionFile": "nope.ign"}]`:                            "field ignitionFile",
		`[{"name": "a", "iso": "x", "ignitionFile": "f", "ignitionSHA256": "` + shaA + `"}]`: "not both",
		`[{"name": "a", "iso": "x", "paths": ["etc/x"]}]`:                                    "must be absolute",
		`[{"name": "a", "iso": "x", "files": {"/x": "nothex"}}]`:                             "must be 64 hex digits",
		`[{"name": "a", "iso": "x", "modes": ["bios"]}]`:                                     "unknown boot mode",
	} {
		_, err := ParseCases([]byte(in), t.TempDir())
		assert.ErrorContains(t, err, want, in)
	}
}

func FuzzParseCases(f *testing.F) {
	f.Add(`[{"name": "a", "iso": "x.iso", "kargs": ["a=b"], "modes": ["bios-cdrom"]}]`)
	f.Add(`[{"name": "a", "iso": "/x.iso", "ignitionSHA256": "` + shaA + `", "files": {"/y": "` + shaB + `"}}]`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, in string) {
		base := t.TempDir()
		cases, err := ParseCases([]byte(in), base)
		if err != nil {
			return
		}
		require.NotEmpty(t, cases)
		seen := map[string]bool{}
		for _, c := range cases {
			assert.NotEmpty(t, c.Name)
			assert.False(t, seen[c.Name], "names are unique")
			seen[c.Name] = true
			assert.True(t, filepath.IsAbs(c.ISO), c.ISO)
			assert.NotEmpty(t, c.BootModes())
			if c.IgnitionSHA256 != "" {
				assert.True(t, isSHA256(strings.ToLower(c.IgnitionSHA256)))
			}
			for _, p := range c.Paths {
				assert.True(t, strings.HasPrefix(p, "/"))
			}
		}
	})
}
