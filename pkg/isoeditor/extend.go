package isoeditor

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"
	"unicode/utf16"
)

// Appendix is what an extended ISO carries after its base
// (docs/airgap.md): one stream of bytes written after the base, named by
// the files of a new directory of the root, each file a consecutive range
// of the stream, as the appliance's live ISO names its data image's
// pieces (registry/data.iso.aa, .ab, ...: split's suffixes).
type Appendix struct {
	// Dir is the new directory's name in the root, e.g. "registry".
	Dir string
	// Prefix names the pieces: Prefix + "aa", "ab", ... e.g. "data.iso.".
	Prefix string
	// PieceSize is each piece's size but the last's: a multiple of 2048
	// below 4 GiB (3 GiB upstream).
	PieceSize int64
	// Size is the stream's size: a multiple of 2048.
	Size int64
	// Write writes exactly Size bytes of the stream to w.
	Write func(ctx context.Context, w io.Writer) error
}

// Extended is an edited ISO followed by an appendix: the base with its
// overlays (the Ignition and kernel-argument areas, plus the new root
// directory record, the volume size and the MBR partition that spans the
// image, and an isohybrid GPT's header and entries), padding to a sector,
// the new directory, the stream, then, when the base has a GPT, its backup
// (entries and header in the last blocks, where UEFI firmware and
// partitioning tools look for it).
type Extended struct {
	Image *Image
	// PathTables reports whether the primary path tables list the new
	// directory (false when they have no room left in their last sector:
	// readers of the directory records, Linux's and xorriso's, see it
	// either way).
	PathTables bool
	app        Appendix
	start      int64  // where the new directory begins
	dir        []byte // the new directory's extent
	tail       []byte // the backup GPT, or nothing
}

// Size is the extended ISO's size in bytes.
func (x *Extended) Size() int64 {
	return x.start + int64(len(x.dir)) + x.app.Size + int64(len(x.tail))
}

// StreamOffset is where the appendix's stream begins.
func (x *Extended) StreamOffset() int64 { return x.start + int64(len(x.dir)) }

// ErrRootFull is returned by Extend when the base's root directory has no
// room for one more record.
var ErrRootFull = errors.New("the base ISO's root directory has no room for one more entry")

// pieceName is split's suffix for piece i: aa, ab, ..., az, ba, ...
func pieceName(prefix string, i int) string {
	return prefix + string(rune('a'+i/26)) + string(rune('a'+i%26))
}

