package isoeditor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/seed-a052040e/agentiso/pkg/fsutil"
)

// How WriteFile copied the unchanged bytes.
const (
	MethodReflink       = "reflink"         // FICLONE of the base, then overlays written
	MethodCopyFileRange = "copy_file_range" // in-kernel copy of every gap
	MethodReadWrite     = "read-write"      // portable buffered copy
	// MethodUnchanged: the output there is already this edit of this
	// base, untouched since it was written: nothing is written.
	MethodUnchanged = "unchanged"
)

// WriteOptions tune [WriteFile]. The zero value is ready to use.
type WriteOptions struct {
	// Perm is the output file mode. Default 0600: the embedded Ignition
	// config usually carries secrets (pull secret, keys).
	Perm os.FileMode
	// Progress, if set, is called as bytes are written (or hashed, after a reflink).
	Progress func(done, total int64)
	// NoReflink disables the FICLONE attempt.
	NoReflink bool
	// NoKernelCopy forces the portable read/write path (no reflink, no copy_file_range).
	NoKernelCopy bool
	// SyncDir also fsyncs the destination directory after the renames, so
	// the new name survives a crash. The file data is always fsynced before
	// the rename, so a reader never sees a partial image either way. Off by
	// default: it forces a second journal commit (measured ~7% of a 1 GiB
	// write on ext4) for an output that can be regenerated.
	SyncDir bool
	// NoChecksum skips computing the SHA-256 and writing <dst>.sha256. The
	// hash costs one CPU core reading the whole image; this exists to measure
	// the copy alone and for callers that hash elsewhere.
	NoChecksum bool
	// HashRecords, when set, remembers the output's SHA-256 for the base
	// file as it is (device, inode, size, times) and the edit: the next
	// write of the same edit of the same base takes the recorded sum and
	// does not read the output to hash it (WriteResult.HashReused).
	HashRecords fsutil.HashRecords
	// hashWrap, if set, wraps the output's hash (tests count what is hashed).
	hashWrap func(hash.Hash) hash.Hash
	// hashSourceWrap, if set, wraps what an extended ISO's hash reads
	// (tests make it fail).
	hashSourceWrap func(io.ReaderAt) io.ReaderAt
	// writeback, if set, replaces the kernel's writeback of an extended
	// ISO's written ranges (tests record them).
	writeback func(f *os.File, off, n int64)
}

// WriteResult describes a written image.
type WriteResult struct {
	Path   string
	Size   int64
	SHA256 string // hex; empty with NoChecksum
	Method string // MethodReflink, MethodCopyFileRange or MethodReadWrite
	// HashReused is true when SHA256 was not computed but taken from
	// WriteOptions.HashRecords: the same edit of the same base file was
	// written and hashed before.
	HashReused bool
}

// kernelChunk is how much one copy_file_range call copies: ctx is checked,
// and the hash that follows the copy is told, between calls.
const kernelChunk = 16 << 20

// HashSource says where SHA256 came from: "computed" (the bytes were
// hashed as they were written), "recorded" (taken from the record of the
// same bytes of the same base file), or "none" (NoChecksum).
func (r *WriteResult) HashSource() string {
	switch {
	case r.SHA256 == "":
		return "none"
	case r.HashReused:
		return "recorded"
	}
	return "computed"
}

// errNoFastPath means the kernel copy is unavailable and the portable path must be used.
var errNoFastPath = errors.New("kernel copy unavailable")

// WriteFile writes img to dst atomically: into a temporary file in dst's
// directory, fsynced, then renamed. It computes the SHA-256 of the output
// while writing and writes "<dst>.sha256" in sha256sum format. On any
// error, or when ctx is cancelled, the temporary files are removed and dst
// is left untouched. When the base is an *os.File, unchanged bytes are
// copied by the kernel (reflink if the filesystem supports it, otherwise
// copy_file_range on Linux). Memory use does not depend on the image size.
func WriteFile(ctx context.Context, dst string, img *Image, opts WriteOptions) (*WriteResult, error) {
	st, err := WriteStaged(ctx, dst, img, opts)
	if err != nil {
		return nil, err
	}
	if err := st.Commit(); err != nil {
		st.Discard()
		return nil, err
	}
	return st.Result, nil
}

