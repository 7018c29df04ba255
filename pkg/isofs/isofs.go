// Package isofs lays out an ISO 9660 file system (level 3, Rock Ridge names) from files whose sizes are known before their bytes, and streams it in one pass: the structures first, from memory, then each file's bytes once at its planned offset.
package isofs

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Sector is the logical block size.
const Sector = 2048

// MaxExtent is the largest extent of one directory record: a file larger
// than this is several records, each but the last marked "not final"
// (ECMA-119 9.1.6, ISO 9660 level 3, as genisoimage -iso-level 3 writes).
const MaxExtent = 0xFFFFF800

// maxExtent is MaxExtent, smaller in tests.
var maxExtent int64 = MaxExtent

// maxName bounds a Rock Ridge name so that a record (33 bytes, a short
// ISO 9660 identifier, the PX entry and the NM entry) stays under 255 bytes.
const maxName = 160

// File is one file of the image.
type File struct {
	// Path is slash-separated and relative ("docker/registry/v2/...").
	Path string
	Size int64
	// Key, when not empty, shares the bytes of every file with the same
	// key: they are stored once and each path's record points at them
	// (a hard link). Their sizes must agree.
	Key string
}

type node struct {
	name     string
	dir      bool
	children map[string]*node
	sorted   []*node
	parent   *node
	// directories: their extent
	lba, size int64
	num       int // path table number
	// files
	data *extent
}

type extent struct {
	key  string
	file File // the first file of the key (what fill is given)
	lba  int64
	size int64
}

// Layout is a planned image: every structure's position and every file's
// extent, known before any byte is written.
type Layout struct {
	volumeID string
	date     time.Time
	root     *node
	dirs     []*node // path table order
	extents  []*extent
	ptSize   int64
	ptL, ptM int64
	total    int64 // sectors
}

// Plan lays out files (written in the order given, a shared key at its
// first file) under the volume ID volumeID, dated date.
func Plan(volumeID string, date time.Time, files []File) (*Layout, error) {
	if err := checkVolumeID(volumeID); err != nil {
		return nil, err
	}
	l := &Layout{volumeID: volumeID, date: date.UTC(), root: &node{dir: true, children: map[string]*node{}}}
	l.root.parent = l.root
	byKey := map[string]*extent{}
	for _, f := range files {
		if f.Size < 0 {
			return nil, fmt.Errorf("isofs: %s: negative size", f.Path)
		}
		n, err := l.add(f.Path)
		if err != nil {
			return nil, err
		}
		if f.Key != "" {
			if e, ok := byKey[f.Key]; ok {
				if e.size != f.Size {
					return nil, fmt.Errorf("isofs: %s and %s share %q with sizes %d and %d", e.file.Path, f.Path, f.Key, e.size, f.Size)
				}
				n.data = e
				continue
			}
		}
		e := &extent{key: f.Key, file: f, size: f.Size}
		if f.Key != "" {
			byKey[f.Key] = e
		}
		n.data = e
		l.extents = append(l.extents, e)
	}
	l.layout()
	return l, nil
}

func checkVolumeID(v string) error {
	if v == "" || len(v) > 32 {
		return fmt.Errorf("isofs: volume ID %q: 1 to 32 characters", v)
	}
	for _, c := range v {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("isofs: volume ID %q: only letters, digits, '_', '-' and '.'", v)
		}
	}
	return nil
}

func (l *Layout) add(p string) (*node, error) {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		return nil, fmt.Errorf("isofs: path %q: must be relative, without a trailing slash", p)
	}
	parts := strings.Split(p, "/")
	cur := l.root
	for i, c := range parts {
		if c == "" || c == "." || c == ".." || len(c) > maxName || strings.ContainsRune(c, 0) {
			return nil, fmt.Errorf("isofs: path %q: bad component %q", p, c)
		}
		last := i == len(parts)-1
		n, ok := cur.children[c]
		if !ok {
			n = &node{name: c, dir: !last, parent: cur}
			if n.dir {
				n.children = map[string]*node{}
			}
			cur.children[c] = n
		} else if n.dir == last {
			return nil, fmt.Errorf("isofs: path %q: %q is both a file and a directory", p, strings.Join(parts[:i+1], "/"))
		} else if last {
			return nil, fmt.Errorf("isofs: path %q given twice", p)
		}
		cur = n
	}
	return cur, nil
}

