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
	"unicode/utf8"

	"github.com/seed-a052040e/agentiso/internal/console"
	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

// LevelTrace is below Debug; used for validations that are neither passing nor failing.
const LevelTrace = console.LevelTrace

// HostRow is one line of the host table.
type HostRow struct {
	Name string
	// Role is the API's (master, worker, arbiter; the suggested role
	// while auto-assign); Bootstrap marks the bootstrap host.
	Role       string
	Bootstrap  bool
	Status     string
	StatusInfo string
	Stage      string
	Percent    int64
	// LastChange is the server's time of the host's last status or stage
	// change; Age is how long ago that was by the server's own clock (the
	// Date of its answer), never by the workstation's.
	LastChange time.Time
	Age        time.Duration
}

// Reporter receives everything wait-for has to say.
type Reporter interface {
	// Log reports one message at a level.
	Log(level slog.Level, msg string)
	// Hosts reports the current host table (after every successful REST poll).
	Hosts(rows []HostRow)
	// Stale says the host table no longer follows the install (its source,
	// the rendezvous API, went away) and why; Hosts starts following again.
	Stale(note string)
	// Result reports the outcome of the wait: shown whatever the level.
	Result(msg string)
	// Close ends the report: the live table is removed on success and
	// left, finalised, on failure.
	Close(success bool)
}

// PlainReporter writes one "LEVEL message" line per message (internal/console),
// with no escape codes, for logs and CI.
type PlainReporter struct {
	mu   sync.Mutex
	w    io.Writer
	min  slog.Level
	last map[string]HostRow
}

// NewPlainReporter writes messages at min level and above to w.
func NewPlainReporter(w io.Writer, min slog.Level) *PlainReporter {
	return &PlainReporter{w: w, min: min, last: map[string]HostRow{}}
}

// Log writes "LEVEL message".
func (p *PlainReporter) Log(l slog.Level, msg string) {
	if l < p.min {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = io.WriteString(p.w, console.Line(l, msg, false))
}

// Result writes an INFO line whatever the level.
func (p *PlainReporter) Result(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = io.WriteString(p.w, console.Line(slog.LevelInfo, msg, false))
}

// Stale writes the note as a debug line.
func (p *PlainReporter) Stale(note string) { p.Log(slog.LevelDebug, "Host table: "+note) }

// Close does nothing: plain output has no live table.
func (p *PlainReporter) Close(bool) {}

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
		p.Log(slog.LevelDebug, fmt.Sprintf("Host %s [%s]: %s%s", termsafe.String(r.Name), termsafe.String(r.roleLabel(false)), termsafe.String(r.Status), stageText(r)))
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
	colour bool
	width  func() int
	rows   []HostRow
	note   string // why the table is stale, "" while it follows the install
	closed bool
	// drawn holds the length in columns of each table line on screen and
	// drawnAt the terminal width they were drawn at.
	drawn   []int
	drawnAt int
}

// NewTerminalReporter writes to a terminal w, colouring levels when colour
// is set. width returns the terminal's current width (0: no limit); it is
// asked at every redraw, so the table follows resizes and no line wraps (a
// wrapped line would break the in-place redraw).
func NewTerminalReporter(w io.Writer, min slog.Level, colour bool, width func() int) *TerminalReporter {
	if width == nil {
		width = func() int { return 0 }
	}
	return &TerminalReporter{w: w, min: min, colour: colour, width: width}
}

// erase moves up over the table on screen and clears to the end. A table
// drawn wider than the terminal now is has been reflowed by the terminal
// (as tmux, VTE, iTerm2 and Windows Terminal do): each line now takes
// ceil(length/width) rows.
func (t *TerminalReporter) erase(b *bytes.Buffer, width int) {
	if len(t.drawn) == 0 {
		return
	}
	rows := 0
	for _, n := range t.drawn {
		if width > 0 && width < t.drawnAt && n > width {
			rows += (n + width - 1) / width
		} else {
			rows++
		}
	}
	fmt.Fprintf(b, "\x1b[%dA\r\x1b[J", rows)
	t.drawn = nil
}

