package manifests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Thousands of findings (a generated file gone wrong) are not all printed:
// the first ones are, then a count of the rest.
func TestErrorListIsCapped(t *testing.T) {
	var l ErrorList
	for i := range 9999 {
		l = append(l, &FieldError{File: "agent-config.yaml", Line: i + 1, Path: fmt.Sprintf("hosts[%d].role", i), Type: TypeInvalid, Detail: "bad"})
	}
	out := l.Error()
	lines := strings.Split(out, "\n")
	assert.LessOrEqual(t, len(lines), MaxErrorsShown+2)
	assert.True(t, strings.HasPrefix(out, "9999 problems found:"), out[:40])
	assert.Contains(t, lines[len(lines)-1], fmt.Sprintf("%d more problems not shown", 9999-MaxErrorsShown))
	assert.Contains(t, out, "hosts[0].role")
	assert.NotContains(t, out, "hosts[9998].role")
}