// Staged is an output written in full under temporary names in its final
// directory, not yet in place: Commit renames it into place, Discard removes
// it. Staging lets a caller save what goes with the ISO (state, credentials)
// first and only then replace the previous ISO.
type Staged struct {
	// Result describes the output as it will be once committed.
	Result  *WriteResult
	tmp     *os.File
	sumTmp  *os.File // nil with NoChecksum
	syncDir bool
	done    bool
	// unchanged: the output is already in place; Commit does nothing.
	unchanged bool
	// records, when set, remembers the committed output's sum by its
	// identity, so that the next write of the same edit finds it in place.
	records fsutil.HashRecords
}

// Unchanged says the output is already in place, untouched since a
// write of the same edit: Commit does nothing.
func (s *Staged) Unchanged() bool { return s.unchanged }

// Measure returns the output's size and sha256 (hex; empty with
// NoChecksum), as they will be once committed.
func (s *Staged) Measure() (int64, string) { return s.Result.Size, s.Result.SHA256 }

// WriteStaged writes img like WriteFile but leaves dst (and dst.sha256)
// untouched until Commit.
func WriteStaged(ctx context.Context, dst string, img *Image, opts WriteOptions) (*Staged, error) {
	base, isFile := img.base.(*os.File)
	spanned, isSpanned := img.base.(spannedBase)
	var spannedFile *os.File
	if isSpanned {
		spannedFile, _, _ = spanned.fileSpans()
		isSpanned = spannedFile != nil
	}
	var rec *recorded
	switch {
	case isFile && img.verify == nil:
		rec = lookupRecord(opts, base, img.editKey())
	case isSpanned && !opts.NoKernelCopy:
		// A sum recorded for this edit of the same base file was
		// computed by a write whose check passed: neither is repeated.
		rec = lookupRecord(opts, spannedFile, "spanned "+img.editKey())
	}
	if st := unchangedOutput(dst, img.size, opts, rec); st != nil {
		return st, nil
	}
	return stage(ctx, dst, img.size, opts, rec, func(tmp *os.File, h hash.Hash) (string, error) {
		switch {
		case opts.NoKernelCopy || (!isFile && !isSpanned):
			return MethodReadWrite, writePortable(ctx, tmp, img, h, opts)
		case !isFile:
			return writeSpans(ctx, tmp, img, spanned, h, opts, rec != nil && rec.sum != "")
		}
		method, err := writeKernel(ctx, tmp, base, img, h, opts)
		if errors.Is(err, errNoFastPath) {
			h.Reset()
			if err = resetFile(tmp); err == nil {
				method, err = MethodReadWrite, writePortable(ctx, tmp, img, h, opts)
			}
		}
		return method, err
	})
}

// WriteReaderStaged writes the size bytes of r to dst the way WriteStaged
// writes an image (temporary file, SHA-256 as it goes, <dst>.sha256,
// nothing in place until Commit), in one sequential pass with a fixed
// buffer. The SHA-256 is computed on another core, behind the writes, from
// the pages just written: r is read once and the hash does not hold up the
// copy. Fewer or more than size bytes from r is an error; a negative size
// takes whatever r has (the result then says how much).
func WriteReaderStaged(ctx context.Context, dst string, r io.Reader, size int64, opts WriteOptions) (*Staged, error) {
	return stage(ctx, dst, size, opts, nil, func(tmp *os.File, h hash.Hash) (string, error) {
		fw := startFollower(ctx, tmp, size, h)
		err := copyReader(ctx, tmp, r, size, opts.Progress, fw.mark)
		if err == nil {
			err = tmp.Sync() // while the hash catches up
		}
		if err != nil {
			fw.abort()
			return "", err
		}
		return MethodReadWrite, fw.finish()
	})
}

