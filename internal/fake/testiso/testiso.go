// Package testiso writes synthetic ISO 9660 images with the layout of an RHCOS/FCOS live ISO, for tests and benchmarks.
//
// The image is a plain single-session ISO 9660 (level 1 primary names, 8.3
// with ";1") with minimal Rock Ridge (SP/ER/PX/NM) so tools that read Rock Ridge
// see the real lower-case names. It carries coreos/igninfo.json,
// coreos/kargs.json, boot configs with the 1024-'#' kernel-argument embed
// areas, a zeroed images/ignition.img and images/pxeboot/{vmlinuz,initrd.img,
// rootfs.img}. rootfs.img is filler: by default it is a sparse hole (with a
// small marker every MiB), so a multi-GiB image costs almost no disk or time.
// There is no El Torito boot record and no isohybrid MBR: the image is for
// byte-level editing tests, not for booting.
package testiso

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

const sector = 2048

// maxExtent is the largest file a single ISO 9660 extent can describe, rounded down to a sector.
const maxExtent = 0xFFFFF800

// Options control the synthetic image. The zero value gives a 16 MiB x86_64
// RHCOS-like ISO with a 256 KiB embed area.
type Options struct {
	// Size is the total image size in bytes (rounded up to 2048). Default 16 MiB.
	Size int64
	// Arch is x86_64 (default), aarch64, ppc64le or s390x; it selects the
	// kernel header and whether isolinux/ is present (x86_64 only).
	Arch string
	// VolumeID is the primary volume ID. Default "rhcos-9.6.20251021-0".
	VolumeID string
	// EmbedAreaSize is the ignition embed area length. Default 262144.
	EmbedAreaSize int64
	// EmbedAreaOffset, when > 0, puts the area at this offset inside
	// images/ignition.img and writes offset/length into igninfo.json.
	EmbedAreaOffset int64
	// DefaultKargs overrides the default kernel arguments. Default
	// "rw  coreos.liveiso=<VolumeID> ignition.firstboot ignition.platform.id=metal".
	DefaultKargs string
	// OmitIgnInfo leaves out coreos/igninfo.json.
	OmitIgnInfo bool
	// OmitIgnitionImg leaves out images/ignition.img.
	OmitIgnitionImg bool
	// OmitKargsJSON leaves out coreos/kargs.json.
	OmitKargsJSON bool
	// IgnInfoJSON, if non-nil, is written verbatim as coreos/igninfo.json.
	IgnInfoJSON []byte
	// KargsJSON, if non-nil, is written verbatim as coreos/kargs.json.
	KargsJSON []byte
	// MinisoDat, if non-nil, is written verbatim as coreos/miniso.dat.
	MinisoDat []byte
	// Dense writes pseudo-random bytes over the whole filler instead of a
	// sparse hole (costs real disk and time; used by benchmarks).
	Dense bool
	// Kernel, if non-nil, is images/pxeboot/vmlinuz instead of the
	// synthetic kernel header of Arch.
	Kernel []byte
	// Extra are more files, by path (e.g. s390x's "generic.ins").
	Extra map[string][]byte
	// InitrdSize is the size of images/pxeboot/initrd.img (pseudo-random
	// bytes). Default 32 KiB.
	InitrdSize int64
	// Minimal writes the minimal ISO of these options instead, as a live
	// ISO build does before packing it into the full ISO's miniso.dat: the
	// same files without images/pxeboot/rootfs.img and without filler; Size
	// is ignored (the image is as small as its files). See package
	// testiso/testminiso for the full ISO that carries it.
	Minimal bool
}

// Extent is where a file's data lies in the image.
type Extent struct {
	Offset int64
	Size   int64
}

// Layout describes a written image: the byte extent of every file by its
// Rock Ridge path (e.g. "images/ignition.img"), the total size and what was
// written into the JSON descriptors.
type Layout struct {
	Size         int64
	VolumeID     string
	Arch         string
	DefaultKargs string
	Files        map[string]Extent
	// KargsOffsets maps each boot config path to the in-file offset of its kargs area.
	KargsOffsets map[string]int64
	KargsSize    int64
}

// File is the subset of *os.File that Write needs.
type File interface {
	io.WriterAt
	Truncate(size int64) error
}

