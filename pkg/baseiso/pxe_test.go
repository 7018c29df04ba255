package baseiso

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/data"
)

func TestPXERootfsURL(t *testing.T) {
	st, err := ParseStream(data.RHCOSStream())
	require.NoError(t, err)
	u, err := PXERootfsURL(st, "amd64")
	require.NoError(t, err)
	assert.Regexp(t, `^https://.*rootfs\.x86_64\.img$`, u)

	st, err = ParseStream([]byte(`{"stream":"s","architectures":{"x86_64":{"artifacts":{"metal":{"formats":{"pxe":{"rootfs":{"location":"file:///x"}}}}}}}}`))
	require.NoError(t, err)
	_, err = PXERootfsURL(st, "x86_64")
	assert.ErrorContains(t, err, "architectures.x86_64.artifacts.metal.formats.pxe.rootfs.location")
	_, err = PXERootfsURL(st, "aarch64")
	assert.ErrorContains(t, err, `CoreOS stream "s": architectures.aarch64.artifacts.metal.formats.pxe.rootfs is missing`)
}