// WriteFileRangeStaged writes the n bytes of src at off (one file of a
// base ISO) to dst like WriteReaderStaged, but lets the kernel copy them
// while the SHA-256 is computed alongside, behind the copy, from the pages
// it just brought into the page cache: the source is read from disk once.
// Where the file system shares extents and off is a multiple of its block
// size (an ISO file starts on a 2048-byte sector, so only sometimes), the
// blocks are cloned (MethodReflink; the hash then reads the source once);
// otherwise copy_file_range on Linux, falling back to a buffered copy.
func WriteFileRangeStaged(ctx context.Context, dst string, src *os.File, off, n int64, opts WriteOptions) (*Staged, error) {
	rec := lookupRecord(opts, src, fmt.Sprintf("range %d+%d", off, n))
	return stage(ctx, dst, n, opts, rec, func(tmp *os.File, h hash.Hash) (string, error) {
		if !opts.NoKernelCopy {
			fw := startFollower(ctx, io.NewSectionReader(src, off, n), n, h)
			var cloned int64
			if !opts.NoReflink {
				cloned = cloneRange(tmp, src, off, 0, n)
				fw.mark(cloned)
			}
			err := copyRangeKernel(ctx, tmp, src, off+cloned, cloned, n-cloned, opts.Progress, fw.mark)
			if err == nil {
				err = tmp.Sync() // while the hash catches up
			}
			if err != nil {
				fw.abort()
				if !errors.Is(err, errNoFastPath) {
					return "", err
				}
				h.Reset()
				if err := resetFile(tmp); err != nil {
					return "", err
				}
			} else {
				if cloned > 0 && cloned >= n-cloned {
					return MethodReflink, fw.finish()
				}
				return MethodCopyFileRange, fw.finish()
			}
		}
		return MethodReadWrite, copyReader(ctx, io.MultiWriter(tmp, h), io.NewSectionReader(src, off, n), n, opts.Progress, nil)
	})
}

// copyAlign is the alignment of kernel-copied spans. copy_file_range on a
// filesystem without reflink splices page by page; spans that start off a
// page boundary make every page a partial copy (measured 1.2-1.7x slower on
// ext4 for a 1 GiB span), so overlays are widened to whole aligned blocks
// filled from the edited image.
const copyAlign = 64 << 10

// alignedSegments returns the image as aligned base gaps and patch blocks.
func alignedSegments(img *Image) ([]segment, error) {
	var segs []segment
	pos := int64(0)
	for i := 0; i < len(img.overlays); {
		lo := img.overlays[i].Offset / copyAlign * copyAlign
		hi := min((img.overlays[i].End()+copyAlign-1)/copyAlign*copyAlign, img.size)
		i++
		// merge following overlays whose blocks touch this one
		for i < len(img.overlays) && img.overlays[i].Offset/copyAlign*copyAlign <= hi {
			hi = min((img.overlays[i].End()+copyAlign-1)/copyAlign*copyAlign, img.size)
			i++
		}
		lo = max(lo, pos)
		if lo > pos {
			segs = append(segs, segment{off: pos, n: lo - pos})
		}
		data := make([]byte, hi-lo)
		if _, err := img.ReadAt(data, lo); err != nil {
			return nil, fmt.Errorf("reading image at byte %d: %w", lo, err)
		}
		segs = append(segs, segment{off: lo, n: hi - lo, overlay: &Overlay{Region: "patch", Offset: lo, Data: data}})
		pos = hi
	}
	if pos < img.size {
		segs = append(segs, segment{off: pos, n: img.size - pos})
	}
	return segs, nil
}

// cloneBlock is the alignment FICLONERANGE is tried at: offsets and the
// length must be multiples of the file system's block size (4 KiB on XFS
// and btrfs as made by default); a larger block size refuses the clone
// and the bytes are copied instead.
const cloneBlock = 4096

// fileSpan says that the n image bytes at off are the bytes at fileOff of
// a file.
type fileSpan struct{ off, fileOff, n int64 }

// spannedBase is a base image whose bytes are, in places, ranges of one
// file (a minimal ISO's files shared with the full ISO), which the kernel
// can copy or clone. raw reads the base's bytes without the side effects
// its ReadAt may have (the minimal ISO's hashes what it is asked for) and
// may be used while the base is being read.
type spannedBase interface {
	fileSpans() (f *os.File, spans []fileSpan, raw io.ReaderAt)
}

