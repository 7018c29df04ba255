package isoeditor

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/ulikunitz/xz"
)

// RootfsURLKarg is the kernel argument that tells the live initramfs where
// to download the root file system a minimal ISO (or a PXE boot) lacks.
const RootfsURLKarg = "coreos.live.rootfs_url="

// LiveISOKarg is the kernel argument that tells the live initramfs which
// volume holds the root file system of a full ISO.
const LiveISOKarg = "coreos.liveiso="

// RootfsPath is the live root file system inside a full live ISO.
const RootfsPath = "images/pxeboot/rootfs.img"

// maxPackedCache is how much of the packed part is kept in memory after
// the sizing pass (all of it, for a real live ISO), so reads never
// decompress it again; a larger one is decompressed again as reads need.
const maxPackedCache = 8 << 20

// maxMinimalPacked bounds the bytes of a minimal ISO that come from the
// packed (xz) part of miniso.dat: a real one packs a few MB (directories,
// boot configs, padding), the rest being files shared with the full ISO.
const maxMinimalPacked = 512 << 20

// Minimal is the minimal ISO a full live ISO describes in its
// coreos/miniso.dat, opened for editing without being written anywhere: its
// bytes are read on demand from the full ISO and the packed data. Its own
// embed areas (coreos/igninfo.json, coreos/kargs.json of the minimal ISO)
// are where [Minimal.Edit] puts the Ignition config and kernel arguments.
type Minimal struct {
	// ISO is the parsed minimal ISO (reads go through the rebuilt bytes).
	*ISO
	ra        *minimalReaderAt
	kargsJSON fileExtent
}

// NotPristineError reports a full ISO that cannot give its minimal ISO
// because it is customised: the minimal-ISO data only matches the ISO as
// it was built.
type NotPristineError struct {
	Custom []string
}

func (e *NotPristineError) Error() string {
	return fmt.Sprintf("the minimal ISO can only be rebuilt from a plain live ISO, and this one carries %s: use the plain RHCOS live ISO", strings.Join(e.Custom, " and "))
}

// Minimal opens the minimal ISO the full ISO carries. It fails with an
// error wrapping [ErrNoMinisoData] when the ISO has no minimal-ISO data, a
// [*NotPristineError] when the ISO is customised, and an error when the
// rebuilt image is not a live ISO with kernel-argument areas.
func (iso *ISO) Minimal() (*Minimal, error) {
	data, err := iso.MinisoData()
	if err != nil {
		return nil, err
	}
	custom, err := iso.Customized()
	if err != nil {
		return nil, err
	}
	if len(custom) > 0 {
		return nil, &NotPristineError{Custom: custom}
	}
	ra, err := newMinimalReaderAt(data, iso.r)
	if err != nil {
		return nil, err
	}
	m, err := Open(ra, ra.size)
	if err != nil {
		return nil, fmt.Errorf("minimal ISO rebuilt from %s: %w", MinisoPath, err)
	}
	if m.kargs == nil {
		return nil, fmt.Errorf("minimal ISO rebuilt from %s: %w: it has no %s", MinisoPath, ErrNoKargs, KargsJSONPath)
	}
	kj, ok, err := m.lookup(m.root, KargsJSONPath)
	if err != nil || !ok {
		return nil, fmt.Errorf("minimal ISO rebuilt from %s: %s not found (%v)", MinisoPath, KargsJSONPath, err)
	}
	return &Minimal{ISO: m, ra: ra, kargsJSON: kj}, nil
}

// CheckRootfsURL checks a root file system URL for coreos.live.rootfs_url:
// an absolute http(s) URL with a host and nothing a kernel command line or
// boot config would split or expand (whitespace, quotes, $, \).
func CheckRootfsURL(u string) error {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || strings.ContainsAny(u, " \t\r\n\"'$\\") {
		return fmt.Errorf("root file system URL %q must be an http or https URL without spaces, quotes, $ or \\", u)
	}
	return nil
}

// dropKarg removes every argument starting with prefix from kargs the way
// coreos-installer does: whole words, other spacing kept.
func dropKarg(kargs, prefix string) string {
	s := " " + kargs + " "
	for _, w := range strings.Fields(kargs) {
		if strings.HasPrefix(w, prefix) {
			s = strings.Replace(s, " "+w+" ", " ", 1)
		}
	}
	return strings.TrimSpace(s)
}

// DefaultKargs is the minimal ISO's own default kernel arguments: the
// full ISO's without coreos.liveiso= (the minimal ISO holds no root file
// system to find by volume label).
func (m *Minimal) DefaultKargs() string { return dropKarg(m.kargs.Default, LiveISOKarg) }

