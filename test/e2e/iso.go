package e2e

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// The test ISOs are edited the way coreos-installer does it (spec: primary
// ISO 9660 directory, 8.3 names, in-place writes at file_lba*2048+offset),
// independently of the project's own ISO code, so that the boot test does not
// trust the code it is meant to check.

const (
	sectorSize = 2048
	pvdOffset  = 16 * sectorSize
	// maxDirSize bounds a directory extent read from an untrusted ISO.
	maxDirSize = 4 << 20
	// maxDepth bounds path lookups.
	maxDepth = 16
)

// FileExtent is where a file's data lies in an ISO image.
type FileExtent struct {
	Offset int64 // byte offset of the first data byte in the image
	Size   int64 // data length in bytes
}

// VolumeID returns the primary volume descriptor's volume identifier with
// space and NUL padding removed.
func VolumeID(r io.ReaderAt) (string, error) {
	pvd, err := readPVD(r)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(pvd[40:72]), " \x00"), nil
}

func readPVD(r io.ReaderAt) ([]byte, error) {
	pvd := make([]byte, sectorSize)
	if _, err := r.ReadAt(pvd, pvdOffset); err != nil {
		return nil, fmt.Errorf("read primary volume descriptor: %w", err)
	}
	if pvd[0] != 1 || string(pvd[1:6]) != "CD001" {
		return nil, errors.New("no ISO 9660 primary volume descriptor at sector 16")
	}
	if bs := binary.LittleEndian.Uint16(pvd[128:130]); bs != sectorSize {
		return nil, fmt.Errorf("unsupported logical block size %d", bs)
	}
	return pvd, nil
}

// dirRecord is one parsed ISO 9660 directory record.
type dirRecord struct {
	name  string // upper-case, without ";1" and without a trailing "."
	lba   uint32
	size  uint32
	isDir bool
}

func parseDirRecord(b []byte) (dirRecord, bool) {
	if len(b) < 34 || int(b[0]) > len(b) {
		return dirRecord{}, false
	}
	nameLen := int(b[32])
	if 33+nameLen > int(b[0]) {
		return dirRecord{}, false
	}
	name := string(b[33 : 33+nameLen])
	if i := strings.IndexByte(name, ';'); i >= 0 {
		name = name[:i]
	}
	name = strings.TrimSuffix(name, ".")
	return dirRecord{
		name:  strings.ToUpper(name),
		lba:   binary.LittleEndian.Uint32(b[2:6]),
		size:  binary.LittleEndian.Uint32(b[10:14]),
		isDir: b[25]&2 != 0,
	}, true
}

func readDir(r io.ReaderAt, d dirRecord) ([]dirRecord, error) {
	if d.size > maxDirSize {
		return nil, fmt.Errorf("directory extent of %d bytes is too large", d.size)
	}
	buf := make([]byte, d.size)
	if _, err := r.ReadAt(buf, int64(d.lba)*sectorSize); err != nil {
		return nil, fmt.Errorf("read directory at LBA %d: %w", d.lba, err)
	}
	var out []dirRecord
	for pos := 0; pos < len(buf); {
		l := int(buf[pos])
		if l == 0 { // records do not cross sectors: go to the next one
			pos = (pos/sectorSize + 1) * sectorSize
			continue
		}
		if pos+l > len(buf) {
			return nil, fmt.Errorf("directory record at LBA %d overruns its extent", d.lba)
		}
		rec, ok := parseDirRecord(buf[pos : pos+l])
		if !ok {
			return nil, fmt.Errorf("malformed directory record at LBA %d", d.lba)
		}
		out = append(out, rec)
		pos += l
	}
	return out, nil
}

// shortName maps a component to the 8.3 form an ISO level 1 image stores.
func shortName(c string) string {
	base, ext, _ := strings.Cut(c, ".")
	if len(base) > 8 {
		base = base[:8]
	}
	if len(ext) > 3 {
		ext = ext[:3]
	}
	if ext == "" {
		return base
	}
	return base + "." + ext
}

