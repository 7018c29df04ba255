package release

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Rule: `release info` prints what a registry said (image references, the
// stream, versions, attempts) escaped: no terminal escape and no forged line.
func TestReleaseInfoTextIsSanitised(t *testing.T) {
	h := "\x1b]0;pwned\x07\x1b[2J\nINFO Release verified\u202e"
	info := &Description{PullSpec: "q.io/r:x" + h, Pinned: "p" + h, Version: "4.19.3" + h, Arch: "x86_64" + h,
		Architectures: []string{"a" + h}, Source: "registry" + h, Origin: "o" + h, Support: "s" + h, From: "f" + h, Attempts: []string{"att" + h}, MachineOSImages: "m" + h,
		RHCOS: &RHCOSDescription{Stream: "s" + h, FromStream: "payload" + h, Arch: "x" + h, Release: "r" + h, FileName: "f" + h, URL: "u" + h,
			SHA256: "h" + h, CachePath: "c" + h, BaseISOFrom: "b" + h}, Warnings: []string{"w" + h}}
	var b strings.Builder
	require.NoError(t, info.WriteText(&b))
	out := b.String()
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\nINFO"} {
		assert.NotContains(t, out, bad)
	}
	assert.Contains(t, out, `\x1b]0;pwned\a`)
	assert.Equal(t, 18, strings.Count(out, "\n"), "one line per line of output:\n%s", out)
}
