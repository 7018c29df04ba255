package isoeditor

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"unicode/utf8"

	"github.com/ulikunitz/xz"
)

// MinisoPath is the file in a full live ISO that describes its minimal ISO.
const MinisoPath = "coreos/miniso.dat"

// ErrNoMinisoData means the base ISO carries no usable coreos/miniso.dat
// (absent, zero-filled or not in the minimal-ISO data format).
var ErrNoMinisoData = errors.New("base ISO has no minimal-ISO data")

const (
	minisoMagic   = "MINISO\x00\x00"
	minisoVersion = 1
	// minisoMaxSize bounds the data file, as coreos-installer does (FCOS's is a few KB).
	minisoMaxSize = 1 << 20
)

// MinisoExtent says that Length bytes at MinimalOffset in the minimal ISO
// are the bytes at FullOffset in the full ISO (one shared file).
type MinisoExtent struct {
	MinimalOffset int64
	FullOffset    int64
	Length        int64
}

// MinisoData is a parsed coreos/miniso.dat: how to rebuild the minimal ISO
// from the full one. See docs/iso-editing.md for the format.
type MinisoData struct {
	Version    uint32
	AppVersion string // the coreos-installer version that packed it; informational
	// Extents are sorted by MinimalOffset and do not overlap.
	Extents []MinisoExtent
	// Digest is the sha256 of the whole minimal ISO.
	Digest [32]byte
	// Packed is an xz stream of every minimal-ISO byte not covered by Extents, in order.
	Packed []byte
}

// minisoDecoder reads bincode (little-endian, varint integers) values.
type minisoDecoder struct {
	b   []byte
	off int
}

func (d *minisoDecoder) bytes(n int, field string) ([]byte, error) {
	if n < 0 || n > len(d.b)-d.off {
		return nil, fmt.Errorf("%s: truncated at byte %d (need %d bytes)", field, d.off, n)
	}
	v := d.b[d.off : d.off+n]
	d.off += n
	return v, nil
}

// varint reads a bincode varint no larger than max: one byte below 251,
// else a tag (251: u16, 252: u32, 253: u64) and a little-endian value.
func (d *minisoDecoder) varint(field string, max uint64) (uint64, error) {
	t, err := d.bytes(1, field)
	if err != nil {
		return 0, err
	}
	var v uint64
	switch tag := t[0]; {
	case tag < 251:
		v = uint64(tag)
	case tag == 251:
		b, err := d.bytes(2, field)
		if err != nil {
			return 0, err
		}
		v = uint64(binary.LittleEndian.Uint16(b))
	case tag == 252:
		b, err := d.bytes(4, field)
		if err != nil {
			return 0, err
		}
		v = uint64(binary.LittleEndian.Uint32(b))
	case tag == 253:
		b, err := d.bytes(8, field)
		if err != nil {
			return 0, err
		}
		v = binary.LittleEndian.Uint64(b)
	default:
		return 0, fmt.Errorf("%s: invalid varint tag %d at byte %d", field, tag, d.off-1)
	}
	if v > max {
		return 0, fmt.Errorf("%s: value %d out of range (max %d)", field, v, max)
	}
	return v, nil
}