// Extend adds the appendix to img, an edit of this ISO (Edit's result).
func (iso *ISO) Extend(img *Image, a Appendix) (*Extended, error) {
	if img.size != iso.size {
		return nil, fmt.Errorf("extend: the image is %d bytes, the ISO %d", img.size, iso.size)
	}
	if a.PieceSize <= 0 || a.PieceSize%sectorSize != 0 || a.PieceSize >= 4<<30 {
		return nil, fmt.Errorf("extend: piece size %d: a multiple of %d below 4 GiB", a.PieceSize, sectorSize)
	}
	if a.Size <= 0 || a.Size%sectorSize != 0 {
		return nil, fmt.Errorf("extend: stream size %d: a positive multiple of %d", a.Size, sectorSize)
	}
	pieces := int((a.Size + a.PieceSize - 1) / a.PieceSize)
	if pieces > 26*26 {
		return nil, fmt.Errorf("extend: %d pieces of %d bytes: at most %d", pieces, a.PieceSize, 26*26)
	}
	if a.Dir == "" || strings.ContainsAny(a.Dir, "/\x00") || len(a.Dir) > 30 {
		return nil, fmt.Errorf("extend: directory name %q", a.Dir)
	}
	x := &Extended{app: a, start: (iso.size + sectorSize - 1) / sectorSize * sectorSize}
	dirLBA := x.start / sectorSize

	date, err := iso.rootDate()
	if err != nil {
		return nil, err
	}
	// The new directory: ".", "..", then one record per piece. Record
	// lengths do not depend on the positions, so the directory's size is
	// known first, then where the stream begins.
	records := func(streamLBA int64) [][]byte {
		recs := [][]byte{rrRecord("\x00", "", dirLBA, 0, true, date), rrRecord("\x01", "", iso.root.lba, iso.root.size, true, date)}
		for i := 0; i < pieces; i++ {
			n := min(a.PieceSize, a.Size-int64(i)*a.PieceSize)
			recs = append(recs, rrRecord(strings.ToUpper(pieceName("DATA.", i))+";1", pieceName(a.Prefix, i), streamLBA+int64(i)*a.PieceSize/sectorSize, n, false, date))
		}
		return recs
	}
	// A base with a Joliet tree (RHCOS's: genisoimage or xorrisofs -J
	// -joliet-long) gets the directory there too, a second extent after
	// the first, naming the same pieces (UCS-2 names, no Rock Ridge), as
	// a mastering tool lists every file in both trees.
	jv, hasJoliet, err := iso.findJoliet()
	if err != nil {
		return nil, err
	}
	jrecords := func(jdirLBA, streamLBA int64) [][]byte {
		recs := [][]byte{jolietRecord("\x00", jdirLBA, 0, true, jv.date), jolietRecord("\x01", jv.root.lba, jv.root.size, true, jv.date)}
		for i := 0; i < pieces; i++ {
			n := min(a.PieceSize, a.Size-int64(i)*a.PieceSize)
			recs = append(recs, jolietRecord(ucs2(pieceName(a.Prefix, i)), streamLBA+int64(i)*a.PieceSize/sectorSize, n, false, jv.date))
		}
		return recs
	}
	plen, jlen := len(packRecords(records(0), 0)), 0
	if hasJoliet {
		jlen = len(packRecords(jrecords(0, 0), 0))
	}
	jdirLBA := dirLBA + int64(plen)/sectorSize
	streamLBA := jdirLBA + int64(jlen)/sectorSize
	dir := packRecords(records(streamLBA), plen)
	binary.LittleEndian.PutUint32(dir[10:], uint32(len(dir)))
	binary.BigEndian.PutUint32(dir[14:], uint32(len(dir)))
	x.dir = dir
	if hasJoliet {
		jdir := packRecords(jrecords(jdirLBA, streamLBA), jlen)
		binary.LittleEndian.PutUint32(jdir[10:], uint32(len(jdir)))
		binary.BigEndian.PutUint32(jdir[14:], uint32(len(jdir)))
		x.dir = append(append([]byte(nil), dir...), jdir...)
	}
	g, hasGPT, err := iso.readGPT()
	if err != nil {
		return nil, err
	}
	if hasGPT {
		x.tail = make([]byte, g.tailSize())
	}

	total := x.Size() / sectorSize
	if total > 0xFFFFFFFF {
		return nil, fmt.Errorf("extend: %d sectors do not fit an ISO 9660 volume", total)
	}
	ovs := append([]Overlay(nil), img.overlays...)
	root, err := iso.dirWith(iso.root, rrRecord(strings.ToUpper(a.Dir), a.Dir, dirLBA, int64(len(dir)), true, date), strings.ToUpper(a.Dir), false)
	if err != nil {
		return nil, err
	}
	ovs = append(ovs, Overlay{Region: "root directory", Offset: iso.root.lba * sectorSize, Data: root})
	pts, ok, err := iso.pathTableOverlays(16, strings.ToUpper(a.Dir), dirLBA)
	if err != nil {
		return nil, err
	}
	ovs, x.PathTables = append(ovs, pts...), ok
	if hasJoliet {
		jroot, err := iso.dirWith(jv.root, jolietRecord(ucs2(a.Dir), jdirLBA, int64(jlen), true, jv.date), ucs2(a.Dir), true)
		if err != nil {
			return nil, fmt.Errorf("%w (the Joliet tree)", err)
		}
		ovs = append(ovs, Overlay{Region: "Joliet root directory", Offset: jv.root.lba * sectorSize, Data: jroot})
		pts, ok, err := iso.pathTableOverlays(jv.sector, ucs2(a.Dir), jdirLBA)
		if err != nil {
			return nil, fmt.Errorf("%w (the Joliet tree)", err)
		}
		ovs, x.PathTables = append(ovs, pts...), x.PathTables && ok
	}
	vds, err := iso.volumeSizeOverlays(uint32(total))
	if err != nil {
		return nil, err
	}
	ovs = append(ovs, vds...)
	if o, ok, err := iso.mbrOverlay(x.Size()); err != nil {
		return nil, err
	} else if ok {
		ovs = append(ovs, o)
	}
	if hasGPT {
		gov, tail, err := g.extend(x.Size())
		if err != nil {
			return nil, err
		}
		ovs, x.tail = append(ovs, gov...), tail
	}
	for _, o := range ovs {
		for _, p := range img.overlays {
			if o.Region != p.Region && o.Offset < p.End() && p.Offset < o.End() {
				return nil, fmt.Errorf("extend: %s overlaps %s", o.Region, p.Region)
			}
		}
	}
	if x.Image, err = NewImage(img.base, img.size, ovs...); err != nil {
		return nil, err
	}
	x.Image.verify = img.verify
	return x, nil
}

