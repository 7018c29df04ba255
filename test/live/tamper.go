package live

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_2/types"

	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
	"github.com/seed-a052040e/agentiso/test/e2e"
)

// EditConfig rewrites, in place, the Ignition config embedded in the agent
// ISO at isoPath: edit changes the decoded config. The other files of the
// embed area are kept. Negative controls use it to put back a defect the
// ISO must not carry.
func EditConfig(isoPath string, edit func(*types.Config) error) error {
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
	if err := edit(&cfg); err != nil {
		return fmt.Errorf("%s: %w", isoPath, err)
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

// EditUnit rewrites the contents of systemd unit `unit` in the agent ISO at
// isoPath: edit gets the unit's text and returns the new one.
func EditUnit(isoPath, unit string, edit func(string) (string, error)) error {
	return EditConfig(isoPath, func(cfg *types.Config) error {
		found := false
		for i := range cfg.Systemd.Units {
			u := &cfg.Systemd.Units[i]
			if u.Name != unit || u.Contents == nil {
				continue
			}
			text, err := edit(*u.Contents)
			if err != nil {
				return fmt.Errorf("unit %s: %w", unit, err)
			}
			u.Contents = &text
			found = true
		}
		if !found {
			return fmt.Errorf("the Ignition config has no unit %s with contents", unit)
		}
		return nil
	})
}

// EditFiles rewrites every storage file of the agent ISO at isoPath for
// which edit returns changed contents; edit gets the path and the decoded
// contents. It fails when no file changed.
func EditFiles(isoPath string, edit func(path string, data []byte) ([]byte, error)) error {
	return EditConfig(isoPath, func(cfg *types.Config) error {
		changed := 0
		for i := range cfg.Storage.Files {
			f := &cfg.Storage.Files[i]
			data, err := FileContents(*f)
			if err != nil {
				return err
			}
			out, err := edit(f.Path, data)
			if err != nil {
				return fmt.Errorf("%s: %w", f.Path, err)
			}
			if bytes.Equal(out, data) {
				continue
			}
			src := "data:;base64," + base64.StdEncoding.EncodeToString(out)
			f.Contents = types.Resource{Source: &src}
			f.Append = nil
			changed++
		}
		if changed == 0 {
			return fmt.Errorf("no file of the Ignition config changed")
		}
		return nil
	})
}

// FileContents decodes a storage file of an Ignition config (a data URL,
// base64 or not, gzip-compressed or not; appended parts are concatenated).
func FileContents(f types.File) ([]byte, error) {
	parts := []types.Resource{f.Contents}
	if f.Contents.Source == nil {
		parts = nil
		for _, a := range f.Append {
			parts = append(parts, types.Resource{Source: a.Source, Compression: a.Compression})
		}
	}
	var out []byte
	for _, r := range parts {
		if r.Source == nil {
			continue
		}
		b, err := decodeDataURL(*r.Source)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		if r.Compression != nil && *r.Compression == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				return nil, fmt.Errorf("%s: gzip: %w", f.Path, err)
			}
			if b, err = io.ReadAll(zr); err != nil {
				return nil, fmt.Errorf("%s: gzip: %w", f.Path, err)
			}
		}
		out = append(out, b...)
	}
	return out, nil
}

func decodeDataURL(src string) ([]byte, error) {
	rest, ok := strings.CutPrefix(src, "data:")
	if !ok {
		return nil, fmt.Errorf("not a data URL: %.40q", src)
	}
	header, payload, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, fmt.Errorf("data URL without a comma: %.40q", src)
	}
	if strings.HasSuffix(header, ";base64") {
		b, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			return nil, fmt.Errorf("data URL: %w", err)
		}
		return b, nil
	}
	// data URLs are percent-encoded, not form-encoded: "+" stays.
	s, err := url.PathUnescape(payload)
	if err != nil {
		return nil, fmt.Errorf("data URL: %w", err)
	}
	return []byte(s), nil
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

// ReplaceAll returns a file edit that replaces old with new everywhere.
func ReplaceAll(old, new string) func(string, []byte) ([]byte, error) {
	return func(_ string, data []byte) ([]byte, error) {
		return bytes.ReplaceAll(data, []byte(old), []byte(new)), nil
	}
}