// ParseMinisoData parses the contents of coreos/miniso.dat. Trailing bytes
// (the file's zero padding) are ignored. A file that does not start with the
// magic, such as an all-zero placeholder, yields an error wrapping
// [ErrNoMinisoData].
func ParseMinisoData(b []byte) (*MinisoData, error) {
	if len(b) > minisoMaxSize {
		b = b[:minisoMaxSize]
	}
	if len(b) < len(minisoMagic) || string(b[:len(minisoMagic)]) != minisoMagic {
		return nil, fmt.Errorf("%s: no MINISO magic: %w", MinisoPath, ErrNoMinisoData)
	}
	d := &minisoDecoder{b: b, off: len(minisoMagic)}
	wrap := func(err error) error { return fmt.Errorf("%s: %w", MinisoPath, err) }
	ver, err := d.varint("version", 1<<32-1)
	if err != nil {
		return nil, wrap(err)
	}
	if ver != minisoVersion {
		return nil, fmt.Errorf("%s: version %d, only version %d is understood: %w", MinisoPath, ver, minisoVersion, ErrNoMinisoData)
	}
	m := &MinisoData{Version: uint32(ver)}
	n, err := d.varint("app_version length", uint64(len(b)))
	if err != nil {
		return nil, wrap(err)
	}
	app, err := d.bytes(int(n), "app_version")
	if err != nil {
		return nil, wrap(err)
	}
	if !utf8.Valid(app) {
		return nil, wrap(errors.New("app_version is not UTF-8"))
	}
	m.AppVersion = string(app)
	// Each entry is at least 3 bytes, which bounds the count by the input.
	n, err = d.varint("table length", uint64(len(b)/3))
	if err != nil {
		return nil, wrap(err)
	}
	if n == 0 {
		return nil, wrap(errors.New("extent table is empty"))
	}
	m.Extents = make([]MinisoExtent, 0, n)
	var end int64
	for i := range int(n) {
		var v [3]int64
		for j, f := range []string{"minimal", "full", "length"} {
			x, err := d.varint(fmt.Sprintf("table entry %d %s", i, f), 1<<32-1)
			if err != nil {
				return nil, wrap(err)
			}
			v[j] = int64(x)
		}
		e := MinisoExtent{MinimalOffset: v[0] * sectorSize, FullOffset: v[1] * sectorSize, Length: v[2]}
		if e.MinimalOffset < end {
			return nil, fmt.Errorf("%s: table entry %d at minimal offset %d overlaps the previous one (ends at %d)", MinisoPath, i, e.MinimalOffset, end)
		}
		end = e.MinimalOffset + e.Length
		m.Extents = append(m.Extents, e)
	}
	dg, err := d.bytes(32, "digest")
	if err != nil {
		return nil, wrap(err)
	}
	copy(m.Digest[:], dg)
	n, err = d.varint("xzpacked length", uint64(len(b)))
	if err != nil {
		return nil, wrap(err)
	}
	if m.Packed, err = d.bytes(int(n), "xzpacked"); err != nil {
		return nil, wrap(err)
	}
	return m, nil
}

// MinisoData reads and parses the ISO's coreos/miniso.dat; an ISO without
// one gets an error wrapping [ErrNoMinisoData].
func (iso *ISO) MinisoData() (*MinisoData, error) {
	f, ok, err := iso.lookup(iso.root, MinisoPath)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s not found: %w", MinisoPath, ErrNoMinisoData)
	}
	b, err := iso.readSmall(f, minisoMaxSize)
	if err != nil {
		return nil, err
	}
	return ParseMinisoData(b)
}

// Marshal encodes the data in the miniso.dat format (unpadded).
func (m *MinisoData) Marshal() []byte {
	var b bytes.Buffer
	put := func(v uint64) {
		switch {
		case v < 251:
			b.WriteByte(byte(v))
		case v <= 0xffff:
			b.WriteByte(251)
			b.Write(binary.LittleEndian.AppendUint16(nil, uint16(v)))
		case v <= 0xffffffff:
			b.WriteByte(252)
			b.Write(binary.LittleEndian.AppendUint32(nil, uint32(v)))
		default:
			b.WriteByte(253)
			b.Write(binary.LittleEndian.AppendUint64(nil, v))
		}
	}
	b.WriteString(minisoMagic)
	put(uint64(m.Version))
	put(uint64(len(m.AppVersion)))
	b.WriteString(m.AppVersion)
	put(uint64(len(m.Extents)))
	for _, e := range m.Extents {
		put(uint64(e.MinimalOffset / sectorSize))
		put(uint64(e.FullOffset / sectorSize))
		put(uint64(e.Length))
	}
	b.Write(m.Digest[:])
	put(uint64(len(m.Packed)))
	b.Write(m.Packed)
	return b.Bytes()
}

// DigestMismatchError reports a rebuilt minimal ISO whose sha256 differs
// from the one miniso.dat records (a base ISO that is not pristine).
type DigestMismatchError struct {
	Want, Got [32]byte
}

func (e *DigestMismatchError) Error() string {
	return fmt.Sprintf("rebuilt minimal ISO has sha256 %s but %s expects %s: the base ISO is modified or does not match its minimal-ISO data",
		hex.EncodeToString(e.Got[:]), MinisoPath, hex.EncodeToString(e.Want[:]))
}

// MinimalISO returns a stream of the minimal ISO rebuilt from full (the
// full ISO this data came from): the extents are read from full, everything
// else is decompressed from Packed. Memory stays constant. The sha256 is
// checked as the stream ends; a mismatch is a read error
// ([*DigestMismatchError]) instead of io.EOF, so a copy never succeeds silently.
func (m *MinisoData) MinimalISO(full io.ReaderAt) (io.Reader, error) {
	xr, err := xz.NewReader(bytes.NewReader(m.Packed))
	if err != nil {
		return nil, fmt.Errorf("%s: xz data: %w", MinisoPath, err)
	}
	return &minimalReader{m: m, full: full, xz: xr, h: sha256.New()}, nil
}

