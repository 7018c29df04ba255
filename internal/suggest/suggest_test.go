package suggest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClosest(t *testing.T) {
	names := []string{"interfaces", "hostname", "rootDeviceHints", "ipv4", "address"}
	assert.Equal(t, "interfaces", Closest("interfacez", names))
	assert.Equal(t, "address", Closest("adress", names))
	assert.Equal(t, "rootDeviceHints", Closest("RootDeviceHint", names), "case-insensitive")
	assert.Equal(t, "hostname", Closest("host", names), "prefix fallback")
	assert.Equal(t, "", Closest("zz", names))
	assert.Equal(t, "", Closest("completelyunrelated", names))
	assert.Equal(t, "", Closest(string(make([]byte, 100)), names))
}
