package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// CasesEnv names the environment variable that points the boot test at a
// JSON file of ISOs to boot (see docs/e2e.md), e.g. agent ISOs made by
// `agentiso create image` from the example directories.
const CasesEnv = "AGENTISO_E2E_CASES"

// Case is one ISO to boot and what it must show. Relative paths are relative
// to the cases file's directory.
type Case struct {
	Name string `json:"name"`
	ISO  string `json:"iso"`
	// IgnitionFile is the Ignition config that was embedded; its sha256
	// becomes Expect.IgnitionSHA256. Give this or ignitionSHA256, not both.
	IgnitionFile string `json:"ignitionFile,omitempty"`
	// Modes are e.g. "bios-cdrom", "uefi-cdrom", "bios-disk", "uefi-disk";
	// default: bios-cdrom and uefi-cdrom.
	Modes []string `json:"modes,omitempty"`
	Expect
	modes []Mode
}

// BootModes returns the parsed modes of a loaded case.
func (c Case) BootModes() []Mode { return c.modes }

// ParseMode parses "bios-cdrom"-style mode names.
func ParseMode(s string) (Mode, error) {
	for _, m := range AllModes() {
		if m.String() == s {
			return m, nil
		}
	}
	return Mode{}, fmt.Errorf("unknown boot mode %q: want bios-cdrom, uefi-cdrom, bios-disk or uefi-disk", s)
}

// LoadCases reads and validates a cases file: a JSON array of Case.
func LoadCases(path string) ([]Case, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseCases(raw, filepath.Dir(path))
}

// ParseCases parses a cases file's content; base resolves relative paths.
// An empty list is an error: a run that boots nothing proves nothing.
func ParseCases(raw []byte, base string) ([]Case, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var cases []Case
	if err := dec.Decode(&cases); err != nil {
		return nil, fmt.Errorf("cases file: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("cases file: trailing data after the JSON array")
	}
	if len(cases) == 0 {
		return nil, errors.New("cases file: no cases: list at least one {\"name\", \"iso\", ...}")
	}
	names := map[string]bool{}
	for i := range cases {
		c := &cases[i]
		where := fmt.Sprintf("cases file: case %d (%q)", i, c.Name)
		if c.Name == "" || strings.ContainsAny(c.Name, "/ \t\n") {
			return nil, fmt.Errorf("%s: field name must be non-empty without slashes or spaces", where)
		}
		if names[c.Name] {
			return nil, fmt.Errorf("%s: duplicate name", where)
		}
		names[c.Name] = true
		if c.ISO == "" {
			return nil, fmt.Errorf("%s: field iso is required", where)
		}
		c.ISO = resolve(base, c.ISO)
		switch {
		case c.IgnitionFile != "" && c.IgnitionSHA256 != "":
			return nil, fmt.Errorf("%s: give ignitionFile or ignitionSHA256, not both", where)
		case c.IgnitionFile != "":
			c.IgnitionFile = resolve(base, c.IgnitionFile)
			if st, err := os.Stat(c.IgnitionFile); err != nil || !st.Mode().IsRegular() {
				return nil, fmt.Errorf("%s: field ignitionFile: %s is not a readable regular file", where, c.IgnitionFile)
			}
			b, err := os.ReadFile(c.IgnitionFile)
			if err != nil {
				return nil, fmt.Errorf("%s: field ignitionFile: %w", where, err)
			}
			sum := sha256.Sum256(b)
			c.IgnitionSHA256 = hex.EncodeToString(sum[:])
		case c.IgnitionSHA256 != "":
			if !isSHA256(strings.ToLower(c.IgnitionSHA256)) {
				return nil, fmt.Errorf("%s: field ignitionSHA256 must be 64 hex digits", where)
			}
		}
		for _, p := range append(append(append([]string(nil), c.Paths...), c.AbsentPaths...), keys(c.Files)...) {
			if !strings.HasPrefix(p, "/") {
				return nil, fmt.Errorf("%s: guest path %q must be absolute", where, p)
			}
		}
		for p, sum := range c.Files {
			if !isSHA256(strings.ToLower(sum)) {
				return nil, fmt.Errorf("%s: files[%q] must be 64 hex digits", where, p)
			}
		}
		if len(c.Modes) == 0 {
			c.modes = CDModes()
		}
		for _, s := range c.Modes {
			m, err := ParseMode(s)
			if err != nil {
				return nil, fmt.Errorf("%s: field modes: %w", where, err)
			}
			c.modes = append(c.modes, m)
		}
	}
	return cases, nil
}

func resolve(base, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(base, p)
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