func (t *TerminalReporter) draw(b *bytes.Buffer, width int) {
	if len(t.rows) == 0 || t.closed {
		return
	}
	lines := tableLines(t.rows, width)
	if t.note != "" {
		lines = append([]string{fmt.Sprintf("Hosts (stale: %s)", t.note)}, lines...)
	}
	t.drawn, t.drawnAt = make([]int, 0, len(lines)), width
	for _, l := range lines {
		l = cut(strings.TrimRight(l, " "), width-1)
		b.WriteString(l)
		b.WriteByte('\n')
		t.drawn = append(t.drawn, utf8.RuneCountInString(l))
	}
}

// roleLabel is the role as shown: "master (bootstrap)", or in the compact
// table "master*" (a legend line says what * means).
func (r HostRow) roleLabel(compact bool) string {
	switch {
	case !r.Bootstrap:
		return r.Role
	case compact:
		return r.Role + "*"
	}
	return r.Role + " (bootstrap)"
}

// tableLines lays the host table out for a terminal width columns wide
// (0: no limit), so that the most useful columns survive a narrow
// terminal (issue 37 item 11): the full table when it fits; else a compact
// one (the bootstrap mark as "*" with a legend, the last change as its age
// only, under the headers % and AGE); else two lines per host (host, role, status; then the stage,
// progress and age indented below). Nothing is dropped silently: a line
// still too long is cut with a visible "…".
func tableLines(rows []HostRow, width int) []string {
	fits := func(ls []string) bool {
		if width <= 0 {
			return true
		}
		for _, l := range ls {
			if utf8.RuneCountInString(strings.TrimRight(l, " ")) > width-1 {
				return false
			}
		}
		return true
	}
	full := renderTable(rows, false)
	if fits(full) {
		return full
	}
	compact := renderTable(rows, true)
	if fits(compact) {
		return compact
	}
	var tb bytes.Buffer
	tw := tabwriter.NewWriter(&tb, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tROLE\tSTATUS")
	var second []string
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", termsafe.String(r.Name), termsafe.String(r.roleLabel(true)), termsafe.String(r.Status))
		var more []string
		if r.Stage != "" {
			more = append(more, fmt.Sprintf("%s %d%%", termsafe.String(r.Stage), r.Percent))
		}
		if !r.LastChange.IsZero() {
			more = append(more, max(r.Age, 0).Truncate(time.Second).String()+" ago")
		}
		second = append(second, strings.Join(more, ", "))
	}
	_ = tw.Flush()
	first := strings.Split(strings.TrimSuffix(tb.String(), "\n"), "\n")
	out := []string{ellipsis(first[0], width)}
	for i, l := range first[1:] {
		out = append(out, ellipsis(l, width))
		if second[i] != "" {
			out = append(out, ellipsis("  "+second[i], width))
		}
	}
	if hasBootstrap(rows) {
		out = append(out, "* bootstrap host")
	}
	return out
}

func hasBootstrap(rows []HostRow) bool {
	for _, r := range rows {
		if r.Bootstrap {
			return true
		}
	}
	return false
}

