package manifests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestYAMLLimits(t *testing.T) {
	type doc struct {
		A any `json:"a"`
	}
	// Real-looking content is far from the limits: MACs, URLs, quoted
	// colons, comments and block scalars are not counted as structure.
	ok := "a:\n  mac: 52:54:00:00:00:01 # not: counted\n  url: 'http://x:1/a, b'\n  s: |\n    - text: here\n  l: [1, 2, {b: c}]\n"
	_, err := DecodeStrict("f.yaml", []byte(ok), &doc{})
	require.NoError(t, err)

	_, err = DecodeStrict("f.yaml", []byte("a: "+strings.Repeat("[", MaxYAMLDepth+1)+strings.Repeat("]", MaxYAMLDepth+1)), &doc{})
	assert.ErrorContains(t, err, "nested more than 64 levels")
	var b strings.Builder
	b.WriteString("a:\n")
	for d := 1; d <= MaxYAMLDepth+2; d++ {
		b.WriteString(strings.Repeat(" ", d) + "k:\n")
	}
	_, err = DecodeStrict("f.yaml", []byte(b.String()), &doc{})
	assert.ErrorContains(t, err, "nested more than 64 levels")
	_, err = DecodeStrict("f.yaml", []byte("a: ["+strings.Repeat("1,", MaxYAMLNodes)+"1]"), &doc{})
	assert.ErrorContains(t, err, "more than 50000 YAML keys and list items")
	_, _, err = DecodeStrictAll("f.yaml", []byte(strings.Repeat("- x\n", MaxYAMLNodes+1)), func() any { return &doc{} })
	assert.ErrorContains(t, err, "more than 50000")
	_, err = SplitManifests("f.yaml", []byte(strings.Repeat("k: v\n", MaxYAMLNodes+1)))
	assert.ErrorContains(t, err, "more than 50000")
}

func FuzzCheckYAMLSize(f *testing.F) {
	f.Add([]byte("a: [1, {b: 'c''d'}]\n# x\n- \"q\\\"\"\n"))
	f.Add([]byte("[[[[{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = checkYAMLSize("f.yaml", b) // must not panic or loop
	})
}