// isoName is the ISO 9660 identifier of the i-th entry of a directory:
// short, unique and in the same order as the Rock Ridge names they stand
// for (records must be sorted by identifier).
func isoName(i int, dir bool) string {
	if dir {
		return fmt.Sprintf("D%06d", i)
	}
	return fmt.Sprintf("F%06d.;1", i)
}

// recordLen is the length of a record with identifier id and name for
// Rock Ridge.
func recordLen(id, name string, extra int) int {
	n := 33 + len(id)
	if n%2 == 1 {
		n++
	}
	n += 36 // PX
	if name != "" {
		n += 5 + len(name)
	}
	n += extra
	if n%2 == 1 {
		n++
	}
	return n
}

// The root's "." record also carries SP and ER (SUSP and Rock Ridge
// identification, read from the root's first record).
const erID = "RRIP_1991A"

func rootExtra() int { return 7 + 8 + len(erID) }

func (n *node) records() int { // number of records of a child (multi-extent files)
	if n.dir || n.data.size <= maxExtent {
		return 1
	}
	return int((n.data.size + maxExtent - 1) / maxExtent)
}

func (l *Layout) dirSize(d *node) int64 {
	var pos, sectors int64
	add := func(rl int) {
		if pos+int64(rl) > Sector {
			sectors++
			pos = 0
		}
		pos += int64(rl)
	}
	extra := 0
	if d == l.root {
		extra = rootExtra()
	}
	add(recordLen("\x00", "", extra))
	add(recordLen("\x01", "", 0))
	for i, c := range d.sorted {
		for r := 0; r < c.records(); r++ {
			add(recordLen(isoName(i, c.dir), c.name, 0))
		}
	}
	return (sectors + 1) * Sector
}

func (l *Layout) layout() {
	// Directories in path-table order: breadth first, children sorted.
	l.dirs = []*node{l.root}
	for i := 0; i < len(l.dirs); i++ {
		d := l.dirs[i]
		d.num = i + 1
		d.sorted = make([]*node, 0, len(d.children))
		for _, c := range d.children {
			d.sorted = append(d.sorted, c)
		}
		sort.Slice(d.sorted, func(a, b int) bool { return d.sorted[a].name < d.sorted[b].name })
		for _, c := range d.sorted {
			if c.dir {
				l.dirs = append(l.dirs, c)
			}
		}
	}
	for _, d := range l.dirs {
		n := 8 + 1 // root: identifier of one byte, padded
		if d != l.root {
			n = 8 + len(isoName(0, true))
		}
		if n%2 == 1 {
			n++
		}
		l.ptSize += int64(n)
	}
	ptSectors := (l.ptSize + Sector - 1) / Sector
	lba := int64(18) // 16 system area, PVD, terminator
	l.ptL, lba = lba, lba+ptSectors
	l.ptM, lba = lba, lba+ptSectors
	for _, d := range l.dirs {
		d.size = l.dirSize(d)
		d.lba = lba
		lba += d.size / Sector
	}
	for _, e := range l.extents {
		e.lba = lba
		lba += (e.size + Sector - 1) / Sector
	}
	l.total = lba
}

// Size is the image's size in bytes.
func (l *Layout) Size() int64 { return l.total * Sector }

// Offset is where the bytes of the file at path start, or -1.
func (l *Layout) Offset(path string) int64 {
	cur := l.root
	for _, c := range strings.Split(path, "/") {
		if cur.children == nil {
			return -1
		}
		n, ok := cur.children[c]
		if !ok {
			return -1
		}
		cur = n
	}
	if cur.dir {
		return -1
	}
	return cur.data.lba * Sector
}

