package arch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every spelling agentiso meets, the empty string included, and what each
// helper makes of it.
func TestSpellings(t *testing.T) {
	for _, tc := range []struct {
		in        string
		normalize string // "" means an error
		rpm, goa  string // "" means not ok
	}{
		{"", Default, "", ""},
		{"x86_64", "x86_64", "x86_64", "amd64"},
		{"amd64", "x86_64", "x86_64", "amd64"},
		{"aarch64", "aarch64", "aarch64", "arm64"},
		{"arm64", "aarch64", "aarch64", "arm64"},
		{"ppc64le", "ppc64le", "ppc64le", "ppc64le"},
		{"s390x", "s390x", "s390x", "s390x"},
		{"multi", "", "", ""},
		{"x86-64", "", "", ""},
		{"AMD64", "", "", ""},
		{" s390x ", "", "", ""},
		{"riscv64", "", "", ""},
		{"ppc64", "", "", ""},
		{"i386", "", "", ""},
		{"arm", "", "", ""},
	} {
		got, err := Normalize(tc.in)
		if tc.normalize == "" {
			require.Error(t, err, "%q", tc.in)
			assert.Equal(t, `unsupported CPU architecture "`+tc.in+`": use one of x86_64 (amd64), aarch64 (arm64), ppc64le, s390x`, err.Error())
		} else {
			require.NoError(t, err, "%q", tc.in)
			assert.Equal(t, tc.normalize, got, "Normalize(%q)", tc.in)
		}
		r, ok := RPM(tc.in)
		assert.Equal(t, tc.rpm != "", ok, "RPM(%q) ok", tc.in)
		assert.Equal(t, tc.rpm, r, "RPM(%q)", tc.in)
		g, ok := Go(tc.in)
		assert.Equal(t, tc.goa != "", ok, "Go(%q) ok", tc.in)
		assert.Equal(t, tc.goa, g, "Go(%q)", tc.in)
	}
}

func TestDefaultIsSupported(t *testing.T) {
	assert.Equal(t, "x86_64", Default)
	assert.Contains(t, Supported(), Default)
}

func TestLists(t *testing.T) {
	assert.Equal(t, []string{"x86_64", "aarch64", "ppc64le", "s390x"}, Supported())
	assert.Equal(t, []string{"amd64", "arm64", "ppc64le", "s390x"}, SupportedGo())
	// The lists are copies: a caller cannot change the vocabulary.
	Supported()[0] = "sparc"
	SupportedGo()[0] = "sparc"
	assert.Equal(t, "x86_64", Supported()[0])
	assert.Equal(t, "amd64", SupportedGo()[0])
}
