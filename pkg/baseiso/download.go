package baseiso

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

// ChecksumError reports a file whose sha256 differs from the expected one.
type ChecksumError struct {
	File     string // file checked (removed when it was a download)
	Source   string // URL or path the file came from
	Expected string
	Actual   string
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("sha256 mismatch for %s (from %s): expected %s, got %s", e.File, e.Source, e.Expected, e.Actual)
}

// HTTPStatusError reports an unexpected HTTP response status.
type HTTPStatusError struct {
	URL        string
	StatusCode int
	Status     string
}

func (e *HTTPStatusError) Error() string {
	return fmt.Sprintf("GET %s: server answered %s", e.URL, e.Status)
}

// partMeta is stored next to a .part file so a later run can resume it with
// a conditional range request.
type partMeta struct {
	URL          string `json:"url"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
}

// fetch describes one download into the cache.
type fetch struct {
	url    string
	sha256 string // expected digest; empty = unknown (not verified)
	final  string // final path in the cache
	name   string // name shown in progress output
}

func (f fetch) part() string { return f.final + ".part" }
func (f fetch) meta() string { return f.final + ".part.json" }

// errRestart asks the retry loop to start again immediately from byte 0
// (the partial file was discarded). At most maxRestarts happen per download.
var errRestart = errors.New("server rejected resuming the partial download")

const maxRestarts = 2

// errStalled is the cause given when a transfer makes no progress.
var errStalled = errors.New("no data received within the stall timeout")

// stallCause returns err, or err with the stall cause when the watchdog
// cancelled the request.
func stallCause(reqCtx context.Context, err error) error {
	if c := context.Cause(reqCtx); errors.Is(c, errStalled) {
		return fmt.Errorf("%w (%v)", errStalled, err)
	}
	return err
}

// stallReader re-arms the watchdog after every read that returned data.
type stallReader struct {
	r        io.Reader
	watchdog *time.Timer
	d        time.Duration
}

func (s *stallReader) Read(b []byte) (int, error) {
	n, err := s.r.Read(b)
	if n > 0 {
		s.watchdog.Reset(s.d)
	}
	return n, err
}

// InterruptedError is a download stopped by its context (Ctrl-C): the
// partial file is kept at Part, and the next run resumes it.
type InterruptedError struct {
	URL, Part string
	Err       error
}

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("download %s interrupted (partial file kept for resume at %s): %v", e.URL, e.Part, e.Err)
}

func (e *InterruptedError) Unwrap() error { return e.Err }

// download fetches f.url into f.final through f.part(), resuming a matching
// partial download, retrying transient failures, verifying the sha256 and
// renaming into place. It returns the sha256 of the file.
func (r *resolver) download(ctx context.Context, f fetch) (string, error) {
	attempts := 1 + r.retries
	restarts := 0
	for attempt := 1; ; {
		sum, err := r.downloadOnce(ctx, f)
		if err == nil {
			return sum, nil
		}
		if ctx.Err() != nil {
			return "", &InterruptedError{URL: f.url, Part: f.part(), Err: ctx.Err()}
		}
		if errors.Is(err, errRestart) && restarts < maxRestarts {
			restarts++
			continue
		}
		if !retryable(err) || attempt >= attempts {
			if attempt > 1 {
				return "", fmt.Errorf("download failed after %d attempts: %w", attempt, err)
			}
			return "", err
		}
		r.log.Warn("Download failed; retrying", "url", f.url, "attempt", attempt, "of", attempts, "err", err.Error())
		attempt++
		t := time.NewTimer(r.retryDelay)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", &InterruptedError{URL: f.url, Part: f.part(), Err: ctx.Err()}
		case <-t.C:
		}
	}
}

// retryable reports whether a failed attempt may succeed when repeated:
// interrupted transfers and 5xx/408/429 answers. Connection failures (DNS,
// refused, unreachable) are not retried so an offline run fails fast.
func retryable(err error) bool {
	var se *HTTPStatusError
	if errors.As(err, &se) {
		return se.StatusCode >= 500 || se.StatusCode == http.StatusRequestTimeout || se.StatusCode == http.StatusTooManyRequests
	}
	var ce *ChecksumError
	if errors.As(err, &ce) {
		return false
	}
	if isDialError(err) {
		return false
	}
	var te *transferError
	return errors.As(err, &te)
}

// isDialError reports whether err is a failure to reach the server at all.
func isDialError(err error) bool {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return false
}

// transferError marks a network failure during a request or body transfer.
type transferError struct{ err error }

func (e *transferError) Error() string { return e.err.Error() }
func (e *transferError) Unwrap() error { return e.err }

// downloadOnce makes one HTTP request and writes its body to the part file.
func (r *resolver) downloadOnce(ctx context.Context, f fetch) (string, error) {
	offset, meta := r.resumeState(f)

	// The watchdog cancels the request when no byte arrives for r.stall.
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchdog := time.AfterFunc(r.stall, func() { cancel(errStalled) })
	defer watchdog.Stop()

	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, f.url, nil)
	if err != nil {
		return "", fmt.Errorf("download %s: %w", f.url, err)
	}
	if offset > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
		if meta.ETag != "" {
			req.Header.Set("If-Range", meta.ETag)
		} else if meta.LastModified != "" {
			req.Header.Set("If-Range", meta.LastModified)
		}
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return "", &transferError{fmt.Errorf("download %s: %w", f.url, stallCause(reqCtx, err))}
	}
	defer resp.Body.Close()
	watchdog.Reset(r.stall)

	var total int64 = -1
	switch {
	case resp.StatusCode == http.StatusPartialContent && offset > 0:
		start, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != offset {
			r.log.Warn("Server sent an unexpected range; restarting download", "url", f.url, "content_range", resp.Header.Get("Content-Range"))
			r.discardPart(f)
			return "", errRestart
		}
		total = size
		if total < 0 && resp.ContentLength >= 0 {
			total = offset + resp.ContentLength
		}
		r.log.Info("Resuming base ISO download", "url", f.url, "offset", offset)
	case resp.StatusCode == http.StatusOK:
		if offset > 0 {
			r.log.Info("Server did not resume the partial download; starting over", "url", f.url)
			offset = 0
		}
		total = resp.ContentLength
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && offset > 0:
		// The part may already be complete; otherwise start over.
		if _, size, ok := parseContentRange(resp.Header.Get("Content-Range")); ok && size == offset {
			return r.finishPart(f, offset)
		}
		r.discardPart(f)
		return "", errRestart
	default:
		return "", &HTTPStatusError{URL: f.url, StatusCode: resp.StatusCode, Status: termsafe.String(resp.Status)}
	}

	if total > r.maxSize {
		r.discardPart(f)
		return "", &SizeLimitError{Source: f.url, Size: total, Limit: r.maxSize}
	}
	var reclaim int64
	if fi, err := os.Stat(f.part()); err == nil && offset == 0 {
		reclaim = fi.Size() // truncated below
	}
	if total >= 0 {
		if err := r.checkRoom(f.part(), offset, total, reclaim); err != nil {
			return "", err
		}
	}

	h := sha256.New()
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if offset > 0 {
		if err := hashFilePrefix(h, f.part(), offset); err != nil {
			r.discardPart(f)
			return "", errRestart
		}
		flags = os.O_WRONLY | os.O_APPEND
	}
	out, err := r.create(f.part(), flags, 0o644)
	if err != nil {
		return "", r.cacheWriteError(f.part(), offset, total, false, err)
	}
	newMeta := partMeta{URL: f.url, ETag: strongETag(resp.Header.Get("ETag")), LastModified: resp.Header.Get("Last-Modified")}
	if err := writeMeta(f.meta(), newMeta); err != nil {
		_ = out.Close()
		return "", r.cacheWriteError(f.meta(), offset, total, false, err)
	}

	p := newProgress(r.progress, r.tty, f.name, r.now, offset, total)
	body := &stallReader{r: resp.Body, watchdog: watchdog, d: r.stall}
	cache := &recordingWriter{w: out}
	capped := &cappedWriter{w: io.MultiWriter(cache, h, p), left: r.maxSize - offset}
	n, copyErr := io.Copy(capped, body)
	syncErr := out.Sync()
	closeErr := out.Close()
	got := offset + n
	complete := copyErr == nil && (total < 0 || got == total)
	p.finish(complete)
	switch {
	case capped.err != nil:
		r.discardPart(f)
		return "", &SizeLimitError{Source: f.url, Size: -1, Limit: r.maxSize}
	case cache.err != nil:
		return "", r.cacheWriteError(f.part(), partSize(f.part(), got), total, true, cache.err)
	case copyErr != nil:
		return "", &transferError{fmt.Errorf("download %s: transfer stopped after %d bytes: %w", f.url, got, stallCause(reqCtx, copyErr))}
	case total >= 0 && got != total:
		return "", &transferError{fmt.Errorf("download %s: got %d of %d bytes", f.url, got, total)}
	case syncErr != nil:
		return "", r.cacheWriteError(f.part(), got, total, true, syncErr)
	case closeErr != nil:
		return "", r.cacheWriteError(f.part(), got, total, true, closeErr)
	}
	return r.verifyAndInstall(f, hex.EncodeToString(h.Sum(nil)), offset > 0)
}

// partSize is the size of the part file (what a resume continues from), or
// fallback when it cannot be read.
func partSize(path string, fallback int64) int64 {
	if fi, err := os.Stat(path); err == nil {
		return fi.Size()
	}
	return fallback
}

// finishPart verifies and installs a part file that already holds the whole
// download.
func (r *resolver) finishPart(f fetch, size int64) (string, error) {
	h := sha256.New()
	if err := hashFilePrefix(h, f.part(), size); err != nil {
		r.discardPart(f)
		return "", errRestart
	}
	return r.verifyAndInstall(f, hex.EncodeToString(h.Sum(nil)), true)
}

// verifyAndInstall checks the part's digest against f.sha256 (removing the
// part on mismatch) and renames it to the final name. A mismatch in a
// resumed download may come from a stale part, so it asks for a restart from
// byte 0 instead of failing.
func (r *resolver) verifyAndInstall(f fetch, sum string, resumed bool) (string, error) {
	if f.sha256 != "" && sum != f.sha256 {
		r.discardPart(f)
		if resumed {
			r.log.Warn("Resumed download has the wrong sha256; downloading the whole file again", "url", f.url, "expected", f.sha256, "actual", sum)
			return "", errRestart
		}
		return "", &ChecksumError{File: f.part() + " (removed)", Source: f.url, Expected: f.sha256, Actual: sum}
	}
	if f.sha256 == "" {
		// Nothing vouches for an unverified download: keep it only when
		// it is an ISO agentiso can use (not an error page, not a
		// truncated or unrelated file).
		if err := checkLiveISO(f.part()); err != nil {
			r.discardPart(f)
			return "", fmt.Errorf("the download is not a CoreOS live ISO (removed from the cache; no checksum was known to check it): %w", err)
		}
	}
	if err := replaceable(f.final); err != nil {
		return "", err
	}
	markOwn(f.final)
	if err := os.Rename(f.part(), f.final); err != nil {
		return "", fmt.Errorf("move %s to %s: %w", f.part(), f.final, err)
	}
	r.record(f.final, sum) // hashed as it came: the next run need not read it again
	_ = os.Remove(f.meta())
	return sum, nil
}

// resumeState returns the size of a part file that may be resumed for f, and
// its stored validators. A part without metadata for the same URL is
// discarded.
func (r *resolver) resumeState(f fetch) (int64, partMeta) {
	fi, err := os.Stat(f.part())
	if err != nil || !fi.Mode().IsRegular() {
		if err == nil {
			r.discardPart(f)
		}
		_ = os.Remove(f.meta())
		return 0, partMeta{}
	}
	b, err := os.ReadFile(f.meta())
	var m partMeta
	if err != nil || json.Unmarshal(b, &m) != nil || m.URL != f.url || fi.Size() == 0 {
		r.discardPart(f)
		return 0, partMeta{}
	}
	return fi.Size(), m
}

// discardPart removes the part file and its metadata.
func (r *resolver) discardPart(f fetch) {
	_ = os.Remove(f.part())
	_ = os.Remove(f.meta())
}

func writeMeta(path string, m partMeta) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return writeCacheFile(path, b)
}

// writeCacheFile writes a small file of the cache through a temporary
// file created exclusively under an unpredictable name (never through a
// link someone planted by a predictable one), then renamed into place.
func writeCacheFile(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}

// strongETag returns etag when it is a strong validator (usable in If-Range).
func strongETag(etag string) string {
	if strings.HasPrefix(etag, "W/") {
		return ""
	}
	return etag
}

// parseContentRange parses "bytes start-end/size" or "bytes */size". size is
// -1 when given as "*"; start is -1 for the "*/size" form.
func parseContentRange(v string) (start, size int64, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(v), "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, sz, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	size = -1
	if sz != "*" {
		n, err := strconv.ParseInt(sz, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, false
		}
		size = n
	}
	if rng == "*" {
		return -1, size, size >= 0
	}
	a, b, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	s, err1 := strconv.ParseInt(a, 10, 64)
	e, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || s < 0 || e < s || (size >= 0 && e >= size) {
		return 0, 0, false
	}
	return s, size, true
}

// hashFilePrefix feeds the first n bytes of path into w; it fails when the
// file is shorter.
func hashFilePrefix(w io.Writer, path string, n int64) error {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	c, err := io.Copy(w, io.LimitReader(in, n))
	if err != nil {
		return err
	}
	if c != n {
		return fmt.Errorf("%s: short file (%d of %d bytes)", path, c, n)
	}
	return nil
}

// readSHA256 returns the sha256 of what is left to read in r.
func readSHA256(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
