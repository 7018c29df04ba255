package manifests

import (
	"fmt"
	"slices"
	"strings"
)

// The coreos-installer arguments assisted-service lets a host carry
// (PATCH .../hosts/{id}/installer-args, which agentiso's
// apply-host-overrides.sh sends for hosts[].installerArgs). Read from
// assisted-service pkg/validations/validations.go (ValidateInstallerArgs,
// called by V2UpdateHostInstallerArgs in internal/bminventory/inventory.go);
// the rule is the same on release-4.18, 4.19, 4.20, 4.21, 4.22, 4.23 and
// master:
//   - an argument that starts with '-' is a flag and must be one of
//     AllowedInstallerFlags, spelled exactly (no "--flag=value" form);
//   - any other argument is a value: not empty, and made only of ASCII
//     letters, digits and installerArgValuePunct.
//
// Anything else is answered with HTTP 400, which the script that applies
// the arguments could only retry forever.

// AllowedInstallerFlags are the coreos-installer flags assisted-service
// accepts in a host's installer arguments.
var AllowedInstallerFlags = []string{"--append-karg", "--delete-karg", "-n", "--copy-network", "--network-dir",
	"--save-partlabel", "--save-partindex", "--image-url", "--image-file"}

// installerFlagsWithValue are the allowed flags that take a value (the
// next argument); -n and --copy-network take none. coreos-installer fails
// the installation when the value is missing.
var installerFlagsWithValue = []string{"--append-karg", "--delete-karg", "--network-dir",
	"--save-partlabel", "--save-partindex", "--image-url", "--image-file"}

// installerArgValuePunct is every character besides ASCII letters and
// digits that assisted-service accepts in a value. Notably absent: space
// and other whitespace, '>', '?', '&', '|', '~', '^', '`' and '\'.
const installerArgValuePunct = `@!#$%*()_+,-./:;<="'{}[]`

// InstallerArgProblem is one argument assisted-service (or coreos-installer)
// would refuse.
type InstallerArgProblem struct {
	Index int // of the argument in the list
	Msg   string
}

// CheckInstallerArgs returns the arguments of args that assisted-service
// refuses, and value-taking flags left without a value.
func CheckInstallerArgs(args []string) []InstallerArgProblem {
	var out []InstallerArgProblem
	for i, a := range args {
		if strings.HasPrefix(a, "-") {
			if !slices.Contains(AllowedInstallerFlags, a) {
				msg := fmt.Sprintf("flag %q is not one assisted-service accepts; allowed flags are %s", a, strings.Join(AllowedInstallerFlags, ", "))
				if name, _, ok := strings.Cut(a, "="); ok && slices.Contains(AllowedInstallerFlags, name) {
					msg += fmt.Sprintf("; give the value as the next list entry: [%q, %q]", name, a[len(name)+1:])
				}
				out = append(out, InstallerArgProblem{Index: i, Msg: msg})
				continue
			}
			if slices.Contains(installerFlagsWithValue, a) && (i+1 == len(args) || strings.HasPrefix(args[i+1], "-")) {
				out = append(out, InstallerArgProblem{Index: i, Msg: fmt.Sprintf("flag %s needs a value as the next list entry, e.g. [%q, \"<value>\"]", a, a)})
			}
			continue
		}
		if a == "" {
			out = append(out, InstallerArgProblem{Index: i, Msg: "empty argument; remove it"})
			continue
		}
		if bad := badValueChars(a); bad != "" {
			out = append(out, InstallerArgProblem{Index: i, Msg: fmt.Sprintf("value %q contains %s, which assisted-service refuses; a value may hold only ASCII letters, digits and %s", a, bad, installerArgValuePunct)})
		}
	}
	return out
}

// badValueChars describes the characters of v outside the accepted set,
// each once, in order ("" when there is none).
func badValueChars(v string) string {
	var bad []string
	for _, r := range v {
		ok := r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(installerArgValuePunct, r))
		if ok {
			continue
		}
		var d string
		switch r {
		case ' ':
			d = "a space"
		case '\t':
			d = "a tab"
		case '\n', '\r':
			d = "a line break"
		default:
			d = fmt.Sprintf("%q", r)
		}
		if !slices.Contains(bad, d) {
			bad = append(bad, d)
		}
	}
	return strings.Join(bad, ", ")
}
