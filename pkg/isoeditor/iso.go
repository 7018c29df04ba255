// Package isoeditor reads and edits RHCOS/FCOS live ISOs in place: it finds the Ignition and kernel-argument embed areas and streams an edited copy as base ISO plus byte-range overlays.
//
// Nothing is extracted or re-mastered. [Open] parses the ISO 9660 primary
// directory (8.3 names, as coreos-installer does) to locate
// coreos/igninfo.json, coreos/kargs.json and the files they point into.
// [ISO.Edit] turns an Ignition config and extra kernel arguments into a list
// of [Overlay] values and returns a lazy [Image]; [WriteFile] writes it in one
// sequential pass (copy_file_range or a reflink for the unchanged bytes on
// Linux), hashing the output as it goes.
package isoeditor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/arch"
)

const sectorSize = 2048

// Sentinel errors; the returned errors wrap them with details.
var (
	// ErrNotISO means the input is not an ISO 9660 image.
	ErrNotISO = errors.New("not an ISO 9660 image")
	// ErrNotLiveISO means the input is an ISO but not a CoreOS live ISO with an Ignition embed area.
	ErrNotLiveISO = errors.New("not a CoreOS live ISO")
	// ErrNoIgnition means the embed area holds no Ignition config.
	ErrNoIgnition = errors.New("no embedded Ignition config")
	// ErrNoKargs means the ISO has no kernel-argument embed areas (no coreos/kargs.json).
	ErrNoKargs = errors.New("no kernel-argument embed areas")
)

// ArchMismatchError reports an ISO built for another architecture.
type ArchMismatchError struct {
	Want, Got string
}

func (e *ArchMismatchError) Error() string {
	if e.Got == "" {
		return fmt.Sprintf("cannot tell the ISO's architecture (no recognizable kernel at images/pxeboot/vmlinuz); expected %s: use a live ISO for %s", e.Want, e.Want)
	}
	return fmt.Sprintf("ISO is for %s but %s is required: use the %s live ISO", e.Got, e.Want, e.Want)
}

// fileExtent is where a file's data lies in the ISO.
type fileExtent struct {
	Path   string // path as asked for, e.g. "images/ignition.img"
	Offset int64  // byte offset in the ISO (LBA*2048)
	Size   int64
}

// ISO is an opened base live ISO. It is read-only and safe for concurrent readers.
type ISO struct {
	r        io.ReaderAt
	size     int64
	volumeID string
	arch     string
	ign      IgnitionArea
	kargs    *KargsAreas
	root     dirRecord
}

// Open parses a CoreOS live ISO of the given size read through r. It fails
// with an error wrapping [ErrNotISO] or [ErrNotLiveISO] when r is not one.
func Open(r io.ReaderAt, size int64) (*ISO, error) {
	iso := &ISO{r: r, size: size}
	root, err := iso.readPVD()
	if err != nil {
		return nil, err
	}
	iso.ign, err = iso.findIgnitionArea(root)
	if err != nil {
		return nil, err
	}
	iso.kargs, err = iso.findKargsAreas(root)
	if err != nil {
		return nil, err
	}
	iso.arch = iso.detectArch(root)
	iso.root = root
	return iso, nil
}

// Size is the ISO size in bytes.
func (iso *ISO) Size() int64 { return iso.size }

// ReaderAt is the reader the ISO was opened with.
func (iso *ISO) ReaderAt() io.ReaderAt { return iso.r }

// VolumeID is the primary volume identifier, e.g. "rhcos-9.6.20251021-0".
func (iso *ISO) VolumeID() string { return iso.volumeID }

// Arch is the architecture of the ISO's kernel (x86_64, aarch64, ppc64le or
// s390x), or "" if it cannot be recognized.
func (iso *ISO) Arch() string { return iso.arch }

// IgnitionArea is the Ignition embed area.
func (iso *ISO) IgnitionArea() IgnitionArea { return iso.ign }

// KargsAreas returns the kernel-argument embed areas, or nil if the ISO has no coreos/kargs.json.
func (iso *ISO) KargsAreas() *KargsAreas { return iso.kargs }

// CheckArch returns an [*ArchMismatchError] unless the ISO is for want
// (either spelling arch.Normalize accepts; empty is arch.Default).
func (iso *ISO) CheckArch(want string) error {
	w, err := arch.Normalize(want)
	if err != nil {
		w = want
	}
	if iso.arch != w {
		return &ArchMismatchError{Want: w, Got: iso.arch}
	}
	return nil
}

// dirRecord is one primary directory record.
type dirRecord struct {
	ident string // identifier without ";version" and trailing "."
	lba   int64
	size  int64
	dir   bool
}