// Requirements are what the lab's guests offer the real assisted-service's
// host validations.
type Requirements struct {
	CPUCores, RAMMiB, DiskGB int
	// DisabledValidations are host validation IDs the lab cannot satisfy.
	DisabledValidations []string
}

// HWScriptPath and ServiceEnvPath are the ISO's own mechanisms for the
// requirements: the script that writes HW_VALIDATOR_REQUIREMENTS into the
// env file before assisted-service starts, and that env file, which also
// carries DISABLED_HOST_VALIDATIONS.
const (
	HWScriptPath   = "/usr/local/bin/configure-assisted-hw-requirements.sh"
	ServiceEnvPath = "/usr/local/share/assisted-service/assisted-service.env"
)

// hwMarker is the line of the script before which the lab lowers the
// requirements it computed.
const hwMarker = `tmp=$(mktemp "${env_file}.XXXXXX")`

// LowerRequirements edits the agent ISO at isoPath: the requirements script
// caps every role's cpu_cores, ram_mib and disk_size_gb at r (with jq, after
// the script computed them, so nothing it asks for less is raised), and
// r.DisabledValidations join DISABLED_HOST_VALIDATIONS. It returns a
// description of what was lowered, for the test log.
func LowerRequirements(isoPath string, r Requirements) (string, error) {
	capExpr := fmt.Sprintf(`map(with_entries(if .key == "version" then . else .value |= (.cpu_cores = ([.cpu_cores, %d] | min) | .ram_mib = ([.ram_mib, %d] | min) | .disk_size_gb = ([.disk_size_gb, %d] | min)) end))`,
		r.CPUCores, r.RAMMiB, r.DiskGB)
	err := EditFiles(isoPath, func(path string, data []byte) ([]byte, error) {
		switch path {
		case HWScriptPath:
			if !bytes.Contains(data, []byte(hwMarker)) {
				return nil, fmt.Errorf("no line %q to lower the requirements before", hwMarker)
			}
			line := "# live lab: the guests are small (test/live LowerRequirements)\nrequirements=$(jq -c '" + capExpr + "' <<<\"${requirements}\")\necho \"live lab: lowered HW_VALIDATOR_REQUIREMENTS to ${requirements}\" >&2\n"
			return bytes.Replace(data, []byte(hwMarker), []byte(line+hwMarker), 1), nil
		case ServiceEnvPath:
			if len(r.DisabledValidations) == 0 {
				return data, nil
			}
			lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
			found := false
			for i, l := range lines {
				if v, ok := strings.CutPrefix(l, "DISABLED_HOST_VALIDATIONS="); ok {
					found = true
					ids := slices.DeleteFunc(strings.Split(v, ","), func(s string) bool { return s == "" })
					lines[i] = "DISABLED_HOST_VALIDATIONS=" + strings.Join(append(ids, r.DisabledValidations...), ",")
				}
			}
			if !found {
				lines = append(lines, "DISABLED_HOST_VALIDATIONS="+strings.Join(r.DisabledValidations, ","))
			}
			return []byte(strings.Join(lines, "\n") + "\n"), nil
		}
		return data, nil
	})
	if err != nil {
		return "", err
	}
	desc := fmt.Sprintf("HW_VALIDATOR_REQUIREMENTS capped at cpu_cores=%d ram_mib=%d disk_size_gb=%d for every role (%s)", r.CPUCores, r.RAMMiB, r.DiskGB, HWScriptPath)
	if len(r.DisabledValidations) > 0 {
		desc += "; DISABLED_HOST_VALIDATIONS += " + strings.Join(r.DisabledValidations, ",") + " (" + ServiceEnvPath + ")"
	}
	return desc, nil
}

// NMStateConfigPath is where the ISO carries the NMStateConfig manifests
// that agent-installer-client registerInfraEnv reads.
const NMStateConfigPath = "/etc/assisted/manifests/nmstateconfig.yaml"

// AddNMStateConfigLabel returns a file edit that adds the label key: value to
// every NMStateConfig's metadata.labels, so that they no longer equal the
// InfraEnv's nmStateConfigLabelSelector (what agentiso itself refuses to
// write).
func AddNMStateConfigLabel(key, value string) func(string, []byte) ([]byte, error) {
	return func(path string, data []byte) ([]byte, error) {
		if path != NMStateConfigPath {
			return data, nil
		}
		const labels = "\n  labels:\n"
		if !bytes.Contains(data, []byte(labels)) {
			return nil, fmt.Errorf("no metadata.labels block (%q) to add a label to", strings.TrimSpace(labels))
		}
		return bytes.ReplaceAll(data, []byte(labels), []byte(fmt.Sprintf("%s    %s: %q\n", labels, key, value))), nil
	}
}

