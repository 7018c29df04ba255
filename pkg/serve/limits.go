package serve

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Limits bound what the peers of a server can hold of it: connections,
// time and guesses at the password. The zero value of each field is its
// default (DefaultLimits).
type Limits struct {
	// MaxConns bounds the open connections; MaxConnsPerPeer those of one
	// IP address. A connection over either is closed as soon as it is
	// accepted.
	MaxConns, MaxConnsPerPeer int
	// Progress and StallTimeout: a response must hand at least Progress
	// bytes to the kernel every StallTimeout, or its connection is closed
	// (a peer that stopped reading). A slow reader that keeps reading
	// passes: the bound is on progress, not on the whole transfer.
	Progress     int
	StallTimeout time.Duration
	// SendBuffer is the kernel's send buffer of each connection (its
	// automatic growth stops there; the kernel doubles it for its own
	// bookkeeping): what a peer that stopped reading holds of the
	// machine's memory. The default, 1 MiB, takes a 1 MiB range in one
	// sendfile call (docs/serve-boot.md "Speed against nginx").
	SendBuffer int
	// IdleTimeout closes a keep-alive connection with no request in that
	// long. An unauthenticated request (401) closes its connection.
	IdleTimeout time.Duration
	// GuessBurst wrong passwords are answered 401 at once, then one every
	// GuessEvery per peer; the others get 429 without being checked.
	GuessBurst int
	GuessEvery time.Duration
	// MaxGuessPeers bounds the peers whose wrong guesses are remembered;
	// past it, new peers share one allowance.
	MaxGuessPeers int
}

// DefaultLimits are the limits of agentiso serve (docs/serve-boot.md).
var DefaultLimits = Limits{
	MaxConns:        256,
	MaxConnsPerPeer: 64,
	Progress:        64 << 10,
	StallTimeout:    60 * time.Second,
	SendBuffer:      1 << 20,
	IdleTimeout:     60 * time.Second,
	GuessBurst:      10,
	GuessEvery:      6 * time.Second,
	MaxGuessPeers:   4096,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxConns > 0 {
		d.MaxConns = l.MaxConns
	}
	if l.MaxConnsPerPeer > 0 {
		d.MaxConnsPerPeer = l.MaxConnsPerPeer
	}
	if l.Progress > 0 {
		d.Progress = l.Progress
	}
	if l.StallTimeout > 0 {
		d.StallTimeout = l.StallTimeout
	}
	if l.SendBuffer > 0 {
		d.SendBuffer = l.SendBuffer
	}
	if l.IdleTimeout > 0 {
		d.IdleTimeout = l.IdleTimeout
	}
	if l.GuessBurst > 0 {
		d.GuessBurst = l.GuessBurst
	}
	if l.GuessEvery > 0 {
		d.GuessEvery = l.GuessEvery
	}
	if l.MaxGuessPeers > 0 {
		d.MaxGuessPeers = l.MaxGuessPeers
	}
	return d
}

// peerOf is the IP address of a remote address ("" network address: the
// zero Addr, one peer for all such).
func peerOf(a string) netip.Addr {
	ap, err := netip.ParseAddrPort(a)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// connLimiter accepts connections within the limits and counts them.
type connLimiter struct {
	net.Listener
	lim   Limits
	log   *slog.Logger
	pools *bufPools

	mu      sync.Mutex
	open    int
	perPeer map[netip.Addr]int
	// refused counts the connections closed at accept since the last
	// warning; warned is when that was.
	refused, refusedTotal int
	warned                time.Time
}

func newConnLimiter(ln net.Listener, lim Limits, log *slog.Logger) *connLimiter {
	return &connLimiter{Listener: ln, lim: lim, log: log, pools: newBufPools(), perPeer: map[netip.Addr]int{}}
}

// Accept returns the next connection within the limits; the others are
// closed as they come.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		peer := peerOf(c.RemoteAddr().String())
		l.mu.Lock()
		why := ""
		switch {
		case l.open >= l.lim.MaxConns:
			why = "the server's limit of open connections"
		case l.perPeer[peer] >= l.lim.MaxConnsPerPeer:
			why = "the limit of open connections per peer"
		}
		if why == "" {
			l.open++
			l.perPeer[peer]++
			l.mu.Unlock()
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetWriteBuffer(l.lim.SendBuffer)
			}
			return &progressConn{Conn: c, lim: l.lim, pools: l.pools, release: func() { l.release(peer) }}, nil
		}
		l.refused++
		l.refusedTotal++
		warn := time.Since(l.warned) >= 10*time.Second
		n := l.refused
		if warn {
			l.warned, l.refused = time.Now(), 0
		}
		open, mine := l.open, l.perPeer[peer]
		l.mu.Unlock()
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // nothing was sent: free it at once
		}
		_ = c.Close()
		if warn {
			l.log.Warn("closing new connections over "+why+" ("+limitsText(l.lim)+")", "peer", peer.String(), "held", mine, "open", open, "closed", n)
		}
	}
}

