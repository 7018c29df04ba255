package serve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

// Options configure a Server.
type Options struct {
	// Dir is the asset directory.
	Dir string
	// User and Password, when User is set, require HTTP basic
	// authentication on every request.
	User, Password string
	// Log receives one line per request and the server's events.
	Log *slog.Logger
	// BootPath, when set, is a second URL path (such as "/boot") at which
	// the boot-artifacts/ files are served too: the path of agent-config's
	// bootArtifactsBaseURL, which the iPXE script and a minimal ISO fetch
	// them from.
	BootPath string
	// Extra names more files of the asset directory to serve: ISOs
	// agentiso wrote under a name of the user's (node-image create
	// --output-name), each verified against its .sha256 like the rest.
	Extra []string
	// Limits bound connections, stalled transfers and password guesses
	// (zero fields: DefaultLimits).
	Limits Limits
}

// Server serves the verified boot media of one asset directory.
type Server struct {
	root    *os.Root
	log     *slog.Logger
	user    []byte
	pass    []byte
	mu      sync.Mutex
	files   map[string]*File
	order   []string
	aliases []string
	skipped []Skipped
	lim     Limits
	guesses *guesses
	// conns counts the connections of Serve (nil before it).
	conns *connLimiter
	// verifyMu serializes the hashing of files changed on disk, and
	// refused holds the verdict on each file found changed and not
	// matching its .sha256, by the file's identity: it is not hashed again
	// until it changes again.
	verifyMu sync.Mutex
	refused  map[string]refusal
	// throttled counts the 429 answers not logged one by one.
	throttled     int
	throttledLogs time.Time
}

// refusal is the verdict on a file that changed on disk and does not
// match its .sha256: the file as it was found (device, inode, size,
// mtime) and why.
type refusal struct {
	info fs.FileInfo
	err  error
}

// Aliases returns the URL paths the boot artifacts are also served at
// (Options.BootPath).
func (s *Server) Aliases() []string { return s.aliases }

// New opens the asset directory and verifies the files to serve. It fails
// when there is nothing to serve, naming what it found and refused.
func New(o Options) (*Server, error) {
	root, err := os.OpenRoot(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("open the asset directory: %w", err)
	}
	served, skipped, err := scan(root, o.Extra)
	if err != nil {
		root.Close()
		return nil, err
	}
	if len(served) == 0 {
		root.Close()
		msg := fmt.Sprintf("nothing to serve in %s: no ISO or PXE file that agentiso wrote (run agentiso create image, create pxe-files, create unconfigured-image, create config-image or node-image create first)", o.Dir)
		for _, s := range skipped {
			msg += fmt.Sprintf("; %s not served: %s", s.Path, s.Reason)
		}
		return nil, errors.New(msg)
	}
	lg := o.Log
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	lim := o.Limits.withDefaults()
	s := &Server{root: root, log: lg, files: map[string]*File{}, skipped: skipped, lim: lim, guesses: newGuesses(lim), refused: map[string]refusal{}}
	if o.User != "" {
		s.user, s.pass = []byte(o.User), []byte(o.Password)
	}
	bp := ""
	if o.BootPath != "" && o.BootPath != "/" {
		bp = path.Clean("/" + o.BootPath)
		if bp != o.BootPath && bp+"/" != o.BootPath || strings.Contains(o.BootPath, "..") {
			root.Close()
			return nil, fmt.Errorf("boot artifacts path %q is not a clean URL path", o.BootPath)
		}
	}
	for i := range served {
		f := &served[i]
		s.files["/"+f.Path] = f
		s.order = append(s.order, f.Path)
		if rest, ok := strings.CutPrefix(f.Path, assetdir.BootArtifactsDir+"/"); ok && bp != "" {
			s.files[bp+"/"+rest] = f
			s.aliases = append(s.aliases, bp+"/"+rest)
		}
	}
	return s, nil
}

// Close releases the asset directory.
func (s *Server) Close() error { return s.root.Close() }

// Files returns the served files, in URL order.
func (s *Server) Files() []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]File, 0, len(s.order))
	for _, p := range s.order {
		out = append(out, *s.files["/"+p])
	}
	return out
}

// Skipped returns the files found but not served, and why.
func (s *Server) Skipped() []Skipped { return s.skipped }