// Edit returns the minimal ISO with e applied and the root file system
// URL added: the kernel-argument areas hold [Minimal.DefaultKargs], then
// e.AppendKargs, then coreos.live.rootfs_url=rootfsURL; kargs.json's
// default loses coreos.liveiso= as coreos-installer's `iso extract
// minimal-iso` does. e.ResetKargs is implied. Streaming the image checks
// the rebuilt bytes against the sha256 miniso.dat records and fails with a
// [*DigestMismatchError] instead of ending.
func (m *Minimal) Edit(e Edit, rootfsURL string) (*Image, error) {
	if err := CheckRootfsURL(rootfsURL); err != nil {
		return nil, err
	}
	for _, a := range e.AppendKargs {
		if strings.HasPrefix(a, RootfsURLKarg) || strings.HasPrefix(a, LiveISOKarg) {
			return nil, fmt.Errorf("kernel argument %q cannot be added to a minimal ISO: agentiso sets the root file system itself", a)
		}
	}
	def := m.DefaultKargs()
	e.AppendKargs = append(append([]string{}, e.AppendKargs...), RootfsURLKarg+rootfsURL)
	ovs, err := m.overlays(e, def)
	if err != nil {
		return nil, err
	}
	kj, err := m.kargsJSONOverlay(def)
	if err != nil {
		return nil, err
	}
	v := &verifyingReaderAt{ra: m.ra, size: m.ra.size, h: sha256.New(), want: m.ra.data.Digest}
	img, err := NewImage(v, m.ra.size, append(ovs, kj)...)
	if err != nil {
		return nil, err
	}
	img.verify = v.finish
	return img, nil
}

// kargsJSONOverlay rewrites the minimal ISO's kargs.json with def as its
// default, padded with spaces to the file's size (the file cannot grow).
func (m *Minimal) kargsJSONOverlay(def string) (Overlay, error) {
	b, err := m.readSmall(m.kargsJSON, 64<<10)
	if err != nil {
		return Overlay{}, err
	}
	kj, err := ParseKargsJSON(b)
	if err != nil {
		return Overlay{}, err
	}
	kj.Default = def
	out, err := json.MarshalIndent(kj, "", "  ")
	if err != nil {
		return Overlay{}, err
	}
	out = append(out, '\n')
	if len(out) > len(b) {
		return Overlay{}, fmt.Errorf("%s of the minimal ISO: the new default kernel arguments need %d bytes but the file has %d", KargsJSONPath, len(out), len(b))
	}
	out = append(out, bytes.Repeat([]byte{' '}, len(b)-len(out))...)
	return Overlay{Region: fmt.Sprintf("%s (ISO bytes %d-%d)", KargsJSONPath, m.kargsJSON.Offset, m.kargsJSON.Offset+m.kargsJSON.Size), Offset: m.kargsJSON.Offset, Data: out}, nil
}

// minimalReaderAt reads the minimal ISO at any offset: bytes of a shared
// extent from the full ISO, other bytes from the packed xz stream, which is
// decompressed forward from where the last read left it (or from its start
// when a read goes back). Sequential reads decompress it once.
type minimalReaderAt struct {
	data *MinisoData
	full io.ReaderAt
	size int64
	// before[i] is the total length of the extents before extent i: a
	// minimal offset o in the gap before extent i is packed byte o-before[i].
	before []int64
	xz     io.Reader
	xzPos  int64
	// cache is the whole packed part when it is at most maxPackedCache.
	cache []byte
	// mu guards the xz stream: a write and its hash read concurrently.
	mu sync.Mutex
}