// LocateFile finds a regular file by its path (e.g. "coreos/igninfo.json") in
// the ISO's primary directory tree, matching names case-insensitively and
// falling back to the 8.3 form of each component.
func LocateFile(r io.ReaderAt, path string) (FileExtent, error) {
	pvd, err := readPVD(r)
	if err != nil {
		return FileExtent{}, err
	}
	cur, ok := parseDirRecord(pvd[156:190])
	if !ok || !cur.isDir {
		return FileExtent{}, errors.New("malformed root directory record")
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) > maxDepth {
		return FileExtent{}, fmt.Errorf("%s: path too deep", path)
	}
	for i, part := range parts {
		entries, err := readDir(r, cur)
		if err != nil {
			return FileExtent{}, fmt.Errorf("%s: %w", path, err)
		}
		want := strings.ToUpper(part)
		found := false
		for _, cand := range []string{want, shortName(want)} {
			for _, e := range entries {
				if e.name == cand {
					cur, found = e, true
					break
				}
			}
			if found {
				break
			}
		}
		if !found {
			return FileExtent{}, fmt.Errorf("%s: %q not found in the ISO's primary directory", path, part)
		}
		if last := i == len(parts)-1; last == cur.isDir {
			return FileExtent{}, fmt.Errorf("%s: %q has the wrong type", path, part)
		}
	}
	return FileExtent{Offset: int64(cur.lba) * sectorSize, Size: int64(cur.size)}, nil
}

// readISOFile returns the content of a small file in the ISO.
func readISOFile(r io.ReaderAt, path string, limit int64) ([]byte, error) {
	ext, err := LocateFile(r, path)
	if err != nil {
		return nil, err
	}
	if ext.Size > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d expected", path, ext.Size, limit)
	}
	b := make([]byte, ext.Size)
	if _, err := r.ReadAt(b, ext.Offset); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

// IgnitionArea returns the ISO byte range of the Ignition embed area named by
// coreos/igninfo.json (spec §3.1).
func IgnitionArea(r io.ReaderAt) (FileExtent, error) {
	raw, err := readISOFile(r, "coreos/igninfo.json", 64<<10)
	if err != nil {
		return FileExtent{}, err
	}
	var info struct {
		File   string `json:"file"`
		Offset *int64 `json:"offset"`
		Length *int64 `json:"length"`
	}
	if err := json.Unmarshal(raw, &info); err != nil {
		return FileExtent{}, fmt.Errorf("coreos/igninfo.json: %w", err)
	}
	if info.File == "" {
		return FileExtent{}, errors.New("coreos/igninfo.json: field file is empty")
	}
	f, err := LocateFile(r, info.File)
	if err != nil {
		return FileExtent{}, fmt.Errorf("coreos/igninfo.json file: %w", err)
	}
	var off int64
	if info.Offset != nil {
		off = *info.Offset
	}
	length := f.Size - off
	if info.Length != nil {
		length = *info.Length
	}
	if off < 0 || length < 0 || off+length > f.Size {
		return FileExtent{}, fmt.Errorf("coreos/igninfo.json: offset %d length %d outside %s (%d bytes)", off, length, info.File, f.Size)
	}
	return FileExtent{Offset: f.Offset + off, Size: length}, nil
}

