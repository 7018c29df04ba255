package live

import (
	"bufio"
	"bytes"
	"strings"
)

// PullErrorKind says what a failed image pull means for a lab run.
type PullErrorKind int

const (
	// PullTransient: the mirror was tried and did not answer in time (a TLS
	// handshake or connection timeout while the guest is busy booting under
	// TCG). The agent scripts retry pulls, so this alone fails nothing.
	PullTransient PullErrorKind = iota
	// PullUntrusted: the host does not trust the mirror's certificate
	// (x509), i.e. additionalTrustBundle did not reach the trust store the
	// pull used. Retrying cannot help.
	PullUntrusted
	// PullNotMirrored: the pull went to the source registry only and never to
	// the mirror (a tag reference under mirror-by-digest-only mirrors, or no
	// mirror configuration), which an air gap cannot answer.
	PullNotMirrored
	// PullMissing: the mirror answered that it does not have the image.
	PullMissing
)

func (k PullErrorKind) String() string {
	switch k {
	case PullUntrusted:
		return "the mirror's certificate is not trusted (x509)"
	case PullNotMirrored:
		return "the pull never went to the mirror (only the source registry, unreachable in the air gap, was tried)"
	case PullMissing:
		return "the mirror does not have the image"
	}
	return "transient"
}

// PullError is one failed pull found in a guest's journal.
type PullError struct {
	Kind PullErrorKind
	Line string
}

// Fatal reports whether retrying the pull cannot succeed.
func (e PullError) Fatal() bool { return e.Kind != PullTransient }

// pullErrorMarkers are the messages podman (containers/image) prints when a
// pull fails.
var pullErrorMarkers = []string{
	"Error: initializing source",
	"Error: reading manifest",
	"Error: copying system image",
	"Error: unable to copy from source",
	"Error: parsing image configuration",
}

// PullErrors returns every failed pull in a guest's journal (as streamed by
// the live fixture's live-journal.service), oldest first, classified.
func PullErrors(journal []byte) []PullError {
	var out []PullError
	sc := bufio.NewScanner(bytes.NewReader(journal))
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if !containsAny(line, pullErrorMarkers) && !containsAny(line, []string{"x509: ", "certificate signed by unknown authority"}) {
			continue
		}
		out = append(out, PullError{Kind: classifyPull(line), Line: line})
	}
	return out
}

func classifyPull(line string) PullErrorKind {
	switch {
	case containsAny(line, []string{"x509: ", "certificate signed by unknown authority"}):
		return PullUntrusted
	case containsAny(line, []string{"manifest unknown", "MANIFEST_UNKNOWN", "BLOB_UNKNOWN", "blob unknown"}):
		return PullMissing
	case containsAny(line, pullErrorMarkers) && !strings.Contains(line, "Mirrors also failed"):
		// containers/image names the mirrors it tried; without them only
		// the source was asked.
		return PullNotMirrored
	}
	return PullTransient
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// FirstFatal returns the first pull error that retrying cannot cure, if any.
func FirstFatal(errs []PullError) (PullError, bool) {
	for _, e := range errs {
		if e.Fatal() {
			return e, true
		}
	}
	return PullError{}, false
}

// problemMarkers pick the journal lines that explain a failure: systemd's
// word on a unit that failed, timed out or was restarted, and error lines.
var problemMarkers = []string{
	"Failed with result", "Main process exited, code=", "Control process exited",
	"Scheduled restart job", "Dependency failed", "timed out", "Error", "error:", "ERROR", "FATAL", "fatal", "x509",
}

// unitFailureMarkers are systemd's lines for a unit process that failed;
// the lines printed just before one usually say why.
var unitFailureMarkers = []string{"Main process exited, code=", "Control process exited"}

// podmanEvent matches podman's own event lines ("container died ..."),
// which only repeat what systemd says.
func podmanEvent(line string) bool {
	return strings.Contains(line, " UTC m=+") && containsAny(line, []string{" container ", " image ", " pod "})
}

// JournalProblems returns the journal lines that report a failure, each
// unit failure preceded by the 3 lines logged before it (what the process
// printed last); at most max lines, the first ones: the first problem
// usually explains the rest.
func JournalProblems(journal []byte, max int) []string {
	var out, recent []string
	seen := map[string]bool{}
	add := func(l string) {
		if !seen[l] && len(out) < max {
			seen[l] = true
			out = append(out, l)
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(journal))
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() && len(out) < max {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.Contains(line, "status=0/SUCCESS") || podmanEvent(line) {
			continue
		}
		if containsAny(line, unitFailureMarkers) {
			for _, l := range recent {
				add(l)
			}
		}
		if containsAny(line, problemMarkers) {
			add(line)
		}
		if !strings.Contains(line, " systemd[1]: ") {
			recent = append(recent, line)
			if len(recent) > 3 {
				recent = recent[1:]
			}
		}
	}
	return out
}

// FirstLineContaining returns the first line of b that contains one of
// needles.
func FirstLineContaining(b []byte, needles []string) (string, bool) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		for _, n := range needles {
			if bytes.Contains(line, []byte(n)) {
				return string(line), true
			}
		}
	}
	return "", false
}

// LinesContaining returns the last max lines of b that contain one of needles.
func LinesContaining(b []byte, needles []string, max int) []string {
	var out []string
	for _, line := range bytes.Split(b, []byte("\n")) {
		for _, n := range needles {
			if bytes.Contains(line, []byte(n)) {
				out = append(out, string(line))
				break
			}
		}
	}
	if len(out) > max {
		out = out[len(out)-max:]
	}
	return out
}
