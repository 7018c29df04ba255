package termsafe

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every quoted word is one line, and bash reads it back as the very
// string: pasting `oc adm certificate approve <ShellArg(name)>` runs that
// command with that one argument, whatever the name holds.
func TestShellArgRoundTripsThroughBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	for _, s := range []string{
		"csr-abc12", "csr x; touch /tmp/pwned", "a'b", `a\b`, "$(id)", "`id`", "x\nINFO every host is a Ready node",
		"tab\there", "\x1b[31mred", "bidi\u202eevil", "bad\xffutf8", "", "~root", "#c", "\u2028", "emoji \U0001F600", "\U000E0001tag",
	} {
		q := ShellArg(s)
		assert.NotContains(t, q, "\n", "%q", s)
		assert.True(t, isSafe(q, false), "ShellArg(%q) = %q holds unprintable characters", s, q)
		out, err := exec.Command(bash, "-c", "printf '%s' "+q).Output()
		require.NoError(t, err, "bash -c printf %s", q)
		assert.Equal(t, s, string(out), "bash read %q back wrong", q)
	}
	assert.Equal(t, "csr-8vf2x", ShellArg("csr-8vf2x"), "a plain name stays as it is")
	assert.Equal(t, `'csr x; touch /tmp/pwned'`, ShellArg("csr x; touch /tmp/pwned"))
	assert.True(t, strings.HasPrefix(ShellArg("a\nb"), "$'"))
}

func FuzzShellArg(f *testing.F) {
	for _, s := range []string{"csr-1", "a b", "a'b", "x\ny", "\x00", "\xff", "\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := ShellArg(s)
		if !isSafe(q, false) {
			t.Fatalf("ShellArg(%q) = %q holds unprintable characters", s, q)
		}
		if q == "" {
			t.Fatalf("ShellArg(%q) is empty", s)
		}
	})
}
