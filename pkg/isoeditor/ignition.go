package isoeditor

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/cavaliercoder/go-cpio"
)

// IgnInfoPath is the ISO path of the Ignition embed-area descriptor.
const IgnInfoPath = "coreos/igninfo.json"

// DefaultIgnitionFile is the embed-area file assumed when igninfo.json is absent (pre-2023 ISOs).
const DefaultIgnitionFile = "images/ignition.img"

// IgnitionConfigName is the initrd member that carries the Ignition config.
const IgnitionConfigName = "config.ign"

// IgnInfo is the content of coreos/igninfo.json.
type IgnInfo struct {
	File   string `json:"file"`
	Offset *int64 `json:"offset,omitempty"`
	Length *int64 `json:"length,omitempty"`
}

// ParseIgnInfo decodes and validates coreos/igninfo.json.
func ParseIgnInfo(b []byte) (IgnInfo, error) {
	var ii IgnInfo
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&ii); err != nil {
		return IgnInfo{}, fmt.Errorf("%s: invalid JSON: %w", IgnInfoPath, err)
	}
	if strings.TrimSpace(ii.File) == "" {
		return IgnInfo{}, fmt.Errorf("%s: field \"file\" is missing or empty", IgnInfoPath)
	}
	if ii.Offset != nil && *ii.Offset < 0 {
		return IgnInfo{}, fmt.Errorf("%s: field \"offset\" is negative (%d)", IgnInfoPath, *ii.Offset)
	}
	if ii.Length != nil && *ii.Length <= 0 {
		return IgnInfo{}, fmt.Errorf("%s: field \"length\" must be positive, got %d", IgnInfoPath, *ii.Length)
	}
	return ii, nil
}

// IgnitionArea is the Ignition embed area: a byte range inside one ISO file
// that the bootloader loads as an extra initrd.
type IgnitionArea struct {
	File       string // ISO path of the file holding the area, e.g. "images/ignition.img"
	FileOffset int64  // byte offset of File in the ISO
	Offset     int64  // offset of the area inside File
	Length     int64  // area length in bytes
}

// ISOOffset is the byte offset of the area in the ISO.
func (a IgnitionArea) ISOOffset() int64 { return a.FileOffset + a.Offset }

// Region names the area in errors and overlays.
func (a IgnitionArea) Region() string {
	return fmt.Sprintf("ignition embed area %s (ISO bytes %d-%d)", a.File, a.ISOOffset(), a.ISOOffset()+a.Length)
}

// Read returns the raw area bytes.
func (a IgnitionArea) Read(r io.ReaderAt) ([]byte, error) {
	b := make([]byte, a.Length)
	if _, err := r.ReadAt(b, a.ISOOffset()); err != nil {
		return nil, fmt.Errorf("reading %s: %w", a.Region(), err)
	}
	return b, nil
}

// IgnitionTooLargeError reports an initrd archive that does not fit the embed area.
type IgnitionTooLargeError struct {
	File  string // file holding the area
	Size  int64  // compressed archive size
	Limit int64  // area length
}

func (e *IgnitionTooLargeError) Error() string {
	return fmt.Sprintf("ignition embed area in %s is too small: the compressed ignition archive is %d bytes but the area holds %d bytes; make the ignition config smaller (embed fewer or smaller files)", e.File, e.Size, e.Limit)
}

// Overlay returns the bytes to write over the area: archive, then zeros to the end of the area.
func (a IgnitionArea) Overlay(archive []byte) (Overlay, error) {
	if int64(len(archive)) > a.Length {
		return Overlay{}, &IgnitionTooLargeError{File: a.File, Size: int64(len(archive)), Limit: a.Length}
	}
	data := make([]byte, a.Length)
	copy(data, archive)
	return Overlay{Region: a.Region(), Offset: a.ISOOffset(), Data: data}, nil
}

