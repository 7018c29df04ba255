package console

import (
	"context"
	"io"
	"log/slog"
	"strconv"
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
	// bufs are the lines being formatted (*[]byte): a line costs no
	// allocation of its own (agentiso serve writes one per request).
	bufs *sync.Pool
}

// NewHandler writes records at level and above to w.
func NewHandler(w io.Writer, level slog.Leveler, colour bool) *Handler {
	return &Handler{mu: &sync.Mutex{}, w: w, level: level, colour: colour, bufs: &sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}}
}

// Enabled reports whether l is at the handler's level or above.
func (h *Handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

// maxPooledLine bounds the buffers kept for the next lines.
const maxPooledLine = 16 << 10

// Handle writes one line.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	bp := h.bufs.Get().(*[]byte)
	b := append((*bp)[:0], Label(r.Level, h.colour)...)
	b = append(b, ' ')
	b = append(b, termsafe.Text(r.Message)...)
	for _, a := range h.attrs {
		b = appendAttr(b, a)
	}
	r.Attrs(func(a slog.Attr) bool {
		b = appendAttr(b, a)
		return true
	})
	b = append(b, '\n')
	h.mu.Lock()
	_, err := h.w.Write(b)
	h.mu.Unlock()
	if cap(b) <= maxPooledLine {
		*bp = b
		h.bufs.Put(bp)
	}
	return err
}

// appendAttr appends " key=value": the value quoted (Go syntax) when it
// holds a blank or a quote, otherwise with its unsafe characters escaped
// (termsafe).
func appendAttr(b []byte, a slog.Attr) []byte {
	b = append(b, ' ')
	b = append(b, a.Key...)
	b = append(b, '=')
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10)
	}
	s := v.String()
	if strings.ContainsAny(s, " \t\"") {
		return strconv.AppendQuote(b, s)
	}
	return append(b, termsafe.String(s)...)
}

// WithAttrs returns a handler that appends as to every line.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append(append([]slog.Attr{}, h.attrs...), as...)
	return &n
}

// WithGroup is the handler itself: agentiso does not group attributes.
func (h *Handler) WithGroup(string) slog.Handler { return h }
