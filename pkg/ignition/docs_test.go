package ignition

import (
	"io/fs"
	"os"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/data"
)

// TestDocsListEveryFileAndUnit keeps docs/ignition.md complete: every file
// the ISO carries from data/agent is named there by its destination path,
// and every unit by its name.
func TestDocsListEveryFileAndUnit(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ignition.md")
	require.NoError(t, err)
	text := string(doc)
	udoc, err := os.ReadFile("../../docs/unconfigured.md")
	require.NoError(t, err)
	unconfigured := string(udoc)
	err = fs.WalkDir(data.Agent(), ".", func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			return nil
		}
		dest := strings.TrimSuffix(p, ".template")
		switch {
		case strings.HasPrefix(dest, "systemd/units/"):
			assert.True(t, strings.Contains(text, "`"+strings.TrimSuffix(path.Base(dest), ".service")+"`"), "docs/ignition.md does not name unit %s", path.Base(dest))
		case strings.HasPrefix(dest, "files/"):
			dest = strings.TrimPrefix(dest, "files")
			assert.True(t, strings.Contains(text, "`"+dest+"`"), "docs/ignition.md does not list %s", dest)
		case strings.HasPrefix(dest, "unconfigured/"):
			assert.True(t, strings.Contains(unconfigured, "`"+path.Base(dest)+"`") || strings.Contains(unconfigured, "`"+strings.TrimSuffix(path.Base(dest), ".service")+"`"),
				"docs/unconfigured.md does not name %s", path.Base(dest))
		case strings.HasPrefix(dest, "network/files/"):
			dest = strings.TrimPrefix(dest, "network/files")
			assert.True(t, strings.Contains(text, "`"+dest+"`"), "docs/ignition.md does not list %s", dest)
		}
		return nil
	})
	require.NoError(t, err)
}
