package live

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The first form of the table (no run column, one date above it), as
// docs/e2e.md had it.
const firstFormMatrix = "intro\n\n" + matrixBegin + `

Run 2026-11-26 00:56 UTC (` + "`make e2e-live-matrix`" + `, one SNO scenario per branch).

| branch | upstream commit | result | what the real programs (or agentiso) said |
|---|---|---|---|
| release-4.17 |  | agentiso refuses 4.17.0 | ERROR a \| b |
| release-4.18 | 73206081d00d | fails | units failed |
| release-4.19 | de5d04b1db10 | passes (6m51s) | hosts registered |

` + matrixEnd + "\n\nafter\n"

func TestWriteMatrixUpdatesOnlyTheBranchesRun(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "e2e.md")
	require.NoError(t, os.WriteFile(doc, []byte(firstFormMatrix), 0o644))
	at := time.Date(2026, 11, 26, 2, 10, 0, 0, time.UTC)
	require.NoError(t, writeMatrix(doc, []matrixRow{{branch: "release-4.18", commit: "73206081d00ddfc1a2d9", result: "passes (7m02s)", said: "install accepted"}}, at))
	b, err := os.ReadFile(doc)
	require.NoError(t, err)
	s := string(b)
	assert.True(t, strings.HasPrefix(s, "intro\n\n"+matrixBegin))
	assert.True(t, strings.HasSuffix(s, matrixEnd+"\n\nafter\n"))
	assert.Contains(t, s, "| release-4.17 | 2026-11-26 00:56 UTC |  | agentiso refuses 4.17.0 | ERROR a \\| b |\n")
	assert.Contains(t, s, "| release-4.18 | 2026-11-26 02:10 UTC | 73206081d00d | passes (7m02s) | install accepted |\n")
	assert.Contains(t, s, "| release-4.19 | 2026-11-26 00:56 UTC | de5d04b1db10 | passes (6m51s) | hosts registered |\n")
	assert.NotContains(t, s, "units failed")
	assert.Less(t, strings.Index(s, "release-4.17"), strings.Index(s, "release-4.18"))
	assert.Less(t, strings.Index(s, "release-4.18"), strings.Index(s, "release-4.19"))

	// A second run reads the five-column form back unchanged.
	require.NoError(t, writeMatrix(doc, nil, at.Add(time.Hour)))
	b2, err := os.ReadFile(doc)
	require.NoError(t, err)
	assert.Equal(t, s, string(b2))
}

func TestWriteMatrixNeedsTheMarkers(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "e2e.md")
	require.NoError(t, os.WriteFile(doc, []byte("no table here\n"), 0o644))
	err := writeMatrix(doc, nil, time.Now())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "markers")
}
