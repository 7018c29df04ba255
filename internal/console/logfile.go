package console

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"
)

// LogFileName is the debug log agentiso keeps in the asset directory, as
// openshift-install keeps .openshift_install.log: every line at debug
// level whatever --log-level says, with its time, secrets redacted.
const LogFileName = ".agentiso.log"

// maxLogSize is how large the log may grow before it is rotated to
// LogFileName.1 (one old copy is kept), and maxPending how much is held in
// memory while the asset directory does not exist yet.
const (
	maxLogSize = 32 << 20
	maxPending = 1 << 20
)

// LogFile is the writer of the debug log in dir. It creates no directory:
// lines are held (up to 1 MiB) until dir exists, so a mistyped --dir is
// not created by the log; the file is opened on the first line written
// after that, 0600, and appended to. Every line gets an RFC 3339 time and
// has secrets redacted (Redact). Errors writing the log never fail a
// command: the log is then given up.
type LogFile struct {
	mu      sync.Mutex
	dir     string
	now     func() time.Time
	f       *os.File
	pending bytes.Buffer
	partial []byte
	broken  bool
}

// NewLogFile returns the writer of dir's debug log.
func NewLogFile(dir string, now func() time.Time) *LogFile {
	if now == nil {
		now = time.Now
	}
	return &LogFile{dir: dir, now: now}
}

// Write timestamps and redacts each complete line of b and writes it.
func (l *LogFile) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.broken {
		return len(b), nil
	}
	data := append(l.partial, b...)
	l.partial = nil
	var out bytes.Buffer
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimRight(data[:i], "\r")
		out.WriteString(l.now().UTC().Format(time.RFC3339Nano))
		out.WriteByte(' ')
		out.WriteString(Redact(string(line)))
		out.WriteByte('\n')
		data = data[i+1:]
	}
	if len(data) > 0 {
		l.partial = append([]byte(nil), data...)
	}
	l.emit(out.Bytes())
	return len(b), nil
}

func (l *LogFile) emit(b []byte) {
	if l.f == nil {
		if fi, err := os.Stat(l.dir); err != nil || !fi.IsDir() {
			if l.pending.Len()+len(b) <= maxPending {
				l.pending.Write(b)
			}
			return
		}
		if !l.open() {
			return
		}
	}
	if _, err := l.f.Write(b); err != nil {
		l.broken = true
	}
}

func (l *LogFile) open() bool {
	p := filepath.Join(l.dir, LogFileName)
	if fi, err := os.Lstat(p); err == nil {
		if !fi.Mode().IsRegular() {
			l.broken = true // a symlink or device: never written through
			return false
		}
		if fi.Size() > maxLogSize {
			_ = os.Rename(p, p+".1")
		}
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		l.broken = true
		return false
	}
	_ = f.Chmod(0o600)
	l.f = f
	if l.pending.Len() > 0 {
		if _, err := f.Write(l.pending.Bytes()); err != nil {
			l.broken = true
			return false
		}
		l.pending.Reset()
	}
	return true
}

// Close writes what is still held (if dir exists by now) and closes the file.
func (l *LogFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.broken {
		var last []byte
		if len(l.partial) > 0 {
			last = []byte(l.now().UTC().Format(time.RFC3339Nano) + " " + Redact(string(l.partial)) + "\n")
			l.partial = nil
		}
		if len(last) > 0 || (l.f == nil && l.pending.Len() > 0) {
			l.emit(last)
		}
	}
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

var secretPatterns = []struct {
	re   *regexp.Regexp
	with string
}{
	// Pull-secret entries: "auth":"<base64>", "password":"...", "token":"..."
	{regexp.MustCompile(`(?i)("(?:auth|password|token|identitytoken|registrytoken|pullSecret)"\s*:\s*")[^"]*(")`), `${1}<redacted>${2}`},
	// key=value and key: value forms.
	{regexp.MustCompile(`(?i)\b((?:password|passwd|token|secret|auth)\s*[=:]\s*)("?)[^\s",}]+`), `${1}${2}<redacted>`},
	// Authorization headers.
	{regexp.MustCompile(`(?i)\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+`), `$1 <redacted>`},
	// JSON Web Tokens (the agent's API tokens).
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`), `<redacted JWT>`},
	// PEM private keys on one line.
	{regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|$)`), `<redacted private key>`},
	// Credentials in URLs: scheme://user:password@host
	{regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:)[^/\s@]+@`), `${1}<redacted>@`},
}

// Redact masks what looks like a secret in a log line: pull-secret auths,
// passwords and tokens, Authorization headers, JWTs, private keys and
// passwords in URLs. agentiso never logs secrets on purpose; this is the
// net under the log file people attach to bug reports.
func Redact(s string) string {
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllString(s, p.with)
	}
	return s
}

// RemoveLogOnlyDir removes dir when it holds nothing but the debug log (a
// directory a failed command created for its log only, a mistyped --dir:
// left there it would only mislead the next run). Anything else in dir
// keeps it, and any error leaves it as it is.
func RemoveLogOnlyDir(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Name() != LogFileName {
			return
		}
	}
	_ = os.Remove(filepath.Join(dir, LogFileName))
	_ = os.Remove(dir)
}
