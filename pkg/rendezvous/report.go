package rendezvous

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

// LevelTrace is below Debug; used for validations that are neither passing nor failing.
const LevelTrace = slog.LevelDebug - 4

// HostRow is one line of the host table.
type HostRow struct {
	Name       string
	Role       string
	Status     string
	StatusInfo string
	Stage      string
	Percent    int64
	LastChange time.Time
}

// Reporter receives everything wait-for has to say.
type Reporter interface {
	// Log reports one message at a level.
	Log(level slog.Level, msg string)
	// Hosts reports the current host table (after every successful REST poll).
	Hosts(rows []HostRow)
}

func levelName(l slog.Level) string {
	switch {
	case l < slog.LevelDebug:
		return "TRACE"
	case l < slog.LevelInfo:
		return "DEBUG"
	case l < slog.LevelWarn:
		return "INFO"
	case l < slog.LevelError:
		return "WARN"
	}
	return "ERROR"
}

// PlainReporter writes timestamped lines with no escape codes, for logs and CI.
type PlainReporter struct {
	mu    sync.Mutex
	w     io.Writer
	min   slog.Level
	clock Clock
	last  map[string]HostRow
}

// NewPlainReporter writes messages at min level and above to w.
func NewPlainReporter(w io.Writer, min slog.Level, clock Clock) *PlainReporter {
	return &PlainReporter{w: w, min: min, clock: clock, last: map[string]HostRow{}}
}

// Log writes "<RFC3339> LEVEL message".
func (p *PlainReporter) Log(l slog.Level, msg string) {
	if l < p.min {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s %-5s %s\n", p.clock.Now().UTC().Format(time.RFC3339), levelName(l), termsafe.Text(msg))
}

// Hosts writes a debug line per host whose status, stage or progress
// changed. Only the hosts of the last call are remembered.
func (p *PlainReporter) Hosts(rows []HostRow) {
	p.mu.Lock()
	last := p.last
	p.last = make(map[string]HostRow, len(rows))
	p.mu.Unlock()
	for _, r := range rows {
		p.mu.Lock()
		prev, ok := last[r.Name]
		p.last[r.Name] = r
		p.mu.Unlock()
		if ok && prev.Status == r.Status && prev.Stage == r.Stage && prev.Percent == r.Percent {
			continue
		}
		p.Log(slog.LevelDebug, fmt.Sprintf("Host %s [%s]: %s%s", termsafe.String(r.Name), termsafe.String(r.Role), termsafe.String(r.Status), stageText(r)))
	}
}

func stageText(r HostRow) string {
	if r.Stage == "" {
		return ""
	}
	return fmt.Sprintf(", stage %s %d%%", termsafe.String(r.Stage), r.Percent)
}

// TerminalReporter keeps a live host table at the bottom of a terminal,
// redrawn in place with ANSI escapes; messages scroll above it.
type TerminalReporter struct {
	mu     sync.Mutex
	w      io.Writer
	min    slog.Level
	clock  Clock
	rows   []HostRow
	drawn  int // lines of the table currently on screen
	colour bool
	width  int
}

// SetWidth cuts table lines to the terminal width so that none wraps (a
// wrapped line would break the in-place redraw). 0 means no limit.
func (t *TerminalReporter) SetWidth(w int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.width = w
}

// NewTerminalReporter writes to a terminal w.
func NewTerminalReporter(w io.Writer, min slog.Level, clock Clock) *TerminalReporter {
	return &TerminalReporter{w: w, min: min, clock: clock, colour: true}
}

func (t *TerminalReporter) erase(b *bytes.Buffer) {
	if t.drawn > 0 {
		fmt.Fprintf(b, "\x1b[%dA\r\x1b[J", t.drawn)
		t.drawn = 0
	}
}

func (t *TerminalReporter) draw(b *bytes.Buffer) {
	if len(t.rows) == 0 {
		return
	}
	var tb bytes.Buffer
	tw := tabwriter.NewWriter(&tb, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tROLE\tSTATUS\tSTAGE\tPROGRESS\tLAST CHANGE")
	now := t.clock.Now()
	for _, r := range t.rows {
		pct, last := "", ""
		if r.Stage != "" {
			pct = fmt.Sprintf("%d%%", r.Percent)
		}
		if !r.LastChange.IsZero() {
			last = fmt.Sprintf("%s (%s ago)", r.LastChange.Local().Format("15:04:05"), now.Sub(r.LastChange).Truncate(time.Second))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", termsafe.String(r.Name), termsafe.String(r.Role), termsafe.String(r.Status), termsafe.String(r.Stage), pct, last)
	}
	_ = tw.Flush()
	lines := strings.Split(strings.TrimSuffix(tb.String(), "\n"), "\n")
	for _, l := range lines {
		l = strings.TrimRight(l, " ")
		if t.width > 0 && len(l) > t.width-1 {
			l = l[:t.width-1]
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	t.drawn = len(lines)
}

// Log prints the message above the table.
func (t *TerminalReporter) Log(l slog.Level, msg string) {
	if l < t.min {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var b bytes.Buffer
	t.erase(&b)
	name := levelName(l)
	if t.colour {
		switch {
		case l >= slog.LevelError:
			name = "\x1b[31m" + name + "\x1b[0m"
		case l >= slog.LevelWarn:
			name = "\x1b[33m" + name + "\x1b[0m"
		case l < slog.LevelInfo:
			name = "\x1b[2m" + name + "\x1b[0m"
		}
	}
	fmt.Fprintf(&b, "%s %s %s\n", t.clock.Now().Local().Format("15:04:05"), name, termsafe.Text(msg))
	t.draw(&b)
	_, _ = t.w.Write(b.Bytes())
}

// Hosts redraws the table.
func (t *TerminalReporter) Hosts(rows []HostRow) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rows = append(t.rows[:0:0], rows...)
	var b bytes.Buffer
	t.erase(&b)
	t.draw(&b)
	_, _ = t.w.Write(b.Bytes())
}
