package agent_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/internal/testiso"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

// Issue 37 item 2: offline (the release's RHCOS stream unknown), with
// --base-iso, OS_IMAGES names the RHCOS the given ISO says it is (its
// volume ID "rhcos-<release>"), not the RHCOS embedded in this build, and
// nothing warns that it is unknown. Without a base ISO the warning stays.
func TestOSImageOfflineNamesTheBaseISOsRHCOS(t *testing.T) {
	files := map[string]string{assetdir.InstallConfig: testfixture.CompactInstallConfig, assetdir.AgentConfig: testfixture.AgentConfig}
	base := filepath.Join(t.TempDir(), "base.iso")
	_, err := testiso.WriteFile(base, testiso.Options{Size: 4 << 20, VolumeID: "rhcos-9.6.20250925-0"})
	require.NoError(t, err)

	s, _ := store(t, files)
	require.NoError(t, s.Provide(&agent.ImageOptions{BaseISO: base, Offline: true}))
	img, err := asset.Fetch[*agent.OSImage](context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, "9.6.20250925-0", img.Image.Version)
	assert.Equal(t, "x86_64", img.Image.CPUArchitecture)
	assert.Equal(t, "file://"+base, img.Image.URL, "the ISO given; assisted-service fetches nothing from it")
	assert.Empty(t, img.Warn)

	// An http(s) base ISO names its RHCOS by its file name.
	s, _ = store(t, files)
	url := "https://mirror.example.com/rhcos/rhcos-9.6.20250925-0-live-iso.x86_64.iso"
	require.NoError(t, s.Provide(&agent.ImageOptions{BaseISO: url, Offline: true}))
	img, err = asset.Fetch[*agent.OSImage](context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, "9.6.20250925-0", img.Image.Version)
	assert.Equal(t, url, img.Image.URL)
	assert.Empty(t, img.Warn)

	// Nothing known: the build's own stream, with the warning.
	s, _ = store(t, files)
	img, err = asset.Fetch[*agent.OSImage](context.Background(), s)
	require.NoError(t, err)
	require.Len(t, img.Warn, 1)
	assert.True(t, strings.Contains(img.Warn[0], "names the RHCOS embedded in this build"), img.Warn[0])
}