// rrRecord is a directory record with a Rock Ridge PX and, for a name,
// NM entry (RRIP 1.10 forms, which Linux and xorriso read).
func rrRecord(id, name string, lba, size int64, dir bool, date []byte) []byte {
	n := 33 + len(id)
	if n%2 == 1 {
		n++
	}
	su := n
	n += 36
	if name != "" {
		n += 5 + len(name)
	}
	if n%2 == 1 {
		n++
	}
	b := make([]byte, n)
	putRecordHeader(b, id, lba, size, dir, date)
	mode, links := uint32(0o100444), uint32(1)
	if dir {
		mode, links = 0o40555, 2
	}
	px := b[su:]
	copy(px, "PX")
	px[2], px[3] = 36, 1
	for i, v := range []uint32{mode, links, 0, 0} {
		binary.LittleEndian.PutUint32(px[4+8*i:], v)
		binary.BigEndian.PutUint32(px[8+8*i:], v)
	}
	if name != "" {
		nm := b[su+36:]
		copy(nm, "NM")
		nm[2], nm[3], nm[4] = byte(5+len(name)), 1, 0
		copy(nm[5:], name)
	}
	return b
}

// packRecords lays records into whole sectors (a record never crosses a
// sector boundary), into at least minSize bytes.
func packRecords(recs [][]byte, minSize int) []byte {
	var out []byte
	pos := 0
	for _, r := range recs {
		if pos%sectorSize+len(r) > sectorSize {
			pos = (pos/sectorSize + 1) * sectorSize
		}
		for len(out) < pos+len(r) {
			out = append(out, make([]byte, sectorSize)...)
		}
		copy(out[pos:], r)
		pos += len(r)
	}
	for len(out) < minSize {
		out = append(out, make([]byte, sectorSize)...)
	}
	return out
}

// rootDate is the recording date of the root directory's "." record, given
// to the records Extend adds.
func (iso *ISO) rootDate() ([]byte, error) {
	b := make([]byte, 34)
	if _, err := iso.r.ReadAt(b, iso.root.lba*sectorSize); err != nil {
		return nil, fmt.Errorf("extend: reading the root directory: %w", err)
	}
	return b[18:25], nil
}

// dirWith is directory d's extent with rec inserted in identifier order,
// in the same number of sectors. ident is rec's identifier as recorded
// (d3-characters in the primary tree, UCS-2 big-endian in the Joliet
// tree, where the version ";1" is cut before comparing).
func (iso *ISO) dirWith(d dirRecord, rec []byte, ident string, joliet bool) ([]byte, error) {
	if d.size > maxDirSize || d.size%sectorSize != 0 {
		return nil, fmt.Errorf("extend: root directory of %d bytes", d.size)
	}
	buf := make([]byte, d.size)
	if _, err := iso.r.ReadAt(buf, d.lba*sectorSize); err != nil {
		return nil, fmt.Errorf("extend: reading the root directory: %w", err)
	}
	key := func(id string) string {
		if joliet {
			if i := strings.Index(id, "\x00;"); i >= 0 && i%2 == 0 {
				id = id[:i]
			}
			return strings.ToLower(fromUCS2(id))
		}
		if i := strings.IndexByte(id, ';'); i >= 0 {
			id = id[:i]
		}
		return strings.ToUpper(strings.TrimSuffix(id, "."))
	}
	var recs [][]byte
	for off := 0; off < len(buf); {
		l := int(buf[off])
		if l == 0 {
			off = (off/sectorSize + 1) * sectorSize
			continue
		}
		if off+l > len(buf) || l < 34 || 33+int(buf[off+32]) > l {
			return nil, fmt.Errorf("extend: root directory record at byte %d overruns its directory", d.lba*sectorSize+int64(off))
		}
		id := string(buf[off+33 : off+33+int(buf[off+32])])
		if len(recs) >= 2 && key(id) == key(ident) {
			return nil, fmt.Errorf("extend: the base ISO already has /%s: is it an extended ISO already?", strings.ToLower(key(ident)))
		}
		recs = append(recs, buf[off:off+l])
		off += l
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("extend: the root directory has no \".\" and \"..\"")
	}
	at := len(recs)
	for i := 2; i < len(recs); i++ {
		if string(recs[i][33:33+int(recs[i][32])]) > ident {
			at = i
			break
		}
	}
	recs = append(recs[:at], append([][]byte{rec}, recs[at:]...)...)
	out := packRecords(recs, int(d.size))
	if int64(len(out)) > d.size {
		return nil, fmt.Errorf("extend: %w (%d bytes)", ErrRootFull, d.size)
	}
	return out, nil
}

