package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/seed-a052040e/agentiso/pkg/ignition"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

// The hint names what actually makes the config large, from the config's
// own breakdown, instead of always blaming extra manifests.
func TestIgnitionTooLargeHint(t *testing.T) {
	own := ignition.InputSize{Input: ignition.InputOwn, Bytes: 60_000, Parts: 80}

	// Only agentiso's own files: the embed area is what is too small.
	small := &isoeditor.IgnitionTooLargeError{File: "images/ignition.img", Size: 26_000, Limit: 16_384}
	msg := ignitionTooLarge(small, ignition.Size{
		Top:     []ignition.PathSize{{Path: "/usr/local/bin/agent-gather", Bytes: 3929}},
		ByInput: []ignition.InputSize{own, {Input: ignition.InputAgentConfig, Bytes: 400, Parts: 1, User: true}},
	}).Error()
	assert.NotContains(t, msg, "extra manifests")
	assert.Contains(t, msg, "3929  /usr/local/bin/agent-gather: agentiso's own files and units")
	assert.Contains(t, msg, "This ISO's Ignition embed area (16384 bytes) is smaller than a standard RHCOS live ISO's (262144 bytes): use an unmodified RHCOS live ISO")

	// Standard area, the hosts' network configs dominate.
	full := &isoeditor.IgnitionTooLargeError{File: "images/ignition.img", Size: 300_000, Limit: 262_144}
	msg = ignitionTooLarge(full, ignition.Size{
		Top: []ignition.PathSize{{Path: "/etc/assisted/network/host0/eth0.nmconnection", Bytes: 9000}},
		ByInput: []ignition.InputSize{
			{Input: ignition.InputNetworkConfig, Bytes: 500_000, Parts: 400, User: true},
			own,
			{Input: ignition.InputAgentConfig, Bytes: 200_000, Parts: 1, User: true},
			{Input: ignition.InputExtraManifests, Bytes: 300, Parts: 1, User: true},
		},
	}).Error()
	assert.Contains(t, msg, "9000  /etc/assisted/network/host0/eth0.nmconnection: "+ignition.InputNetworkConfig)
	assert.Contains(t, msg, "Shrink what you provide, largest first: "+ignition.InputNetworkConfig+" (500000 bytes in 400 files), "+ignition.InputAgentConfig+" (200000 bytes)")
	assert.NotContains(t, msg, "unmodified RHCOS")
	assert.NotContains(t, msg, ignition.InputExtraManifests+" (300", "a negligible input is not blamed")
}