func (iso *ISO) findIgnitionArea(root dirRecord) (IgnitionArea, error) {
	info := IgnInfo{File: DefaultIgnitionFile}
	f, ok, err := iso.lookup(root, IgnInfoPath)
	if err != nil {
		return IgnitionArea{}, fmt.Errorf("%w: %v", ErrNotLiveISO, err)
	}
	if ok {
		b, err := iso.readSmall(f, 64<<10)
		if err != nil {
			return IgnitionArea{}, err
		}
		if info, err = ParseIgnInfo(b); err != nil {
			return IgnitionArea{}, err
		}
	}
	file, ok, err := iso.lookup(root, info.File)
	if err != nil {
		return IgnitionArea{}, fmt.Errorf("%w: %v", ErrNotLiveISO, err)
	}
	if !ok {
		if f.Path == "" {
			return IgnitionArea{}, fmt.Errorf("%w: neither %s nor %s exists, so there is no Ignition embed area: use an RHCOS or FCOS live ISO", ErrNotLiveISO, IgnInfoPath, DefaultIgnitionFile)
		}
		return IgnitionArea{}, fmt.Errorf("%w: %s names file %q, which is not in the ISO", ErrNotLiveISO, IgnInfoPath, info.File)
	}
	a := IgnitionArea{File: info.File, FileOffset: file.Offset, Length: file.Size}
	if info.Offset != nil {
		a.Offset = *info.Offset
	}
	if a.Offset > file.Size {
		return IgnitionArea{}, fmt.Errorf("%s: offset %d is past the end of %s (%d bytes)", IgnInfoPath, a.Offset, info.File, file.Size)
	}
	a.Length = file.Size - a.Offset
	if info.Length != nil {
		if *info.Length > a.Length {
			return IgnitionArea{}, fmt.Errorf("%s: length %d at offset %d runs past the end of %s (%d bytes)", IgnInfoPath, *info.Length, a.Offset, info.File, file.Size)
		}
		a.Length = *info.Length
	}
	if a.Length == 0 {
		return IgnitionArea{}, fmt.Errorf("%w: the Ignition embed area in %s is empty", ErrNotLiveISO, info.File)
	}
	return a, nil
}

// EmbeddedIgnition returns the Ignition config (config.ign) embedded in the
// ISO, or an error wrapping [ErrNoIgnition].
func (iso *ISO) EmbeddedIgnition() ([]byte, error) {
	files, err := iso.EmbeddedFiles()
	if err != nil {
		return nil, err
	}
	for i := len(files) - 1; i >= 0; i-- {
		if files[i].Path == IgnitionConfigName {
			return files[i].Data, nil
		}
	}
	return nil, fmt.Errorf("%w in %s: the area holds no %s", ErrNoIgnition, iso.ign.File, IgnitionConfigName)
}

// EmbeddedFiles returns the regular files of the initrd in the embed area (in archive order).
func (iso *ISO) EmbeddedFiles() ([]InitrdFile, error) {
	b, err := iso.ign.Read(iso.r)
	if err != nil {
		return nil, err
	}
	if isZero(b) {
		return nil, fmt.Errorf("%w: the embed area in %s is empty (all zeros)", ErrNoIgnition, iso.ign.File)
	}
	files, err := ParseInitrd(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", iso.ign.Region(), err)
	}
	return files, nil
}

// UsedBytes is how many bytes of the area are in use: the offset just past
// its last non-zero byte.
func UsedBytes(area []byte) int64 {
	return int64(len(bytes.TrimRight(area, "\x00")))
}

func isZero(b []byte) bool {
	return len(bytes.TrimLeft(b, "\x00")) == 0
}

// InitrdFile is one regular file in an initrd archive.
type InitrdFile struct {
	Path string      // relative path, e.g. "config.ign" or "etc/coreos-firstboot-network/eth0.nmconnection"
	Mode os.FileMode // permission bits; 0 means 0644
	Data []byte
}

// maxInitrdData bounds the decompressed size ParseInitrd accepts.
const maxInitrdData = 64 << 20

