package ignition

// Hooks for the external test package ignition_test (podman_test.go), which
// also renders the bundled examples through pkg/asset/agent and so cannot
// live in package ignition without an import cycle.

// FixtureInputs returns the test fixtures' inputs by name.
func FixtureInputs() map[string]Input {
	out := map[string]Input{}
	for _, fx := range fixtures {
		out[fx.name] = fx.input()
	}
	return out
}