type node struct {
	name     string // Rock Ridge name
	dir      bool
	children []*node
	parent   *node
	// files
	data   []byte
	size   int64
	filler bool
	// assigned
	lba    int64
	extLen int64
	num    int // path table directory number
}

func (n *node) isoName() string {
	if n.dir {
		return dirIdent(n.name)
	}
	return fileIdent(n.name)
}

func clean(s string, max int) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if b.Len() >= max {
			break
		}
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func dirIdent(name string) string { return clean(name, 8) }

func fileIdent(name string) string {
	base, ext := name, ""
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		base, ext = name[:i], name[i+1:]
	}
	return clean(base, 8) + "." + clean(ext, 3) + ";1"
}

// Write writes the image to f and returns its layout.
func Write(f File, o Options) (*Layout, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	lay := &Layout{VolumeID: o.VolumeID, Arch: o.Arch, DefaultKargs: o.DefaultKargs,
		Files: map[string]Extent{}, KargsOffsets: map[string]int64{}}

	root := &node{dir: true}
	add := func(path string, n *node) {
		parts := strings.Split(path, "/")
		d := root
		for _, p := range parts[:len(parts)-1] {
			var next *node
			for _, c := range d.children {
				if c.dir && c.name == p {
					next = c
				}
			}
			if next == nil {
				next = &node{name: p, dir: true, parent: d}
				d.children = append(d.children, next)
			}
			d = next
		}
		n.name = parts[len(parts)-1]
		n.parent = d
		if !n.filler {
			n.size = int64(len(n.data))
		}
		d.children = append(d.children, n)
	}

	vendor := "redhat"
	if strings.HasPrefix(o.VolumeID, "fedora") {
		vendor = "fedora"
	}
	grubPath := "EFI/" + vendor + "/grub.cfg"
	if o.Arch == "ppc64le" {
		grubPath = "boot/grub/grub.cfg"
	}
	karea := strings.Repeat("#", 1024) + " COREOS_KARG_EMBED_AREA\n"
	grub := "set default=\"1\"\n\nfunction load_video {\n  insmod all_video\n}\n\nset timeout=5\n" +
		"menuentry 'RHEL CoreOS (Live)' --class fedora --class gnu-linux --class gnu --class os {\n" +
		"\tlinux /images/pxeboot/vmlinuz "
	grubOff := int64(len(grub))
	grub += o.DefaultKargs + "\n" + karea + "\tinitrd /images/pxeboot/initrd.img /images/ignition.img\n}\n"
	isolinux := "serial 0\ndefault vesamenu.c32\ntimeout 600\n\nlabel linux\n  menu label ^RHEL CoreOS (Live)\n" +
		"  menu default\n  kernel /images/pxeboot/vmlinuz\n  append initrd=/images/pxeboot/initrd.img,/images/ignition.img "
	isoOff := int64(len(isolinux))
	isolinux += o.DefaultKargs + "\n" + karea + "\nlabel local\n  menu label Boot from ^local drive\n  localboot 0xffff\n"

	type kfile struct {
		End    string `json:"end"`
		Offset int64  `json:"offset"`
		Pad    string `json:"pad"`
		Path   string `json:"path"`
	}
	kj := struct {
		Default string  `json:"default"`
		Files   []kfile `json:"files"`
		Size    int64   `json:"size"`
	}{Default: o.DefaultKargs, Size: int64(len(o.DefaultKargs)) + 1 + 1023}
	kj.Files = append(kj.Files, kfile{"\n", grubOff, "#", grubPath})
	lay.KargsOffsets[grubPath] = grubOff
	if o.Arch == "x86_64" {
		kj.Files = append(kj.Files, kfile{"\n", isoOff, "#", "isolinux/isolinux.cfg"})
		lay.KargsOffsets["isolinux/isolinux.cfg"] = isoOff
	}
	sort.Slice(kj.Files, func(i, j int) bool { return kj.Files[i].Path < kj.Files[j].Path })
	lay.KargsSize = kj.Size
	kargsJSON, err := json.MarshalIndent(kj, "", "  ")
	if err != nil {
		return nil, err
	}
	kargsJSON = append(kargsJSON, '\n')
	if o.KargsJSON != nil {
		kargsJSON = o.KargsJSON
	}
	ign := map[string]any{"file": "images/ignition.img"}
	if o.EmbedAreaOffset > 0 {
		ign["offset"] = o.EmbedAreaOffset
		ign["length"] = o.EmbedAreaSize
	}
	igninfo, err := json.MarshalIndent(ign, "", "  ")
	if err != nil {
		return nil, err
	}
	igninfo = append(igninfo, '\n')
	if o.IgnInfoJSON != nil {
		igninfo = o.IgnInfoJSON
	}

	if o.MinisoDat != nil {
		add("coreos/miniso.dat", &node{data: o.MinisoDat})
	}
	add("coreos/features.json", &node{data: []byte("{\n  \"installer-config\": true,\n  \"live-initrd-network\": true\n}\n")})
	if !o.OmitIgnInfo {
		add("coreos/igninfo.json", &node{data: igninfo})
	}
	if !o.OmitKargsJSON {
		add("coreos/kargs.json", &node{data: kargsJSON})
	}
	add(grubPath, &node{data: []byte(grub)})
	if o.Arch == "x86_64" {
		add("isolinux/isolinux.cfg", &node{data: []byte(isolinux)})
	}
	if !o.OmitIgnitionImg {
		ig := make([]byte, o.EmbedAreaOffset+o.EmbedAreaSize)
		if o.EmbedAreaOffset > 0 {
			fillPattern(ig[:o.EmbedAreaOffset], 7)
		}
		add("images/ignition.img", &node{data: ig})
	}
	k := o.Kernel
	if k == nil {
		k = kernel(o.Arch)
	}
	add("images/pxeboot/vmlinuz", &node{data: k})
	initrd := make([]byte, o.InitrdSize)
	fillPattern(initrd, 3)
	add("images/pxeboot/initrd.img", &node{data: initrd})
	extra := make([]string, 0, len(o.Extra))
	for p := range o.Extra {
		extra = append(extra, p)
	}
	sort.Strings(extra)
	for _, p := range extra {
		add(p, &node{data: o.Extra[p]})
	}

	// Size the filler so the image comes out at exactly o.Size.
	fillerNames := []string{"images/pxeboot/rootfs.img"}
	used := func() int64 {
		var lba int64 = 20 // system area, PVD, terminator, L and M path tables
		for _, d := range bfs(root) {
			lba += (dirBytes(d) + sector - 1) / sector
		}
		walkFiles(root, func(n *node) { lba += (n.size + sector - 1) / sector })
		return lba * sector
	}
	rem := o.Size - used()
	if o.Minimal {
		rem = 0
	}
	for i := 0; rem > 0; i++ {
		name := fmt.Sprintf("images/filler/fill%02d.img", i)
		if i < len(fillerNames) {
			name = fillerNames[i]
		}
		n := &node{filler: true}
		add(name, n)
		// Adding the node may add a directory sector; recompute.
		avail := o.Size - used()
		if avail < 0 {
			avail = 0
		}
		n.size = min(avail, maxExtent)
		rem = o.Size - used()
	}
	if used() > o.Size && !o.Minimal {
		return nil, fmt.Errorf("testiso: size %d is too small; need at least %d bytes", o.Size, used())
	}

	// Assign sectors.
	sortTree(root)
	dirs := bfs(root)
	lba := int64(20)
	for i, d := range dirs {
		d.num = i + 1
		d.extLen = ((dirBytes(d) + sector - 1) / sector) * sector
		d.lba = lba
		lba += d.extLen / sector
	}
	var files []*node
	walkFiles(root, func(n *node) { files = append(files, n) })
	// Put fillers last so small files sit near the front, as in a real ISO.
	sort.SliceStable(files, func(i, j int) bool { return !files[i].filler && files[j].filler })
	for _, n := range files {
		n.lba = lba
		n.extLen = n.size
		lba += (n.size + sector - 1) / sector
		lay.Files[path(n)] = Extent{Offset: n.lba * sector, Size: n.size}
	}
	total := lba * sector
	if total < o.Size && !o.Minimal {
		total = o.Size
	}
	lay.Size = total

	if err := f.Truncate(0); err != nil {
		return nil, err
	}
	if err := f.Truncate(total); err != nil {
		return nil, err
	}
	if err := writeDescriptors(f, o.VolumeID, total, dirs); err != nil {
		return nil, err
	}
	for _, d := range dirs {
		if _, err := f.WriteAt(dirExtent(d), d.lba*sector); err != nil {
			return nil, err
		}
	}
	for _, n := range files {
		off := n.lba * sector
		if !n.filler {
			if _, err := f.WriteAt(n.data, off); err != nil {
				return nil, err
			}
			continue
		}
		if err := writeFiller(f, off, n.size, o.Dense); err != nil {
			return nil, err
		}
	}
	return lay, nil
}

