// Package config layers agentiso's settings. Every flag a command reads
// through it can also be set by the environment variable AGENTISO_<FLAG>
// (upper case, "-" as "_": AGENTISO_RELEASE_IMAGE for --release-image) and
// by the key of the same name in the config file. A flag given on the
// command line wins over the environment, which wins over the file, which
// wins over the flag's default. One viper instance is built per command
// invocation: nothing is global.
package config

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/seed-a052040e/agentiso/internal/suggest"
)

// EnvPrefix starts the environment variable of every key.
const EnvPrefix = "AGENTISO"

// EnvVar returns the environment variable that sets key:
// "release-image" is AGENTISO_RELEASE_IMAGE.
func EnvVar(key string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(key, "-", "_"))
}

// Source says which layer a setting's value came from.
type Source string

// The layers, strongest first.
const (
	FromFlag    Source = "flag"
	FromEnv     Source = "env"
	FromFile    Source = "file"
	FromDefault Source = "default"
)

// Setting is the effective value of one key and where it came from.
type Setting struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source Source `json:"source"`
	// Origin names the exact place: "--release-image",
	// "$AGENTISO_RELEASE_IMAGE", "/home/u/.config/agentiso/config.yaml:3"
	// or "default".
	Origin string `json:"origin"`
}

// Place names where s came from, for a message: the flag or the variable
// (its Origin), or "config file PATH:LINE"; "" for a default.
func (s Setting) Place() string {
	switch s.Source {
	case FromFlag, FromEnv:
		return s.Origin
	case FromFile:
		return "config file " + s.Origin
	}
	return ""
}

// Layers resolves keys through the command line, then the environment,
// then the config file, then the flags' defaults.
type Layers struct {
	v    *viper.Viper
	file *File
}

// New returns the layers of one command invocation; file may be nil (no
// config file).
func New(file *File) (*Layers, error) {
	v := viper.New()
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	if file != nil {
		m := make(map[string]any, len(file.values))
		for k, val := range file.values {
			m[k] = val
		}
		if err := v.MergeConfigMap(m); err != nil {
			return nil, fmt.Errorf("config file %s: %w", file.Path, err)
		}
	}
	return &Layers{v: v, file: file}, nil
}

// Resolve reports the effective value of every flag in fs, without
// changing any.
func (l *Layers) Resolve(fs *pflag.FlagSet) ([]Setting, error) {
	if err := l.v.BindPFlags(fs); err != nil {
		return nil, err
	}
	var out []Setting
	fs.VisitAll(func(f *pflag.Flag) {
		out = append(out, l.setting(f))
	})
	return out, nil
}

// Apply sets every flag of fs that the command line left unset to its
// value from the environment or the config file, and returns the settings
// of all of them. A
// value the flag does not accept is an error naming where it came from.
func (l *Layers) Apply(fs *pflag.FlagSet) ([]Setting, error) {
	settings, err := l.Resolve(fs)
	if err != nil {
		return nil, err
	}
	for _, s := range settings {
		if s.Source == FromFlag || s.Source == FromDefault {
			continue
		}
		if err := fs.Set(s.Key, s.Value); err != nil {
			return nil, fmt.Errorf("%s: invalid value %q for --%s: %w", s.Origin, s.Value, s.Key, err)
		}
	}
	return settings, nil
}

// setting finds where f's value comes from, in viper's order of
// precedence, and the value viper resolves for it.
func (l *Layers) setting(f *pflag.Flag) Setting {
	s := Setting{Key: f.Name, Value: l.v.GetString(f.Name), Source: FromDefault, Origin: "default"}
	switch {
	case f.Changed:
		s.Source, s.Origin = FromFlag, "--"+f.Name
	case os.Getenv(EnvVar(f.Name)) != "":
		s.Source, s.Origin = FromEnv, "$"+EnvVar(f.Name)
	case l.v.InConfig(f.Name):
		s.Source, s.Origin = FromFile, fmt.Sprintf("%s:%d", l.file.Path, l.file.Line(f.Name))
	}
	return s
}

// FileKey is the setting that names the config file: read from the
// command line (--config) or $AGENTISO_CONFIG only, never from a file.
const FileKey = "config"

// IgnoredEnv is an AGENTISO_ variable no key reads, with the closest one.
type IgnoredEnv struct {
	Name       string `json:"name"`
	DidYouMean string `json:"didYouMean,omitempty"`
}

// UnknownEnv returns, sorted by name, the AGENTISO_ variables of environ
// ("NAME=value" entries, as os.Environ) that are not empty and set none of
// keys nor the config file (FileKey): most likely misspelt, as they are
// otherwise ignored. Each comes with the variable it most likely misspells,
// if one is close. config view lists them; every command warns about the
// misspelt ones.
func UnknownEnv(environ []string, keys []string) []IgnoredEnv {
	known := map[string]bool{EnvVar(FileKey): true}
	names := []string{EnvVar(FileKey)}
	for _, k := range keys {
		known[EnvVar(k)] = true
		names = append(names, EnvVar(k))
	}
	var out []IgnoredEnv
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, EnvPrefix+"_") && !known[name] && value != "" {
			out = append(out, IgnoredEnv{Name: name, DidYouMean: suggest.Closest(name, names)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