// HeaderSize is the size of everything before the first file's bytes.
func (l *Layout) HeaderSize() int64 {
	if len(l.extents) == 0 {
		return l.Size()
	}
	return l.extents[0].lba * Sector
}

func both32(b []byte, v uint32) {
	binary.LittleEndian.PutUint32(b, v)
	binary.BigEndian.PutUint32(b[4:], v)
}

func both16(b []byte, v uint16) {
	binary.LittleEndian.PutUint16(b, v)
	binary.BigEndian.PutUint16(b[2:], v)
}

func (l *Layout) recDate(b []byte) {
	d := l.date
	b[0], b[1], b[2] = byte(d.Year()-1900), byte(d.Month()), byte(d.Day())
	b[3], b[4], b[5], b[6] = byte(d.Hour()), byte(d.Minute()), byte(d.Second()), 0
}

// record encodes one directory record.
func (l *Layout) record(id, name string, lba, size int64, dir, more bool, extra []byte) []byte {
	b := make([]byte, recordLen(id, name, len(extra)))
	b[0] = byte(len(b))
	both32(b[2:], uint32(lba))
	both32(b[10:], uint32(size))
	l.recDate(b[18:25])
	if dir {
		b[25] |= 0x02
	}
	if more {
		b[25] |= 0x80
	}
	both16(b[28:], 1)
	b[32] = byte(len(id))
	copy(b[33:], id)
	su := 33 + len(id)
	if su%2 == 1 {
		su++
	}
	su += copy(b[su:], extra)
	mode, links := uint32(0o100444), uint32(1)
	if dir {
		mode, links = 0o40555, 2
	}
	px := b[su : su+36]
	copy(px, "PX")
	px[2], px[3] = 36, 1
	both32(px[4:], mode)
	both32(px[12:], links)
	both32(px[20:], 0)
	both32(px[28:], 0)
	su += 36
	if name != "" {
		nm := b[su : su+5+len(name)]
		copy(nm, "NM")
		nm[2], nm[3], nm[4] = byte(5+len(name)), 1, 0
		copy(nm[5:], name)
	}
	return b
}

func rootSU() []byte {
	b := make([]byte, 0, rootExtra())
	b = append(b, 'S', 'P', 7, 1, 0xBE, 0xEF, 0)
	b = append(b, 'E', 'R', byte(8+len(erID)), 1, byte(len(erID)), 0, 0, 1)
	return append(b, erID...)
}

func (l *Layout) dirBytes(d *node) []byte {
	out := make([]byte, d.size)
	pos := 0
	put := func(r []byte) {
		if pos%Sector+len(r) > Sector {
			pos = (pos/Sector + 1) * Sector
		}
		copy(out[pos:], r)
		pos += len(r)
	}
	var extra []byte
	if d == l.root {
		extra = rootSU()
	}
	put(l.record("\x00", "", d.lba, d.size, true, false, extra))
	put(l.record("\x01", "", d.parent.lba, d.parent.size, true, false, nil))
	for i, c := range d.sorted {
		id := isoName(i, c.dir)
		if c.dir {
			put(l.record(id, c.name, c.lba, c.size, true, false, nil))
			continue
		}
		left, lba := c.data.size, c.data.lba
		for r := c.records(); r > 0; r-- {
			n := min(left, maxExtent)
			put(l.record(id, c.name, lba, n, false, r > 1, nil))
			left -= n
			lba += n / Sector
		}
	}
	return out
}

func pad(s string, n int) []byte {
	b := []byte(strings.Repeat(" ", n))
	copy(b, s)
	return b
}

func (l *Layout) volDate() []byte {
	return append([]byte(l.date.Format("20060102150405")+"00"), 0)
}

