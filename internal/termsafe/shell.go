package termsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ShellArg quotes s as one word for a POSIX shell command line the user
// may paste (bash, zsh): unchanged when it holds only characters no shell
// treats specially, in single quotes when it holds others but nothing
// unprintable, and as a $'...' word with visible escapes when it holds
// control or formatting characters or invalid UTF-8, so that the printed
// hint is always one line that runs nothing but the command it names.
func ShellArg(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !plainShellRune(r) }) < 0 {
		return s
	}
	if isSafe(s, false) {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r) && r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}

// plainShellRune is a character that needs no quoting in any POSIX shell
// word (not the first of a word where ~ or # would matter: neither is here).
func plainShellRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/:=@%+,-", r)
}