// WriteFile creates (or truncates) path and writes the image into it.
func WriteFile(path string, o Options) (*Layout, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	lay, err := Write(f, o)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	return lay, nil
}

func (o *Options) defaults() error {
	if o.Size == 0 {
		o.Size = 16 << 20
	}
	o.Size = (o.Size + sector - 1) / sector * sector
	if o.Arch == "" {
		o.Arch = "x86_64"
	}
	switch o.Arch {
	case "x86_64", "aarch64", "ppc64le", "s390x":
	default:
		return fmt.Errorf("testiso: unsupported arch %q", o.Arch)
	}
	if o.VolumeID == "" {
		o.VolumeID = "rhcos-9.6.20251021-0"
	}
	if len(o.VolumeID) > 32 {
		return errors.New("testiso: volume ID longer than 32 bytes")
	}
	if o.EmbedAreaSize == 0 {
		o.EmbedAreaSize = 256 << 10
	}
	if o.InitrdSize == 0 {
		o.InitrdSize = 32 << 10
	}
	if o.DefaultKargs == "" {
		o.DefaultKargs = "rw  coreos.liveiso=" + o.VolumeID + " ignition.firstboot ignition.platform.id=metal"
	}
	return nil
}

func path(n *node) string {
	var parts []string
	for ; n.parent != nil; n = n.parent {
		parts = append([]string{n.name}, parts...)
	}
	return strings.Join(parts, "/")
}

