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
	// handles holds, by file path, the open descriptor of each file as
	// verified last, shared by its requests (acquire); guarded by mu.
	handles map[string]*handle
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
	s := &Server{root: root, log: lg, files: map[string]*File{}, skipped: skipped, lim: lim, guesses: newGuesses(lim), refused: map[string]refusal{}, handles: map[string]*handle{}}
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

// Close releases the asset directory and the files kept open.
func (s *Server) Close() error {
	s.mu.Lock()
	for p, h := range s.handles {
		delete(s.handles, p)
		s.retireLocked(h)
	}
	s.mu.Unlock()
	return s.root.Close()
}

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
	rw.conn, _ = r.Context().Value(connKey{}).(*progressConn)
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
	fh, err := s.acquire(rec)
	if err != nil {
		http.Error(rw, "this file changed on disk and no longer matches its .sha256; not served", http.StatusServiceUnavailable)
		return
	}
	defer s.release(fh)
	f := &fh.file
	h := rw.Header()
	h["Etag"] = fh.etag
	h["Content-Type"] = fh.ctype
	h["Cache-Control"] = fh.cache
	http.ServeContent(rw, r, "", f.ModTime, io.NewSectionReader(fh.fh, 0, f.Size))
}

// handle is a served file opened and verified, shared by the requests
// that read it (each through a section reader of its own: reads and
// sendfile at explicit offsets, the descriptor's offset is not used), until
// the file changes on disk and the last of them is done.
type handle struct {
	fh   *os.File
	file File
	// etag, ctype and cache are the values of its ETag, Content-Type
	// and Cache-Control headers, made once (net/http replaces a header's
	// values, never changes them).
	etag, ctype, cache []string
	// refs counts the requests using it; retired is set once it is no
	// longer the file's current handle: the last request closes it.
	// Both guarded by Server.mu.
	refs    int
	retired bool
}

// acquire returns the handle of the served file as verified last, after
// checking with one lstat of its path that the path still names that very
// file (device, inode, size, mtime): the descriptor held open cannot be
// another file's, and a file changed in place changes size or mtime. When
// it does not, the file is opened and checked again (open), and its handle
// replaces the old one, which its last request closes. release gives it
// back.
func (s *Server) acquire(rec *File) (*handle, error) {
	li, err := s.root.Lstat(rec.Path)
	if err == nil && li.Mode().IsRegular() {
		s.mu.Lock()
		if h := s.handles[rec.Path]; h != nil && sameFile(h.file.info, li) {
			h.refs++
			s.mu.Unlock()
			return h, nil
		}
		s.mu.Unlock()
	}
	// Gone, replaced, or changed: the kept descriptor (a deleted ISO's
	// blocks) is let go either way.
	s.mu.Lock()
	if h := s.handles[rec.Path]; h != nil {
		delete(s.handles, rec.Path)
		s.retireLocked(h)
	}
	s.mu.Unlock()
	fh, cur, err := s.open(rec)
	if err != nil {
		return nil, err
	}
	h := &handle{fh: fh, file: cur, etag: []string{ETag(cur.SHA256)}, ctype: []string{contentType(cur.Path)}, cache: []string{"no-store"}, refs: 1}
	s.mu.Lock()
	if old := s.handles[rec.Path]; old != nil {
		s.retireLocked(old)
	}
	s.handles[rec.Path] = h
	s.mu.Unlock()
	return h, nil
}

// release gives back a handle from acquire.
func (s *Server) release(h *handle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h.refs--; h.refs == 0 && h.retired {
		_ = h.fh.Close()
	}
}

// retireLocked marks h as no longer current and closes it when no request
// uses it. s.mu is held.
func (s *Server) retireLocked(h *handle) {
	if h.retired {
		return
	}
	h.retired = true
	if h.refs == 0 {
		_ = h.fh.Close()
	}
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
// credentials are never logged. The line goes to the handler as one
// record whose attributes are typed values (no boxing), without the
// caller's program counter (no handler of agentiso shows a source), and
// not at all below the logger's level.
func (s *Server) logRequest(r *http.Request, rw *recorder, d time.Duration) {
	lv := slog.LevelInfo
	if rw.status >= 400 || rw.err != nil {
		lv = slog.LevelWarn
	}
	throttled := 0
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
		throttled = n
	}
	ctx := context.Background()
	h := s.log.Handler()
	if !h.Enabled(ctx, lv) {
		return
	}
	rec := slog.NewRecord(time.Now(), lv, termsafe.String(truncate(r.Method, 16))+" "+termsafe.String(truncate(r.URL.EscapedPath(), 200)), 0)
	rec.AddAttrs(slog.Int("status", rw.status), slog.Int64("bytes", rw.n), slog.String("from", r.RemoteAddr), slog.String("time", d.Round(time.Millisecond).String()))
	if rg := r.Header["Range"]; len(rg) > 0 && rg[0] != "" {
		rec.AddAttrs(slog.String("range", termsafe.String(truncate(rg[0], 64))))
	}
	if u, _, ok := r.BasicAuth(); ok {
		rec.AddAttrs(slog.String("user", termsafe.String(truncate(u, 64))))
	}
	if rw.err != nil {
		why := "the peer went away"
		var ne net.Error
		if errors.As(rw.err, &ne) && ne.Timeout() {
			why = fmt.Sprintf("the peer stopped reading (less than %d KiB taken in %s): connection closed", s.lim.Progress>>10, s.lim.StallTimeout)
		}
		rec.AddAttrs(slog.String("incomplete", why))
	}
	if throttled > 0 {
		rec.AddAttrs(slog.Int("throttled", throttled))
	}
	_ = h.Handle(ctx, rec)
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
	tls *progressConn
	// conn is the HTTP connection (nil for TLS).
	conn    *progressConn
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
		// net/http writes the header with the body's first sniffLen
		// bytes, then hands the rest to the connection (sendfile): the
		// header's write is held (MSG_MORE) for the body to join it in
		// the same segments, where it went out alone, with a push and a
		// wakeup of the peer of its own. Only when a body does follow:
		// a held write waits for more.
		if lr, ok := src.(*io.LimitedReader); ok && r.conn != nil && lr.N > sniffLen {
			r.conn.holdNextWrite()
			defer r.conn.pushHeld()
		}
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
		ConnContext:       connContext,
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

// connContext is the context of a connection's requests: a TLS
// connection's know the connection under it, to gather the records of what
// they copy (recorder.copyBatched); an HTTP connection's know it, to send
// the response header with the body (recorder.ReadFrom).
func connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		if pc, ok := tc.NetConn().(*progressConn); ok {
			return context.WithValue(ctx, tlsConnKey{}, pc)
		}
	}
	if pc, ok := c.(*progressConn); ok {
		return context.WithValue(ctx, connKey{}, pc)
	}
	return ctx
}

// tlsConnKey is the context key of the connection under a TLS one.
type tlsConnKey struct{}

// connKey is the context key of an HTTP connection.
type connKey struct{}

// sniffLen is what net/http's response.ReadFrom copies through its
// buffer, header included, before handing the rest of a body to the
// connection's ReadFrom (its own sniffLen).
const sniffLen = 512

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
