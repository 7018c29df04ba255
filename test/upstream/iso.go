package upstream

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_2/types"

	"github.com/seed-a052040e/agentiso/test/live"
)

// ISO is what an agent Ignition config written by agentiso holds: its files
// by path and its systemd units by name.
type ISO struct {
	Files map[string][]byte
	Modes map[string]int
	Units map[string]string
}

// ReadIgnition reads an Ignition config (agentiso create ignition's
// agent.ign).
func ReadIgnition(path string) (*ISO, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cfg types.Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	iso := &ISO{Files: map[string][]byte{}, Modes: map[string]int{}, Units: map[string]string{}}
	for _, f := range cfg.Storage.Files {
		data, err := live.FileContents(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		iso.Files[f.Path] = data
		if f.Mode != nil {
			iso.Modes[f.Path] = *f.Mode
		}
	}
	for _, u := range cfg.Systemd.Units {
		if u.Contents != nil {
			iso.Units[u.Name] = *u.Contents
		}
	}
	return iso, nil
}

// EnvFile parses the ISO's env file at path.
func (iso *ISO) EnvFile(path string) (Env, error) {
	b, ok := iso.Files[path]
	if !ok {
		return Env{}, fmt.Errorf("the Ignition config has no %s", path)
	}
	return ParseEnvFile(b, path)
}

// UnitEnv returns the Environment= settings of the ISO's unit name.
func (iso *ISO) UnitEnv(name string) (Env, error) {
	u, ok := iso.Units[name]
	if !ok {
		return Env{}, fmt.Errorf("the Ignition config has no unit %s", name)
	}
	return UnitEnvironment(u, name)
}

// PodmanRun is what the podman run command in a unit's ExecStart= passes
// into the container's environment.
type PodmanRun struct {
	// EnvFiles are the --env-file= paths, in order.
	EnvFiles []string
	// Set holds the -e/--env KEY=VALUE settings.
	Set Env
	// Pass names the -e/--env NAME options: the unit's own value of NAME.
	Pass []string
}

// Podman reads the podman run command in the ExecStart= of the ISO's unit
// name (flags as "--flag=value" or "--flag value"; no quoting).
func (iso *ISO) Podman(name string) (PodmanRun, error) {
	u, ok := iso.Units[name]
	if !ok {
		return PodmanRun{}, fmt.Errorf("the Ignition config has no unit %s", name)
	}
	var pr PodmanRun
	found := false
	for _, line := range strings.Split(u, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "ExecStart=")
		if !ok || !strings.Contains(rest, "podman run") {
			continue
		}
		found = true
		f := strings.Fields(rest)
		for i := 0; i < len(f); i++ {
			var flag, val string
			switch {
			case strings.HasPrefix(f[i], "--env-file="), strings.HasPrefix(f[i], "--env="):
				flag, val, _ = strings.Cut(f[i], "=")
			case f[i] == "--env-file", f[i] == "--env", f[i] == "-e":
				if i+1 >= len(f) {
					return PodmanRun{}, fmt.Errorf("%s: %s without a value", name, f[i])
				}
				flag, val = f[i], f[i+1]
				i++
			default:
				continue
			}
			switch {
			case flag == "--env-file":
				pr.EnvFiles = append(pr.EnvFiles, val)
			case strings.Contains(val, "="):
				k, v, _ := strings.Cut(val, "=")
				pr.Set.Set(k, v)
			default:
				pr.Pass = append(pr.Pass, val)
			}
		}
	}
	if !found {
		return PodmanRun{}, fmt.Errorf("%s: no podman run in ExecStart=", name)
	}
	return pr, nil
}

// UnitEnvFiles returns the EnvironmentFile= paths of the ISO's unit name, in
// order ("-" prefixes, meaning optional, are kept).
func (iso *ISO) UnitEnvFiles(name string) ([]string, error) {
	u, ok := iso.Units[name]
	if !ok {
		return nil, fmt.Errorf("the Ignition config has no unit %s", name)
	}
	var out []string
	for _, line := range strings.Split(u, "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "EnvironmentFile="); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// WriteTree writes every file of the ISO whose path starts with prefix
// under root (root+path), with its mode, and returns how many.
func (iso *ISO) WriteTree(root, prefix string) (int, error) {
	n := 0
	for p, data := range iso.Files {
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		dst := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return n, err
		}
		mode := os.FileMode(0o644)
		if m, ok := iso.Modes[p]; ok {
			mode = os.FileMode(m)
		}
		if err := os.WriteFile(dst, data, mode); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