// ParseInitrd decodes an embed area: zero padding, then gzip-compressed or
// plain newc cpio archives, repeated to the end. It returns the regular files.
func ParseInitrd(b []byte) ([]InitrdFile, error) {
	br := bytes.NewReader(b)
	var files []InitrdFile
	budget := int64(maxInitrdData)
	for {
		// skip zero padding
		for {
			c, err := br.ReadByte()
			if err == io.EOF {
				return files, nil
			}
			if c != 0 {
				br.UnreadByte()
				break
			}
		}
		at := int64(len(b)) - int64(br.Len())
		magic := b[at:min(at+6, int64(len(b)))]
		switch {
		case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
			zr, err := newGzipReader(br)
			if err != nil {
				return nil, fmt.Errorf("gzip stream at byte %d: %w", at, err)
			}
			lr := &io.LimitedReader{R: zr, N: budget + 1}
			fs, err := readCpio(lr)
			if err != nil {
				return nil, fmt.Errorf("gzip cpio at byte %d: %w", at, err)
			}
			// Drain the rest of the stream (padding) to find where it ends.
			if _, err := io.Copy(io.Discard, lr); err != nil {
				return nil, fmt.Errorf("gzip stream at byte %d: %w", at, err)
			}
			if lr.N <= 0 {
				return nil, fmt.Errorf("gzip stream at byte %d decompresses to more than %d bytes", at, maxInitrdData)
			}
			budget = lr.N - 1
			files = append(files, fs...)
		case bytes.HasPrefix(magic, []byte("07070")):
			lr := &io.LimitedReader{R: br, N: budget + 1}
			fs, err := readCpio(lr)
			if err != nil {
				return nil, fmt.Errorf("cpio at byte %d: %w", at, err)
			}
			budget = lr.N - 1
			files = append(files, fs...)
		case bytes.HasPrefix(magic, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
			return nil, fmt.Errorf("xz-compressed archive at byte %d is not supported; only gzip or uncompressed newc cpio can be read", at)
		case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
			return nil, fmt.Errorf("zstd-compressed archive at byte %d is not supported; only gzip or uncompressed newc cpio can be read", at)
		default:
			return nil, fmt.Errorf("unrecognized data at byte %d (expected a gzip or newc cpio archive)", at)
		}
	}
}

func newGzipReader(r io.Reader) (*gzip.Reader, error) {
	if _, ok := r.(io.ByteReader); !ok {
		r = bufio.NewReader(r)
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	zr.Multistream(false)
	return zr, nil
}

func readCpio(r *io.LimitedReader) ([]InitrdFile, error) {
	cr := cpio.NewReader(r)
	var files []InitrdFile
	for {
		h, err := cr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			if r.N <= 0 {
				return nil, fmt.Errorf("archive decompresses to more than %d bytes", maxInitrdData)
			}
			return nil, err
		}
		if h.Mode&cpio.ModeType != cpio.ModeRegular {
			continue
		}
		if h.Size > r.N {
			return nil, fmt.Errorf("member %q claims %d bytes, more than the archive holds", h.Name, h.Size)
		}
		data := make([]byte, h.Size)
		if _, err := io.ReadFull(cr, data); err != nil {
			return nil, fmt.Errorf("member %q: %w", h.Name, err)
		}
		files = append(files, InitrdFile{Path: strings.TrimPrefix(h.Name, "/"), Mode: os.FileMode(h.Mode.Perm()), Data: data})
	}
}

// NewInitrd builds a gzip-compressed newc cpio archive of files, padded to a
// multiple of 4 bytes. Files are sorted by path; every parent directory gets
// its own entry (mode 040755), because the kernel drops files whose parent
// does not exist; regular files carry explicit S_IFREG bits.
func NewInitrd(files ...InitrdFile) ([]byte, error) {
	seen := map[string]bool{}
	dirs := map[string]bool{}
	sorted := make([]InitrdFile, len(files))
	copy(sorted, files)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	for _, f := range sorted {
		p := f.Path
		if p == "" || strings.HasPrefix(p, "/") || path.Clean(p) != p || strings.HasPrefix(p, "../") || p == ".." {
			return nil, fmt.Errorf("initrd file path %q must be relative and clean, like \"etc/foo.conf\"", p)
		}
		if seen[p] {
			return nil, fmt.Errorf("initrd file path %q appears twice", p)
		}
		seen[p] = true
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	cw := cpio.NewWriter(zw)
	written := map[string]bool{}
	writeDirs := func(p string) error {
		var chain []string
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			chain = append([]string{d}, chain...)
		}
		for _, d := range chain {
			if written[d] {
				continue
			}
			written[d] = true
			if err := cw.WriteHeader(&cpio.Header{Name: d, Mode: cpio.ModeDir | 0o755, Links: 2}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, f := range sorted {
		if dirs[f.Path] {
			return nil, fmt.Errorf("initrd path %q is both a file and a directory", f.Path)
		}
		if err := writeDirs(f.Path); err != nil {
			return nil, err
		}
		perm := f.Mode.Perm()
		if perm == 0 {
			perm = 0o644
		}
		h := &cpio.Header{Name: f.Path, Mode: cpio.ModeRegular | cpio.FileMode(perm), Size: int64(len(f.Data)), Links: 1}
		if err := cw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := cw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := cw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	for buf.Len()%4 != 0 {
		buf.WriteByte(0)
	}
	return buf.Bytes(), nil
}

// IgnitionArchive builds the embed-area archive holding config as config.ign (mode 0644).
func IgnitionArchive(config []byte, extra ...InitrdFile) ([]byte, error) {
	if len(bytes.TrimSpace(config)) == 0 {
		return nil, errors.New("ignition config is empty")
	}
	return NewInitrd(append([]InitrdFile{{Path: IgnitionConfigName, Mode: 0o644, Data: config}}, extra...)...)
}
