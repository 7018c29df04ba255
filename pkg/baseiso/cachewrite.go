package baseiso

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

// MaxISOSize caps every base ISO download and copy into the cache. A RHCOS
// live ISO is about 1.2 GiB; the cap only stops a server (or image) that
// sends far more than any ISO from filling the disk.
const MaxISOSize int64 = 16 << 30

// partFile is the part of *os.File a download writes through.
type partFile interface {
	io.Writer
	Sync() error
	Close() error
}

// A part file is never opened through a symbolic link (one planted in the
// cache directory by its predictable name).
func openPartFile(name string, flag int, perm os.FileMode) (partFile, error) {
	if fi, err := os.Lstat(name); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (a symbolic link?); agentiso writes only its own files in the cache: remove it", name)
	}
	return os.OpenFile(name, flag, perm)
}

// CacheWriteError reports that the cache directory could not take the ISO:
// a full disk or quota, a read-only or failing file system. Repeating the
// download cannot help, so it is never retried.
type CacheWriteError struct {
	Dir     string // the cache directory
	File    string // the file being written
	Written int64  // bytes of the ISO in File when it failed
	Size    int64  // the ISO's size; -1 when unknown
	Free    int64  // free bytes in Dir; -1 when unknown
	Before  bool   // found before anything was written (not enough free space)
	Kept    bool   // File was kept so that a later run resumes it
	Err     error
}

func (e *CacheWriteError) Error() string {
	const where = "free space there, or set XDG_CACHE_HOME to a directory on a disk with room (the cache is $XDG_CACHE_HOME/agentiso/image_cache)"
	if e.Before {
		return fmt.Sprintf("the base ISO cache directory %s has %s free, but the base ISO needs %s: %s",
			e.Dir, humanBytes(e.Free), humanBytes(e.Size-e.Written), where)
	}
	kept := ""
	if e.Kept {
		kept = fmt.Sprintf("; the partial download is kept at %s and resumes on the next run", e.File)
	}
	if !isDiskFull(e.Err) {
		return fmt.Sprintf("cannot write the base ISO into the cache directory %s: %v; fix that directory or set XDG_CACHE_HOME to another one%s", e.Dir, e.Err, kept)
	}
	need := "the rest of the ISO (its size is unknown)"
	if e.Size >= 0 {
		need = humanBytes(e.Size-e.Written) + " more is needed there"
	}
	free := ""
	if e.Free >= 0 {
		free = fmt.Sprintf(" (%s free)", humanBytes(e.Free))
	}
	return fmt.Sprintf("the base ISO cache directory %s is full: writing stopped after %s of %s (%v); %s%s: %s%s",
		e.Dir, humanBytes(e.Written), sizeOrUnknown(e.Size), e.Err, need, free, where, kept)
}

func (e *CacheWriteError) Unwrap() error { return e.Err }

// isDiskFull reports a write that failed for lack of space or quota.
func isDiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// isCacheWrite reports a CacheWriteError (never retried, and no other
// source is tried: it would fill the same disk).
func isCacheWrite(err error) bool {
	var cw *CacheWriteError
	return errors.As(err, &cw)
}

// cacheWriteError describes a failed write of file (written bytes of size).
func (r *resolver) cacheWriteError(file string, written, size int64, kept bool, err error) *CacheWriteError {
	dir := filepath.Dir(file)
	free, ok := r.free(dir)
	if !ok {
		free = -1
	}
	return &CacheWriteError{Dir: dir, File: file, Written: written, Size: size, Free: free, Kept: kept, Err: err}
}

// checkRoom fails before a download when the cache directory cannot hold
// the rest of it (size - offset bytes); reclaim is what the download frees
// first (a part file it starts over).
func (r *resolver) checkRoom(file string, offset, size, reclaim int64) error {
	dir := filepath.Dir(file)
	free, ok := r.free(dir)
	if !ok || free+reclaim >= size-offset {
		return nil
	}
	return &CacheWriteError{Dir: dir, File: file, Written: offset, Size: size, Free: free + reclaim, Before: true, Err: syscall.ENOSPC}
}

func (r *resolver) free(dir string) (int64, bool) {
	if r.opts.freeSpace != nil {
		return r.opts.freeSpace(dir)
	}
	return freeSpace(dir)
}

// SizeLimitError reports a download larger than MaxISOSize.
type SizeLimitError struct {
	Source string
	Size   int64 // announced size, or -1 when the limit was crossed mid-transfer
	Limit  int64
}

func (e *SizeLimitError) Error() string {
	got := "sends more"
	if e.Size >= 0 {
		got = "announces " + humanBytes(e.Size)
	}
	return fmt.Sprintf("%s %s: larger than the %s limit for a base ISO (a RHCOS live ISO is about 1.2 GiB); is it the right file?", e.Source, got, humanBytes(e.Limit))
}

// cappedWriter fails once more than left bytes are written through it, so
// a copy stops at the cap instead of filling the disk.
type cappedWriter struct {
	w    io.Writer
	left int64
	err  error // the limit error, once crossed
}

func (c *cappedWriter) Write(b []byte) (int, error) {
	if int64(len(b)) > c.left {
		c.err = errSizeLimit
		return 0, c.err
	}
	c.left -= int64(len(b))
	return c.w.Write(b)
}

var errSizeLimit = errors.New("size limit crossed")

// recordingWriter remembers the error of the cache file it writes to, so a
// failed copy can tell a cache (disk) failure from a network one.
type recordingWriter struct {
	w   io.Writer
	err error
}

func (c *recordingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	if err != nil {
		c.err = err
	}
	return n, err
}

// checkLiveISO reports whether the file at path is a CoreOS live ISO that
// agentiso can use; an unverified download that is not one is removed.
func checkLiveISO(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	_, err = isoeditor.Open(f, fi.Size())
	return err
}
