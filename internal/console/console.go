// Package console is agentiso's one voice at the terminal: the one line
// format of every message ("LEVEL message"), colour on terminals unless
// NO_COLOR is set, and the terminal's own width, read again at every redraw.
package console

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

// LevelTrace is below Debug: what only --log-level trace shows.
const LevelTrace = slog.LevelDebug - 4

// Term describes where messages go: a terminal (that understands redraws)
// or not, whether to colour, and how wide it is.
type Term struct {
	// TTY is true for a character device whose $TERM is not "dumb".
	TTY bool
	// Colour is TTY and $NO_COLOR unset or empty (https://no-color.org).
	Colour bool
	fd     int
	getenv func(string) string
}

// Inspect tells what w is, from the process environment.
func Inspect(w io.Writer) Term { return InspectEnv(w, os.Getenv) }

// InspectEnv is Inspect with the environment given by getenv.
func InspectEnv(w io.Writer, getenv func(string) string) Term {
	t := Term{fd: -1, getenv: getenv}
	f, ok := w.(*os.File)
	if !ok {
		return t
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 || getenv("TERM") == "dumb" {
		return t
	}
	t.TTY, t.fd = true, int(f.Fd())
	t.Colour = getenv("NO_COLOR") == ""
	return t
}

// Width is the terminal's width in columns now: the size the terminal
// itself reports (so it follows resizes), else $COLUMNS, else 80. It is 0
// (no limit) when the output is not a terminal.
func (t Term) Width() int {
	if !t.TTY {
		return 0
	}
	if w, _, err := term.GetSize(t.fd); err == nil && w > 0 {
		return w
	}
	if n, err := strconv.Atoi(t.getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 80
}

// ParseLevel reads a --log-level value.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "trace":
		return LevelTrace, nil
	case "debug":
		return slog.LevelDebug, nil
	case "info", "":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("invalid --log-level %q: use trace, debug, info, warn or error", s)
}

// Levels are the values of --log-level, most verbose first.
var Levels = []string{"trace", "debug", "info", "warn", "error"}

// LevelOutcome is what a command made or concluded ("Generated ISO at
// ..."): above every level, so it shows whatever --log-level says (the
// help promises outcomes always show), and written as INFO.
const LevelOutcome = slog.LevelError + 4

// Outcome logs msg (with args as attributes) at LevelOutcome.
func Outcome(log *slog.Logger, msg string, args ...any) {
	log.Log(context.Background(), LevelOutcome, msg, args...)
}

// LevelName is how a level is written: TRACE, DEBUG, INFO, WARNING, ERROR
// (LevelOutcome: INFO).
func LevelName(l slog.Level) string {
	switch {
	case l == LevelOutcome:
		return "INFO"
	case l < slog.LevelDebug:
		return "TRACE"
	case l < slog.LevelInfo:
		return "DEBUG"
	case l < slog.LevelWarn:
		return "INFO"
	case l < slog.LevelError:
		return "WARNING"
	}
	return "ERROR"
}

// Label is LevelName, coloured when colour is set: red errors, yellow
// warnings, dim debug and trace.
func Label(l slog.Level, colour bool) string {
	name := LevelName(l)
	if !colour {
		return name
	}
	switch {
	case l == LevelOutcome:
		return name
	case l >= slog.LevelError:
		return "\x1b[31m" + name + "\x1b[0m"
	case l >= slog.LevelWarn:
		return "\x1b[33m" + name + "\x1b[0m"
	case l < slog.LevelInfo:
		return "\x1b[2m" + name + "\x1b[0m"
	}
	return name
}

// Line is one message as every agentiso command writes it: "LEVEL
// message\n", the message made safe for a terminal (internal/termsafe).
func Line(l slog.Level, msg string, colour bool) string {
	return Label(l, colour) + " " + termsafe.Text(msg) + "\n"
}