// jolietVD is a Joliet supplementary volume descriptor: its sector, its
// root directory and the root's recording date.
type jolietVD struct {
	sector int64
	root   dirRecord
	date   []byte
}

// findJoliet finds the base's Joliet volume descriptor (type 2, escape
// sequence %/@, %/C or %/E: UCS-2 levels 1 to 3), if any.
func (iso *ISO) findJoliet() (jolietVD, bool, error) {
	buf := make([]byte, sectorSize)
	for s := int64(17); s < 16+64 && (s+1)*sectorSize <= iso.size; s++ {
		if _, err := iso.r.ReadAt(buf, s*sectorSize); err != nil {
			return jolietVD{}, false, fmt.Errorf("extend: reading volume descriptor %d: %w", s, err)
		}
		if string(buf[1:6]) != "CD001" || buf[0] == 255 {
			break
		}
		if buf[0] != 2 || buf[88] != '%' || buf[89] != '/' || (buf[90] != '@' && buf[90] != 'C' && buf[90] != 'E') {
			continue
		}
		root, err := parseRecord(buf[156:190])
		if err != nil || !root.dir || root.lba < 17 || iso.checkExtent(root.lba, root.size) != nil {
			return jolietVD{}, false, fmt.Errorf("extend: the Joliet volume descriptor (sector %d) has a bad root directory record", s)
		}
		dot := make([]byte, 34)
		if _, err := iso.r.ReadAt(dot, root.lba*sectorSize); err != nil {
			return jolietVD{}, false, fmt.Errorf("extend: reading the Joliet root directory: %w", err)
		}
		return jolietVD{sector: s, root: root, date: dot[18:25]}, true, nil
	}
	return jolietVD{}, false, nil
}

// ucs2 is s in UCS-2 big-endian, Joliet's encoding (s is ASCII here).
func ucs2(s string) string {
	b := make([]byte, 0, 2*len(s))
	for _, r := range utf16.Encode([]rune(s)) {
		b = append(b, byte(r>>8), byte(r))
	}
	return string(b)
}

// fromUCS2 decodes a Joliet identifier (an odd trailing byte is dropped).
func fromUCS2(s string) string {
	u := make([]uint16, 0, len(s)/2)
	for i := 0; i+1 < len(s); i += 2 {
		u = append(u, uint16(s[i])<<8|uint16(s[i+1]))
	}
	return string(utf16.Decode(u))
}

// putRecordHeader fills the fixed part of an ECMA-119 directory record
// and its identifier into b, whose length is the record's: extent, size
// (both byte orders), date, the directory flag, volume sequence 1.
func putRecordHeader(b []byte, id string, lba, size int64, dir bool, date []byte) {
	b[0] = byte(len(b))
	binary.LittleEndian.PutUint32(b[2:], uint32(lba))
	binary.BigEndian.PutUint32(b[6:], uint32(lba))
	binary.LittleEndian.PutUint32(b[10:], uint32(size))
	binary.BigEndian.PutUint32(b[14:], uint32(size))
	copy(b[18:25], date)
	if dir {
		b[25] = 0x02
	}
	binary.LittleEndian.PutUint16(b[28:], 1)
	binary.BigEndian.PutUint16(b[30:], 1)
	b[32] = byte(len(id))
	copy(b[33:], id)
}

