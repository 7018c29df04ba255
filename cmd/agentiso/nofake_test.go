package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testEquipment is the module's test equipment, which the shipped binary
// must never link: the fakes of internal/fake (and the developer aids'
// command line there), the real kube-apiserver runner and the shared test
// inputs.
func testEquipment(pkgs []string) []string {
	const mod = "github.com/seed-a052040e/agentiso/"
	var found []string
	for _, p := range pkgs {
		if strings.HasPrefix(p, mod+"internal/fake/") || p == mod+"internal/testapiserver" || p == mod+"internal/testfixture" {
			found = append(found, p)
		}
	}
	return found
}

// linked lists the packages the binary of pkg links (go list -deps).
func linked(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("go list -deps %s: %v: %s", pkg, err, ee.Stderr)
	}
	require.NoError(t, err, "go list -deps %s", pkg)
	return strings.Fields(string(out))
}

// The shipped agentiso links no fake: none of the test equipment is among
// the packages of ./cmd/agentiso (test files aside), while agentiso-dev,
// the developer aids' binary, links the fakes (so the check can fail).
func TestShippedBinaryLinksNoFake(t *testing.T) {
	assert.Empty(t, testEquipment(linked(t, ".")), "the shipped agentiso links test equipment; move its use to cmd/agentiso-dev or a _test.go file")
	dev := testEquipment(linked(t, "../agentiso-dev"))
	for _, p := range []string{"devcmd", "rendezvoussim", "testcluster", "testrelease", "testiso", "testiso/testminiso", "redfishsim"} {
		assert.Contains(t, dev, "github.com/seed-a052040e/agentiso/internal/fake/"+p)
	}
}