// ServeHTTP answers GET and HEAD for the served files only: ranges,
// conditional requests, ETag (the sha256) and Last-Modified are those of
// net/http's ServeContent, on the file itself (no copy).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rw := &recorder{ResponseWriter: w, status: http.StatusOK}
	rw.tls, _ = r.Context().Value(tlsConnKey{}).(*progressConn)
	defer func() { s.logRequest(r, rw, time.Since(start)) }()
	if s.user != nil && !s.authenticate(rw, r) {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		rw.Header().Set("Allow", "GET, HEAD")
		http.Error(rw, "only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	rec, ok := s.files[r.URL.Path]
	s.mu.Unlock()
	if !ok {
		http.NotFound(rw, r)
		return
	}
	fh, f, err := s.open(rec)
	if err != nil {
		http.Error(rw, "this file changed on disk and no longer matches its .sha256; not served", http.StatusServiceUnavailable)
		return
	}
	defer fh.Close()
	h := rw.Header()
	h.Set("ETag", `"`+f.SHA256+`"`)
	h.Set("Content-Type", contentType(f.Path))
	h.Set("Cache-Control", "no-store")
	http.ServeContent(rw, r, "", f.ModTime, fh)
}

// open opens the served file and checks that it is still the verified
// one; a file replaced since (a new create run renames a new file into
// place) is verified again against its .sha256 from the open descriptor,
// once per change: the verdict is kept by the file's identity (device,
// inode, size, mtime), a file that does not match is not hashed again on
// every request.
func (s *Server) open(rec *File) (*os.File, File, error) {
	if li, err := s.root.Lstat(rec.Path); err != nil {
		return nil, File{}, s.refuse(rec.Path, nil, err)
	} else if !li.Mode().IsRegular() {
		return nil, File{}, s.refuse(rec.Path, nil, errors.New("no longer a regular file (a symbolic link?)"))
	}
	fh, err := s.root.Open(rec.Path)
	if err != nil {
		return nil, File{}, s.refuse(rec.Path, nil, err)
	}
	fi, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, File{}, err
	}
	if !fi.Mode().IsRegular() {
		fh.Close()
		return nil, File{}, s.refuse(rec.Path, nil, errors.New("no longer a regular file"))
	}
	cur, ok, err := s.known(rec, fh, fi)
	if !ok && err == nil {
		// Changed on disk: one request hashes it, the others wait for
		// its verdict.
		s.verifyMu.Lock()
		cur, ok, err = s.known(rec, fh, fi)
		if !ok && err == nil {
			cur, err = s.reverify(rec, fh, fi)
		}
		s.verifyMu.Unlock()
	}
	if err == nil {
		_, err = fh.Seek(0, io.SeekStart)
	}
	if err != nil {
		fh.Close()
		return nil, File{}, err
	}
	return fh, cur, nil
}