// jolietRecord is a directory record of the Joliet tree: id in UCS-2 (or
// "\x00" / "\x01" for "." and ".."), no system use area.
func jolietRecord(id string, lba, size int64, dir bool, date []byte) []byte {
	n := 33 + len(id)
	if n%2 == 1 {
		n++
	}
	b := make([]byte, n)
	putRecordHeader(b, id, lba, size, dir, date)
	return b
}

// volumeSizeOverlays sets the volume space size of every volume descriptor
// that has one (the primary, and a Joliet supplementary one if any).
func (iso *ISO) volumeSizeOverlays(sectors uint32) ([]Overlay, error) {
	var out []Overlay
	buf := make([]byte, sectorSize)
	for s := int64(16); s < 16+64; s++ {
		if _, err := iso.r.ReadAt(buf, s*sectorSize); err != nil {
			return nil, err
		}
		if string(buf[1:6]) != "CD001" || buf[0] == 255 {
			break
		}
		if buf[0] == 1 || buf[0] == 2 {
			b := make([]byte, 8)
			binary.LittleEndian.PutUint32(b, sectors)
			binary.BigEndian.PutUint32(b[4:], sectors)
			out = append(out, Overlay{Region: fmt.Sprintf("volume descriptor %d size", s), Offset: s*sectorSize + 80, Data: b})
		}
	}
	return out, nil
}

// mbrOverlay widens an isohybrid MBR partition that starts at sector 0 and
// spans the whole base to span the whole extended image.
func (iso *ISO) mbrOverlay(size int64) (Overlay, bool, error) {
	mbr := make([]byte, 512)
	if _, err := iso.r.ReadAt(mbr, 0); err != nil {
		return Overlay{}, false, err
	}
	if mbr[510] != 0x55 || mbr[511] != 0xAA {
		return Overlay{}, false, nil
	}
	for i := 0; i < 4; i++ {
		e := mbr[446+16*i:]
		start, n := binary.LittleEndian.Uint32(e[8:]), binary.LittleEndian.Uint32(e[12:])
		if e[4] == 0 && n == 0 || start != 0 {
			continue
		}
		if int64(n)*512 < iso.size-sectorSize { // not the whole base
			continue
		}
		b := make([]byte, 4)
		binary.LittleEndian.PutUint32(b, uint32(min(size/512, 0xFFFFFFFF)))
		return Overlay{Region: "MBR partition size", Offset: int64(446 + 16*i + 12), Data: b}, true, nil
	}
	return Overlay{}, false, nil
}

