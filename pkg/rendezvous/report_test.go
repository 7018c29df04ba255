package rendezvous

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlainReporterNoEscapes(t *testing.T) {
	var b bytes.Buffer
	p := NewPlainReporter(&b, slog.LevelInfo)
	p.Log(slog.LevelInfo, "Cluster is ready for install")
	p.Log(slog.LevelDebug, "hidden")
	p.Log(slog.LevelWarn, "Host m0 validation: bad")
	p.Hosts([]HostRow{{Name: "m0", Role: "master", Status: "installing", Stage: "Writing image to disk", Percent: 40}})
	// The one format of every command (internal/console): "LEVEL message".
	assert.Equal(t, "INFO Cluster is ready for install\nWARNING Host m0 validation: bad\n", b.String())
	assert.NotContains(t, b.String(), "\x1b")

	b.Reset()
	d := NewPlainReporter(&b, slog.LevelDebug)
	row := HostRow{Name: "m0", Role: "master", Status: "installing", Stage: "Writing image to disk", Percent: 40}
	d.Hosts([]HostRow{row})
	d.Hosts([]HostRow{row})
	row.Percent = 60
	d.Hosts([]HostRow{row})
	assert.Equal(t, 2, strings.Count(b.String(), "Host m0 [master]: installing, stage Writing image to disk"), b.String())
}

// The outcome is shown whatever the level: a success at --log-level error
// says so.
func TestReportersShowTheResultAtAnyLevel(t *testing.T) {
	var p, tb bytes.Buffer
	NewPlainReporter(&p, slog.LevelError).Result("Install complete!")
	assert.Equal(t, "INFO Install complete!\n", p.String())
	tr := NewTerminalReporter(&tb, slog.LevelError, false, nil)
	tr.Log(slog.LevelInfo, "hidden")
	tr.Result("Install complete!")
	assert.Equal(t, "INFO Install complete!\n", tb.String())
}

func TestTerminalReporterRedraws(t *testing.T) {
	var b bytes.Buffer
	c := newFakeClock()
	tr := NewTerminalReporter(&b, slog.LevelInfo, true, nil)
	tr.Hosts([]HostRow{
		{Name: "master-0", Role: "master", Bootstrap: true, Status: "installing-in-progress", Stage: "Waiting for control plane", Percent: 30, LastChange: c.Now().Add(-12 * time.Second), Age: 12 * time.Second},
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
	assert.Contains(t, out, "\x1b[33mWARNING\x1b[0m Host master-1 validation: NTP\n")
	assert.True(t, strings.HasSuffix(out, "60%\n"), "table redrawn below the message: %q", out)
}

// NO_COLOR (colour false) leaves no escape but the redraw's.
func TestTerminalReporterNoColour(t *testing.T) {
	var b bytes.Buffer
	tr := NewTerminalReporter(&b, slog.LevelInfo, false, nil)
	tr.Log(slog.LevelError, "boom")
	tr.Log(slog.LevelWarn, "careful")
	assert.Equal(t, "ERROR boom\nWARNING careful\n", b.String())
}

// A server clock ahead of the workstation's never shows a negative age.
func TestTerminalReporterNeverNegativeAge(t *testing.T) {
	var b bytes.Buffer
	tr := NewTerminalReporter(&b, slog.LevelInfo, false, nil)
	tr.Hosts([]HostRow{{Name: "m0", Role: "master", Status: "known", LastChange: time.Now(), Age: -18 * time.Second}})
	assert.Contains(t, b.String(), "(0s ago)")
	assert.NotContains(t, b.String(), "-18s")
}

func TestTerminalReporterWidth(t *testing.T) {
	var b bytes.Buffer
	tr := NewTerminalReporter(&b, slog.LevelInfo, false, func() int { return 30 })
	tr.Hosts([]HostRow{{Name: "a-very-long-host-name.example.com", Role: "master", Status: "installing-in-progress"}})
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), 29, l)
	}
	assert.Contains(t, b.String(), "…", "a cut shows")
}

// The width is asked at every redraw: a resize is followed, and a table
// drawn wider than the terminal now is (which the terminal has reflowed)
// is erased with all the rows it now takes.
func TestTerminalReporterFollowsResizes(t *testing.T) {
	var b bytes.Buffer
	width := 120
	tr := NewTerminalReporter(&b, slog.LevelInfo, false, func() int { return width })
	rows := []HostRow{
		{Name: "master-0.cluster.example.com", Role: "master", Bootstrap: true, Status: "installing-in-progress", Stage: "Waiting for control plane", Percent: 30},
		{Name: "master-1.cluster.example.com", Role: "master", Status: "installing-in-progress", Stage: "Rebooting", Percent: 60},
	}
	tr.Hosts(rows)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 4, "the compact table (and its legend) fits 120 columns")
	var rowsAt40 int
	for _, l := range lines {
		require.Less(t, len(l), 120)
		rowsAt40 += (len(l) + 39) / 40
	}
	require.Greater(t, rowsAt40, 3, "the table is wider than 40 columns")

	width = 40
	b.Reset()
	tr.Hosts(rows)
	out := b.String()
	assert.True(t, strings.HasPrefix(out, fmt.Sprintf("\x1b[%dA\r\x1b[J", rowsAt40)), "erases the reflowed table: %q", out)
	drawn := strings.Split(strings.TrimSuffix(strings.SplitN(out, "\x1b[J", 2)[1], "\n"), "\n")
	for _, l := range drawn {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), 39, l)
	}
	b.Reset()
	tr.Log(slog.LevelInfo, "next")
	assert.True(t, strings.HasPrefix(b.String(), fmt.Sprintf("\x1b[%dA\r\x1b[J", len(drawn))), "drawn at 40 columns, the table takes %d rows: %q", len(drawn), b.String())
}

