// Package output is agentiso's one convention for machine-readable output:
// -o json or -o yaml (as kubectl and oc) on every command that prints data,
// the same encoding everywhere, and the deprecated flags that still select
// it.
package output

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// Format is what a command prints its data as.
type Format string

// The formats. Text, the default, is for people: its layout may change
// between releases; JSON and YAML are for scripts and keep their fields.
const (
	Text Format = ""
	JSON Format = "json"
	YAML Format = "yaml"
)

// Flag is the name of the output flag, -o its shorthand.
const Flag = "output"

// Formats are the values -o takes (completed by the shell).
var Formats = []string{string(JSON), string(YAML)}

// annotation marks a deprecated alias of -o; its value is the -o value the
// alias stands for.
const annotation = "agentiso.output.alias"

type formatValue struct{ f *Format }

func (v formatValue) String() string { return string(*v.f) }
func (v formatValue) Type() string   { return "format" }

// Set accepts json and yaml, and text (the default, for people, which
// config view and release info took before -o was everywhere).
func (v formatValue) Set(s string) error {
	switch strings.ToLower(s) {
	case "json":
		*v.f = JSON
	case "yaml", "yml":
		*v.f = YAML
	case "text", "":
		*v.f = Text
	default:
		return fmt.Errorf("want %s (without -o: text for people)", strings.Join(Formats, " or "))
	}
	return nil
}

// AddFlag declares -o/--output on cmd, writing the choice into f, with
// shell completion of its values. what says what is printed in that
// format ("the ISO's information").
func AddFlag(cmd *cobra.Command, f *Format, what string) { add(cmd, cmd.Flags(), f, what) }

// AddPersistentFlag is AddFlag for cmd and every command under it.
func AddPersistentFlag(cmd *cobra.Command, f *Format, what string) {
	add(cmd, cmd.PersistentFlags(), f, what)
}

func add(cmd *cobra.Command, fs *pflag.FlagSet, f *Format, what string) {
	fl := fs.VarPF(formatValue{f}, Flag, "o", "print "+what+" as json or yaml, for scripts (default: text for people)")
	fl.DefValue = ""
	_ = cmd.RegisterFlagCompletionFunc(Flag, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return Formats, cobra.ShellCompDirectiveNoFileComp
	})
}

type aliasValue struct {
	f  *Format
	to Format
}

func (v aliasValue) String() string   { return fmt.Sprint(*v.f == v.to) }
func (v aliasValue) Type() string     { return "bool" }
func (v aliasValue) IsBoolFlag() bool { return true }

func (v aliasValue) Set(s string) error {
	switch s {
	case "true":
		*v.f = v.to
	case "false":
	default:
		return fmt.Errorf("want true or false")
	}
	return nil
}

// AddJSONAlias declares --json on cmd: the flag that selected JSON before
// -o did, hidden and deprecated, still working (Deprecations warns).
func AddJSONAlias(cmd *cobra.Command, f *Format) {
	fl := cmd.Flags().VarPF(aliasValue{f, JSON}, "json", "", "deprecated: use -o json")
	fl.NoOptDefVal = "true"
	fl.DefValue = "false"
	fl.Hidden = true
	fl.Annotations = map[string][]string{annotation: {string(JSON)}}
}

// IsAlias reports whether the flag is a deprecated alias of -o.
func IsAlias(f *pflag.Flag) bool {
	_, ok := f.Annotations[annotation]
	return ok
}

// Deprecations returns a warning for each deprecated alias of -o given in
// fs, naming its replacement. (pflag's own deprecation notice would go to
// standard output, into the very JSON a script reads.)
func Deprecations(fs *pflag.FlagSet) []string {
	var out []string
	fs.Visit(func(f *pflag.Flag) {
		if v, ok := f.Annotations[annotation]; ok && len(v) == 1 {
			out = append(out, fmt.Sprintf("--%s is deprecated and will be removed: use -o %s", f.Name, v[0]))
		}
	})
	return out
}

// Write prints v in format f: indented JSON, or YAML with the JSON field
// names. Text is the caller's own layout, not this function's.
func Write(w io.Writer, f Format, v any) error {
	switch f {
	case JSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case YAML:
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("output: no encoding for format %q", f)
}

// FromArgs is the format asked for in args (-o, --output, or the --json
// alias), read apart from the command's other flags: for a command whose
// line failed to parse before -o was reached (an unknown flag before it),
// and which still owes a script its object. Text when none, or none valid.
func FromArgs(args []string) Format {
	var f Format
	fs := pflag.NewFlagSet("output", pflag.ContinueOnError)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	fs.SetOutput(io.Discard)
	fs.VarP(formatValue{&f}, Flag, "o", "")
	fs.Var(aliasValue{&f, JSON}, "json", "")
	fs.Lookup("json").NoOptDefVal = "true"
	if err := fs.Parse(args); err != nil {
		return Text
	}
	return f
}
