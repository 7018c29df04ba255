package e2e

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// CpioEntry is one member of a newc cpio archive.
type CpioEntry struct {
	Name string // relative path, no leading "/"
	Mode uint32 // full st_mode, e.g. 0o100644 or 0o040755
	Data []byte // file content; empty for directories
}

// File returns a regular-file entry with mode 0644.
func File(name string, data []byte) CpioEntry {
	return CpioEntry{Name: name, Mode: 0o100644, Data: data}
}

// Dir returns a directory entry with mode 0755.
func Dir(name string) CpioEntry { return CpioEntry{Name: name, Mode: 0o040755} }

// WithParentDirs returns the entries plus a directory entry for every parent
// directory that is not already listed, sorted by name so that parents come
// before their children (as coreos-installer writes them).
func WithParentDirs(entries []CpioEntry) []CpioEntry {
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.Name] = true
	}
	out := append([]CpioEntry(nil), entries...)
	for _, e := range entries {
		for d := path.Dir(e.Name); d != "." && d != "/"; d = path.Dir(d) {
			if !seen[d] {
				seen[d] = true
				out = append(out, Dir(d))
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// WriteNewc writes entries as a newc ("070701") cpio archive, in the given
// order, followed by the TRAILER!!! entry.
func WriteNewc(w io.Writer, entries []CpioEntry) error {
	var buf bytes.Buffer
	for i, e := range entries {
		if e.Name == "" || strings.HasPrefix(e.Name, "/") {
			return fmt.Errorf("cpio entry %d: name %q must be relative and non-empty", i, e.Name)
		}
		writeNewcEntry(&buf, uint32(i+1), e)
	}
	writeNewcEntry(&buf, 0, CpioEntry{Name: "TRAILER!!!"})
	_, err := w.Write(buf.Bytes())
	return err
}

func pad4(b *bytes.Buffer) {
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
}

func writeNewcEntry(b *bytes.Buffer, ino uint32, e CpioEntry) {
	nlink := uint32(1)
	if e.Mode&0o170000 == 0o040000 {
		nlink = 2
	}
	// magic, ino, mode, uid, gid, nlink, mtime, filesize, devmajor, devminor,
	// rdevmajor, rdevminor, namesize (incl. NUL), check.
	fmt.Fprintf(b, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, e.Mode, 0, 0, nlink, 0, len(e.Data), 0, 0, 0, 0, len(e.Name)+1, 0)
	b.WriteString(e.Name)
	b.WriteByte(0)
	pad4(b)
	b.Write(e.Data)
	pad4(b)
}

// GzipNewc returns the gzip-compressed newc archive of entries, padded with
// NULs to a multiple of 4 bytes (as assisted-image-service pads it).
func GzipNewc(entries []CpioEntry) ([]byte, error) {
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if err := WriteNewc(zw, entries); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	pad4(&out)
	return out.Bytes(), nil
}