func bfs(root *node) []*node {
	out := []*node{root}
	for i := 0; i < len(out); i++ {
		for _, c := range out[i].children {
			if c.dir {
				out = append(out, c)
			}
		}
	}
	return out
}

func walkFiles(d *node, fn func(*node)) {
	for _, c := range d.children {
		if c.dir {
			walkFiles(c, fn)
		} else {
			fn(c)
		}
	}
}

func sortTree(d *node) {
	sort.Slice(d.children, func(i, j int) bool { return d.children[i].isoName() < d.children[j].isoName() })
	for _, c := range d.children {
		if c.dir {
			sortTree(c)
		}
	}
}

// Rock Ridge system-use fields.
const (
	erID  = "RRIP_1991A"
	erDes = "ROCK RIDGE POSIX SEMANTICS"
	erSrc = "AGENTISO TESTISO"
)

func suPX(mode uint32, nlink uint32) []byte {
	b := make([]byte, 36)
	copy(b, "PX")
	b[2], b[3] = 36, 1
	both32(b[4:], mode)
	both32(b[12:], nlink)
	return b
}

func suNM(name string) []byte {
	b := []byte{'N', 'M', byte(5 + len(name)), 1, 0}
	return append(b, name...)
}

func suRoot() []byte {
	sp := []byte{'S', 'P', 7, 1, 0xBE, 0xEF, 0}
	er := []byte{'E', 'R', byte(8 + len(erID) + len(erDes) + len(erSrc)), 1, byte(len(erID)), byte(len(erDes)), byte(len(erSrc)), 1}
	er = append(er, erID+erDes+erSrc...)
	return append(sp, er...)
}

func record(ident []byte, lba, size int64, dir bool, su []byte) []byte {
	l := 33 + len(ident)
	if len(ident)%2 == 0 {
		l++
	}
	l += len(su)
	if l%2 == 1 {
		l++
	}
	b := make([]byte, l)
	b[0] = byte(l)
	both32(b[2:], uint32(lba))
	both32(b[10:], uint32(size))
	copy(b[18:25], recDate())
	if dir {
		b[25] = 2
	}
	both16(b[28:], 1)
	b[32] = byte(len(ident))
	copy(b[33:], ident)
	off := 33 + len(ident)
	if len(ident)%2 == 0 {
		off++
	}
	copy(b[off:], su)
	return b
}

