package fsutil

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotRegular is returned for an input that is not a regular file (a
// FIFO, socket, device or directory): reading one could block forever or
// never end.
var ErrNotRegular = errors.New("not a regular file")

// TooLargeError is returned for an input larger than its documented limit.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the limit for this input (see docs/inputs.md, Input limits)", e.Path, FormatSize(e.Limit))
}

// FormatSize writes a byte count in binary units (4 MiB, 512 KiB, 100 B).
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// OpenRegular opens path for reading and refuses anything but a regular
// file (symbolic links to one are fine). The open itself never blocks: a
// FIFO is opened non-blocking, then refused.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: it %s", ErrNotRegular, describeMode(fi.Mode()))}
	}
	return f, nil
}

// ReadRegular reads the regular file at path, refusing anything else (see
// OpenRegular) and any file larger than limit bytes, without ever holding
// more than limit+1 bytes in memory.
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadLimited(f, path, limit)
}

// ReadLimited reads r to the end, failing with a TooLargeError naming name
// as soon as more than limit bytes arrive.
func ReadLimited(r io.Reader, name string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: name, Limit: limit}
	}
	return b, nil
}

func describeMode(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "is a directory"
	case m&os.ModeNamedPipe != 0:
		return "is a FIFO"
	case m&os.ModeSocket != 0:
		return "is a socket"
	case m&os.ModeDevice != 0:
		return "is a device"
	}
	return "has mode " + m.String()
}