// checkedBase is a spanned base whose ReadAt checks the bytes it is asked
// for in order (the minimal ISO's sha256): checkHash is the hash to give
// them to instead, and checked, once every byte has been, makes the
// image's check compare what it hashed.
type checkedBase interface {
	checkHash() (h hash.Hash, checked func())
}

// hashTwo reads bytes [from, to) of img's base once, through buf, and
// hashes them into check and, with img's overlays applied, into h: both at
// once where no overlay lies, one after the other where one does.
func hashTwo(ctx context.Context, img *Image, h, check hash.Hash, from, to int64, buf []byte) error {
	var wg sync.WaitGroup
	for off := from; off < to; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(int64(len(buf)), to-off)
		p := buf[:n]
		if got, err := img.base.ReadAt(p, off); int64(got) != n {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("reading image at byte %d: %w", off, err)
		}
		if img.patches(off, off+n) {
			check.Write(p)
			img.patch(p, off)
			h.Write(p)
		} else {
			wg.Add(1)
			go func() {
				defer wg.Done()
				check.Write(p)
			}()
			h.Write(p)
			wg.Wait()
		}
		off += n
	}
	return nil
}

// writeSpans writes an image whose base is spanned: each base byte that is
// a byte of the file is cloned (whole aligned blocks, where the file system
// shares extents) or copied by the kernel (where the file offset and the
// image offset are congruent modulo a page, so that no page is copied in
// halves), the rest is read through raw and written; the hash follows, in
// one sequential read of the image, behind the writes (the pages the copy
// just brought in). The base's own check (the minimal ISO's sha256) reads
// the same pages behind the copy, beside the hash; verified (the output's
// sum, and so the check, recorded for this base file) skips the check. The
// method returned is the one that moved the most bytes.
func writeSpans(ctx context.Context, out *os.File, img *Image, sb spannedBase, h hash.Hash, opts WriteOptions, verified bool) (string, error) {
	f, spans, raw := sb.fileSpans()
	rawImg := &Image{base: raw, size: img.size, overlays: img.overlays}
	segs, err := alignedSegments(rawImg)
	if err != nil {
		return "", err
	}
	var fw *follower
	var checked func()
	if cb, ok := sb.(checkedBase); ok && !verified {
		// The base's own check hashes the pristine bytes beside the
		// output's hash, on another core, from the same read.
		var check hash.Hash
		check, checked = cb.checkHash()
		buf := make([]byte, streamBuf)
		fw = follow(ctx, img.size, func(ctx context.Context, from, to int64) error {
			return hashTwo(ctx, rawImg, h, check, from, to, buf)
		})
	} else {
		fw = startFollower(ctx, img, img.size, h)
	}
	c := &spanCopier{ctx: ctx, out: out, f: f, raw: raw, spans: spans, mark: fw.mark, clone: !opts.NoReflink, kernel: true}
	if opts.Progress != nil {
		c.progress = func(done, _ int64) { opts.Progress(done, img.size) }
	}
	for _, s := range segs {
		if err = c.segment(s); err != nil {
			break
		}
	}
	if err == nil {
		if err = out.Truncate(img.size); err == nil {
			err = out.Sync() // while the hash catches up
		}
	}
	if err != nil {
		fw.abort()
		return "", err
	}
	if err := fw.finish(); err != nil {
		return "", err
	}
	if checked != nil {
		checked()
	}
	if img.verify != nil && !verified {
		if err := img.verify(); err != nil {
			return "", err
		}
	}
	return c.method(), nil
}

// spanCopier writes the segments of a spanned image in order.
type spanCopier struct {
	ctx      context.Context
	out, f   *os.File
	raw      io.ReaderAt
	spans    []fileSpan
	mark     func(end int64)
	progress func(done, total int64)
	// clone and kernel are cleared once the file system refuses them.
	clone, kernel bool
	buf           []byte
	// bytes moved by each method
	cloned, copied, written int64
}

