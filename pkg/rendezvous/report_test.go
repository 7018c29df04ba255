package rendezvous

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlainReporterNoEscapes(t *testing.T) {
	var b bytes.Buffer
	c := newFakeClock()
	p := NewPlainReporter(&b, slog.LevelInfo, c)
	p.Log(slog.LevelInfo, "Cluster is ready for install")
	p.Log(slog.LevelDebug, "hidden")
	p.Log(slog.LevelWarn, "Host m0 validation: bad")
	p.Hosts([]HostRow{{Name: "m0", Role: "master", Status: "installing", Stage: "Writing image to disk", Percent: 40}})
	assert.Equal(t, "2026-01-01T12:00:00Z INFO  Cluster is ready for install\n2026-01-01T12:00:00Z WARN  Host m0 validation: bad\n", b.String())
	assert.NotContains(t, b.String(), "\x1b")

	b.Reset()
	d := NewPlainReporter(&b, slog.LevelDebug, c)
	row := HostRow{Name: "m0", Role: "master", Status: "installing", Stage: "Writing image to disk", Percent: 40}
	d.Hosts([]HostRow{row})
	d.Hosts([]HostRow{row})
	row.Percent = 60
	d.Hosts([]HostRow{row})
	assert.Equal(t, 2, strings.Count(b.String(), "Host m0 [master]: installing, stage Writing image to disk"), b.String())
}

func TestTerminalReporterRedraws(t *testing.T) {
	var b bytes.Buffer
	c := newFakeClock()
	tr := NewTerminalReporter(&b, slog.LevelInfo, c)
	tr.Hosts([]HostRow{
		{Name: "master-0", Role: "master (bootstrap)", Status: "installing-in-progress", Stage: "Waiting for control plane", Percent: 30, LastChange: c.Now().Add(-12 * time.Second)},
		{Name: "master-1", Role: "master", Status: "installing-in-progress", Stage: "Rebooting", Percent: 60},
	})
	first := b.String()
	assert.Contains(t, first, "HOST")
	assert.Contains(t, first, "PROGRESS")
	assert.Contains(t, first, "(12s ago)")
	assert.NotContains(t, first, "\x1b[", "nothing to erase on the first draw")
	require.Equal(t, 3, strings.Count(first, "\n"))

	b.Reset()
	tr.Log(slog.LevelWarn, "Host master-1 validation: NTP")
	out := b.String()
	assert.True(t, strings.HasPrefix(out, "\x1b[3A\r\x1b[J"), "erases the 3-line table: %q", out)
	assert.Contains(t, out, "\x1b[33mWARN\x1b[0m Host master-1 validation: NTP\n")
	assert.True(t, strings.HasSuffix(out, "60%\n"), "table redrawn below the message: %q", out)
}

func TestTerminalReporterWidth(t *testing.T) {
	var b bytes.Buffer
	tr := NewTerminalReporter(&b, slog.LevelInfo, newFakeClock())
	tr.SetWidth(30)
	tr.Hosts([]HostRow{{Name: "a-very-long-host-name.example.com", Role: "master", Status: "installing-in-progress"}})
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		assert.LessOrEqual(t, len(l), 29, l)
	}
}

func TestHint(t *testing.T) {
	for _, id := range []string{"ntp-synced", "ntp-server-configured", "has-min-valid-disks", "sufficient-installation-disk-speed",
		"hostname-unique", "hostname-valid", "belongs-to-machine-cidr", "machine-cidr-defined", "connected", "belongs-to-majority-group"} {
		assert.NotEmpty(t, Hint(id), id)
	}
	assert.Empty(t, Hint("pull-secret-set"))
}

func FuzzParseValidations(f *testing.F) {
	f.Add(`{"hardware":[{"id":"has-min-cpu-cores","status":"success","message":"Sufficient CPU cores"}],"network":[{"id":"ntp-synced","status":"failure","message":"x"}]}`)
	f.Add(``)
	f.Add(`{}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, s string) {
		vs, err := ParseValidations(s)
		if err != nil {
			return
		}
		for i := 1; i < len(vs); i++ {
			a, b := vs[i-1], vs[i]
			assert.True(t, a.Category < b.Category || (a.Category == b.Category && a.ID <= b.ID), "sorted")
		}
		enc, err := EncodeValidations(vs)
		require.NoError(t, err)
		back, err := ParseValidations(enc)
		require.NoError(t, err)
		assert.Equal(t, len(vs), len(back))
	})
}