// WriteExtendedStaged writes x like WriteStaged writes an image (temporary
// file, SHA-256 behind the writes, nothing in place until Commit), in one
// pass: the base and its overlays copied by the kernel where it can, then
// the new directory and the appendix's stream, written once as Write
// produces it. A stream shorter or longer than its size is an error.
//
// Three things run at once (docs/airgap.md "Measured"): the writes (this
// goroutine: the kernel's copy of the base, then the appendix's Write,
// which reads and checks each blob); the output's SHA-256, one follower
// behind the writes over the whole output (the base's bytes from the
// pages the copy just read, the rest from the output's); and the
// writeback, which has the kernel start writing each 32 MiB written to
// disk (sync_file_range), so that the disk works while the payload is
// read and checked and the one fsync at the end finds little left. The
// output is fsynced once, at the end: before, the base was fsynced before
// the appendix began, and the disk stood still while the payload was read.
func WriteExtendedStaged(ctx context.Context, dst string, x *Extended, opts WriteOptions) (*Staged, error) {
	img := x.Image
	base, isFile := img.base.(*os.File)
	size := x.Size()
	return stage(ctx, dst, size, opts, nil, func(tmp *os.File, h hash.Hash) (method string, err error) {
		kernel := isFile && !opts.NoKernelCopy && img.verify == nil
		// The hash reads the image's bytes from the edited base when the
		// kernel copies it (its pages are the ones the copy just read;
		// the output's may share the base's blocks and not be cached),
		// else from the output, like the rest.
		var head io.ReaderAt = tmp
		if kernel {
			head = img
		}
		hashSrc := func(head io.ReaderAt) io.ReaderAt {
			var r io.ReaderAt = splitReaderAt{head: head, n: img.size, tail: tmp}
			if opts.hashSourceWrap != nil {
				r = opts.hashSourceWrap(r)
			}
			return r
		}
		fw := startFollower(ctx, hashSrc(head), size, h)
		wb := startWriteback(ctx, tmp, opts.writeback)
		mark := func(end int64) {
			fw.mark(end)
			wb.mark(end)
		}
		defer func() {
			if err != nil {
				wb.abort()
				fw.abort()
			}
		}()
		if kernel {
			method, err = copyBase(ctx, tmp, base, img, opts, mark)
			if errors.Is(err, errNoFastPath) {
				// Nothing is written or marked yet: the hash starts
				// again, on the output.
				fw.abort()
				h.Reset()
				if err = resetFile(tmp); err != nil {
					return "", err
				}
				fw = startFollower(ctx, hashSrc(tmp), size, h)
				kernel = false
			}
		}
		if !kernel {
			var n int64
			n, err = img.Stream(ctx, &markWriter{f: tmp, mark: mark}, opts.Progress)
			if err == nil && n != img.size {
				err = fmt.Errorf("wrote %d of %d bytes", n, img.size)
			}
			method = MethodReadWrite
		}
		if err != nil {
			return "", err
		}
		w := &markWriter{f: tmp, off: img.size, mark: mark}
		if _, err = w.Write(make([]byte, x.start-img.size)); err == nil {
			_, err = w.Write(x.dir)
		}
		if err == nil {
			lw := &limitWriter{w: w, left: x.app.Size}
			err = x.app.Write(ctx, lw)
			if err == nil && lw.left != 0 {
				err = fmt.Errorf("extend: the stream ended %d bytes short of its %d", lw.left, x.app.Size)
			}
		}
		if err == nil && len(x.tail) > 0 {
			_, err = w.Write(x.tail)
		}
		if err == nil {
			err = tmp.Sync() // while the hash catches up
		}
		if err != nil {
			return "", err
		}
		if err = wb.finish(); err != nil {
			return "", err
		}
		return method, fw.finish()
	})
}

// splitReaderAt reads the first n bytes from head and the rest from tail
// (both at the same offsets).
type splitReaderAt struct {
	head io.ReaderAt
	n    int64
	tail io.ReaderAt
}

func (s splitReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= s.n {
		return s.tail.ReadAt(p, off)
	}
	if off+int64(len(p)) <= s.n {
		return s.head.ReadAt(p, off)
	}
	k, err := s.head.ReadAt(p[:s.n-off], off)
	if err != nil {
		return k, err
	}
	m, err := s.tail.ReadAt(p[k:], off+int64(k))
	return k + m, err
}

// writebackChunk is how much of the written output the kernel is asked
// to start writing to disk at a time.
const writebackChunk = 32 << 20

// startWriteback follows the writes of f and, each writebackChunk bytes,
// has the kernel start writing them to disk (start, nil for the system's:
// sync_file_range SYNC_FILE_RANGE_WRITE on Linux, which does not wait for
// the disk; nothing elsewhere). It runs on its own goroutine, so a busy
// disk queue holds up neither the writes nor the hash; it only starts
// what the final fsync would do anyway, so a failure is left to that
// fsync to report.
func startWriteback(ctx context.Context, f *os.File, start func(f *os.File, off, n int64)) *follower {
	if start == nil {
		start = writeback
	}
	var from int64
	return follow(ctx, -1, func(_ context.Context, _, to int64) error {
		if to-from >= writebackChunk {
			start(f, from, to-from)
			from = to
		}
		return nil
	})
}

// markWriter writes at increasing offsets of f and tells mark, after each
// write, that every byte before its offset is written.
type markWriter struct {
	f    *os.File
	off  int64
	mark func(int64)
}

func (m *markWriter) Write(p []byte) (int, error) {
	n, err := m.f.WriteAt(p, m.off)
	m.off += int64(n)
	m.mark(m.off)
	return n, err
}

// limitWriter refuses to write past its size.
type limitWriter struct {
	w    io.Writer
	left int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.left {
		return 0, fmt.Errorf("extend: the stream is longer than its size")
	}
	n, err := l.w.Write(p)
	l.left -= int64(n)
	return n, err
}
