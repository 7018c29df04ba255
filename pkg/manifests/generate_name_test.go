package manifests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestClusterImageSetNameFor: the name comes from what was given, never
// from the payload, and is always a valid Kubernetes name.
func TestClusterImageSetNameFor(t *testing.T) {
	for _, tc := range []struct{ spec, version, want string }{
		{"quay.io/openshift-release-dev/ocp-release:4.20.3-x86_64", "4.20.3", "openshift-4.20.3"},
		{"quay.io/openshift-release-dev/ocp-release:4.20.3-x86_64", "", "openshift-4.20.3-x86-64"},
		{"127.0.0.1:5000/ocp/release:4.20.3-multi", "", "openshift-4.20.3-multi"},
		{"127.0.0.1:5000/ocp/release:Latest_", "", "openshift-latest"},
		{"quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("ab", 32), "", "openshift-sha256-abababababab"},
		{"quay.io/x/y:" + strings.Repeat("7", 128), "", "openshift-" + strings.Repeat("7", 128)},
	} {
		got := ClusterImageSetNameFor(tc.spec, tc.version)
		assert.Equal(t, tc.want, got, tc.spec)
		assert.Regexp(t, `^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$`, got)
		assert.LessOrEqual(t, len(got), 253)
	}
}
