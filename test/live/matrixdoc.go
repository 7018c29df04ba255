package live

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Matrix markers in docs/e2e.md: TestLiveMatrix rewrites what is between them.
const (
	matrixBegin = "<!-- live-matrix:begin (make e2e-live-matrix writes this table) -->"
	matrixEnd   = "<!-- live-matrix:end -->"
)

// matrixRow is one branch's result; run is when it ran (UTC, minutes).
type matrixRow struct {
	branch, run, commit, result, said string
}

// matrixRunLine is the line above the table that dates a whole run in the
// table's first form (no run column); its date is given to its rows.
var matrixRunLine = regexp.MustCompile(`(?m)^Run (\d{4}-\d\d-\d\d \d\d:\d\d UTC)`)

// writeMatrix writes rows, run at, into the table between the markers of
// doc. The rows of branches this run did not cover stay as they were, with
// the date they ran, so a run of some branches (AGENTISO_LIVE_MATRIX_BRANCHES)
// updates their rows without losing the others'. The file is replaced
// through a temporary name.
func writeMatrix(doc string, rows []matrixRow, at time.Time) error {
	b, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, matrixBegin), strings.Index(s, matrixEnd)
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %q ... %q markers", doc, matrixBegin, matrixEnd)
	}
	byBranch := map[string]matrixRow{}
	for _, r := range parseMatrix(s[i+len(matrixBegin) : j]) {
		byBranch[r.branch] = r
	}
	stamp := at.UTC().Format("2006-01-02 15:04 MST")
	for _, r := range rows {
		r.run = stamp
		if len(r.commit) > 12 {
			r.commit = r.commit[:12]
		}
		byBranch[r.branch] = r
	}
	branches := make([]string, 0, len(byBranch))
	for b := range byBranch {
		branches = append(branches, b)
	}
	sort.Strings(branches)
	var tb strings.Builder
	fmt.Fprintf(&tb, "%s\n\nOne SNO scenario per branch (`make e2e-live-matrix`; a run of some branches, `AGENTISO_LIVE_MATRIX_BRANCHES`, updates only their rows).\n\n", matrixBegin)
	tb.WriteString("| branch | run | upstream commit | result | what the real programs (or agentiso) said |\n|---|---|---|---|---|\n")
	for _, b := range branches {
		r := byBranch[b]
		cells := []string{r.branch, r.run, r.commit, r.result, r.said}
		for k, c := range cells {
			cells[k] = strings.ReplaceAll(strings.ReplaceAll(c, "\n", " "), "|", `\|`)
		}
		fmt.Fprintf(&tb, "| %s |\n", strings.Join(cells, " | "))
	}
	out := s[:i] + tb.String() + "\n" + s[j:]
	tmp := doc + ".tmp"
	if err := os.WriteFile(tmp, []byte(out), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, doc)
}

// parseMatrix reads the rows of a table writeMatrix wrote: five columns
// (branch, run, commit, result, said), or the first form's four (no run
// column; its rows get the date of the "Run ..." line above the table).
func parseMatrix(table string) []matrixRow {
	var runAll string
	if m := matrixRunLine.FindStringSubmatch(table); m != nil {
		runAll = m[1]
	}
	var rows []matrixRow
	for _, line := range strings.Split(table, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "| ") || !strings.HasSuffix(line, " |") || strings.HasPrefix(line, "| branch |") {
			continue
		}
		cells := splitRow(strings.TrimSuffix(strings.TrimPrefix(line, "| "), " |"))
		switch len(cells) {
		case 4:
			rows = append(rows, matrixRow{branch: cells[0], run: runAll, commit: cells[1], result: cells[2], said: cells[3]})
		case 5:
			rows = append(rows, matrixRow{branch: cells[0], run: cells[1], commit: cells[2], result: cells[3], said: cells[4]})
		}
	}
	return rows
}

// splitRow splits a table row's inside at " | " separators that are not
// escaped, and unescapes "\|" in the cells.
func splitRow(s string) []string {
	var cells []string
	var cur strings.Builder
	for k := 0; k < len(s); k++ {
		switch {
		case s[k] == '\\' && k+1 < len(s) && s[k+1] == '|':
			cur.WriteByte('|')
			k++
		case s[k] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(s[k])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}