func parseRecord(b []byte) (dirRecord, error) {
	if len(b) < 34 || int(b[0]) > len(b) || b[0] < 34 {
		return dirRecord{}, errors.New("short directory record")
	}
	nl := int(b[32])
	if 33+nl > int(b[0]) {
		return dirRecord{}, errors.New("directory record name overruns the record")
	}
	ident := string(b[33 : 33+nl])
	if i := strings.IndexByte(ident, ';'); i >= 0 {
		ident = ident[:i]
	}
	ident = strings.TrimSuffix(ident, ".")
	return dirRecord{
		ident: ident,
		lba:   int64(binary.LittleEndian.Uint32(b[2:])),
		size:  int64(binary.LittleEndian.Uint32(b[10:])),
		dir:   b[25]&2 != 0,
	}, nil
}

func (iso *ISO) readPVD() (dirRecord, error) {
	if iso.size < 18*sectorSize {
		return dirRecord{}, fmt.Errorf("%w: only %d bytes, too small to hold volume descriptors", ErrNotISO, iso.size)
	}
	buf := make([]byte, sectorSize)
	// Volume descriptors start at sector 16; stop at the terminator (bounded).
	for s := int64(16); s < 16+64 && (s+1)*sectorSize <= iso.size; s++ {
		if _, err := iso.r.ReadAt(buf, s*sectorSize); err != nil {
			return dirRecord{}, fmt.Errorf("%w: reading volume descriptor at byte %d: %v", ErrNotISO, s*sectorSize, err)
		}
		if string(buf[1:6]) != "CD001" {
			return dirRecord{}, fmt.Errorf("%w: no ISO 9660 volume descriptor at byte %d", ErrNotISO, s*sectorSize)
		}
		switch buf[0] {
		case 1:
			iso.volumeID = strings.TrimRight(string(buf[40:72]), " \x00")
			if vs := int64(binary.LittleEndian.Uint32(buf[80:])) * sectorSize; vs > iso.size {
				return dirRecord{}, fmt.Errorf("%w: the volume is %d bytes but the image has only %d: is the ISO truncated?", ErrNotISO, vs, iso.size)
			}
			root, err := parseRecord(buf[156:190])
			if err != nil || !root.dir {
				return dirRecord{}, fmt.Errorf("%w: bad root directory record in primary volume descriptor", ErrNotISO)
			}
			return root, nil
		case 255:
			return dirRecord{}, fmt.Errorf("%w: no primary volume descriptor", ErrNotISO)
		}
	}
	return dirRecord{}, fmt.Errorf("%w: no primary volume descriptor", ErrNotISO)
}

// maxDirSize bounds how much of a directory extent is read.
const maxDirSize = 1 << 20

func (iso *ISO) readDir(d dirRecord) ([]dirRecord, error) {
	if d.size > maxDirSize {
		return nil, fmt.Errorf("directory extent of %d bytes is implausibly large", d.size)
	}
	if err := iso.checkExtent(d.lba, d.size); err != nil {
		return nil, err
	}
	buf := make([]byte, d.size)
	if _, err := iso.r.ReadAt(buf, d.lba*sectorSize); err != nil {
		return nil, fmt.Errorf("reading directory at byte %d: %w", d.lba*sectorSize, err)
	}
	var out []dirRecord
	for off := 0; off < len(buf); {
		l := int(buf[off])
		if l == 0 { // rest of this sector is padding
			off = (off/sectorSize + 1) * sectorSize
			continue
		}
		if off+l > len(buf) {
			return nil, fmt.Errorf("directory record at byte %d overruns its directory", d.lba*sectorSize+int64(off))
		}
		r, err := parseRecord(buf[off : off+l])
		if err != nil {
			return nil, fmt.Errorf("directory record at byte %d: %w", d.lba*sectorSize+int64(off), err)
		}
		out = append(out, r)
		off += l
	}
	return out, nil
}

func (iso *ISO) checkExtent(lba, size int64) error {
	if lba*sectorSize+size > iso.size {
		return fmt.Errorf("extent at sector %d (%d bytes) runs past the end of the %d-byte image: is the ISO truncated?", lba, size, iso.size)
	}
	return nil
}

// isoName turns one path component into its ISO 9660 level-1 form: upper
// case, 8.3 for files (e.g. igninfo.json -> IGNINFO.JSO).
func isoName(c string, file bool) string {
	c = strings.ToUpper(c)
	if !file {
		return c
	}
	base, ext, dot := strings.Cut(c, ".")
	if !dot {
		return c
	}
	if len(base) > 8 {
		base = base[:8]
	}
	if len(ext) > 3 {
		ext = ext[:3]
	}
	return base + "." + ext
}

