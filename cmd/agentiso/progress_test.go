package main

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/console"
)

// Progress is info-level output: --log-level warn or error hides the
// progress of the base ISO download and of the agent ISO write.
func TestProgressFollowsLogLevel(t *testing.T) {
	for _, tc := range []struct {
		level string
		shown bool
	}{{"debug", true}, {"info", true}, {"warn", false}, {"error", false}} {
		t.Run(tc.level, func(t *testing.T) {
			var errOut bytes.Buffer
			lg, err := console.NewLogger(&errOut, tc.level, nil)
			require.NoError(t, err)
			r := (&imageOptions{}).assetOptions(&globals{errOut: &errOut, log: lg, logLevel: tc.level}).Report
			if r.WriteProgress != nil {
				update, finish := r.WriteProgress("agent.x86_64.iso")
				update(1, 4)
				finish(true)
			}
			if r.Progress != nil {
				_, _ = io.WriteString(r.Progress, "Downloading base.iso: 50%\n")
			}
			if tc.shown {
				assert.Equal(t, "INFO Writing agent.x86_64.iso: 25%\nINFO Downloading base.iso: 50%\n", errOut.String())
			} else {
				assert.Empty(t, errOut.String())
			}
		})
	}
}