// When the rendezvous API goes away the table says it is stale; at the end
// it goes away on success and stays, finalised, on failure.
func TestTerminalReporterStaleAndClose(t *testing.T) {
	var b bytes.Buffer
	tr := NewTerminalReporter(&b, slog.LevelInfo, false, nil)
	rows := []HostRow{{Name: "m0", Role: "master", Status: "installing-in-progress", Stage: "Rebooting", Percent: 60}}
	tr.Hosts(rows)
	b.Reset()
	tr.Stale("as last reported at 12:00:00; the rendezvous API went away")
	assert.Equal(t, "\x1b[2A\r\x1b[J"+"Hosts (stale: as last reported at 12:00:00; the rendezvous API went away)\n", strings.SplitN(b.String(), "HOST", 2)[0])
	b.Reset()
	tr.Close(true)
	assert.Equal(t, "\x1b[3A\r\x1b[J", b.String(), "the table is removed on success")
	b.Reset()
	tr.Log(slog.LevelInfo, "after")
	assert.Equal(t, "INFO after\n", b.String(), "nothing is redrawn after Close")

	b.Reset()
	tr = NewTerminalReporter(&b, slog.LevelInfo, false, nil)
	tr.Hosts(rows)
	b.Reset()
	tr.Close(false)
	assert.True(t, strings.HasPrefix(b.String(), "\x1b[2A\r\x1b[J"+"HOST"), "the table stays after a failure: %q", b.String())
	b.Reset()
	tr.Log(slog.LevelError, "failed")
	assert.Equal(t, "ERROR failed\n", b.String(), "the final table is not erased by later lines")
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

// NewReporter writes lines (no table) to what is not a terminal, at its
// level, and every message to the debug log when there is one.
func TestNewReporter(t *testing.T) {
	var out, log bytes.Buffer
	rep := NewReporter(&out, slog.LevelInfo, &log)
	rep.Log(slog.LevelDebug, "polled")
	rep.Log(slog.LevelInfo, "host booted")
	rep.Close(true)
	assert.NotContains(t, out.String(), "polled")
	assert.Contains(t, out.String(), "host booted")
	assert.NotContains(t, out.String(), "\x1b[", "no escape codes off a terminal")
	assert.Contains(t, log.String(), "polled")
	assert.Contains(t, log.String(), "host booted")

	_, plain := NewReporter(&out, slog.LevelInfo, nil).(*PlainReporter)
	assert.True(t, plain, "no debug log: the terminal's reporter alone")
}

// Issue 37 item 11: at 80 columns during "Writing image to disk" the
// progress and the last change stay (compact: the bootstrap mark as "*"
// with a legend, the age only); at 50 columns every host's status is whole
// and its stage, progress and age go on a second line. Nothing vanishes
// without a mark.
func TestHostTableNarrowTerminals(t *testing.T) {
	now := time.Now()
	rows := []HostRow{
		{Name: "master-0", Role: "master", Bootstrap: true, Status: "installing-in-progress", Stage: "Writing image to disk", Percent: 45, LastChange: now.Add(-12 * time.Second), Age: 12 * time.Second},
		{Name: "master-1", Role: "master", Status: "installing-in-progress", Stage: "Writing image to disk", Percent: 40, LastChange: now.Add(-3 * time.Second), Age: 3 * time.Second},
	}
	at80 := tableLines(rows, 80)
	for _, l := range at80 {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), 79, l)
	}
	text := strings.Join(at80, "\n")
	assert.Contains(t, at80[0], "%")
	assert.Contains(t, at80[0], "AGE")
	assert.Contains(t, text, "master*")
	assert.Contains(t, text, "45%")
	assert.Contains(t, text, "12s ago")
	assert.Contains(t, text, "* bootstrap host")

	at50 := tableLines(rows, 50)
	text = strings.Join(at50, "\n")
	for _, l := range at50 {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), 49, l)
	}
	assert.Contains(t, text, "installing-in-progress", "the status is whole")
	assert.Contains(t, text, "  Writing image to disk 45%, 12s ago")
	assert.NotContains(t, text, "…")

	wide := tableLines(rows, 0)
	assert.Contains(t, strings.Join(wide, "\n"), "master (bootstrap)", "with room, the full table")
}
