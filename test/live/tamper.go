package live

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_2/types"

	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
	"github.com/seed-a052040e/agentiso/test/e2e"
)

// EditUnit rewrites, in place, the contents of systemd unit `unit` inside
// the Ignition config embedded in the agent ISO at isoPath: edit gets the
// unit's text and returns the new one. The other files of the embed area
// are kept. Negative controls use it to put back a defect the ISO must not
// carry (e.g. a podman flag combination podman refuses).
func EditUnit(isoPath, unit string, edit func(string) (string, error)) error {
	iso, f, err := isoeditor.OpenFile(isoPath)
	if err != nil {
		return err
	}
	files, err := iso.EmbeddedFiles()
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", isoPath, err)
	}
	var cfgIdx = -1
	for i, file := range files {
		if file.Path == isoeditor.IgnitionConfigName {
			cfgIdx = i
		}
	}
	if cfgIdx < 0 {
		return fmt.Errorf("%s: no %s in the embed area", isoPath, isoeditor.IgnitionConfigName)
	}
	var cfg types.Config
	if err := json.Unmarshal(files[cfgIdx].Data, &cfg); err != nil {
		return fmt.Errorf("%s: %s: %w", isoPath, isoeditor.IgnitionConfigName, err)
	}
	found := false
	for i := range cfg.Systemd.Units {
		u := &cfg.Systemd.Units[i]
		if u.Name != unit || u.Contents == nil {
			continue
		}
		text, err := edit(*u.Contents)
		if err != nil {
			return fmt.Errorf("%s: unit %s: %w", isoPath, unit, err)
		}
		u.Contents = &text
		found = true
	}
	if !found {
		return fmt.Errorf("%s: the Ignition config has no unit %s with contents", isoPath, unit)
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	var extra []isoeditor.InitrdFile
	for i, file := range files {
		if i != cfgIdx {
			extra = append(extra, file)
		}
	}
	archive, err := isoeditor.IgnitionArchive(b, extra...)
	if err != nil {
		return err
	}
	return e2e.EmbedIgnitionArchive(isoPath, archive)
}

// AddPodmanFlag returns an edit that adds flag right after "podman run" on
// every line that has it.
func AddPodmanFlag(flag string) func(string) (string, error) {
	return func(text string) (string, error) {
		if !strings.Contains(text, "/usr/bin/podman run ") {
			return "", fmt.Errorf("no /usr/bin/podman run command")
		}
		return strings.ReplaceAll(text, "/usr/bin/podman run ", "/usr/bin/podman run "+flag+" "), nil
	}
}
