package agent

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/seed-a052040e/agentiso/pkg/asset"
)

// Every asset says, in its errors, what it was doing ("cannot read
// agent-config.yaml: ...", "cannot generate the kubeadmin password: ..."),
// never its graph name ("failed to load Agent Config", "failed to generate
// Agent Auth Config") (issue 22 item 9).
func TestAssetsAreDescribed(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(a asset.Asset)
	walk = func(a asset.Asset) {
		if seen[reflect.TypeOf(a)] {
			return
		}
		seen[reflect.TypeOf(a)] = true
		_, described := a.(asset.Described)
		assert.True(t, described, "%s (%T) does not say what it does (asset.Described)", a.Name(), a)
		for _, p := range a.Dependencies() {
			walk(p)
		}
	}
	for _, a := range AllTargets() {
		walk(a)
	}
	assert.Greater(t, len(seen), 10)
}