// renderTable is the one-line-per-host table, compact or not.
func renderTable(rows []HostRow, compact bool) []string {
	var tb bytes.Buffer
	tw := tabwriter.NewWriter(&tb, 0, 4, 2, ' ', 0)
	if compact {
		fmt.Fprintln(tw, "HOST\tROLE\tSTATUS\tSTAGE\t%\tAGE")
	} else {
		fmt.Fprintln(tw, "HOST\tROLE\tSTATUS\tSTAGE\tPROGRESS\tLAST CHANGE")
	}
	for _, r := range rows {
		pct, last := "", ""
		if r.Stage != "" {
			pct = fmt.Sprintf("%d%%", r.Percent)
		}
		if !r.LastChange.IsZero() {
			age := max(r.Age, 0).Truncate(time.Second)
			if compact {
				last = age.String() + " ago"
			} else {
				last = fmt.Sprintf("%s (%s ago)", r.LastChange.Local().Format("15:04:05"), age)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", termsafe.String(r.Name), termsafe.String(r.roleLabel(compact)), termsafe.String(r.Status), termsafe.String(r.Stage), pct, last)
	}
	_ = tw.Flush()
	out := strings.Split(strings.TrimSuffix(tb.String(), "\n"), "\n")
	if compact && hasBootstrap(rows) {
		out = append(out, "* bootstrap host")
	}
	return out
}

// ellipsis shortens s to fit a terminal width columns wide (0: no limit),
// ending it with "…" when cut, so the cut shows.
func ellipsis(s string, width int) string {
	s = strings.TrimRight(s, " ")
	if width <= 0 || utf8.RuneCountInString(s) <= width-1 {
		return s
	}
	if width < 3 {
		return cut(s, width-1)
	}
	return cut(s, width-2) + "…"
}

// cut shortens s to n runes; n < 0 means no limit. The table holds only
// escaped text (internal/termsafe): one rune, one column.
func cut(s string, n int) string {
	if n < 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// Log prints the message above the table.
func (t *TerminalReporter) Log(l slog.Level, msg string) {
	if l < t.min {
		return
	}
	t.print(l, msg)
}

// Result prints an INFO line above the table whatever the level.
func (t *TerminalReporter) Result(msg string) { t.print(slog.LevelInfo, msg) }

func (t *TerminalReporter) print(l slog.Level, msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b bytes.Buffer
	width := t.width()
	t.erase(&b, width)
	b.WriteString(console.Line(l, msg, t.colour))
	t.draw(&b, width)
	_, _ = t.w.Write(b.Bytes())
}

// Hosts redraws the table; it follows the install again.
func (t *TerminalReporter) Hosts(rows []HostRow) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rows = append(t.rows[:0:0], rows...)
	t.note = ""
	t.redraw()
}

// Stale redraws the table under a line that says it is stale and why.
func (t *TerminalReporter) Stale(note string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.note == note {
		return
	}
	t.note = note
	t.redraw()
}

func (t *TerminalReporter) redraw() {
	var b bytes.Buffer
	width := t.width()
	t.erase(&b, width)
	t.draw(&b, width)
	_, _ = t.w.Write(b.Bytes())
}

// Close removes the live table. After a failure the last table stays on
// screen, drawn once more as it was last seen, as a record of where the
// hosts stood; after a success it would only contradict the result.
func (t *TerminalReporter) Close(success bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b bytes.Buffer
	width := t.width()
	t.erase(&b, width)
	if !success {
		t.draw(&b, width)
	}
	t.closed, t.drawn = true, nil
	_, _ = t.w.Write(b.Bytes())
}

// NewReporter is the Reporter of a command that follows an install: on out
// the messages at level and above, as a live table of the hosts when out
// is a terminal, else as lines; and, when log is not nil, every message
// at debug level on log (the debug log in the asset directory).
func NewReporter(out io.Writer, level slog.Level, log io.Writer) Reporter {
	var rep Reporter
	if t := console.Inspect(out); t.TTY {
		rep = NewTerminalReporter(out, level, t.Colour, t.Width)
	} else {
		rep = NewPlainReporter(out, level)
	}
	if log != nil {
		rep = Tee(rep, NewPlainReporter(log, slog.LevelDebug))
	}
	return rep
}

// Tee returns a Reporter that passes everything to each of rs (the
// terminal and the debug log in --dir).
func Tee(rs ...Reporter) Reporter { return tee(rs) }

type tee []Reporter

func (t tee) Log(l slog.Level, msg string) {
	for _, r := range t {
		r.Log(l, msg)
	}
}

func (t tee) Hosts(rows []HostRow) {
	for _, r := range t {
		r.Hosts(rows)
	}
}

func (t tee) Stale(note string) {
	for _, r := range t {
		r.Stale(note)
	}
}

func (t tee) Result(msg string) {
	for _, r := range t {
		r.Result(msg)
	}
}

func (t tee) Close(success bool) {
	for _, r := range t {
		r.Close(success)
	}
}