func (c *spanCopier) method() string {
	switch {
	case c.cloned > 0 && c.cloned >= c.copied && c.cloned >= c.written:
		return MethodReflink
	case c.copied > 0 && c.copied >= c.written:
		return MethodCopyFileRange
	}
	return MethodReadWrite
}

func (c *spanCopier) done(end int64) {
	c.mark(end)
	if c.progress != nil {
		c.progress(end, 0)
	}
}

func (c *spanCopier) segment(s segment) error {
	if s.overlay != nil {
		if _, err := c.out.WriteAt(s.overlay.Data, s.off); err != nil {
			return err
		}
		c.written += s.n
		c.done(s.off + s.n)
		return nil
	}
	end := s.off + s.n
	for pos := s.off; pos < end; {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		i := sort.Search(len(c.spans), func(i int) bool { return c.spans[i].off+c.spans[i].n > pos })
		if i == len(c.spans) || c.spans[i].off > pos {
			// bytes of no file: up to the next span
			next := end
			if i < len(c.spans) {
				next = min(end, c.spans[i].off)
			}
			if err := c.write(pos, next); err != nil {
				return err
			}
			pos = next
			continue
		}
		sp := c.spans[i]
		hi := min(end, sp.off+sp.n)
		fo := sp.fileOff + pos - sp.off
		if (fo-pos)%cloneBlock != 0 {
			// not congruent: the kernel would copy every page in halves
			if err := c.write(pos, hi); err != nil {
				return err
			}
			pos = hi
			continue
		}
		if c.clone {
			if k := cloneRange(c.out, c.f, fo, pos, hi-pos); k > 0 {
				c.cloned += k
				pos += k
				c.done(pos)
				continue
			}
			if fo%cloneBlock == 0 && hi-pos >= cloneBlock {
				c.clone = false // aligned and refused: no reflink here
			}
		}
		if c.kernel {
			err := copyRangeKernel(c.ctx, c.out, c.f, fo, pos, hi-pos, c.progress, c.mark)
			if err == nil {
				c.copied += hi - pos
				pos = hi
				continue
			}
			if !errors.Is(err, errNoFastPath) {
				return err
			}
			c.kernel = false
		}
		if err := c.write(pos, hi); err != nil {
			return err
		}
		pos = hi
	}
	return nil
}

// write copies the image bytes [from, to) through user space.
func (c *spanCopier) write(from, to int64) error {
	if c.buf == nil {
		c.buf = make([]byte, streamBuf)
	}
	for pos := from; pos < to; {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		n := min(int64(len(c.buf)), to-pos)
		if got, err := c.raw.ReadAt(c.buf[:n], pos); int64(got) != n {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("reading base image at byte %d: %w", pos, err)
		}
		if _, err := c.out.WriteAt(c.buf[:n], pos); err != nil {
			return err
		}
		pos += n
		c.written += n
		c.done(pos)
	}
	return nil
}

// outputSalt names an output file agentiso wrote and recorded, as it was
// committed, in WriteOptions.HashRecords.
const outputSalt = "output"

// unchangedOutput returns a staged no-op when dst is already this output:
// the edit's sum is recorded (rec), dst is the file a commit of that sum
// recorded, untouched since (its identity: device, inode, size, times),
// with the size and mode asked for, and its .sha256 names that sum. Else
// nil: the output is written.
func unchangedOutput(dst string, size int64, opts WriteOptions, rec *recorded) *Staged {
	if rec == nil || rec.sum == "" || size < 0 {
		return nil
	}
	f, err := os.Open(dst)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	perm := opts.Perm
	if perm == 0 {
		perm = 0o600
	}
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != size || fi.Mode().Perm() != perm {
		return nil
	}
	if sum, ok := opts.HashRecords.Lookup(f, outputSalt); !ok || sum != rec.sum {
		return nil
	}
	b, err := fsutil.ReadRegular(dst+".sha256", 4096)
	if err != nil || string(b) != rec.sum+"  "+filepath.Base(dst)+"\n" {
		return nil
	}
	return &Staged{Result: &WriteResult{Path: dst, Size: size, SHA256: rec.sum, Method: MethodUnchanged, HashReused: true}, unchanged: true}
}

