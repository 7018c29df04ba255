package console

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLineFormat(t *testing.T) {
	assert.Equal(t, "INFO hello\n", Line(slog.LevelInfo, "hello", false))
	assert.Equal(t, "WARNING careful\n", Line(slog.LevelWarn, "careful", false))
	assert.Equal(t, "\x1b[31mERROR\x1b[0m boom\n", Line(slog.LevelError, "boom", true))
	assert.Equal(t, "TRACE x\n", Line(LevelTrace, "x", false))
	assert.Equal(t, `INFO a\x1b[2Jb`+"\n", Line(slog.LevelInfo, "a\x1b[2Jb", false), "text is made terminal-safe")
}

func TestParseLevel(t *testing.T) {
	for _, s := range Levels {
		_, err := ParseLevel(s)
		require.NoError(t, err, s)
	}
	_, err := ParseLevel("loud")
	assert.EqualError(t, err, `invalid --log-level "loud": use trace, debug, info, warn or error`)
}

// Not a terminal: no colour, no width limit, whatever the environment.
func TestInspectNotATerminal(t *testing.T) {
	env := map[string]string{"COLUMNS": "100"}
	var b bytes.Buffer
	tm := InspectEnv(&b, func(k string) string { return env[k] })
	assert.False(t, tm.TTY)
	assert.False(t, tm.Colour)
	assert.Zero(t, tm.Width())
	f, err := os.CreateTemp(t.TempDir(), "out")
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, InspectEnv(f, func(k string) string { return env[k] }).TTY)
}

func TestHandlerFormat(t *testing.T) {
	var b bytes.Buffer
	lg := slog.New(NewHandler(&b, slog.LevelInfo, false))
	lg.Debug("hidden")
	lg.Info("Wrote", "file", "a b")
	lg.Warn("careful")
	assert.Equal(t, "INFO Wrote file=\"a b\"\nWARNING careful\n", b.String())
}

// TestHandlerValues: every kind of value as a line shows it, the
// handler's own attributes first, lines longer than the pooled buffers
// whole.
func TestHandlerValues(t *testing.T) {
	var b bytes.Buffer
	lg := slog.New(NewHandler(&b, slog.LevelDebug, false)).With("host", "h-0")
	lg.Info("GET /x\x1b[2J", "n", -3, "u", uint64(7), "ok", true, "d", 1500*time.Millisecond, "f", 0.5,
		"err", errors.New("bad\x1by"), "q", `say "hi"`, "c", "a\nb", "tab", "a\tb", "empty", "")
	assert.Equal(t, `INFO GET /x\x1b[2J host=h-0 n=-3 u=7 ok=true d=1.5s f=0.5 err=bad\x1by q="say \"hi\"" c=a\nb tab="a\tb" empty=`+"\n", b.String())
	b.Reset()
	long := strings.Repeat("x", 3*maxPooledLine)
	lg.Debug("long", "v", long)
	lg.Debug("short")
	assert.Equal(t, "DEBUG long host=h-0 v="+long+"\nDEBUG short host=h-0\n", b.String())
}

// Text written by others (the download progress) gets the level label at
// every line start, and after a carriage return on a terminal.
func TestLevelWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewLevelWriter(&b, slog.LevelInfo, false)
	_, _ = w.Write([]byte("Downloading x: 1"))
	_, _ = w.Write([]byte("0%\nDownloaded x\n\rDownloading y\rDownloading y 5%\n"))
	assert.Equal(t, "INFO Downloading x: 10%\nINFO Downloaded x\n\rINFO Downloading y\rINFO Downloading y 5%\n", b.String())
}

func TestWriteProgressPlain(t *testing.T) {
	var b bytes.Buffer
	p := NewWriteProgress(&b, Term{}, "agent.iso")
	for i := int64(0); i <= 100; i += 5 {
		p.Update(i, 100)
	}
	p.Done(true)
	assert.Equal(t, "INFO Writing agent.iso: 25%\nINFO Writing agent.iso: 50%\nINFO Writing agent.iso: 75%\n", b.String())
}

// The extended ISO's progress says what else it counts after the bytes:
// on each plain line, and on the redrawn terminal line.
func TestWriteProgressDetail(t *testing.T) {
	var b bytes.Buffer
	p := NewWriteProgress(&b, Term{}, "agent.iso")
	for i := int64(0); i <= 100; i += 5 {
		p.UpdateDetail(i, 100, fmt.Sprintf("images %d/20", i/5))
	}
	p.Done(true)
	assert.Equal(t, "INFO Writing agent.iso: 25% (images 5/20)\nINFO Writing agent.iso: 50% (images 10/20)\nINFO Writing agent.iso: 75% (images 15/20)\n", b.String())
	b.Reset()
	p = NewWriteProgress(&b, Term{TTY: true}, "agent.iso")
	p.UpdateDetail(100<<20, 200<<20, "images 3/6, about 2s left")
	p.Done(true)
	assert.Equal(t, "\rINFO Writing agent.iso:  50% (100 / 200 MiB, images 3/6, about 2s left)\x1b[K\n", b.String())
}

// NewLogger writes at its level to the terminal side and every debug line
// to the debug log; a bad level is refused.
func TestNewLogger(t *testing.T) {
	var out, debug bytes.Buffer
	lg, err := NewLogger(&out, "warn", &debug)
	require.NoError(t, err)
	lg.Debug("polled")
	lg.Info("progress")
	lg.Warn("careful")
	assert.Equal(t, "WARNING careful\n", out.String())
	assert.Equal(t, "DEBUG polled\nINFO progress\nWARNING careful\n", debug.String())

	out.Reset()
	lg, err = NewLogger(&out, "info", nil)
	require.NoError(t, err)
	lg.Info("progress", "bytes", 3)
	assert.Equal(t, "INFO progress bytes=3\n", out.String())

	_, err = NewLogger(&out, "loud", nil)
	assert.Error(t, err)
}
