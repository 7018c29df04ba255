package live

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseReports(t *testing.T) {
	console, err := os.ReadFile("testdata/console.txt")
	require.NoError(t, err)
	reports, err := ParseReports(console)
	require.NoError(t, err)
	require.Len(t, reports, 3, "the cut-off third block is not a report")
	r4 := Last(reports)
	assert.Equal(t, 4, r4.Seq)
	assert.Equal(t, map[string]int{"agent-register-cluster.service": 3}, r4.Restarts)
	assert.Equal(t, []string{"agent-register-cluster.service"}, r4.Broken())
	assert.Contains(t, r4.FailedSummary(), "unit agent-register-cluster.service restarted 3 times; journalctl -u agent-register-cluster.service:\n    Error: x509")
	assert.Equal(t, []string{"Cluster installation in progress", "Cluster installation in progress"}, r4.Logs["start-cluster-installation.service"])
	assert.Contains(t, r4.FailedSummary(), "container service printed:\n    level=fatal msg=\"bad RELEASE_IMAGES\"")
	r := &reports[1]
	assert.Equal(t, 2, r.Seq)
	assert.Equal(t, "sno-live", r.Hostname)
	assert.Equal(t, UnitState{"loaded", "active", "exited"}, r.Units["set-hostname.service"])
	assert.Equal(t, []string{"agent.service"}, r.Failed)
	assert.Len(t, r.Journal["agent.service"], 2)
	assert.Contains(t, r.FailedSummary(), "unit agent.service failed; journalctl -u agent.service:\n    Error: initializing source")
	assert.Equal(t, []string{"quay.io/openshift-release-dev/ocp-release@sha256:0123 <none>"}, r.Images)
	assert.Equal(t, []string{"assisted-db Up 2 minutes quay.io/x@sha256:1"}, r.Containers)
	assert.Equal(t, []string{"rhcos-standin: semodule -i /root/assisted.pp"}, r.Standins)
	assert.True(t, r.Node0)
	assert.False(t, reports[0].Node0)

	bond := r.LinkByName("bond0")
	require.NotNil(t, bond)
	assert.Equal(t, "bond", bond.Kind())
	assert.True(t, bond.HasAddr("192.168.111.80", 24))
	assert.False(t, bond.HasAddr("192.168.111.80", 16))
	require.NotNil(t, r.LinkByMAC("52:54:00:aa:00:01"))
	assert.Equal(t, "bond0", r.LinkByMAC("52:54:00:aa:00:01").Name, "a bond port is not the link that owns the MAC")
	assert.Nil(t, r.LinkByName("eth9"))
	port := r.LinkByName("enp0s4")
	require.NotNil(t, port)
	assert.True(t, port.HasMAC("52:54:00:AA:00:02"), "a bond port is found by its permanent MAC")
	assert.True(t, port.HasMAC("52:54:00:aa:00:01"))
	assert.False(t, port.HasMAC("52:54:00:aa:00:03"))
	assert.Equal(t, "", InitrdFailure(console))
}

func TestParseReportsErrors(t *testing.T) {
	_, err := ParseReports([]byte("LIVE-REPORT-BEGIN 1\nIPADDR [{\nLIVE-REPORT-END 1\n"))
	require.ErrorContains(t, err, "report 1: ip -j addr")
	reports, err := ParseReports([]byte("LIVE-REPORT-BEGIN 1\nIPADDR [{\nLIVE-REPORT-END 1\nLIVE-REPORT-BEGIN 2\nHOSTNAME b\nLIVE-REPORT-END 2\n"))
	require.NoError(t, err, "a damaged block is skipped when a good one follows")
	require.Len(t, reports, 1)
	assert.Equal(t, "b", reports[0].Hostname)
	reports, err = ParseReports([]byte("LIVE-REPORT-BEGIN 1\nHOSTNAME a\nLIVE-REPORT-END 2\n"))
	require.NoError(t, err)
	assert.Empty(t, reports, "an end marker of another block does not close this one")
	assert.Equal(t, "LIVE-INITRD-FAILED: no device with volume ID x",
		InitrdFailure([]byte("boot\nLIVE-INITRD-FAILED: no device with volume ID x\r\nmore")))
}

func FuzzParseReports(f *testing.F) {
	b, err := os.ReadFile("testdata/console.txt")
	require.NoError(f, err)
	f.Add(b)
	f.Fuzz(func(t *testing.T, console []byte) {
		reports, _ := ParseReports(console)
		for _, r := range reports {
			_ = r.FailedSummary()
		}
		_ = InitrdFailure(console)
	})
}