// recorded is a sum found in WriteOptions.HashRecords for a source file.
type recorded struct {
	records fsutil.HashRecords
	src     *os.File
	salt    string
	sum     string // "" when none was recorded: hash, then record
}

// lookupRecord looks up the sum of salt's bytes of src (nil without
// records or without a checksum).
func lookupRecord(opts WriteOptions, src *os.File, salt string) *recorded {
	if opts.NoChecksum || opts.HashRecords.Dir == "" {
		return nil
	}
	r := &recorded{records: opts.HashRecords, src: src, salt: salt}
	r.sum, _ = opts.HashRecords.Lookup(src, salt)
	return r
}

// editKey names the edit of the base the image is: its size and every
// overlay's offset and bytes.
func (m *Image) editKey() string {
	h := sha256.New()
	fmt.Fprintf(h, "size %d\n", m.size)
	for _, o := range m.overlays {
		fmt.Fprintf(h, "overlay %d %d\n", o.Offset, len(o.Data))
		h.Write(o.Data)
	}
	return "edit " + hex.EncodeToString(h.Sum(nil))
}

// copyReader copies exactly size bytes of r to w (all of r when size is
// negative), checking ctx between chunks; copied(end), if set, is called
// each time every byte before end has been written.
func copyReader(ctx context.Context, w io.Writer, r io.Reader, size int64, progress func(done, total int64), copied func(end int64)) error {
	buf := make([]byte, streamBuf)
	var done int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := r.Read(buf)
		if size >= 0 && int64(n) > size-done {
			return fmt.Errorf("the source has more than the %d bytes expected", size)
		}
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			done += int64(n)
			if copied != nil {
				copied(done)
			}
			if progress != nil {
				progress(done, size)
			}
		}
		if err == io.EOF {
			if size >= 0 && done != size {
				return fmt.Errorf("the source ended after %d of %d bytes: %w", done, size, io.ErrUnexpectedEOF)
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// stage creates dst's temporary file, has fill write size bytes into it
// (hashing them into h), then syncs it and stages its checksum file. With a
// recorded sum (rec.sum), nothing is hashed and the sum is taken, provided
// the source is still the file it was recorded for once it has been read;
// a computed sum is recorded for the next run.
func stage(ctx context.Context, dst string, size int64, opts WriteOptions, rec *recorded, fill func(tmp *os.File, h hash.Hash) (string, error)) (st *Staged, err error) {
	if opts.Perm == 0 {
		opts.Perm = 0o600
	}
	dir, name := filepath.Dir(dst), filepath.Base(dst)
	// Both temporary files stay open (and so locked) until Commit or
	// Discard: fsutil.RemoveStaleTemps in another run leaves them alone.
	tmp, err := fsutil.CreateTemp(dir, name)
	if err != nil {
		return nil, fmt.Errorf("creating output %s: %w", dst, err)
	}
	var sumTmp *os.File
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			if sumTmp != nil {
				sumTmp.Close()
				os.Remove(sumTmp.Name())
			}
		}
	}()
	if err = tmp.Chmod(opts.Perm); err != nil {
		return nil, fmt.Errorf("setting mode of %s: %w", tmp.Name(), err)
	}
	var h hash.Hash = discardHash{}
	if !opts.NoChecksum && (rec == nil || rec.sum == "") {
		h = sha256.New()
		if opts.hashWrap != nil {
			h = opts.hashWrap(h)
		}
	}
	method, err := fill(tmp, h)
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", dst, err)
	}
	if err = ctx.Err(); err != nil {
		return nil, fmt.Errorf("writing %s: %w", dst, err)
	}
	if err = tmp.Sync(); err != nil {
		return nil, fmt.Errorf("syncing %s: %w", tmp.Name(), err)
	}
	if size < 0 {
		fi, err := tmp.Stat()
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", dst, err)
		}
		size = fi.Size()
	}
	var sum string
	reused := false
	if !opts.NoChecksum {
		switch {
		case rec != nil && rec.sum != "":
			// The source must not have changed while it was copied.
			if now, ok := rec.records.Lookup(rec.src, rec.salt); !ok || now != rec.sum {
				return nil, fmt.Errorf("writing %s: %s changed while it was read; run again", dst, rec.src.Name())
			}
			sum, reused = rec.sum, true
		default:
			sum = hex.EncodeToString(h.Sum(nil))
			if rec != nil {
				_ = rec.records.Record(rec.src, rec.salt, sum) // best effort: a miss only costs a hash
			}
		}
		if sumTmp, err = writeTemp(dir, name+".sha256", []byte(sum+"  "+name+"\n")); err != nil {
			return nil, fmt.Errorf("writing %s.sha256: %w", dst, err)
		}
	}
	st = &Staged{
		Result: &WriteResult{Path: dst, Size: size, SHA256: sum, Method: method, HashReused: reused},
		tmp:    tmp, sumTmp: sumTmp, syncDir: opts.SyncDir,
	}
	if rec != nil && sum != "" {
		st.records = opts.HashRecords
	}
	return st, nil
}