// lookup finds a file by path ("coreos/igninfo.json"); names are matched
// against primary identifiers, upper-cased and with 8.3 truncation.
func (iso *ISO) lookup(root dirRecord, path string) (fileExtent, bool, error) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	cur := root
	for i, p := range parts {
		last := i == len(parts)-1
		ents, err := iso.readDir(cur)
		if err != nil {
			return fileExtent{}, false, fmt.Errorf("looking up %s: %w", path, err)
		}
		want, alt := isoName(p, last), strings.ToUpper(p)
		found := false
		for _, e := range ents {
			if e.dir == last {
				continue
			}
			if e.ident == want || e.ident == alt {
				cur, found = e, true
				break
			}
		}
		if !found {
			return fileExtent{}, false, nil
		}
	}
	if err := iso.checkExtent(cur.lba, cur.size); err != nil {
		return fileExtent{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return fileExtent{Path: path, Offset: cur.lba * sectorSize, Size: cur.size}, true, nil
}

// readSmall reads a whole small metadata file.
func (iso *ISO) readSmall(f fileExtent, limit int64) ([]byte, error) {
	if f.Size > limit {
		return nil, fmt.Errorf("%s is %d bytes; at most %d expected", f.Path, f.Size, limit)
	}
	b := make([]byte, f.Size)
	if _, err := iso.r.ReadAt(b, f.Offset); err != nil {
		return nil, fmt.Errorf("reading %s: %w", f.Path, err)
	}
	return b, nil
}

// detectArch recognizes the kernel image header.
func (iso *ISO) detectArch(root dirRecord) string {
	k, ok, err := iso.lookup(root, "images/pxeboot/vmlinuz")
	if err == nil && ok {
		b := make([]byte, min(k.Size, 4096))
		if _, err := iso.r.ReadAt(b, k.Offset); err == nil {
			if a := kernelArch(b, true); a != "" {
				return a
			}
		}
	}
	// s390x ISOs boot from images/cdboot.img and have no isolinux/EFI kernel header we parse.
	if _, ok, err := iso.lookup(root, "images/cdboot.img"); err == nil && ok {
		return arch.S390X
	}
	return ""
}

// kernelArch recognizes a kernel from its first bytes: PE machine (EFI stub
// and zboot images), bzImage "HdrS", arm64 Image magic, ELF e_machine, and
// once, the same inside a gzip stream.
func kernelArch(b []byte, gz bool) string {
	if len(b) >= 0x40 && string(b[:2]) == "MZ" {
		pe := int(binary.LittleEndian.Uint32(b[0x3c:]))
		if pe > 0 && pe+6 <= len(b) && string(b[pe:pe+4]) == "PE\x00\x00" {
			switch binary.LittleEndian.Uint16(b[pe+4:]) {
			case 0x8664:
				return arch.X86_64
			case 0xAA64:
				return arch.AArch64
			}
		}
	}
	if len(b) >= 0x206 && string(b[0x202:0x206]) == "HdrS" {
		return arch.X86_64
	}
	if len(b) >= 0x3c && string(b[0x38:0x3c]) == "ARM\x64" {
		return arch.AArch64
	}
	if len(b) >= 20 && string(b[:4]) == "\x7fELF" {
		var m uint16
		if b[5] == 2 {
			m = binary.BigEndian.Uint16(b[18:])
		} else {
			m = binary.LittleEndian.Uint16(b[18:])
		}
		switch m {
		case 62:
			return arch.X86_64
		case 183:
			return arch.AArch64
		case 21:
			if b[5] == 1 {
				return arch.PPC64LE
			}
			return "ppc64"
		case 22:
			return arch.S390X
		}
	}
	if gz && len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		if d, err := gunzipPrefix(b, 4096); err == nil {
			return kernelArch(d, false)
		}
	}
	return ""
}

func gunzipPrefix(b []byte, n int) ([]byte, error) {
	zr, err := newGzipReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	out := make([]byte, n)
	m, err := io.ReadFull(zr, out)
	if m > 0 {
		return out[:m], nil
	}
	return nil, err
}

// FileExtent returns where the file at path ("images/pxeboot/rootfs.img")
// lies in the ISO: its byte offset and size. A missing file is an error
// wrapping fs.ErrNotExist.
func (iso *ISO) FileExtent(path string) (offset, size int64, err error) {
	f, ok, err := iso.lookup(iso.root, path)
	if err != nil {
		return 0, 0, err
	}
	if !ok {
		return 0, 0, fmt.Errorf("%s: %w in the ISO", path, fs.ErrNotExist)
	}
	return f.Offset, f.Size, nil
}
