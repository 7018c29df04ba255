package manifests

import (
	"fmt"

	yaml3 "go.yaml.in/yaml/v3"
)

// YAML structure limits, far above any real cluster (the whole agent
// Ignition config must fit a 256 KiB compressed area of the ISO) and low
// enough that a hostile file is refused before it can cost much memory.
// Listed in docs/inputs.md.
const (
	// MaxYAMLNodes bounds the mappings entries, list items and flow
	// collections of one file, counted by a linear scan before parsing.
	MaxYAMLNodes = 50_000
	// MaxYAMLDepth bounds how deeply collections nest.
	MaxYAMLDepth = 64
)

// checkYAMLSize scans data once, without parsing it, and refuses a file with
// more than MaxYAMLNodes structural elements (": " keys, "- " items, flow
// "[", "{" and ",") or flow collections nested deeper than MaxYAMLDepth.
// Quoted text and comments are skipped; block scalar text may be counted,
// which only ever over-estimates.
func checkYAMLSize(file string, data []byte) error {
	nodes, depth, line := 0, 0, 1
	var quote byte
	prev := byte('\n') // last significant character; '\n' at a line start
	isBlank := func(i int) bool {
		return i >= len(data) || data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'
	}
	tokenStart := func() bool {
		switch prev {
		case '\n', ':', '[', '{', ',', '-', '?':
			return true
		}
		return false
	}
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == '\n' {
			line++
		}
		if quote != 0 {
			switch {
			case quote == '"' && c == '\\':
				i++
			case c == quote && quote == '\'' && i+1 < len(data) && data[i+1] == '\'':
				i++
			case c == quote:
				quote, prev = 0, c
			}
			continue
		}
		switch c {
		case '\n':
			prev = '\n'
			continue
		case ' ', '\t', '\r':
			continue
		case '#':
			if i == 0 || isBlank(i-1) {
				for i+1 < len(data) && data[i+1] != '\n' {
					i++
				}
				continue
			}
		case '"', '\'':
			if tokenStart() {
				quote = c
				continue
			}
		case '[', '{':
			if tokenStart() {
				nodes++
				depth++
				if depth > MaxYAMLDepth {
					return &FileError{File: file, Line: line, Msg: fmt.Sprintf("YAML collections are nested more than %d levels deep, the limit (see docs/inputs.md, Input limits)", MaxYAMLDepth)}
				}
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth > 0 {
				nodes++
			}
		case ':':
			if isBlank(i+1) || (depth > 0 && i+1 < len(data) && (data[i+1] == ',' || data[i+1] == ']' || data[i+1] == '}')) {
				nodes++
			}
		case '-':
			if (prev == '\n' || prev == '-' || prev == ':' || prev == '?') && isBlank(i+1) {
				nodes++
			}
		}
		prev = c
		if nodes > MaxYAMLNodes {
			return &FileError{File: file, Line: line, Msg: fmt.Sprintf("holds more than %d YAML keys and list items, the limit (see docs/inputs.md, Input limits)", MaxYAMLNodes)}
		}
	}
	return nil
}

// checkYAMLDepth refuses a parsed document nested deeper than MaxYAMLDepth
// (block collections, which checkYAMLSize does not measure), before any
// work whose cost grows with depth.
func checkYAMLDepth(file string, doc *yaml3.Node) error {
	type item struct {
		n *yaml3.Node
		d int
	}
	stack := []item{{doc, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.d > MaxYAMLDepth+1 { // +1: the document node itself
			return &FileError{File: file, Line: it.n.Line, Msg: fmt.Sprintf("YAML collections are nested more than %d levels deep, the limit (see docs/inputs.md, Input limits)", MaxYAMLDepth)}
		}
		for _, c := range it.n.Content {
			stack = append(stack, item{c, it.d + 1})
		}
	}
	return nil
}