func limitsText(l Limits) string {
	return strconv.Itoa(l.MaxConns) + " in all, " + strconv.Itoa(l.MaxConnsPerPeer) + " per peer"
}

func (l *connLimiter) release(peer netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.perPeer[peer]--; l.perPeer[peer] <= 0 {
		delete(l.perPeer, peer)
	}
}

// stats returns the open connections and the ones refused so far.
func (l *connLimiter) stats() (open, refused int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open, l.refusedTotal
}

// progressConn is an accepted connection whose writes must progress: each
// piece of at most Progress bytes gets StallTimeout to be taken by the
// kernel, through plain writes and sendfile (ReadFrom) alike.
type progressConn struct {
	net.Conn
	lim     Limits
	release func()
	once    sync.Once
	// stalled is set when a write missed its deadline: Close then resets
	// the connection, discarding what the kernel still holds for a peer
	// that does not read (a plain close would keep it, orphaned, for
	// minutes).
	stalled atomic.Bool
	// sendfiles counts the sendfile calls of ReadFrom (on Linux).
	sendfiles int
	// writes counts the writes to the connection; held those of them
	// sent with MSG_MORE (holdNextWrite).
	writes, held int
	// hold is set when the next write is to be held for what follows
	// (holdNextWrite); pending while what it held has not been followed
	// by more. Guarded by batchMu.
	hold, pending bool

	// batchMu guards batching and batch: between beginBatch and
	// endBatch, writes are gathered in batch (from batchBufs) and then
	// written together.
	batchMu  sync.Mutex
	batching bool
	batch    *[]byte
	pools    *bufPools
}

// bufPools are the buffers of the TLS responses being copied, shared by
// the connections of a server: only a response being copied holds one.
type bufPools struct {
	// chunks hold what copyBatched reads from the file, copyChunk.
	chunks sync.Pool
	// batches hold the gathered writes of a batch: the TLS records of
	// one chunk, with their headers and tags.
	batches sync.Pool
}

func newBufPools() *bufPools {
	p := &bufPools{}
	p.chunks.New = func() any { b := make([]byte, copyChunk); return &b }
	p.batches.New = func() any { b := make([]byte, 0, copyChunk+4<<10); return &b }
	return p
}

// beginBatch gathers the writes that follow, until endBatch: crypto/tls
// writes each 16 KiB record with a system call of its own, and a TCP
// push each; gathered, a chunk's records go to the kernel in one write.
func (c *progressConn) beginBatch() {
	c.batchMu.Lock()
	c.batching = true
	c.batchMu.Unlock()
}

// endBatch writes what was gathered since beginBatch, under the same
// progress bound as any write.
func (c *progressConn) endBatch() error {
	c.batchMu.Lock()
	c.batching = false
	bp := c.batch
	c.batch = nil
	c.batchMu.Unlock()
	if bp == nil {
		return nil
	}
	_, err := c.write(*bp)
	*bp = (*bp)[:0]
	c.pools.batches.Put(bp)
	return err
}

// progressed notes a write's error: a missed deadline is a stall.
func (c *progressConn) progressed(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.stalled.Store(true)
	}
	return err
}

// Write writes b, or gathers it in a batch (beginBatch).
func (c *progressConn) Write(b []byte) (int, error) {
	c.batchMu.Lock()
	if c.batching {
		if c.batch == nil {
			c.batch = c.pools.batches.Get().(*[]byte)
		}
		*c.batch = append(*c.batch, b...)
		c.batchMu.Unlock()
		return len(b), nil
	}
	c.batchMu.Unlock()
	return c.write(b)
}

// holdNextWrite asks that the next write be held for the data that
// follows it (a response's header, for its body).
func (c *progressConn) holdNextWrite() {
	c.batchMu.Lock()
	c.hold = true
	c.batchMu.Unlock()
}

// pushHeld ends holdNextWrite: what a held write left waiting, if nothing
// followed it (a body cut short), is sent now.
func (c *progressConn) pushHeld() {
	c.batchMu.Lock()
	pending := c.pending
	c.hold, c.pending = false, false
	c.batchMu.Unlock()
	if tc, ok := c.Conn.(*net.TCPConn); ok && pending {
		// Setting TCP_NODELAY (Go's default, already set) sends what
		// TCP holds.
		_ = tc.SetNoDelay(true)
	}
}

// followed notes that data followed a held write.
func (c *progressConn) followed() {
	c.batchMu.Lock()
	c.pending = false
	c.batchMu.Unlock()
}