// sameFile reports whether a and b are the same file with the same size
// and mtime.
func sameFile(a, b fs.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// known returns the verified record when fi is the file verified last
// (ok), the kept refusal when it is the file refused last (err), neither
// when it changed since.
func (s *Server) known(rec *File, fh *os.File, fi fs.FileInfo) (File, bool, error) {
	s.mu.Lock()
	cur := *rec
	ref, refused := s.refused[rec.Path]
	s.mu.Unlock()
	if sameFile(cur.info, fi) {
		if cur.SHA256 == "" { // a .sha256 file: small, hashed as served
			sum, err := hashReader(io.LimitReader(fh, maxSumFileSize))
			if err != nil {
				return File{}, false, err
			}
			cur.SHA256 = sum
		}
		return cur, true, nil
	}
	if refused && sameFile(ref.info, fi) {
		return File{}, false, ref.err
	}
	return File{}, false, nil
}

// reverify hashes a file changed on disk and checks it against its
// .sha256; the verdict, either way, is kept for the file's identity.
func (s *Server) reverify(rec *File, fh *os.File, fi fs.FileInfo) (File, error) {
	var sum string
	var err error
	if strings.HasSuffix(rec.Path, ".sha256") {
		sum, err = hashReader(io.LimitReader(fh, maxSumFileSize))
	} else {
		var want string
		want, _, err = readSum(s.root, rec.Path)
		if err == nil {
			sum, err = hashReader(fh)
			if err == nil && sum != want {
				err = fmt.Errorf("its content (sha256 %s) is not what its .sha256 records (%s)", sum, want)
			}
		}
	}
	if err != nil {
		return File{}, s.refuse(rec.Path, fi, err)
	}
	cur := File{Path: rec.Path, Size: fi.Size(), ModTime: fi.ModTime(), SHA256: sum, Secret: rec.Secret, info: fi}
	if strings.HasSuffix(rec.Path, ".sha256") {
		cur.SHA256 = ""
	}
	s.mu.Lock()
	*rec = cur
	delete(s.refused, rec.Path)
	s.mu.Unlock()
	s.log.Info("verified again after it changed on disk", "file", rec.Path, "sha256", sum)
	cur.SHA256 = sum
	return cur, nil
}

// refuse logs why path is not served and, for a file found (fi), keeps
// the verdict for its identity. Only a new verdict is logged.
func (s *Server) refuse(path string, fi fs.FileInfo, err error) error {
	s.mu.Lock()
	prev, had := s.refused[path]
	same := had && (fi == nil && prev.info == nil || sameFile(prev.info, fi)) && prev.err.Error() == err.Error()
	s.refused[path] = refusal{info: fi, err: err}
	s.mu.Unlock()
	if !same {
		s.log.Warn("cannot serve "+path+" until it changes again: it changed on disk and no longer matches its .sha256 (requests get 503)", "reason", err)
	}
	return err
}

// authenticate answers a request without the right credentials: 401,
// or 429 without checking them when its peer guessed wrong too often
// (Limits). Either answer closes the connection: a peer that has not
// authenticated keeps no idle connection.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) bool {
	peer := peerOf(r.RemoteAddr)
	_, _, given := r.BasicAuth()
	now := time.Now()
	if given {
		if ok, wait := s.guesses.allowed(peer, now); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(int(wait/time.Second)+1))
			w.Header().Set("Connection", "close")
			http.Error(w, "too many wrong passwords from your address; try again later", http.StatusTooManyRequests)
			return false
		}
	}
	if s.authorized(r) {
		return true
	}
	if given {
		s.guesses.wrong(peer, now)
	}
	w.Header().Set("WWW-Authenticate", `Basic realm="agentiso", charset="UTF-8"`)
	w.Header().Set("Connection", "close")
	http.Error(w, "authentication required", http.StatusUnauthorized)
	return false
}

func (s *Server) authorized(r *http.Request) bool {
	u, p, ok := r.BasicAuth()
	if !ok {
		return false
	}
	uh, ph := sha256.Sum256([]byte(u)), sha256.Sum256([]byte(p))
	wu, wp := sha256.Sum256(s.user), sha256.Sum256(s.pass)
	return subtle.ConstantTimeCompare(uh[:], wu[:])&subtle.ConstantTimeCompare(ph[:], wp[:]) == 1
}