// SetInstallerArgs returns a file edit that replaces every host's
// installer-args.json with args (a JSON array), bypassing agentiso's own
// check of the flags.
func SetInstallerArgs(args ...string) func(string, []byte) ([]byte, error) {
	return func(path string, data []byte) ([]byte, error) {
		if !strings.HasPrefix(path, "/etc/assisted/hostconfig/") || !strings.HasSuffix(path, "/installer-args.json") {
			return data, nil
		}
		return json.Marshal(args)
	}
}

// SetStartTimeout returns a unit edit that sets every TimeoutStartSec= to
// d (systemd syntax, e.g. "30min"). The lab's TCG guests pull the real
// images far slower than hardware: the units that pull them get the time.
func SetStartTimeout(d string) func(string) (string, error) {
	return func(text string) (string, error) {
		lines := strings.Split(text, "\n")
		n := 0
		for i, l := range lines {
			if strings.HasPrefix(l, "TimeoutStartSec=") {
				lines[i] = "TimeoutStartSec=" + d
				n++
			}
		}
		if n == 0 {
			return "", fmt.Errorf("no TimeoutStartSec= line")
		}
		return strings.Join(lines, "\n"), nil
	}
}

// ISOFile returns the decoded contents of the storage file at path in the
// Ignition config embedded in the agent ISO at isoPath.
func ISOFile(isoPath, path string) ([]byte, error) {
	iso, f, err := isoeditor.OpenFile(isoPath)
	if err != nil {
		return nil, err
	}
	files, err := iso.EmbeddedFiles()
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", isoPath, err)
	}
	for _, file := range files {
		if file.Path != isoeditor.IgnitionConfigName {
			continue
		}
		var cfg types.Config
		if err := json.Unmarshal(file.Data, &cfg); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", isoPath, isoeditor.IgnitionConfigName, err)
		}
		for _, sf := range cfg.Storage.Files {
			if sf.Path == path {
				return FileContents(sf)
			}
		}
		return nil, fmt.Errorf("%s: the Ignition config has no file %s", isoPath, path)
	}
	return nil, fmt.Errorf("%s: no %s in the embed area", isoPath, isoeditor.IgnitionConfigName)
}

// EnvValue is the value of NAME in an environment file's NAME=value lines.
func EnvValue(env []byte, name string) (string, bool) {
	for _, l := range strings.Split(string(env), "\n") {
		if v, ok := strings.CutPrefix(l, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// CorruptBlob flips one byte of a blob inside a written ISO, in place: the
// negative control of the extended ISO, whose data image holds every blob
// of the payload once (docs/airgap.md). The blob is found by its bytes and
// must occur exactly once in the file; the byte in its middle is changed,
// so its size stays and only its digest breaks. It returns the offset of
// the changed byte.
func CorruptBlob(isoPath string, blob []byte) (int64, error) {
	if len(blob) < 64 {
		return 0, fmt.Errorf("CorruptBlob: a blob of %d bytes may occur by chance; give one of at least 64", len(blob))
	}
	f, err := os.OpenFile(isoPath, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var found []int64
	const chunk = 8 << 20
	buf := make([]byte, chunk+len(blob)-1)
	for pos := int64(0); ; pos += chunk {
		n, err := f.ReadAt(buf, pos)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("%s: %w", isoPath, err)
		}
		for from := 0; ; {
			i := bytes.Index(buf[from:n], blob)
			if i < 0 {
				break
			}
			found = append(found, pos+int64(from+i))
			from += i + 1
		}
		if n < len(buf) {
			break
		}
	}
	if len(found) != 1 {
		return 0, fmt.Errorf("%s: the blob (%d bytes) occurs %d times, want exactly once (at %v)", isoPath, len(blob), len(found), found)
	}
	off := found[0] + int64(len(blob)/2)
	b := []byte{blob[len(blob)/2] ^ 0x01}
	if _, err := f.WriteAt(b, off); err != nil {
		return 0, fmt.Errorf("%s: %w", isoPath, err)
	}
	return off, f.Sync()
}