// write writes b in pieces of at most Progress bytes, each with its
// deadline. A write asked to be held (holdNextWrite) and within one piece
// goes with MSG_MORE, where the system has it (writeHeld).
func (c *progressConn) write(b []byte) (int, error) {
	c.batchMu.Lock()
	hold := c.hold && len(b) <= c.lim.Progress
	c.hold = false
	if !hold {
		// This write sends what a held one left.
		c.pending = false
	}
	c.batchMu.Unlock()
	if hold {
		if n, handled, err := c.writeHeld(b); handled {
			c.writes++
			c.held++
			if n > 0 {
				c.batchMu.Lock()
				c.pending = true
				c.batchMu.Unlock()
			}
			return n, c.progressed(err)
		}
	}
	n := 0
	for n < len(b) {
		end := min(len(b), n+c.lim.Progress)
		if err := c.Conn.SetWriteDeadline(time.Now().Add(c.lim.StallTimeout)); err != nil {
			return n, err
		}
		m, err := c.Conn.Write(b[n:end])
		c.writes++
		n += m
		if err != nil {
			return n, c.progressed(err)
		}
	}
	return n, nil
}

// ReadFrom keeps the kernel copy (sendfile) of a TCP connection. From a
// file on Linux, sendFile hands the kernel as much as the socket takes per
// call and renews the deadline each time Progress bytes were taken;
// otherwise the copy goes piece by piece, each with its deadline.
func (c *progressConn) ReadFrom(r io.Reader) (int64, error) {
	if n, handled, err := c.sendFile(r); handled {
		if n > 0 {
			c.followed()
		}
		return n, c.progressed(err)
	}
	rf, ok := c.Conn.(io.ReaderFrom)
	if !ok {
		return io.Copy(struct{ io.Writer }{c}, r)
	}
	lr, limited := r.(*io.LimitedReader)
	var total int64
	for {
		piece := &io.LimitedReader{R: r, N: int64(c.lim.Progress)}
		if limited {
			if lr.N <= 0 {
				return total, nil
			}
			piece = &io.LimitedReader{R: lr.R, N: min(lr.N, int64(c.lim.Progress))}
		}
		want := piece.N
		if err := c.Conn.SetWriteDeadline(time.Now().Add(c.lim.StallTimeout)); err != nil {
			return total, err
		}
		n, err := rf.ReadFrom(piece)
		total += n
		if limited {
			lr.N -= n
		}
		if err != nil || n < want && !limited || n == 0 {
			return total, c.progressed(err)
		}
	}
}

func (c *progressConn) Close() error {
	c.once.Do(c.release)
	if tc, ok := c.Conn.(*net.TCPConn); ok && c.stalled.Load() {
		_ = tc.SetLinger(0)
	}
	return c.Conn.Close()
}

// guesses throttles wrong basic-authentication passwords per peer: a
// token bucket of GuessBurst, one token back every GuessEvery. At most
// MaxGuessPeers peers are remembered (a full bucket is forgotten first);
// past that, new peers share one bucket, so that memory stays bounded
// whatever the number of addresses a guesser uses.
type guesses struct {
	lim      Limits
	mu       sync.Mutex
	peers    map[netip.Addr]*bucket
	overflow bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newGuesses(lim Limits) *guesses {
	return &guesses{lim: lim, peers: map[netip.Addr]*bucket{}, overflow: bucket{tokens: float64(lim.GuessBurst)}}
}

// refill brings b up to now.
func (g *guesses) refill(b *bucket, now time.Time) {
	if !b.at.IsZero() {
		b.tokens += float64(now.Sub(b.at)) / float64(g.lim.GuessEvery)
	}
	b.tokens = min(b.tokens, float64(g.lim.GuessBurst))
	b.at = now
}

// bucketOf returns peer's bucket, nil when it has none (no wrong guess
// remembered).
func (g *guesses) bucketOf(peer netip.Addr) *bucket {
	if b, ok := g.peers[peer]; ok {
		return b
	}
	return nil
}

// allowed reports whether a guess of peer may be checked now, and when
// not how long until one may.
func (g *guesses) allowed(peer netip.Addr, now time.Time) (bool, time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.bucketOf(peer)
	if b == nil {
		if len(g.peers) < g.lim.MaxGuessPeers {
			return true, 0
		}
		b = &g.overflow
	}
	g.refill(b, now)
	if b.tokens >= 1 {
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) * float64(g.lim.GuessEvery))
}

// wrong records a wrong guess of peer.
func (g *guesses) wrong(peer netip.Addr, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.bucketOf(peer)
	if b == nil {
		if len(g.peers) >= g.lim.MaxGuessPeers {
			g.forgetFull(now)
		}
		if len(g.peers) < g.lim.MaxGuessPeers {
			b = &bucket{tokens: float64(g.lim.GuessBurst), at: now}
			g.peers[peer] = b
		} else {
			b = &g.overflow
		}
	}
	g.refill(b, now)
	b.tokens = max(b.tokens-1, 0)
}

// forgetFull drops the peers whose bucket has filled again: they are
// back where a peer never seen is.
func (g *guesses) forgetFull(now time.Time) {
	for p, b := range g.peers {
		g.refill(b, now)
		if b.tokens >= float64(g.lim.GuessBurst) {
			delete(g.peers, p)
		}
	}
}
