package live

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
	"github.com/seed-a052040e/agentiso/test/e2e"
)

// The lab lowers the requirements with the ISO's own script: run the edited
// script as the guest would and read what it wrote.
func TestLowerRequirements(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq not installed")
	}
	script, err := os.ReadFile(filepath.Join("..", "..", "data", "agent", "files", "usr", "local", "bin", "configure-assisted-hw-requirements.sh"))
	require.NoError(t, err)
	env := "RELEASE_IMAGES=[{\"openshift_version\":\"4.20\"}]\nDISABLED_HOST_VALIDATIONS=belongs-to-majority-group\nHW_VALIDATOR_REQUIREMENTS=TO_BE_REPLACED\n"
	dataURL := func(b []byte) *string { s := "data:;base64," + base64.StdEncoding.EncodeToString(b); return &s }
	cfg := types.Config{Ignition: types.Ignition{Version: "3.2.0"}}
	cfg.Storage.Files = []types.File{
		{Node: types.Node{Path: HWScriptPath}, FileEmbedded1: types.FileEmbedded1{Contents: types.Resource{Source: dataURL(script)}}},
		{Node: types.Node{Path: ServiceEnvPath}, FileEmbedded1: types.FileEmbedded1{Contents: types.Resource{Source: dataURL([]byte(env))}}},
	}
	iso := filepath.Join(t.TempDir(), "agent.iso")
	_, err = testiso.WriteFile(iso, testiso.Options{})
	require.NoError(t, err)
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	archive, err := isoeditor.IgnitionArchive(b)
	require.NoError(t, err)
	require.NoError(t, e2e.EmbedIgnitionArchive(iso, archive))

	desc, err := LowerRequirements(iso, Requirements{CPUCores: 2, RAMMiB: 1024, DiskGB: 20, DisabledValidations: []string{"ntp-synced"}})
	require.NoError(t, err)
	assert.Contains(t, desc, "cpu_cores=2 ram_mib=1024 disk_size_gb=20")
	assert.Contains(t, desc, "ntp-synced")

	got, f, err := isoeditor.OpenFile(iso)
	require.NoError(t, err)
	files, err := got.EmbeddedFiles()
	f.Close()
	require.NoError(t, err)
	var out types.Config
	require.NoError(t, json.Unmarshal(files[0].Data, &out))
	root := t.TempDir()
	for _, file := range out.Storage.Files {
		data, err := FileContents(file)
		require.NoError(t, err)
		p := filepath.Join(root, file.Path)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o755))
	}
	cmd := exec.Command("bash", filepath.Join(root, HWScriptPath))
	cmd.Env = append(os.Environ(), "AGENT_ROOT="+root)
	outb, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", outb)
	assert.Contains(t, string(outb), "live lab: lowered HW_VALIDATOR_REQUIREMENTS")
	written, err := os.ReadFile(filepath.Join(root, ServiceEnvPath))
	require.NoError(t, err)
	var reqs []map[string]map[string]float64
	var disabled string
	for _, l := range strings.Split(string(written), "\n") {
		if v, ok := strings.CutPrefix(l, "HW_VALIDATOR_REQUIREMENTS="); ok {
			var raw []map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(v), &raw))
			for _, r := range raw {
				m := map[string]map[string]float64{}
				for k, val := range r {
					if k == "version" {
						continue
					}
					var role map[string]float64
					require.NoError(t, json.Unmarshal(val, &role))
					m[k] = role
				}
				reqs = append(reqs, m)
			}
		}
		if v, ok := strings.CutPrefix(l, "DISABLED_HOST_VALIDATIONS="); ok {
			disabled = v
		}
	}
	require.Len(t, reqs, 1)
	for _, role := range []string{"master", "worker", "arbiter", "sno"} {
		assert.Equal(t, 2.0, reqs[0][role]["cpu_cores"], role)
		assert.Equal(t, 1024.0, reqs[0][role]["ram_mib"], role)
		assert.Equal(t, 20.0, reqs[0][role]["disk_size_gb"], role)
	}
	assert.Equal(t, 10.0, reqs[0]["sno"]["installation_disk_speed_threshold_ms"], "what the lab does not cap is kept")
	assert.Equal(t, "belongs-to-majority-group,ntp-synced", disabled)
}

func TestSetStartTimeout(t *testing.T) {
	out, err := SetStartTimeout("30min")("[Service]\nTimeoutStartSec=500\nTimeoutStopSec=70\n")
	require.NoError(t, err)
	assert.Equal(t, "[Service]\nTimeoutStartSec=30min\nTimeoutStopSec=70\n", out)
	_, err = SetStartTimeout("30min")("[Service]\nExecStart=/bin/true\n")
	require.ErrorContains(t, err, "no TimeoutStartSec= line")
}
