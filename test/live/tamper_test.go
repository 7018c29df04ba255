package live

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/testiso"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
	"github.com/seed-a052040e/agentiso/test/e2e"
)

func TestEditUnit(t *testing.T) {
	dir := t.TempDir()
	iso := filepath.Join(dir, "agent.iso")
	_, err := testiso.WriteFile(iso, testiso.Options{})
	require.NoError(t, err)
	unit := "[Service]\nExecStart=/usr/bin/podman run --net host --restart=on-failure:10 img cmd\n"
	other := "[Service]\nExecStart=/bin/true\n"
	cfg := types.Config{Ignition: types.Ignition{Version: "3.2.0"}}
	cfg.Systemd.Units = []types.Unit{{Name: "a.service", Contents: &unit}, {Name: "b.service", Contents: &other}}
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	nm := isoeditor.InitrdFile{Path: "etc/x.nmconnection", Mode: 0o600, Data: []byte("[connection]\n")}
	archive, err := isoeditor.IgnitionArchive(b, nm)
	require.NoError(t, err)
	require.NoError(t, e2e.EmbedIgnitionArchive(iso, archive))

	require.NoError(t, EditUnit(iso, "a.service", AddPodmanFlag("--rm")))

	got, f, err := isoeditor.OpenFile(iso)
	require.NoError(t, err)
	defer f.Close()
	files, err := got.EmbeddedFiles()
	require.NoError(t, err)
	var out types.Config
	var sawNM bool
	for _, file := range files {
		switch file.Path {
		case isoeditor.IgnitionConfigName:
			require.NoError(t, json.Unmarshal(file.Data, &out))
		case nm.Path:
			sawNM = true
			assert.Equal(t, nm.Data, file.Data)
		}
	}
	assert.True(t, sawNM, "the other files of the embed area are kept")
	require.Len(t, out.Systemd.Units, 2)
	assert.Equal(t, "[Service]\nExecStart=/usr/bin/podman run --rm --net host --restart=on-failure:10 img cmd\n", *out.Systemd.Units[0].Contents)
	assert.Equal(t, other, *out.Systemd.Units[1].Contents)

	require.ErrorContains(t, EditUnit(iso, "missing.service", AddPodmanFlag("--rm")), "no unit missing.service")
	require.ErrorContains(t, EditUnit(iso, "b.service", AddPodmanFlag("--rm")), "no /usr/bin/podman run command")
	_, err = os.Stat(iso)
	require.NoError(t, err)
}