func contentType(p string) string {
	switch {
	case strings.HasSuffix(p, ".iso"):
		return "application/x-iso9660-image"
	case strings.HasSuffix(p, ".sha256"), strings.HasSuffix(p, ".ipxe"), strings.HasSuffix(p, ".addrsize"), strings.HasSuffix(p, ".ins"), strings.HasSuffix(p, ".prm"):
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

// logRequest writes one line per request: method, path, status, the
// range asked for, bytes sent, client and time. The query and the
// credentials are never logged.
func (s *Server) logRequest(r *http.Request, rw *recorder, d time.Duration) {
	attrs := []any{"status", rw.status, "bytes", rw.n, "from", r.RemoteAddr, "time", d.Round(time.Millisecond).String()}
	if rg := r.Header.Get("Range"); rg != "" {
		attrs = append(attrs, "range", termsafe.String(truncate(rg, 64)))
	}
	if u, _, ok := r.BasicAuth(); ok {
		attrs = append(attrs, "user", termsafe.String(truncate(u, 64)))
	}
	lv := slog.LevelInfo
	if rw.status >= 400 {
		lv = slog.LevelWarn
	}
	if rw.err != nil {
		lv = slog.LevelWarn
		why := "the peer went away"
		var ne net.Error
		if errors.As(rw.err, &ne) && ne.Timeout() {
			why = fmt.Sprintf("the peer stopped reading (less than %d KiB taken in %s): connection closed", s.lim.Progress>>10, s.lim.StallTimeout)
		}
		attrs = append(attrs, "incomplete", why)
	}
	if rw.status == http.StatusTooManyRequests {
		// A guesser's requests: one line per 10 s, with their count.
		s.mu.Lock()
		s.throttled++
		n := s.throttled
		log := time.Since(s.throttledLogs) >= 10*time.Second
		if log {
			s.throttled, s.throttledLogs = 0, time.Now()
		}
		s.mu.Unlock()
		if !log {
			return
		}
		attrs = append(attrs, "throttled", n)
	}
	s.log.Log(context.Background(), lv, termsafe.String(truncate(r.Method, 16))+" "+termsafe.String(truncate(r.URL.EscapedPath(), 200)), attrs...)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

type recorder struct {
	http.ResponseWriter
	// tls is the connection under a TLS one (nil for HTTP).
	tls     *progressConn
	status  int
	n       int64
	written bool
	// err is the first error writing the response (the peer went away,
	// or stopped reading and its connection was dropped).
	err error
}

func (r *recorder) failed(err error) {
	if err != nil && r.err == nil {
		r.err = err
	}
}

func (r *recorder) WriteHeader(code int) {
	if !r.written {
		r.status, r.written = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.written = true
	n, err := r.ResponseWriter.Write(b)
	r.n += int64(n)
	r.failed(err)
	return n, err
}

// ReadFrom keeps the kernel copy (sendfile) of the underlying writer.
// Over TLS, where the kernel cannot copy, it copies copyChunk at a time,
// each chunk's records written together (copyBatched).
func (r *recorder) ReadFrom(src io.Reader) (int64, error) {
	r.written = true
	if r.tls != nil {
		n, err := r.copyBatched(src)
		r.n += n
		r.failed(err)
		return n, err
	}
	if rf, ok := r.ResponseWriter.(io.ReaderFrom); ok {
		n, err := rf.ReadFrom(src)
		r.n += n
		r.failed(err)
		return n, err
	}
	n, err := io.Copy(struct{ io.Writer }{r.ResponseWriter}, src)
	r.n += n
	r.failed(err)
	return n, err
}

// Serve answers on ln until ctx is cancelled, then stops accepting,
// gives running transfers grace to finish and closes the rest. With
// tlsConf it serves HTTPS.
func (s *Server) Serve(ctx context.Context, ln net.Listener, tlsConf *tls.Config, grace time.Duration) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       s.lim.IdleTimeout,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return ctx },
		// A TLS connection's requests know the connection under it, to
		// gather the records of what they copy (recorder.copyBatched).
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if tc, ok := c.(*tls.Conn); ok {
				if pc, ok := tc.NetConn().(*progressConn); ok {
					return context.WithValue(ctx, tlsConnKey{}, pc)
				}
			}
			return ctx
		},
	}
	s.mu.Lock()
	s.conns = newConnLimiter(ln, s.lim, s.log)
	ln = s.conns
	s.mu.Unlock()
	if tlsConf != nil {
		ln = tls.NewListener(ln, tlsConf)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	<-errc
	return nil
}

// Conns returns the connections Serve holds open and the ones it closed
// at once, over the limits, so far.
func (s *Server) Conns() (open, refused int) {
	s.mu.Lock()
	c := s.conns
	s.mu.Unlock()
	if c == nil {
		return 0, 0
	}
	return c.stats()
}

// ETag is the ETag the server sends for a file of this sha256.
func ETag(sha256hex string) string { return `"` + sha256hex + `"` }

// sha256Hex is the hex sha256 of b.
func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// tlsConnKey is the context key of the connection under a TLS one.
type tlsConnKey struct{}

// copyChunk is what a TLS response copies at a time: four records (three
// of 16 KiB and one of 12 KiB), which with their headers and tags make
// one write of less than the 64 KiB of Limits.Progress.
const copyChunk = 60 << 10

// copyBatched copies src to the response copyChunk at a time; the TLS
// records of each chunk are gathered under the TLS connection and
// written together.
func (r *recorder) copyBatched(src io.Reader) (int64, error) {
	bp := r.tls.pools.chunks.Get().(*[]byte)
	defer r.tls.pools.chunks.Put(bp)
	buf := *bp
	var total int64
	for {
		n, rerr := src.Read(buf)
		if n > 0 {
			r.tls.beginBatch()
			m, werr := r.ResponseWriter.Write(buf[:n])
			if ferr := r.tls.endBatch(); werr == nil {
				werr = ferr
			}
			total += int64(m)
			if werr != nil {
				return total, werr
			}
		}
		if errors.Is(rerr, io.EOF) {
			return total, nil
		}
		if rerr != nil {
			return total, rerr
		}
	}
}
