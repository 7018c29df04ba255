package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	yaml3 "go.yaml.in/yaml/v3"

	"github.com/seed-a052040e/agentiso/internal/suggest"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
)

// MaxFileSize bounds the config file, as every other input file (see
// docs/inputs.md, Input limits).
const MaxFileSize = 4 << 20

// File is a parsed config file: one YAML mapping from keys named like the
// flags to single values.
type File struct {
	Path   string
	values map[string]string
	lines  map[string]int
}

// Schema says which keys a config file may hold.
type Schema struct {
	// Keys are the valid keys: the flags of every command.
	Keys []string
	// Refused are flags that exist but cannot be set in a file, each with
	// the reason.
	Refused map[string]string
}

// Keys returns the keys the file sets, sorted.
func (f *File) Keys() []string {
	keys := make([]string, 0, len(f.values))
	for k := range f.values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Line returns the line of key in the file (0 when it is not there).
func (f *File) Line(key string) int { return f.lines[key] }

// Location is where the config file is looked for, and whether it must
// exist.
type Location struct {
	Path string
	// Origin is "--config", "$AGENTISO_CONFIG" or "default".
	Origin string
	// Required is true for a file named with --config or $AGENTISO_CONFIG:
	// its absence is an error; the default file is optional.
	Required bool
}

// Locate finds the config file: flagValue when --config was given, else
// $AGENTISO_CONFIG, else the default path (see DefaultPath); Path is ""
// when there is no default path (no home directory).
func Locate(flagValue string, flagGiven bool) (Location, error) {
	env := EnvVar("config")
	switch {
	case flagGiven && flagValue == "":
		return Location{}, errors.New("--config needs a file name")
	case flagGiven:
		return Location{Path: flagValue, Origin: "--config", Required: true}, nil
	case os.Getenv(env) != "":
		return Location{Path: os.Getenv(env), Origin: "$" + env, Required: true}, nil
	}
	p, err := DefaultPath()
	if err != nil {
		// No home directory: there is no default file.
		return Location{Origin: "default"}, nil
	}
	return Location{Path: p, Origin: "default"}, nil
}

// DefaultPath is $XDG_CONFIG_HOME/agentiso/config.yaml when XDG_CONFIG_HOME
// is set (on every system), else agentiso/config.yaml under the system's
// user configuration directory (os.UserConfigDir: ~/.config on Linux,
// ~/Library/Application Support on macOS).
func DefaultPath() (string, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) {
		var err error
		if dir, err = os.UserConfigDir(); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, "agentiso", "config.yaml"), nil
}

// Load reads the config file at loc: nil when it is the default one and
// does not exist. Only a regular file of at most MaxFileSize is read.
func Load(loc Location, schema Schema) (*File, error) {
	if loc.Path == "" {
		return nil, nil
	}
	b, err := fsutil.ReadRegular(loc.Path, MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) && !loc.Required {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config file (from %s): %w", loc.Origin, err)
	}
	return Parse(loc.Path, b, schema)
}

// Parse reads a config file's content: a YAML mapping (or nothing) whose
// keys are in schema and whose values are single values. Every problem is
// reported at once, each with file, line and key.
func Parse(path string, data []byte, schema Schema) (*File, error) {
	doc, err := manifests.ParseDocument(path, data)
	if err != nil {
		return nil, fmt.Errorf("config file %w", err)
	}
	f := &File{Path: path, values: map[string]string{}, lines: map[string]int{}}
	if doc == nil || len(doc.Content) == 0 {
		return f, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml3.ScalarNode && root.Tag == "!!null" {
		return f, nil
	}
	if root.Kind != yaml3.MappingNode {
		return nil, fmt.Errorf("config file %w", &manifests.FileError{File: path, Line: root.Line,
			Msg: "expected a YAML mapping of keys named like the flags (release-image: ...)"})
	}
	valid := map[string]bool{}
	for _, k := range schema.Keys {
		valid[k] = true
	}
	var errs manifests.ErrorList
	bad := func(n *yaml3.Node, key, typ, detail string) {
		errs = append(errs, &manifests.FieldError{File: path, Line: n.Line, Path: key, Type: typ, Detail: detail})
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		key := k.Value
		switch {
		case k.Kind != yaml3.ScalarNode:
			bad(k, "", manifests.TypeInvalid, "a key must be a flag name")
			continue
		case schema.Refused[key] != "":
			bad(k, key, manifests.TypeForbidden, schema.Refused[key])
			continue
		case !valid[key]:
			detail := "not a flag of any agentiso command"
			if s := suggest.Closest(key, schema.Keys); s != "" {
				detail += fmt.Sprintf(", did you mean %q?", s)
			}
			bad(k, key, manifests.TypeUnknown, detail)
			continue
		case f.lines[key] != 0:
			bad(k, key, manifests.TypeDuplicate, fmt.Sprintf("the key is already set on line %d", f.lines[key]))
			continue
		}
		f.lines[key] = k.Line
		switch {
		case v.Kind == yaml3.ScalarNode && v.Tag == "!!null":
			bad(v, key, manifests.TypeRequired, "the key has no value; remove it to use the default")
		case v.Kind != yaml3.ScalarNode:
			bad(v, key, manifests.TypeInvalid, "must be a single value (a string, a number or true/false), as the flag takes")
		default:
			f.values[key] = v.Value
		}
	}
	switch len(errs) {
	case 0:
		return f, nil
	case 1:
		return nil, fmt.Errorf("config file %w", errs[0])
	}
	return nil, fmt.Errorf("config file %s: %w", path, errs)
}
