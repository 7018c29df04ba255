package console

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

// NewLogger returns the one logger of a command: "LEVEL message" lines at
// level (ParseLevel) and above on w, coloured on a terminal unless
// NO_COLOR is set, and, when debugLog is not nil, every line from debug up
// on debugLog, uncoloured (the debug log in the asset directory).
func NewLogger(w io.Writer, level string, debugLog io.Writer) (*slog.Logger, error) {
	lv, err := ParseLevel(level)
	if err != nil {
		return nil, err
	}
	h := slog.Handler(NewHandler(w, lv, Inspect(w).Colour))
	if debugLog != nil {
		h = slog.NewMultiHandler(h, NewHandler(debugLog, slog.LevelDebug, false))
	}
	return slog.New(h), nil
}

// Handler is the slog handler of every command: Line's "LEVEL message"
// format, with any attributes appended as key=value.
type Handler struct {
	mu     *sync.Mutex
	w      io.Writer
	level  slog.Leveler
	colour bool
	attrs  []slog.Attr
}

// NewHandler writes records at level and above to w.
func NewHandler(w io.Writer, level slog.Leveler, colour bool) *Handler {
	return &Handler{mu: &sync.Mutex{}, w: w, level: level, colour: colour}
}

// Enabled reports whether l is at the handler's level or above.
func (h *Handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

// Handle writes one line.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(Label(r.Level, h.colour))
	b.WriteByte(' ')
	b.WriteString(termsafe.Text(r.Message))
	writeAttrs(&b, h.attrs, r)
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func writeAttrs(b *strings.Builder, pre []slog.Attr, r slog.Record) {
	write := func(a slog.Attr) bool {
		v := a.Value.Resolve().String()
		if strings.ContainsAny(v, " \t\"") {
			v = fmt.Sprintf("%q", v)
		} else {
			v = termsafe.String(v)
		}
		fmt.Fprintf(b, " %s=%s", a.Key, v)
		return true
	}
	for _, a := range pre {
		write(a)
	}
	r.Attrs(write)
}

// WithAttrs returns a handler that appends as to every line.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append(append([]slog.Attr{}, h.attrs...), as...)
	return &n
}

// WithGroup is the handler itself: agentiso does not group attributes.
func (h *Handler) WithGroup(string) slog.Handler { return h }