// Commit renames the staged output into place. The ISO goes first; should
// the checksum file then fail to move, the previous checksum file (which no
// longer matches) is removed rather than the new ISO.
func (s *Staged) Commit() error {
	if s.done {
		return errors.New("staged output already committed or discarded")
	}
	if s.unchanged {
		s.done = true
		return nil
	}
	dst := s.Result.Path
	if err := os.Rename(s.tmp.Name(), dst); err != nil {
		return fmt.Errorf("renaming %s to %s: %w", s.tmp.Name(), dst, err)
	}
	s.done = true
	err := s.tmp.Close()
	if s.sumTmp != nil {
		if rerr := os.Rename(s.sumTmp.Name(), dst+".sha256"); rerr != nil {
			s.sumTmp.Close()
			os.Remove(s.sumTmp.Name())
			os.Remove(dst + ".sha256")
			return fmt.Errorf("renaming %s to %s.sha256: %w", s.sumTmp.Name(), dst, rerr)
		}
		if cerr := s.sumTmp.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("closing %s: %w", dst, err)
	}
	if s.records.Dir != "" && s.sumTmp != nil {
		// Best effort: a missing record only means a rewrite next time.
		if f, oerr := os.Open(dst); oerr == nil {
			_ = s.records.Record(f, outputSalt, s.Result.SHA256)
			f.Close()
		}
	}
	if s.syncDir {
		if d, derr := os.Open(filepath.Dir(dst)); derr == nil {
			d.Sync() // best effort: persist the renames
			d.Close()
		}
	}
	return nil
}

// Discard removes a staged output that was not committed (a no-op after
// Commit).
func (s *Staged) Discard() {
	if s.done {
		return
	}
	s.done = true
	if s.unchanged {
		return
	}
	os.Remove(s.tmp.Name())
	s.tmp.Close()
	if s.sumTmp != nil {
		os.Remove(s.sumTmp.Name())
		s.sumTmp.Close()
	}
}

func resetFile(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.Seek(0, io.SeekStart)
	return err
}