func recDate() []byte {
	return []byte{125, 10, 21, 8, 0, 0, 0} // 2025-10-21 08:00:00 UTC
}

func dirRecords(d *node) [][]byte {
	dotSU := suPX(040555, 2)
	if d.parent == nil {
		dotSU = append(suRoot(), dotSU...)
	}
	parent := d
	if d.parent != nil {
		parent = d.parent
	}
	recs := [][]byte{
		record([]byte{0}, d.lba, d.extLen, true, dotSU),
		record([]byte{1}, parent.lba, parent.extLen, true, suPX(040555, 2)),
	}
	for _, c := range d.children {
		mode := uint32(0100444)
		if c.dir {
			mode = 040555
		}
		su := append(suPX(mode, 1), suNM(c.name)...)
		recs = append(recs, record([]byte(c.isoName()), c.lba, c.extLen, c.dir, su))
	}
	return recs
}

func dirBytes(d *node) int64 {
	var used int64
	for _, r := range dirRecords(d) {
		if used%sector+int64(len(r)) > sector {
			used = (used/sector + 1) * sector
		}
		used += int64(len(r))
	}
	return used
}

func dirExtent(d *node) []byte {
	b := make([]byte, d.extLen)
	var used int64
	for _, r := range dirRecords(d) {
		if used%sector+int64(len(r)) > sector {
			used = (used/sector + 1) * sector
		}
		copy(b[used:], r)
		used += int64(len(r))
	}
	return b
}

func pathTable(dirs []*node, bigEndian bool) []byte {
	var b []byte
	for _, d := range dirs {
		id := []byte{0}
		parent := 1
		if d.parent != nil {
			id = []byte(d.isoName())
			parent = d.parent.num
		}
		r := make([]byte, 8+len(id)+len(id)%2)
		r[0] = byte(len(id))
		if bigEndian {
			binary.BigEndian.PutUint32(r[2:], uint32(d.lba))
			binary.BigEndian.PutUint16(r[6:], uint16(parent))
		} else {
			binary.LittleEndian.PutUint32(r[2:], uint32(d.lba))
			binary.LittleEndian.PutUint16(r[6:], uint16(parent))
		}
		copy(r[8:], id)
		b = append(b, r...)
	}
	return b
}

func writeDescriptors(f io.WriterAt, volID string, total int64, dirs []*node) error {
	// Path tables are ordered by level then parent; BFS over a sorted tree gives that.
	lpt, mpt := pathTable(dirs, false), pathTable(dirs, true)
	if len(lpt) > sector {
		return errors.New("testiso: path table larger than one sector")
	}
	pvd := make([]byte, sector)
	pvd[0] = 1
	copy(pvd[1:6], "CD001")
	pvd[6] = 1
	copy(pvd[8:40], pad("LINUX", 32))
	copy(pvd[40:72], pad(volID, 32))
	both32(pvd[80:], uint32(total/sector))
	both16(pvd[120:], 1)
	both16(pvd[124:], 1)
	both16(pvd[128:], sector)
	both32(pvd[132:], uint32(len(lpt)))
	binary.LittleEndian.PutUint32(pvd[140:], 18)
	binary.BigEndian.PutUint32(pvd[148:], 19)
	root := dirs[0]
	copy(pvd[156:190], record([]byte{0}, root.lba, root.extLen, true, nil))
	copy(pvd[190:318], pad(volID, 128))
	copy(pvd[318:702], pad("", 384))
	copy(pvd[574:702], pad("AGENTISO TESTISO", 128))
	copy(pvd[702:813], pad("", 111))
	ts := time.Date(2025, 10, 21, 8, 0, 0, 0, time.UTC).Format("20060102150405") + "00"
	copy(pvd[813:], ts)
	copy(pvd[830:], ts)
	copy(pvd[847:], "0000000000000000")
	copy(pvd[864:], ts)
	pvd[881] = 1
	term := make([]byte, sector)
	term[0] = 255
	copy(term[1:6], "CD001")
	term[6] = 1
	for _, w := range []struct {
		b   []byte
		lba int64
	}{{pvd, 16}, {term, 17}, {lpt, 18}, {mpt, 19}} {
		if _, err := f.WriteAt(w.b, w.lba*sector); err != nil {
			return err
		}
	}
	return nil
}

