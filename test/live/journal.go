package live

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
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
	// PullDigestMismatch: the registry served bytes whose digest is not the
	// one asked for (containers/image checks every blob it reads): the
	// image's bytes changed after they were written. Retrying reads the
	// same bytes.
	PullDigestMismatch
)

func (k PullErrorKind) String() string {
	switch k {
	case PullUntrusted:
		return "the mirror's certificate is not trusted (x509)"
	case PullNotMirrored:
		return "the pull never went to the mirror (only the source registry, unreachable in the air gap, was tried)"
	case PullMissing:
		return "the mirror does not have the image"
	case PullDigestMismatch:
		return "a blob's digest did not match (its bytes changed after they were written)"
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

// digestMismatchMarkers are containers/image's words for a blob whose bytes
// are not its digest's: a layer ("Digest did not match, expected X, got Y",
// the digesting reader behind every blob copy) and a config ("Download
// config.json digest Y does not match expected X", its ConfigBlob of a
// Docker schema 2 or OCI image).
var digestMismatchMarkers = []string{"Digest did not match", "does not match expected"}

// PullErrors returns every failed pull in a guest's journal (as streamed by
// the live fixture's live-journal.service), oldest first, classified.
func PullErrors(journal []byte) []PullError {
	var out []PullError
	sc := bufio.NewScanner(bytes.NewReader(journal))
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if !containsAny(line, pullErrorMarkers) && !containsAny(line, digestMismatchMarkers) &&
			!containsAny(line, []string{"x509: ", "certificate signed by unknown authority"}) {
			continue
		}
		out = append(out, PullError{Kind: classifyPull(line), Line: line})
	}
	return out
}

func classifyPull(line string) PullErrorKind {
	switch {
	case containsAny(line, digestMismatchMarkers):
		return PullDigestMismatch
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

// RegistryRequest is one request the node-local registry answered, from
// its access log in a guest's journal.
type RegistryRequest struct {
	Method string
	// Repository is the repository path (no host), Kind "manifests" or
	// "blobs", Reference the tag or digest.
	Repository, Kind, Reference string
	Status                      int
	Line                        string
}

// ByDigest reports whether the reference is a digest.
func (r RegistryRequest) ByDigest() bool { return strings.HasPrefix(r.Reference, "sha256:") }

func (r RegistryRequest) String() string {
	return fmt.Sprintf("%s %s/%s/%s -> %d", r.Method, r.Repository, r.Kind, r.Reference, r.Status)
}

// accessLogRE matches a request line of the distribution registry's access
// log, the combined log format it writes to stdout (distribution v3
// registry/registry.go: gorilla/handlers CombinedLoggingHandler), which
// podman's journald log driver puts in the journal:
// `127.0.0.1 - - [28/Nov/2026:10:00:00 +0000] "GET /v2/openshift/release/manifests/sha256:... HTTP/1.1" 200 1234 "" "containers/5.23.1 ..."`.
var accessLogRE = regexp.MustCompile(`"(GET|HEAD) /v2/(.+)/(manifests|blobs)/([^ /"?]+)(?:\?[^ "]*)? HTTP/[0-9.]+" ([0-9]{3}) `)

// RegistryRequests returns the manifest and blob requests of the registry's
// access log in a guest's journal, oldest first.
func RegistryRequests(journal []byte) []RegistryRequest {
	var out []RegistryRequest
	sc := bufio.NewScanner(bytes.NewReader(journal))
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		m := accessLogRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		status, _ := strconv.Atoi(m[5])
		out = append(out, RegistryRequest{Method: m[1], Repository: m[2], Kind: m[3], Reference: m[4], Status: status, Line: line})
	}
	return out
}
