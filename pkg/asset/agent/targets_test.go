package agent

import (
	"reflect"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/seed-a052040e/agentiso/pkg/asset"
)

// The graph `agentiso graph` draws ends at the images: every asset is on
// the path to the agent ISO, except its sibling the PXE files, the admin
// kubeconfig written beside them, the config image and the generic ISO
// with what only it needs, and nothing is derived from an image. Every
// command's targets are in the graph.
func TestGraphEndsAtTheImages(t *testing.T) {
	children := map[reflect.Type][]reflect.Type{}
	names := map[reflect.Type]string{}
	var walk func(a asset.Asset)
	walk = func(a asset.Asset) {
		t := reflect.TypeOf(a)
		if _, seen := names[t]; seen {
			return
		}
		names[t] = a.Name()
		for _, d := range a.Dependencies() {
			children[reflect.TypeOf(d)] = append(children[reflect.TypeOf(d)], t)
			walk(d)
		}
	}
	for _, a := range AllTargets() {
		walk(a)
	}

	var sinks []string
	for typ, n := range names {
		if len(children[typ]) == 0 {
			sinks = append(sinks, n)
		}
	}
	sort.Strings(sinks)
	assert.Equal(t, []string{"Admin Kubeconfig", "Agent Config ISO", "Agent Installer ISO", "Agent Installer PXE Files", "Agent Installer Unconfigured ISO"}, sinks,
		"the graph's ends are the images and the admin kubeconfig written beside them")

	// Ancestors of the ISO.
	iso := reflect.TypeOf(&AgentISO{})
	onPath := map[reflect.Type]bool{iso: true}
	var up func(a asset.Asset)
	up = func(a asset.Asset) {
		for _, d := range a.Dependencies() {
			if !onPath[reflect.TypeOf(d)] {
				onPath[reflect.TypeOf(d)] = true
				up(d)
			}
		}
	}
	up(&AgentISO{})
	offPath := map[string]bool{"Admin Kubeconfig": true, "Agent Installer PXE Files": true, "Agent Config ISO": true,
		"Agent Installer Unconfigured ISO": true, "Agent Installer Unconfigured Ignition": true, "Unconfigured Inputs": true}
	for typ, n := range names {
		if !offPath[n] {
			assert.True(t, onPath[typ], "%s is in the graph but not on the path to the agent ISO", n)
		}
	}

	for _, targets := range [][]asset.Asset{ClusterManifestsTargets(), IgnitionTargets(), ImageTargets(), PXETargets(),
		UnconfiguredIgnitionTargets(), UnconfiguredImageTargets(), ConfigImageTargets()} {
		for _, a := range targets {
			assert.Contains(t, names, reflect.TypeOf(a), "%s, a command's target, is not in agentiso graph", a.Name())
		}
	}
}