type minimalReader struct {
	m    *MinisoData
	full io.ReaderAt
	xz   io.Reader
	h    hash.Hash
	off  int64 // bytes produced so far
	next int   // index of the next extent not yet fully produced
	err  error
}

func (r *minimalReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.read(p)
	r.h.Write(p[:n])
	r.off += int64(n)
	if err == io.EOF {
		var got [32]byte
		r.h.Sum(got[:0])
		if got != r.m.Digest {
			err = &DigestMismatchError{Want: r.m.Digest, Got: got}
		}
	}
	if err != nil {
		r.err = err
	}
	return n, err
}

func (r *minimalReader) read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if r.next < len(r.m.Extents) {
		e := r.m.Extents[r.next]
		if r.off < e.MinimalOffset {
			// packed bytes up to the extent
			if gap := e.MinimalOffset - r.off; int64(len(p)) > gap {
				p = p[:gap]
			}
			n, err := io.ReadFull(r.xz, p)
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				return n, fmt.Errorf("%s: packed data ends at minimal offset %d, before the extent at %d", MinisoPath, r.off+int64(n), e.MinimalOffset)
			}
			if err != nil {
				return n, fmt.Errorf("%s: xz data: %w", MinisoPath, err)
			}
			return n, nil
		}
		pos := r.off - e.MinimalOffset
		if rest := e.Length - pos; int64(len(p)) > rest {
			p = p[:rest]
		}
		n, err := r.full.ReadAt(p, e.FullOffset+pos)
		if n < len(p) {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return n, fmt.Errorf("reading full ISO at %d for minimal offset %d: %w", e.FullOffset+pos, r.off, err)
		}
		if pos+int64(n) == e.Length {
			r.next++
		}
		return n, nil
	}
	n, err := r.xz.Read(p)
	if err != nil && err != io.EOF {
		return n, fmt.Errorf("%s: xz data: %w", MinisoPath, err)
	}
	return n, err
}

// PackMiniso builds the minimal-ISO data for a minimal ISO of size bytes
// read through minimal, given the extents it shares with the full ISO
// (sorted by MinimalOffset, sector-aligned, non-overlapping). It is how a
// build tool (and agentiso's boot fixture) makes coreos/miniso.dat; the bytes
// outside the extents are xz-compressed in one streaming pass.
func PackMiniso(minimal io.ReaderAt, size int64, extents []MinisoExtent, appVersion string) (*MinisoData, error) {
	if len(extents) == 0 {
		return nil, errors.New("packing minimal-ISO data: no extents shared with the full ISO")
	}
	var buf bytes.Buffer
	xw, err := xz.NewWriter(&buf)
	if err != nil {
		return nil, fmt.Errorf("packing minimal-ISO data: %w", err)
	}
	h := sha256.New()
	var off int64
	copyTo := func(w io.Writer, end int64) error {
		_, err := io.Copy(w, io.NewSectionReader(minimal, off, end-off))
		off = end
		return err
	}
	for i, e := range extents {
		if e.MinimalOffset%sectorSize != 0 || e.FullOffset%sectorSize != 0 || e.Length < 0 || e.Length > 1<<32-1 {
			return nil, fmt.Errorf("packing minimal-ISO data: extent %d (%+v) is not sector-aligned or too long", i, e)
		}
		if e.MinimalOffset < off || e.MinimalOffset+e.Length > size {
			return nil, fmt.Errorf("packing minimal-ISO data: extent %d (%+v) overlaps the previous one or ends past %d", i, e, size)
		}
		if err := copyTo(io.MultiWriter(h, xw), e.MinimalOffset); err != nil {
			return nil, fmt.Errorf("packing minimal-ISO data: %w", err)
		}
		if err := copyTo(h, e.MinimalOffset+e.Length); err != nil {
			return nil, fmt.Errorf("packing minimal-ISO data: %w", err)
		}
	}
	if err := copyTo(io.MultiWriter(h, xw), size); err != nil {
		return nil, fmt.Errorf("packing minimal-ISO data: %w", err)
	}
	if err := xw.Close(); err != nil {
		return nil, fmt.Errorf("packing minimal-ISO data: %w", err)
	}
	m := &MinisoData{Version: minisoVersion, AppVersion: appVersion, Extents: extents, Packed: buf.Bytes()}
	h.Sum(m.Digest[:0])
	return m, nil
}
