package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// isTerminal reports whether w is a terminal that understands redraws:
// the one place that decides between live and plain output.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

// writeProgress shows how far a long write is: a line redrawn in place on
// a terminal (at most 5 times a second), otherwise a line every 25%.
type writeProgress struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	name    string
	last    time.Time
	quarter int64
	drawn   bool
}

func newWriteProgress(w io.Writer, tty bool, name string) *writeProgress {
	return &writeProgress{w: w, tty: tty, name: name}
}

func (p *writeProgress) update(done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if total <= 0 {
		return
	}
	pct := done * 100 / total
	if p.tty {
		if now := time.Now(); now.Sub(p.last) >= 200*time.Millisecond || done == total {
			p.last = now
			p.drawn = true
			fmt.Fprintf(p.w, "\rWriting %s: %3d%% (%d / %d MiB)", p.name, pct, done>>20, total>>20)
		}
		return
	}
	if q := pct / 25; q > p.quarter && q < 4 {
		p.quarter = q
		fmt.Fprintf(p.w, "INFO Writing %s: %d%%\n", p.name, q*25)
	}
}

func (p *writeProgress) done(ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drawn {
		fmt.Fprintln(p.w)
	}
}
