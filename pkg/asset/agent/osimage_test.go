package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
)

// The base ISO says which RHCOS it is by its volume ID, rhcos-<release>,
// in both spellings RHCOS has used; anything else says nothing, and a URL
// is not read (offline).
func TestBaseISORHCOS(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ volumeID, release string }{
		{"rhcos-9.6.20250925-0", "9.6.20250925-0"},
		{"rhcos-418.94.202501221327-0", "418.94.202501221327-0"},
		{"rhcos-", ""},
		{"rhcos-latest", ""},
		{"fedora-coreos-42.20250901.3.0", ""},
		{"CDROM", ""},
	} {
		t.Run(tc.volumeID, func(t *testing.T) {
			p := filepath.Join(dir, tc.volumeID+".iso")
			_, err := testiso.WriteFile(p, testiso.Options{Size: 4 << 20, VolumeID: tc.volumeID})
			require.NoError(t, err)
			rel, u, why := baseISORHCOS(p)
			assert.Equal(t, tc.release, rel)
			if tc.release == "" {
				assert.Empty(t, u)
				assert.Equal(t, "base ISO "+p+" does not say which RHCOS it is (its volume ID is \""+tc.volumeID+"\", not rhcos-<release>)", why)
				return
			}
			assert.Equal(t, "file://"+filepath.ToSlash(p), u)
			assert.Empty(t, why)
			// a file:// URL names the same file
			rel2, u2, _ := baseISORHCOS("file://" + p)
			assert.Equal(t, rel, rel2)
			assert.Equal(t, u, u2)
		})
	}
	t.Run("path with a space", func(t *testing.T) {
		p := filepath.Join(dir, "my isos", "live.iso")
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		_, err := testiso.WriteFile(p, testiso.Options{Size: 4 << 20})
		require.NoError(t, err)
		_, u, _ := baseISORHCOS(p)
		assert.Equal(t, "file://"+filepath.ToSlash(dir)+"/my%20isos/live.iso", u, "escaped: OS_IMAGES takes no whitespace")
	})
	_, _, why := baseISORHCOS("https://user:pw@mirror.example.com/rhcos.iso")
	assert.Equal(t, "base ISO https://user:xxxxx@mirror.example.com/rhcos.iso is not read offline", why)
	_, _, why = baseISORHCOS("")
	assert.Equal(t, "no --base-iso names the hosts' RHCOS", why)
	_, _, why = baseISORHCOS(filepath.Join(dir, "missing.iso"))
	assert.Contains(t, why, "base ISO "+filepath.Join(dir, "missing.iso")+" cannot be read")
}
