// Package jsonbound measures JSON from outside agentiso before it is decoded, so that a small hostile document cannot decode into gigabytes.
package jsonbound

// Containers counts the objects and arrays of the JSON document b (its '{'
// and '[' outside strings), stopping as soon as the count passes stop. It
// does not validate b: a malformed document is left to the decoder.
//
// Decoding a list of empty objects costs far more memory than its text
// (`{}` is 3 bytes, the struct it fills often 100 or more), so a bound on
// bytes alone does not bound memory; this count does.
func Containers(b []byte, stop int) int {
	n, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if n++; n > stop {
				return n
			}
		}
	}
	return n
}
