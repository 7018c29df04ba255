// Package suggest finds the "did you mean" candidate for a misspelled name.
package suggest

import "strings"

// Closest returns the candidate closest to word (case-insensitively) when it
// is close enough to be a plausible misspelling, else "": at most 2 edits
// (3 for words longer than 8 bytes), or, failing that, a candidate that is
// a prefix of word or has word as its prefix (for words of 3+ bytes).
func Closest(word string, candidates []string) string {
	lw := strings.ToLower(word)
	limit := 2
	if len(word) > 8 {
		limit = 3
	}
	best, bestD := "", limit+1
	for _, c := range candidates {
		if d := distance(lw, strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" && len(lw) >= 3 {
		for _, c := range candidates {
			lc := strings.ToLower(c)
			if strings.HasPrefix(lc, lw) || strings.HasPrefix(lw, lc) {
				return c
			}
		}
	}
	return best
}

// distance is the Levenshtein edit distance; long inputs count as far apart
// so hostile input cannot make it expensive.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