func pad(s string, n int) []byte {
	return []byte(s + strings.Repeat(" ", n-len(s)))
}

func both16(b []byte, v uint16) {
	binary.LittleEndian.PutUint16(b, v)
	binary.BigEndian.PutUint16(b[2:], v)
}

func both32(b []byte, v uint32) {
	binary.LittleEndian.PutUint32(b, v)
	binary.BigEndian.PutUint32(b[4:], v)
}

// fillPattern fills b with a deterministic xorshift byte stream.
func fillPattern(b []byte, seed uint64) {
	x := seed*0x9E3779B97F4A7C15 | 1
	for i := 0; i < len(b); i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], x)
		copy(b[i:], w[:])
	}
}

// writeFiller writes filler data: a dense pseudo-random stream, or a hole
// with a 16-byte marker at the start of every MiB so that content checks
// over the filler are meaningful.
func writeFiller(f io.WriterAt, off, size int64, dense bool) error {
	const chunk = 1 << 20
	var buf []byte
	if dense {
		buf = make([]byte, chunk)
		fillPattern(buf, 11)
	}
	for pos := int64(0); pos < size; pos += chunk {
		n := min(int64(chunk), size-pos)
		if dense {
			// Vary each chunk so identical blocks are not deduplicated anywhere.
			binary.LittleEndian.PutUint64(buf, uint64(pos))
			if _, err := f.WriteAt(buf[:n], off+pos); err != nil {
				return err
			}
			continue
		}
		m := fmt.Appendf(nil, "FILL%012x", pos)
		if _, err := f.WriteAt(m[:min(int64(len(m)), n)], off+pos); err != nil {
			return err
		}
	}
	return nil
}

// kernel returns a fake kernel image whose header identifies arch the way
// real kernels do (PE machine, bzImage "HdrS", arm64 "ARM\x64", ELF e_machine).
func kernel(arch string) []byte {
	b := make([]byte, 16<<10)
	fillPattern(b, 5)
	switch arch {
	case "x86_64", "aarch64":
		copy(b, "MZ")
		binary.LittleEndian.PutUint32(b[0x3c:], 0x80)
		copy(b[0x80:], "PE\x00\x00")
		machine := uint16(0x8664)
		if arch == "aarch64" {
			machine = 0xAA64
			copy(b[0x38:], "ARM\x64")
		} else {
			copy(b[0x202:], "HdrS")
		}
		binary.LittleEndian.PutUint16(b[0x84:], machine)
	case "ppc64le":
		copy(b, "\x7fELF\x02\x01\x01")
		binary.LittleEndian.PutUint16(b[18:], 21)
	case "s390x":
		copy(b, "\x7fELF\x02\x02\x01")
		binary.BigEndian.PutUint16(b[18:], 22)
	}
	return b
}

// KernelImage is the synthetic kernel header the image carries for arch
// (for tests that wrap it, e.g. gzip it as aarch64 RHCOS ships it).
func KernelImage(arch string) []byte { return kernel(arch) }

// Bytes builds the image in memory (for small images: fuzz seeds, unit tests).
func Bytes(o Options) ([]byte, *Layout, error) {
	var m memFile
	lay, err := Write(&m, o)
	if err != nil {
		return nil, nil, err
	}
	return m.b, lay, nil
}

type memFile struct{ b []byte }

func (m *memFile) WriteAt(p []byte, off int64) (int, error) {
	if end := off + int64(len(p)); end > int64(len(m.b)) {
		m.b = append(m.b, make([]byte, end-int64(len(m.b)))...)
	}
	return copy(m.b[off:], p), nil
}

func (m *memFile) Truncate(size int64) error {
	if size <= int64(len(m.b)) {
		m.b = m.b[:size]
		return nil
	}
	m.b = append(m.b, make([]byte, size-int64(len(m.b)))...)
	return nil
}

// ParseSize parses a byte count with an optional KiB, MiB or GiB suffix ("64MiB").
func ParseSize(s string) (int64, error) {
	num, mult := s, int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if strings.HasSuffix(s, u.suf) {
			num, mult = strings.TrimSuffix(s, u.suf), u.m
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("invalid size %q: use a byte count or a number with KiB, MiB or GiB", s)
	}
	return n * mult, nil
}