func newMinimalReaderAt(data *MinisoData, full io.ReaderAt) (*minimalReaderAt, error) {
	r := &minimalReaderAt{data: data, full: full, before: make([]int64, len(data.Extents)+1)}
	for i, e := range data.Extents {
		r.before[i+1] = r.before[i] + e.Length
	}
	// One pass over the packed stream gives the image's size (and finds a
	// corrupt stream before anything is written).
	if err := r.restart(); err != nil {
		return nil, err
	}
	var head bytes.Buffer
	n, err := io.Copy(io.MultiWriter(&limitedBuffer{b: &head, max: maxPackedCache}, io.Discard), io.LimitReader(r.xz, maxMinimalPacked+1))
	if err != nil {
		return nil, fmt.Errorf("%s: xz data: %w", MinisoPath, err)
	}
	if n > maxMinimalPacked {
		return nil, fmt.Errorf("%s: the packed part of the minimal ISO is over %d bytes, far more than a live ISO's", MinisoPath, int64(maxMinimalPacked))
	}
	r.xz = nil
	for i, e := range data.Extents {
		if e.MinimalOffset-r.before[i] > n {
			return nil, fmt.Errorf("%s: packed data ends at minimal offset %d, before the extent at %d", MinisoPath, n+r.before[i], e.MinimalOffset)
		}
	}
	r.size = n + r.before[len(data.Extents)]
	if n <= maxPackedCache {
		r.cache = head.Bytes()
	}
	return r, nil
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	b   *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (r *minimalReaderAt) restart() error {
	xr, err := xz.NewReader(bytes.NewReader(r.data.Packed))
	if err != nil {
		return fmt.Errorf("%s: xz data: %w", MinisoPath, err)
	}
	r.xz, r.xzPos = xr, 0
	return nil
}

func (r *minimalReaderAt) readPacked(p []byte, pos int64) error {
	if r.cache != nil {
		if pos+int64(len(p)) > int64(len(r.cache)) {
			return fmt.Errorf("%s: packed data ends at %d, before %d", MinisoPath, len(r.cache), pos+int64(len(p)))
		}
		copy(p, r.cache[pos:])
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.xz == nil || pos < r.xzPos {
		if err := r.restart(); err != nil {
			return err
		}
	}
	if pos > r.xzPos {
		n, err := io.CopyN(io.Discard, r.xz, pos-r.xzPos)
		r.xzPos += n
		if err != nil {
			r.xz = nil
			return fmt.Errorf("%s: xz data: %w", MinisoPath, err)
		}
	}
	n, err := io.ReadFull(r.xz, p)
	r.xzPos += int64(n)
	if err != nil {
		r.xz = nil
		return fmt.Errorf("%s: xz data: %w", MinisoPath, err)
	}
	return nil
}

// ReadAt implements io.ReaderAt.
func (r *minimalReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("negative offset %d", off)
	}
	exts := r.data.Extents
	done := 0
	for done < len(p) {
		o := off + int64(done)
		if o >= r.size {
			return done, io.EOF
		}
		q := p[done:]
		i := sort.Search(len(exts), func(i int) bool { return exts[i].MinimalOffset+exts[i].Length > o })
		if i < len(exts) && exts[i].MinimalOffset <= o {
			e := exts[i]
			q = q[:min(int64(len(q)), e.MinimalOffset+e.Length-o)]
			n, err := r.full.ReadAt(q, e.FullOffset+o-e.MinimalOffset)
			if n < len(q) {
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return done + n, fmt.Errorf("reading full ISO at %d for minimal offset %d: %w", e.FullOffset+o-e.MinimalOffset, o, err)
			}
			done += n
			continue
		}
		end := r.size
		if i < len(exts) {
			end = exts[i].MinimalOffset
		}
		q = q[:min(int64(len(q)), end-o)]
		if err := r.readPacked(q, o-r.before[i]); err != nil {
			return done, err
		}
		done += len(q)
	}
	return done, nil
}

// fileSpans implements spannedBase when the full ISO is a file: the shared
// extents are spans of it. A packed part too large to keep in memory (never
// a live ISO's) would be decompressed again each time the hash, behind the
// copy, read back over it: such a minimal ISO is written in one stream.
func (r *minimalReaderAt) fileSpans() (*os.File, []fileSpan, io.ReaderAt) {
	f, ok := r.full.(*os.File)
	if !ok || r.cache == nil {
		return nil, nil, nil
	}
	spans := make([]fileSpan, 0, len(r.data.Extents))
	for _, e := range r.data.Extents {
		if e.Length > 0 {
			spans = append(spans, fileSpan{off: e.MinimalOffset, fileOff: e.FullOffset, n: e.Length})
		}
	}
	return f, spans, r
}

// verifyingReaderAt hashes the bytes of ra in order as a sequential reader
// asks for them, reading what it skips itself (the regions under
// overlays), so the pristine image's sha256 is known once the stream ends.
type verifyingReaderAt struct {
	ra   *minimalReaderAt
	size int64
	h    hash.Hash
	next int64
	want [32]byte
}

func (v *verifyingReaderAt) catchUp(to int64) error {
	buf := make([]byte, min(to-v.next, streamBuf))
	for v.next < to {
		n := min(int64(len(buf)), to-v.next)
		if _, err := v.ra.ReadAt(buf[:n], v.next); err != nil {
			return err
		}
		v.h.Write(buf[:n])
		v.next += n
	}
	return nil
}

func (v *verifyingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off > v.next {
		if err := v.catchUp(off); err != nil {
			return 0, err
		}
	}
	n, err := v.ra.ReadAt(p, off)
	if end := off + int64(n); end > v.next {
		v.h.Write(p[v.next-off : n])
		v.next = end
	}
	return n, err
}

// fileSpans implements spannedBase: the spans of ra, read raw without
// being hashed (the hash reads through v, in order).
func (v *verifyingReaderAt) fileSpans() (*os.File, []fileSpan, io.ReaderAt) {
	return v.ra.fileSpans()
}

// checkHash implements checkedBase: the writer hashes the pristine bytes
// into v.h itself, and v is then not read at all.
func (v *verifyingReaderAt) checkHash() (hash.Hash, func()) {
	return v.h, func() { v.next = v.size }
}

// finish hashes what is left and compares the sha256 with miniso.dat's.
func (v *verifyingReaderAt) finish() error {
	if err := v.catchUp(v.size); err != nil {
		return err
	}
	var got [32]byte
	v.h.Sum(got[:0])
	if got != v.want {
		return &DigestMismatchError{Want: v.want, Got: got}
	}
	return nil
}

// LiveKargs returns the kernel arguments a network (PXE) boot of the ISO's
// kernel and initrd needs: its default arguments without coreos.liveiso=
// (there is no ISO volume to find; coreos.live.rootfs_url= replaces it).
func (iso *ISO) LiveKargs() (string, error) {
	if iso.kargs == nil {
		return "", fmt.Errorf("%w: the ISO has no %s", ErrNoKargs, KargsJSONPath)
	}
	return dropKarg(iso.kargs.Default, LiveISOKarg), nil
}
