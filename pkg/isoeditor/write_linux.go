package isoeditor

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// writeKernel copies the unchanged bytes in the kernel: a FICLONE reflink of
// the whole base when the filesystem supports it, else copy_file_range for
// every gap. The SHA-256 of the output is computed from the edited image
// (base plus overlays): after a reflink by reading it once, else
// concurrently with the copy and behind it (follower), from the pages the
// copy just read. It returns errNoFastPath, before anything is written,
// when neither is available.
func writeKernel(ctx context.Context, out, base *os.File, img *Image, h hash.Hash, opts WriteOptions) (string, error) {
	reflinked, err := reflinkImage(out, base, img, opts)
	if err != nil {
		return "", err
	}
	if reflinked {
		if _, ok := h.(discardHash); ok {
			if opts.Progress != nil {
				opts.Progress(img.size, img.size)
			}
			return MethodReflink, nil
		}
		return MethodReflink, hashImage(ctx, img, h, opts.Progress)
	}

	fw := startFollower(ctx, img, img.size, h)
	err = copyKernel(ctx, out, base, img, opts.Progress, fw.mark)
	if err == nil {
		// Flush to disk while the hash catches up: it reads the pages the
		// copy brought into the page cache and finishes after the copy.
		err = out.Sync()
	}
	if err != nil {
		fw.abort()
		return "", err
	}
	if err := fw.finish(); err != nil {
		return "", err
	}
	return MethodCopyFileRange, nil
}

// copyBase puts img's bytes at the start of out in the kernel: a FICLONE
// reflink of the whole base (then the overlays written) where the file
// system shares extents, else copy_file_range of every gap (copyKernel);
// copied(end) is called each time every byte before end is in out. It
// returns errNoFastPath, before anything is written, when neither is
// available.
func copyBase(ctx context.Context, out, base *os.File, img *Image, opts WriteOptions, copied func(end int64)) (string, error) {
	reflinked, err := reflinkImage(out, base, img, opts)
	if err != nil {
		return "", err
	}
	if reflinked {
		copied(img.size)
		if opts.Progress != nil {
			opts.Progress(img.size, img.size)
		}
		return MethodReflink, nil
	}
	if err := copyKernel(ctx, out, base, img, opts.Progress, copied); err != nil {
		return "", err
	}
	return MethodCopyFileRange, nil
}

// reflinkImage puts img at the start of out as a FICLONE reflink of the
// whole base with the overlays written over it, where the file system
// shares extents and opts allow it. It reports false, having written
// nothing, when it cannot.
func reflinkImage(out, base *os.File, img *Image, opts WriteOptions) (bool, error) {
	if opts.NoReflink {
		return false, nil
	}
	if st, err := base.Stat(); err != nil || st.Size() != img.size {
		return false, nil
	}
	if err := unix.IoctlFileClone(int(out.Fd()), int(base.Fd())); err != nil {
		return false, nil
	}
	for _, o := range img.overlays {
		if _, err := out.WriteAt(o.Data, o.Offset); err != nil {
			return true, err
		}
	}
	return true, nil
}

// writeback has the kernel start writing n bytes of f at off to disk
// (sync_file_range SYNC_FILE_RANGE_WRITE: it does not wait for them). An
// error is left to the fsync that follows.
func writeback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// copyKernel copies the image's base gaps with copy_file_range and writes
// its patch blocks, in order; copied(end) is called each time every byte
// before end is in out.
func copyKernel(ctx context.Context, out, base *os.File, img *Image, progress func(done, total int64), copied func(end int64)) error {
	inFd, outFd := int(base.Fd()), int(out.Fd())
	segs, err := alignedSegments(img)
	if err != nil {
		return err
	}
	var done int64
	first := true
	for _, s := range segs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.overlay != nil {
			if _, err := out.WriteAt(s.overlay.Data, s.off); err != nil {
				return err
			}
			done += s.n
			copied(done)
			if progress != nil {
				progress(done, img.size)
			}
			continue
		}
		roff, woff := s.off, s.off
		for end := s.off + s.n; roff < end; {
			if err := ctx.Err(); err != nil {
				return err
			}
			n, err := unix.CopyFileRange(inFd, &roff, outFd, &woff, int(min(kernelChunk, end-roff)), 0)
			if err != nil {
				if first && noKernelCopy(err) {
					return errNoFastPath
				}
				return fmt.Errorf("copy_file_range at byte %d: %w", roff, err)
			}
			if n == 0 {
				return fmt.Errorf("copy_file_range: base image ended at byte %d, expected %d bytes", roff, img.size)
			}
			first = false
			done += int64(n)
			copied(done)
			if progress != nil {
				progress(done, img.size)
			}
		}
	}
	return out.Truncate(img.size)
}

// copyRangeKernel copies n bytes of src from off to out at start with
// copy_file_range. It returns errNoFastPath, before anything is copied,
// when the kernel cannot copy between these files.
// copied(end) is called each time every byte of out before end is written;
// progress counts from the start of out.
func copyRangeKernel(ctx context.Context, out, src *os.File, off, start, n int64, progress func(done, total int64), copied func(end int64)) error {
	inFd, outFd := int(src.Fd()), int(out.Fd())
	roff, woff, end := off, start, start+n
	for woff < end {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := unix.CopyFileRange(inFd, &roff, outFd, &woff, int(min(kernelChunk, end-woff)), 0)
		if err != nil {
			if woff == start && noKernelCopy(err) {
				return errNoFastPath
			}
			return fmt.Errorf("copy_file_range at byte %d: %w", roff, err)
		}
		if c == 0 {
			return fmt.Errorf("copy_file_range: the source ended at byte %d, expected %d bytes from %d: %w", roff, n, off, io.ErrUnexpectedEOF)
		}
		copied(woff)
		if progress != nil {
			progress(woff, end)
		}
	}
	return nil
}

// noKernelCopy is an error of copy_file_range meaning the kernel cannot
// copy between these files (another file system, no support), not an I/O
// error.
func noKernelCopy(err error) bool {
	return errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EXDEV) || errors.Is(err, unix.EINVAL) ||
		errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EPERM)
}

// cloneRange shares the blocks of n bytes of src at srcOff with out at
// dstOff (FICLONERANGE), as far as whole blocks go, and returns how many
// bytes it cloned: 0 when either offset is not block-aligned or the file
// system cannot share extents. The caller copies the rest.
func cloneRange(out, src *os.File, srcOff, dstOff, n int64) int64 {
	if srcOff%cloneBlock != 0 || dstOff%cloneBlock != 0 {
		return 0
	}
	n = n / cloneBlock * cloneBlock
	if n == 0 {
		return 0
	}
	err := unix.IoctlFileCloneRange(int(out.Fd()), &unix.FileCloneRange{
		Src_fd: int64(src.Fd()), Src_offset: uint64(srcOff), Src_length: uint64(n), Dest_offset: uint64(dstOff),
	})
	if err != nil {
		return 0
	}
	return n
}