func writeTemp(dir, name string, data []byte) (*os.File, error) {
	f, err := fsutil.CreateTemp(dir, name)
	if err != nil {
		return nil, err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

func writePortable(ctx context.Context, out *os.File, img *Image, h hash.Hash, opts WriteOptions) error {
	n, err := img.Stream(ctx, io.MultiWriter(out, h), opts.Progress)
	if err != nil {
		return err
	}
	if n != img.size {
		return fmt.Errorf("wrote %d of %d bytes", n, img.size)
	}
	return nil
}

// hashImage hashes the image sequentially with a fixed buffer.
func hashImage(ctx context.Context, img *Image, h hash.Hash, progress func(done, total int64)) error {
	return hashRange(ctx, img, img.size, h, 0, img.size, progress, nil)
}

// hashRange hashes bytes [from, to) of r (of size bytes) with a fixed
// buffer: buf, or a new one when nil.
func hashRange(ctx context.Context, r io.ReaderAt, size int64, h hash.Hash, from, to int64, progress func(done, total int64), buf []byte) error {
	if buf == nil {
		buf = make([]byte, min(streamBuf, max(to-from, 1)))
	}
	for off := from; off < to; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(int64(len(buf)), to-off)
		if got, err := r.ReadAt(buf[:n], off); int64(got) != n {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("reading image at byte %d: %w", off, err)
		}
		h.Write(buf[:n])
		off += n
		if progress != nil {
			progress(off, size)
		}
	}
	return nil
}

// follower hashes a source behind the kernel copy of it. The copy reports
// each prefix it has written (mark); the follower hashes only those bytes,
// which the copy has just read into the page cache, and never reads ahead
// of it: a cold source is read from disk once, in one sequential stream,
// by the copy. The copy never waits for the hash. With a discardHash it
// does nothing. A negative size hashes whatever was marked.
type follower struct {
	mu     sync.Mutex
	cond   *sync.Cond
	copied int64 // every byte before copied has been written
	closed bool  // no more marks
	done   chan error
	cancel context.CancelFunc
	// ended keeps the goroutine's result once received: finish and
	// abort may both be called, in any order.
	ended sync.Once
	err   error
}

func startFollower(ctx context.Context, r io.ReaderAt, size int64, h hash.Hash) *follower {
	if _, ok := h.(discardHash); ok {
		return &follower{}
	}
	buf := make([]byte, streamBuf) // one for every range the copy marks
	return follow(ctx, size, func(ctx context.Context, from, to int64) error {
		return hashRange(ctx, r, size, h, from, to, nil, buf)
	})
}

// follow runs consume on each newly marked range, in order, until finish.
func follow(ctx context.Context, size int64, consume func(ctx context.Context, from, to int64) error) *follower {
	f := &follower{}
	ctx, f.cancel = context.WithCancel(ctx)
	f.cond = sync.NewCond(&f.mu)
	f.done = make(chan error, 1)
	go func() {
		var pos int64
		for {
			f.mu.Lock()
			for f.copied <= pos && !f.closed {
				f.cond.Wait()
			}
			end, closed := f.copied, f.closed
			f.mu.Unlock()
			if end > pos {
				if err := consume(ctx, pos, end); err != nil {
					f.done <- err
					return
				}
				pos = end
				continue
			}
			if closed {
				break
			}
		}
		f.mu.Lock()
		want := f.copied
		f.mu.Unlock()
		if size >= 0 {
			want = size
		}
		if pos != want {
			f.done <- fmt.Errorf("hashed %d of %d bytes", pos, want)
			return
		}
		f.done <- nil
	}()
	return f
}

// mark says the copy has written every byte before end.
func (f *follower) mark(end int64) {
	if f.done == nil {
		return
	}
	f.mu.Lock()
	if end > f.copied {
		f.copied = end
		f.cond.Signal()
	}
	f.mu.Unlock()
}

func (f *follower) close() {
	f.mu.Lock()
	f.closed = true
	f.cond.Signal()
	f.mu.Unlock()
}

// wait returns the goroutine's result once it has ended.
func (f *follower) wait() error {
	f.ended.Do(func() { f.err = <-f.done })
	return f.err
}

// finish waits for the hash of everything marked.
func (f *follower) finish() error {
	if f.done == nil {
		return nil
	}
	f.close()
	err := f.wait()
	f.cancel()
	return err
}

// abort stops the hash after a failed copy.
func (f *follower) abort() {
	if f.done == nil {
		return
	}
	f.cancel()
	f.close()
	f.wait()
}

// discardHash stands in for the hash when none is wanted.
type discardHash struct{}

func (discardHash) Write(p []byte) (int, error) { return len(p), nil }
func (discardHash) Sum(b []byte) []byte         { return b }
func (discardHash) Reset()                      {}
func (discardHash) Size() int                   { return 0 }
func (discardHash) BlockSize() int              { return 1 }
