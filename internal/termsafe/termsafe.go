// Package termsafe makes text from outside agentiso safe to print on a
// terminal or into a log.
//
// Outside text is what a remote API or a file that is not the user's own
// input says. Its control characters, bidirectional overrides and invalid
// UTF-8 are shown as visible escapes, so it can neither drive the terminal
// (escape sequences, carriage returns) nor forge extra log lines.
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String returns s with every control or formatting character, newlines
// included, replaced by a visible Go-style escape (\n, \x1b, \u202e) and
// invalid UTF-8 bytes shown as \xNN. Text without such characters is
// returned unchanged.
func String(s string) string { return escape(s, false) }

// Text is String for agentiso's own multi-line messages: it keeps line
// breaks ('\n') and tabs, escaping everything else String escapes.
func Text(s string) string { return escape(s, true) }

func escape(s string, keepLines bool) string {
	if isSafe(s, keepLines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case !unsafeRune(r):
			b.WriteString(s[i : i+size])
		default:
			writeEscape(&b, r)
		}
		i += size
	}
	return b.String()
}

// isSafe reports whether s has nothing to escape. ASCII, what nearly all
// of agentiso's log lines are, is checked a byte at a time (its only
// unsafe characters are the C0 controls and DEL); the rest a rune at a
// time.
func isSafe(s string, keepLines bool) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if (c < 0x20 || c == 0x7f) && !(keepLines && (c == '\n' || c == '\t')) {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unsafeRune(r) {
			return false
		}
		i += size
	}
	return true
}

// unsafeRune is a C0/C1 control, DEL, or an invisible formatting character
// (bidirectional overrides, zero-width characters, byte order mark).
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

func writeEscape(b *strings.Builder, r rune) {
	switch r {
	case '\a':
		b.WriteString(`\a`)
	case '\b':
		b.WriteString(`\b`)
	case '\f':
		b.WriteString(`\f`)
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	case '\v':
		b.WriteString(`\v`)
	default:
		if r < 0x80 {
			fmt.Fprintf(b, `\x%02x`, r)
		} else {
			fmt.Fprintf(b, `\u%04x`, r)
		}
	}
}
