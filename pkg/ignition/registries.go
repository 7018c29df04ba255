package ignition

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// registry is one [[registry]] table of a registries.conf: a source
// location and its mirror locations, in order.
type registry struct {
	Location string
	Mirrors  []string
}

// parseRegistries reads the [[registry]] and [[registry.mirror]] location
// keys of a containers-registries.conf(5) and checks every location: a
// host[:port] optionally followed by a lower-case repository path (a
// source may start with "*." for a wildcard domain). Anything else would
// break the TOML or the hosts' pulls.
func parseRegistries(conf []byte) ([]registry, error) {
	var regs []registry
	table := ""
	for n, raw := range strings.Split(string(conf), "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") {
			table = strings.Join(strings.Fields(line), "")
			if table == "[[registry]]" {
				regs = append(regs, registry{})
			}
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("line %d: %q is not key = value", n+1, line)
		}
		if strings.TrimSpace(key) != "location" || (table != "[[registry]]" && table != "[[registry.mirror]]") {
			continue
		}
		loc, err := tomlString(strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("line %d: location: %w", n+1, err)
		}
		mirror := table == "[[registry.mirror]]"
		if err := validateLocation(loc, !mirror); err != nil {
			return nil, fmt.Errorf("line %d: location %q: %w", n+1, loc, err)
		}
		if len(regs) == 0 {
			return nil, fmt.Errorf("line %d: location outside a [[registry]] table", n+1)
		}
		r := &regs[len(regs)-1]
		if mirror {
			r.Mirrors = append(r.Mirrors, loc)
		} else {
			r.Location = loc
		}
	}
	return regs, nil
}

// tomlString decodes a TOML basic ("...") or literal ('...') string that
// fills the rest of the line (a trailing comment is allowed).
func tomlString(v string) (string, error) {
	if strings.HasPrefix(v, "'") {
		end := strings.IndexByte(v[1:], '\'')
		if end < 0 {
			return "", fmt.Errorf("unterminated string")
		}
		return v[1 : end+1], trailingComment(v[end+2:])
	}
	if !strings.HasPrefix(v, `"`) {
		return "", fmt.Errorf("not a string")
	}
	end := 1
	for ; end < len(v) && v[end] != '"'; end++ {
		if v[end] == '\\' {
			end++
		}
	}
	if end >= len(v) {
		return "", fmt.Errorf("unterminated string")
	}
	s, err := strconv.Unquote(v[:end+1])
	if err != nil {
		return "", fmt.Errorf("bad string %s", v[:end+1])
	}
	return s, trailingComment(v[end+1:])
}

func trailingComment(rest string) error {
	rest = strings.TrimSpace(rest)
	if rest != "" && !strings.HasPrefix(rest, "#") {
		return fmt.Errorf("unexpected %q after the string", rest)
	}
	return nil
}

func validateLocation(loc string, source bool) error {
	host, repo, hasRepo := strings.Cut(loc, "/")
	if source {
		host = strings.TrimPrefix(host, "*.")
	}
	if !registryHostRE.MatchString(host) {
		return fmt.Errorf("must be a registry host[:port] with an optional repository path")
	}
	if hasRepo {
		if _, err := name.NewRepository(host+"/"+repo, name.StrictValidation); err != nil || strings.HasSuffix(repo, "/") {
			return fmt.Errorf("bad repository path (lower-case letters, digits, separators)")
		}
	}
	return nil
}

// mirrorOf returns image rewritten to the first mirror of the longest
// source location that covers its repository, or "".
func mirrorOf(image string, regs []registry) string {
	repo, suffix := image, ""
	if i := strings.Index(image, "@"); i >= 0 {
		repo, suffix = image[:i], image[i:]
	} else if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		repo, suffix = image[:i], image[i:]
	}
	best := -1
	for i, r := range regs {
		if len(r.Mirrors) == 0 || !(repo == r.Location || strings.HasPrefix(repo, r.Location+"/")) {
			continue
		}
		if best < 0 || len(r.Location) > len(regs[best].Location) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return regs[best].Mirrors[0] + repo[len(regs[best].Location):] + suffix
}

// mirroredRegistries returns the hosts of the sources that have mirrors,
// first occurrence first.
func mirroredRegistries(regs []registry) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range regs {
		host, _, _ := strings.Cut(r.Location, "/")
		if len(r.Mirrors) > 0 && !seen[host] {
			seen[host] = true
			out = append(out, host)
		}
	}
	return out
}

func haveMirrors(regs []registry) bool { return len(mirroredRegistries(regs)) > 0 }
