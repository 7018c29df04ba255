// Package config layers agentiso's settings. Every flag a command reads
// through it can also be set by the environment variable AGENTISO_<FLAG>
// (upper case, "-" as "_": AGENTISO_RELEASE_IMAGE for --release-image). A
// flag given on the command line wins over the environment, which wins over
// the flag's default. One viper instance is built per command invocation:
// nothing is global.
package config

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
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
	FromDefault Source = "default"
)

// Setting is the effective value of one key and where it came from.
type Setting struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source Source `json:"source"`
	// Origin names the exact place: "--release-image",
	// "$AGENTISO_RELEASE_IMAGE" or "default".
	Origin string `json:"origin"`
}

// Layers resolves keys through the command line, then the environment,
// then the flags' defaults.
type Layers struct {
	v *viper.Viper
}

// New returns the layers of one command invocation.
func New() *Layers {
	v := viper.New()
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	return &Layers{v: v}
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
// value from the environment, and returns the settings of all of them. A
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
	}
	return s
}