// EmbedIgnitionArchive writes archive at the start of the ISO's Ignition
// embed area and zero-fills the rest of it, in place.
func EmbedIgnitionArchive(isoPath string, archive []byte) error {
	f, err := os.OpenFile(isoPath, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	area, err := IgnitionArea(f)
	if err != nil {
		return fmt.Errorf("%s: %w", isoPath, err)
	}
	if int64(len(archive)) > area.Size {
		return fmt.Errorf("%s: ignition archive of %d bytes exceeds the %d-byte embed area", isoPath, len(archive), area.Size)
	}
	buf := make([]byte, area.Size)
	copy(buf, archive)
	if _, err := f.WriteAt(buf, area.Offset); err != nil {
		return fmt.Errorf("%s: write ignition area: %w", isoPath, err)
	}
	return f.Close()
}

// kargsInfo is coreos/kargs.json (spec §4.2).
type kargsInfo struct {
	Default string `json:"default"`
	Files   []struct {
		Path   string  `json:"path"`
		Offset int64   `json:"offset"`
		Pad    *string `json:"pad"`
		End    *string `json:"end"`
	} `json:"files"`
	Size int64 `json:"size"`
}

type kargArea struct {
	offset   int64
	pad, end string
}

func kargAreas(r io.ReaderAt) (kargsInfo, []kargArea, error) {
	var info kargsInfo
	raw, err := readISOFile(r, "coreos/kargs.json", 64<<10)
	if err != nil {
		return info, nil, err
	}
	if err := json.Unmarshal(raw, &info); err != nil {
		return info, nil, fmt.Errorf("coreos/kargs.json: %w", err)
	}
	if info.Size <= 0 || info.Size > 2048 || len(info.Files) == 0 {
		return info, nil, fmt.Errorf("coreos/kargs.json: size %d with %d files is unusable", info.Size, len(info.Files))
	}
	var areas []kargArea
	for _, fi := range info.Files {
		f, err := LocateFile(r, fi.Path)
		if err != nil {
			return info, nil, fmt.Errorf("coreos/kargs.json: %w", err)
		}
		if fi.Offset < 0 || fi.Offset+info.Size > f.Size {
			return info, nil, fmt.Errorf("coreos/kargs.json: area %d+%d outside %s", fi.Offset, info.Size, fi.Path)
		}
		a := kargArea{offset: f.Offset + fi.Offset, pad: "#", end: "\n"}
		if fi.Pad != nil {
			a.pad = *fi.Pad
		}
		if fi.End != nil {
			a.end = *fi.End
		}
		if len(a.pad) != 1 || len(a.end) != 1 {
			return info, nil, fmt.Errorf("coreos/kargs.json: %s: pad and end must be one byte", fi.Path)
		}
		areas = append(areas, a)
	}
	return info, areas, nil
}

// Kargs reads the kernel arguments in the ISO's embed areas; all areas must
// agree (spec §4.3).
func Kargs(r io.ReaderAt) (string, error) {
	info, areas, err := kargAreas(r)
	if err != nil {
		return "", err
	}
	var first string
	for i, a := range areas {
		b := make([]byte, info.Size)
		if _, err := r.ReadAt(b, a.offset); err != nil {
			return "", fmt.Errorf("read kargs area: %w", err)
		}
		s := strings.TrimSpace(strings.TrimRight(strings.TrimRight(string(b), a.pad), a.end))
		if i == 0 {
			first = s
		} else if s != first {
			return "", fmt.Errorf("kargs areas disagree: %q vs %q", first, s)
		}
	}
	return first, nil
}

// SetKargs writes kargs into every embed area listed in coreos/kargs.json:
// kargs, the end byte, then pad bytes up to the area size.
func SetKargs(isoPath, kargs string) error {
	f, err := os.OpenFile(isoPath, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	info, areas, err := kargAreas(f)
	if err != nil {
		return fmt.Errorf("%s: %w", isoPath, err)
	}
	kargs = strings.TrimSpace(kargs)
	if int64(len(kargs)) >= info.Size {
		return fmt.Errorf("%s: kargs of %d bytes do not fit the %d-byte area", isoPath, len(kargs), info.Size)
	}
	for _, a := range areas {
		buf := bytes.Repeat([]byte(a.pad), int(info.Size))
		copy(buf, kargs+a.end)
		if _, err := f.WriteAt(buf, a.offset); err != nil {
			return fmt.Errorf("%s: write kargs: %w", isoPath, err)
		}
	}
	return f.Close()
}

// AppendKargs appends extra to the ISO's current kernel arguments.
func AppendKargs(isoPath, extra string) error {
	f, err := os.Open(isoPath)
	if err != nil {
		return err
	}
	cur, err := Kargs(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", isoPath, err)
	}
	return SetKargs(isoPath, cur+" "+extra)
}