func (l *Layout) pvd() []byte {
	b := make([]byte, Sector)
	b[0] = 1
	copy(b[1:], "CD001")
	b[6] = 1
	copy(b[8:40], pad("LINUX", 32))
	copy(b[40:72], pad(l.volumeID, 32))
	both32(b[80:], uint32(l.total))
	both16(b[120:], 1)
	both16(b[124:], 1)
	both16(b[128:], Sector)
	both32(b[132:], uint32(l.ptSize))
	binary.LittleEndian.PutUint32(b[140:], uint32(l.ptL))
	binary.BigEndian.PutUint32(b[148:], uint32(l.ptM))
	copy(b[156:190], l.record("\x00", "", l.root.lba, l.root.size, true, false, nil)[:34])
	b[156] = 34
	copy(b[190:813], pad("", 813-190))
	copy(b[574:702], pad("AGENTISO", 128))
	copy(b[813:830], l.volDate())
	copy(b[830:847], l.volDate())
	copy(b[847:864], append([]byte("0000000000000000"), 0))
	copy(b[864:881], l.volDate())
	b[881] = 1
	return b
}

func (l *Layout) pathTable(big bool) []byte {
	out := make([]byte, 0, l.ptSize)
	for _, d := range l.dirs {
		id := "\x00"
		if d != l.root {
			id = isoName(indexOf(d.parent.sorted, d), true)
		}
		rec := make([]byte, 8+len(id))
		rec[0] = byte(len(id))
		if big {
			binary.BigEndian.PutUint32(rec[2:], uint32(d.lba))
			binary.BigEndian.PutUint16(rec[6:], uint16(d.parent.num))
		} else {
			binary.LittleEndian.PutUint32(rec[2:], uint32(d.lba))
			binary.LittleEndian.PutUint16(rec[6:], uint16(d.parent.num))
		}
		copy(rec[8:], id)
		if len(rec)%2 == 1 {
			rec = append(rec, 0)
		}
		out = append(out, rec...)
	}
	return out
}

func indexOf(s []*node, n *node) int {
	for i, c := range s {
		if c == n {
			return i
		}
	}
	return -1
}

// Header returns the bytes before the first file: system area, volume
// descriptors, path tables, directories.
func (l *Layout) Header() ([]byte, error) {
	if len(l.dirs) > 0xFFFF {
		return nil, errors.New("isofs: more than 65535 directories")
	}
	h := make([]byte, l.HeaderSize())
	copy(h[16*Sector:], l.pvd())
	t := h[17*Sector:]
	t[0] = 255
	copy(t[1:], "CD001")
	t[6] = 1
	copy(h[l.ptL*Sector:], l.pathTable(false))
	copy(h[l.ptM*Sector:], l.pathTable(true))
	for _, d := range l.dirs {
		copy(h[d.lba*Sector:], l.dirBytes(d))
	}
	return h, nil
}

// Fill writes exactly f.Size bytes of f to w.
type Fill func(ctx context.Context, f File, w io.Writer) error

// countingWriter counts and bounds what a Fill writes.
type countingWriter struct {
	w    io.Writer
	n    int64
	max  int64
	path string
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.n+int64(len(p)) > c.max {
		return 0, fmt.Errorf("isofs: %s: more than its %d bytes written", c.path, c.max)
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

var zeros [Sector]byte

// WriteTo streams the whole image to w: the header, then every file's
// bytes from fill in plan order, each padded to a whole sector. It
// returns the bytes written.
func (l *Layout) WriteTo(ctx context.Context, w io.Writer, fill Fill) (int64, error) {
	h, err := l.Header()
	if err != nil {
		return 0, err
	}
	n, err := w.Write(h)
	total := int64(n)
	if err != nil {
		return total, err
	}
	for _, e := range l.extents {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		cw := &countingWriter{w: w, max: e.size, path: e.file.Path}
		if err := fill(ctx, e.file, cw); err != nil {
			return total + cw.n, err
		}
		total += cw.n
		if cw.n != e.size {
			return total, fmt.Errorf("isofs: %s: %d bytes written, %d planned", e.file.Path, cw.n, e.size)
		}
		if r := e.size % Sector; r != 0 {
			n, err := w.Write(zeros[:Sector-r])
			total += int64(n)
			if err != nil {
				return total, err
			}
		}
	}
	return total, nil
}
