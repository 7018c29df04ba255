package termsafe

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"plain host-0.example.com":    "plain host-0.example.com",
		"ünïcödé ok":                  "ünïcödé ok",
		"\x1b]0;pwned\x07":            `\x1b]0;pwned\a`,
		"a\r\nINFO forged":            `a\r\nINFO forged`,
		"tab\there":                   `tab\there`,
		"del\x7f c1\u0085 bidi\u202e": `del\x7f c1\u0085 bidi\u202e`,
		"zero\u200bwidth \ufeffbom":   `zero\u200bwidth \ufeffbom`,
		"bad utf8 \xff\xfe":           `bad utf8 \xff\xfe`,
		"line\u2028sep":               `line\u2028sep`,
		"":                            "",
	} {
		assert.Equal(t, want, String(in), "%q", in)
	}
}

func TestTextKeepsLinesOnly(t *testing.T) {
	assert.Equal(t, "a\n\tb \\x1b[2J \\r", Text("a\n\tb \x1b[2J \r"))
}

func FuzzString(f *testing.F) {
	f.Add("\x1b[2J\r\n")
	f.Add("ok")
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		assert.True(t, utf8.ValidString(out))
		for _, r := range out {
			assert.False(t, unsafeRune(r), "%q left %q", s, r)
		}
		if isSafe(s, false) {
			assert.Equal(t, s, out)
		}
		for _, keep := range []bool{false, true} {
			assert.Equal(t, isSafeByRune(s, keep), isSafe(s, keep), "%q, keeping lines %v", s, keep)
		}
	})
}

// isSafeByRune is isSafe without its ASCII fast path: every rune through
// unsafeRune.
func isSafeByRune(s string, keepLines bool) bool {
	for _, r := range s {
		if r == utf8.RuneError || (unsafeRune(r) && !(keepLines && (r == '\n' || r == '\t'))) {
			return false
		}
	}
	return true
}

// TestIsSafeFastPath: every byte value alone and among text, as the
// rune-by-rune check judges it.
func TestIsSafeFastPath(t *testing.T) {
	for c := range 256 {
		for _, s := range []string{string([]byte{byte(c)}), "ab" + string([]byte{byte(c)}) + "cd", string(rune(c)), "é" + string(rune(c))} {
			for _, keep := range []bool{false, true} {
				assert.Equal(t, isSafeByRune(s, keep), isSafe(s, keep), "%q, keeping lines %v", s, keep)
			}
		}
	}
}
