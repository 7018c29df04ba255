package baseiso

import (
	"fmt"
	"io"
	"time"
)

const (
	// ttyRedraw is the minimum interval between redraws of the TTY bar.
	ttyRedraw = 200 * time.Millisecond
	// lineInterval is the maximum interval between plain progress lines.
	lineInterval = 10 * time.Second
)

// progress reports download progress to w. On a TTY it redraws one line in
// place; otherwise it prints a line every lineInterval or every 10 percent,
// whichever comes first. A nil w disables output. Write errors on w are
// ignored: progress output must never fail a download.
type progress struct {
	w     io.Writer
	tty   bool
	name  string
	now   func() time.Time
	total int64 // -1 when unknown

	done      int64 // bytes of the file present so far, including resumed bytes
	base      int64 // bytes present when this transfer started
	start     time.Time
	last      time.Time // last output
	lastTenth int64     // last 10% step reported (plain mode)
	drawn     bool
}

func newProgress(w io.Writer, tty bool, name string, now func() time.Time, offset, total int64) *progress {
	t := now()
	p := &progress{w: w, tty: tty, name: name, now: now, total: total, done: offset, base: offset, start: t, last: t}
	if total > 0 {
		p.lastTenth = offset * 10 / total
	}
	if w != nil && !tty {
		if offset > 0 {
			fmt.Fprintf(w, "Resuming download of %s at %s\n", name, p.amount())
		} else {
			fmt.Fprintf(w, "Downloading %s (%s)\n", name, sizeOrUnknown(total))
		}
	}
	return p
}

// Write counts n bytes as transferred. It never fails.
func (p *progress) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	if p.w == nil {
		return len(b), nil
	}
	now := p.now()
	if p.tty {
		if now.Sub(p.last) >= ttyRedraw {
			p.draw(now)
		}
		return len(b), nil
	}
	tenth := int64(-1)
	if p.total > 0 {
		tenth = p.done * 10 / p.total
	}
	if now.Sub(p.last) >= lineInterval || (tenth > p.lastTenth && tenth < 10) {
		if tenth >= 0 {
			p.lastTenth = tenth
		}
		p.last = now
		fmt.Fprintf(p.w, "Downloading %s: %s\n", p.name, p.status(now))
	}
	return len(b), nil
}

// draw redraws the TTY line.
func (p *progress) draw(now time.Time) {
	p.last = now
	p.drawn = true
	fmt.Fprintf(p.w, "\r%s  %s\x1b[K", p.name, p.status(now))
}

// finish writes the final state: the complete bar and a newline on a TTY, or
// a summary line. ok is false when the transfer stopped early.
func (p *progress) finish(ok bool) {
	if p.w == nil {
		return
	}
	now := p.now()
	if p.tty {
		p.draw(now)
		fmt.Fprintln(p.w)
		return
	}
	if !ok {
		fmt.Fprintf(p.w, "Download of %s stopped at %s\n", p.name, p.amount())
		return
	}
	el := now.Sub(p.start)
	fmt.Fprintf(p.w, "Downloaded %s: %s in %s (%s/s)\n", p.name, humanBytes(p.done), el.Round(time.Second), humanBytes(rate(p.done-p.base, el)))
}

// amount is "X / Y (P%)" or "X" when the total is unknown.
func (p *progress) amount() string {
	if p.total > 0 {
		return fmt.Sprintf("%s / %s (%d%%)", humanBytes(p.done), humanBytes(p.total), p.done*100/p.total)
	}
	return humanBytes(p.done)
}

// status is the amount, the transfer rate and, when the total is known, the ETA.
func (p *progress) status(now time.Time) string {
	el := now.Sub(p.start)
	r := rate(p.done-p.base, el)
	s := fmt.Sprintf("%s  %s/s", p.amount(), humanBytes(r))
	if p.total > 0 {
		eta := "--:--"
		if r > 0 && p.done <= p.total {
			eta = formatETA(time.Duration(float64(p.total-p.done) / float64(r) * float64(time.Second)))
		}
		s += "  ETA " + eta
	}
	return s
}

// rate is bytes per second over el, 0 when el is not positive.
func rate(n int64, el time.Duration) int64 {
	if el <= 0 || n <= 0 {
		return 0
	}
	return int64(float64(n) / el.Seconds())
}

// formatETA renders d as m:ss, or h:mm:ss from one hour on.
func formatETA(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// humanBytes renders n with binary units: 512 B, 1.5 KiB, 960.0 MiB, 1.1 GiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func sizeOrUnknown(n int64) string {
	if n < 0 {
		return "size unknown"
	}
	return humanBytes(n)
}
