package serve

import (
	"errors"
	"io"
	"math"
	"net"
	"os"
	"syscall"
	"time"
)

// maxSendfile bounds one sendfile call, as Go's own sendfile does.
const maxSendfile = 4 << 20

// sendFile sends r, a regular file, a section of one or a LimitedReader of
// either, from its current offset with sendfile(2), as many bytes per call as the socket
// takes: a 1 MiB range to a peer that keeps up is one call, where pieces
// of Progress bytes through net.TCPConn.ReadFrom took sixteen, each with
// its deadline. The bound stays the same: the write deadline is
// StallTimeout from the last time the kernel had taken Progress bytes,
// renewed as they are taken, and a peer that takes less in StallTimeout
// gets a timeout error. handled is false when r is not a file or the
// connection not TCP (the caller copies), or when the kernel cannot send
// from this file and nothing was sent.
func (c *progressConn) sendFile(r io.Reader) (written int64, handled bool, err error) {
	tc, ok := c.Conn.(*net.TCPConn)
	if !ok {
		return 0, false, nil
	}
	remain := int64(math.MaxInt64)
	lr, limited := r.(*io.LimitedReader)
	if limited {
		if lr.N <= 0 {
			return 0, true, nil
		}
		remain, r = lr.N, lr.R
	}
	// A file is sent from its own offset, which sendfile advances; a
	// section of one (the descriptor the requests of a file share, see
	// Server.acquire) from the section's, with sendfile's offset argument,
	// which leaves the descriptor's alone: concurrent requests do not
	// move each other's.
	var f *os.File
	var off *int64
	switch v := r.(type) {
	case *os.File:
		f = v
	case *io.SectionReader:
		ra, base, size := v.Outer()
		if f, ok = ra.(*os.File); !ok {
			return 0, false, nil
		}
		pos, err := v.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, false, nil
		}
		o := base + pos
		off = &o
		remain = min(remain, size-pos)
		defer func() { _, _ = v.Seek(written, io.SeekCurrent) }()
	default:
		return 0, false, nil
	}
	if remain <= 0 {
		return 0, true, nil
	}
	src, err := f.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	dst, err := tc.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	if limited {
		defer func() { lr.N -= written }()
	}
	if err := tc.SetWriteDeadline(time.Now().Add(c.lim.StallTimeout)); err != nil {
		return 0, true, err
	}
	var since int64
	var serr error
	cerr := src.Control(func(sfd uintptr) {
		// dst.Write calls the function again each time the socket is
		// writable, until it returns true or the deadline passes.
		werr := dst.Write(func(dfd uintptr) bool {
			for remain > 0 {
				n, err := syscall.Sendfile(int(dfd), int(sfd), off, int(min(remain, maxSendfile)))
				c.sendfiles++
				if n > 0 {
					written += int64(n)
					remain -= int64(n)
					if since += int64(n); since >= int64(c.lim.Progress) {
						since = 0
						if err := tc.SetWriteDeadline(time.Now().Add(c.lim.StallTimeout)); err != nil {
							serr = err
							return true
						}
					}
				}
				switch {
				case errors.Is(err, syscall.EINTR):
				case errors.Is(err, syscall.EAGAIN):
					return false
				case err != nil:
					serr = err
					return true
				case n == 0: // the end of the file
					return true
				}
			}
			return true
		})
		if serr == nil {
			serr = werr
		}
	})
	if serr == nil {
		serr = cerr
	}
	if written == 0 && (errors.Is(serr, syscall.EINVAL) || errors.Is(serr, syscall.ENOSYS) || errors.Is(serr, syscall.EOPNOTSUPP)) {
		// Not a file the kernel sends from: the caller copies.
		return 0, false, nil
	}
	if serr != nil {
		serr = &net.OpError{Op: "sendfile", Net: "tcp", Source: tc.LocalAddr(), Addr: tc.RemoteAddr(), Err: serr}
	}
	return written, true, serr
}

// writeHeld writes b with MSG_MORE, within StallTimeout: TCP keeps it
// until more follows (the response's body, by sendfile) rather than
// sending it in a segment of its own; what follows without MSG_MORE
// pushes it all. handled is false when the connection is not TCP (the
// caller writes).
func (c *progressConn) writeHeld(b []byte) (written int, handled bool, err error) {
	tc, ok := c.Conn.(*net.TCPConn)
	if !ok {
		return 0, false, nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	if err := tc.SetWriteDeadline(time.Now().Add(c.lim.StallTimeout)); err != nil {
		return 0, true, err
	}
	var serr error
	werr := rc.Write(func(fd uintptr) bool {
		for written < len(b) {
			n, err := syscall.SendmsgN(int(fd), b[written:], nil, nil, syscall.MSG_MORE|syscall.MSG_NOSIGNAL)
			if n > 0 {
				written += n
			}
			switch {
			case errors.Is(err, syscall.EINTR):
			case errors.Is(err, syscall.EAGAIN):
				return false
			case err != nil:
				serr = err
				return true
			}
		}
		return true
	})
	if serr == nil {
		serr = werr
	}
	if serr != nil {
		serr = &net.OpError{Op: "write", Net: "tcp", Source: tc.LocalAddr(), Addr: tc.RemoteAddr(), Err: serr}
	}
	return written, true, serr
}
