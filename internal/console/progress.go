package console

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"
)

// WriteProgress shows how far a long write is, as an INFO line: redrawn in
// place on a terminal (at most 5 times a second), otherwise a line every 25%.
type WriteProgress struct {
	mu      sync.Mutex
	w       io.Writer
	t       Term
	name    string
	last    time.Time
	quarter int64
	drawn   bool
}

// UpdateDetail reports done of total bytes written, and detail (what else
// is counted: "images 3/120, 2m10s left"), shown after the bytes on a
// terminal and on each plain line.
func (p *WriteProgress) UpdateDetail(done, total int64, detail string) {
	p.update(done, total, detail)
}

// NewWriteProgress reports the writing of name on w, a t.
func NewWriteProgress(w io.Writer, t Term, name string) *WriteProgress {
	return &WriteProgress{w: w, t: t, name: name}
}

// Update reports done of total bytes written.
func (p *WriteProgress) Update(done, total int64) { p.update(done, total, "") }

func (p *WriteProgress) update(done, total int64, detail string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if total <= 0 {
		return
	}
	pct := done * 100 / total
	if p.t.TTY {
		if now := time.Now(); now.Sub(p.last) >= 200*time.Millisecond || done == total {
			p.last = now
			p.drawn = true
			if detail != "" {
				detail = ", " + detail
			}
			fmt.Fprintf(p.w, "\r%s Writing %s: %3d%% (%d / %d MiB%s)\x1b[K", Label(slog.LevelInfo, p.t.Colour), p.name, pct, done>>20, total>>20, detail)
		}
		return
	}
	if q := pct / 25; q > p.quarter && q < 4 {
		p.quarter = q
		msg := fmt.Sprintf("Writing %s: %d%%", p.name, q*25)
		if detail != "" {
			msg += " (" + detail + ")"
		}
		fmt.Fprint(p.w, Line(slog.LevelInfo, msg, false))
	}
}

// Done ends the progress line.
func (p *WriteProgress) Done(bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.t.TTY && p.drawn {
		fmt.Fprintln(p.w)
	}
}

// LevelWriter gives each line written through it the label of a level, so
// that progress text written by others (the base ISO download) has the
// format of every other line. On a terminal a line redrawn after "\r" is
// labelled too.
type LevelWriter struct {
	mu    sync.Mutex
	w     io.Writer
	label []byte
	mid   bool // in the middle of a line
}

// NewLevelWriter labels the lines written to w with level l.
func NewLevelWriter(w io.Writer, l slog.Level, colour bool) *LevelWriter {
	return &LevelWriter{w: w, label: []byte(Label(l, colour) + " ")}
}

// Write writes b, labelling every line start.
func (lw *LevelWriter) Write(b []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	var out bytes.Buffer
	for _, c := range b {
		if !lw.mid && c != '\n' && c != '\r' {
			out.Write(lw.label)
			lw.mid = true
		}
		out.WriteByte(c)
		if c == '\n' || c == '\r' {
			lw.mid = false
		}
	}
	if _, err := lw.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}
