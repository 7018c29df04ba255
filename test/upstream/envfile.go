package upstream

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// Env is an ordered list of KEY=VALUE settings where a later setting of a
// key replaces the earlier one, as podman run does with several --env-file
// options and systemd with several Environment= lines.
type Env struct {
	keys []string
	vals map[string]string
}

// Set sets key to value, keeping the key's first position.
func (e *Env) Set(key, value string) {
	if e.vals == nil {
		e.vals = map[string]string{}
	}
	if _, ok := e.vals[key]; !ok {
		e.keys = append(e.keys, key)
	}
	e.vals[key] = value
}

// Get returns the value of key and whether it is set.
func (e *Env) Get(key string) (string, bool) {
	v, ok := e.vals[key]
	return v, ok
}

// Merge sets every setting of o, in o's order.
func (e *Env) Merge(o Env) {
	for _, k := range o.keys {
		e.Set(k, o.vals[k])
	}
}

// Environ returns the settings as KEY=VALUE strings, for exec.Cmd.Env.
func (e *Env) Environ() []string {
	out := make([]string, 0, len(e.keys))
	for _, k := range e.keys {
		out = append(out, k+"="+e.vals[k])
	}
	return out
}

// Keys returns the keys in order.
func (e *Env) Keys() []string { return append([]string(nil), e.keys...) }

// ParseEnvFile reads an env file as podman run --env-file does: one
// KEY=VALUE a line, the value taken literally up to the end of the line;
// blank lines and lines starting with # are skipped. A line with no "=" would
// take the variable from podman's own environment: nothing on the agent ISO
// relies on that, so it is an error here. name is used in errors.
func ParseEnvFile(data []byte, name string) (Env, error) {
	var env Env
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimLeft(sc.Text(), " \t")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return Env{}, fmt.Errorf("%s:%d: no '=' in %.40q (a bare name takes the host's value: not supported)", name, n, line)
		}
		if k == "" || strings.ContainsAny(k, " \t") {
			return Env{}, fmt.Errorf("%s:%d: bad variable name %q", name, n, k)
		}
		env.Set(k, v)
	}
	if err := sc.Err(); err != nil {
		return Env{}, fmt.Errorf("%s: %w", name, err)
	}
	return env, nil
}

// UnitEnvironment returns the Environment= settings of a systemd unit, in
// order. Only the forms agentiso's units use are read: Environment=KEY=VALUE
// with one unquoted assignment a line; anything else is an error.
func UnitEnvironment(unit, name string) (Env, error) {
	var env Env
	for i, line := range strings.Split(unit, "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "Environment=")
		if !ok {
			continue
		}
		if strings.ContainsAny(v, "\"' ") {
			return Env{}, fmt.Errorf("%s:%d: quoted or multiple assignments are not supported: %q", name, i+1, line)
		}
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return Env{}, fmt.Errorf("%s:%d: not KEY=VALUE: %q", name, i+1, line)
		}
		env.Set(k, val)
	}
	return env, nil
}
