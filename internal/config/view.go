package config

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/internal/redact"
	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

// ViewedSetting is one row of a View: a setting and the environment
// variable that sets it.
type ViewedSetting struct {
	Setting
	Env string `json:"env"`
	// Means says what an empty or zero default does, resolved ("the
	// release's RHCOS live ISO: ...", "60m to bootstrap, ..."); the text
	// view shows it instead of the raw value.
	Means string `json:"means,omitempty"`
}

// View describes the effective settings (agentiso config view): the config
// file, the command they are for, every setting with its value and its
// source, and the AGENTISO_ variables that set nothing.
type View struct {
	ConfigFile struct {
		Path  string `json:"path"`
		From  string `json:"from"`
		Found bool   `json:"found"`
	} `json:"configFile"`
	Command  string          `json:"command,omitempty"`
	Settings []ViewedSetting `json:"settings"`
	// Defaults counts the settings left out, without a command, because
	// they are at their defaults.
	Defaults int `json:"defaultsNotShown,omitempty"`
	// IgnoredEnv are AGENTISO_ variables that set nothing (misspelt?).
	IgnoredEnv []IgnoredEnv `json:"ignoredEnv,omitempty"`
}

// NewView describes settings (the first of each key counts), their values
// redacted, sorted by key, for command ("" for every command) with the
// config file at loc (found: it was read), and the AGENTISO_ variables that
// set nothing (UnknownEnv).
func NewView(loc Location, found bool, command string, settings []Setting, ignored []IgnoredEnv) *View {
	v := &View{Command: command, IgnoredEnv: ignored}
	v.ConfigFile.Path, v.ConfigFile.From, v.ConfigFile.Found = loc.Path, loc.Origin, found
	seen := map[string]bool{}
	for _, s := range settings {
		if seen[s.Key] {
			continue
		}
		seen[s.Key] = true
		s.Value = redactValue(s.Value)
		v.Settings = append(v.Settings, ViewedSetting{Setting: s, Env: EnvVar(s.Key)})
	}
	sort.Slice(v.Settings, func(i, j int) bool { return v.Settings[i].Key < v.Settings[j].Key })
	return v
}

// redactValue hides what a value can carry as a secret: the password of a
// URL's user information and the values of its query (tokens, signed
// URLs); internal/redact, which every printed URL goes through.
func redactValue(v string) string { return redact.URL(v) }

// Write prints the view as format: "json", "yaml", or a table ("text").
// Values from outside agentiso are escaped (internal/termsafe).
func (v *View) Write(w io.Writer, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	file := v.ConfigFile.Path
	switch {
	case file == "":
		file = "none (no home directory)"
	case !v.ConfigFile.Found:
		file += " (" + v.ConfigFile.From + ", not found)"
	default:
		file += " (" + v.ConfigFile.From + ")"
	}
	fmt.Fprintf(w, "Config file: %s\n", termsafe.String(file))
	if v.Command != "" {
		fmt.Fprintf(w, "Command:     %s\n", v.Command)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
	for _, s := range v.Settings {
		val := termsafe.String(s.Value)
		switch {
		case s.Means != "":
			val = s.Means
		case val == "" || strings.ContainsAny(val, " "):
			val = fmt.Sprintf("%q", s.Value)
		}
		src := string(s.Source)
		if s.Source != FromDefault {
			src += " " + termsafe.String(s.Origin)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Key, val, src)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if v.Defaults > 0 {
		fmt.Fprintf(w, "\n%d more settings are at their defaults: 'agentiso config view create image' (or any other\ncommand) shows every setting of one command, resolved.\n", v.Defaults)
	}
	if len(v.IgnoredEnv) > 0 {
		fmt.Fprintf(w, "\nIgnored environment variables (they set nothing):\n")
	}
	for _, e := range v.IgnoredEnv {
		line := "  " + termsafe.String(e.Name)
		if e.DidYouMean != "" {
			line += ": did you mean " + e.DidYouMean + "?"
		}
		fmt.Fprintln(w, line)
	}
	return nil
}
