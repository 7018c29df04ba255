package asset

import (
	"fmt"
	"io"
	"reflect"
	"sort"
)

// WriteDOT writes the dependency graph of targets in Graphviz DOT form:
// one node per asset, an edge from each parent to its child.
func WriteDOT(w io.Writer, targets ...Asset) error {
	seen := map[reflect.Type]bool{}
	var nodes []string
	var edges []string
	var walk func(a Asset)
	walk = func(a Asset) {
		t := reflect.TypeOf(a)
		if seen[t] {
			return
		}
		seen[t] = true
		nodes = append(nodes, fmt.Sprintf("  %q;", a.Name()))
		for _, d := range a.Dependencies() {
			edges = append(edges, fmt.Sprintf("  %q -> %q;", d.Name(), a.Name()))
			walk(d)
		}
	}
	for _, t := range targets {
		walk(t)
	}
	sort.Strings(nodes)
	sort.Strings(edges)
	if _, err := fmt.Fprintln(w, "digraph agentiso {\n  rankdir=LR;\n  node [shape=box];"); err != nil {
		return err
	}
	for _, l := range append(nodes, edges...) {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, "}")
	return err
}
