package ignition

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/coreos/ignition/v2/config/v3_2/types"
)

// EmbedAreaSize is the size of the default Ignition embed area of a CoreOS
// live ISO (/images/ignition.img), which holds the gzip-compressed cpio
// archive with config.ign.
const EmbedAreaSize = 256 * 1024

// topContributors is how many paths Size.Top lists.
const topContributors = 10

// Size describes how big a config is once serialised and embedded.
type Size struct {
	// JSONBytes is the length of Marshal's output (compact JSON).
	JSONBytes int
	// CompressedBytes is the length of the gzip-compressed newc cpio
	// archive holding config.ign, as embedded in the ISO.
	CompressedBytes int
	// Top lists the largest contributors, largest first: files by the
	// length of their encoded source(s), units by their contents.
	Top []PathSize
}

// PathSize is the encoded size of one file or unit in the config.
type PathSize struct {
	Path  string
	Bytes int
}

// FitsEmbedArea reports whether the compressed config fits the default
// embed area.
func (s Size) FitsEmbedArea() bool { return s.CompressedBytes <= EmbedAreaSize }

// String summarises the size for logs.
func (s Size) String() string {
	return fmt.Sprintf("ignition %d bytes, %d bytes compressed (%.1f%% of the %d byte embed area)",
		s.JSONBytes, s.CompressedBytes, 100*float64(s.CompressedBytes)/EmbedAreaSize, EmbedAreaSize)
}

// Marshal returns the config as compact JSON, the form embedded in the ISO.
func Marshal(cfg types.Config) ([]byte, error) {
	out, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encoding ignition config: %w", err)
	}
	return out, nil
}

// MarshalIndent returns the config as indented JSON, for humans.
func MarshalIndent(cfg types.Config) ([]byte, error) {
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding ignition config: %w", err)
	}
	return append(out, '\n'), nil
}

// Measure computes the size report of cfg.
func Measure(cfg types.Config) (Size, error) {
	raw, err := Marshal(cfg)
	if err != nil {
		return Size{}, err
	}
	archive, err := EmbedArchive(raw)
	if err != nil {
		return Size{}, err
	}
	var top []PathSize
	for _, f := range cfg.Storage.Files {
		n := 0
		if f.Contents.Source != nil {
			n += len(*f.Contents.Source)
		}
		for _, a := range f.Append {
			if a.Source != nil {
				n += len(*a.Source)
			}
		}
		top = append(top, PathSize{Path: f.Path, Bytes: n})
	}
	for _, u := range cfg.Systemd.Units {
		n := 0
		if u.Contents != nil {
			n += len(*u.Contents)
		}
		for _, d := range u.Dropins {
			if d.Contents != nil {
				n += len(*d.Contents)
			}
		}
		top = append(top, PathSize{Path: "/etc/systemd/system/" + u.Name, Bytes: n})
	}
	sort.SliceStable(top, func(i, j int) bool {
		if top[i].Bytes != top[j].Bytes {
			return top[i].Bytes > top[j].Bytes
		}
		return top[i].Path < top[j].Path
	})
	if len(top) > topContributors {
		top = top[:topContributors]
	}
	return Size{JSONBytes: len(raw), CompressedBytes: len(archive), Top: top}, nil
}

// EmbedArchive returns the gzip-compressed newc cpio archive holding one
// file, config.ign, with the given contents: the payload of a CoreOS live
// ISO's Ignition embed area.
func EmbedArchive(configJSON []byte) ([]byte, error) {
	var cpio bytes.Buffer
	writeNewc(&cpio, "config.ign", 0o100644, configJSON)
	writeNewc(&cpio, "TRAILER!!!", 0, nil)
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("compressing ignition archive: %w", err)
	}
	if _, err := zw.Write(cpio.Bytes()); err != nil {
		return nil, fmt.Errorf("compressing ignition archive: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing ignition archive: %w", err)
	}
	return out.Bytes(), nil
}

// writeNewc appends one entry in the SVR4 "newc" cpio format (magic 070701).
func writeNewc(w *bytes.Buffer, name string, mode uint32, contents []byte) {
	nlink := 1
	fmt.Fprintf(w, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		0, mode, 0, 0, nlink, 0, len(contents), 0, 0, 0, 0, len(name)+1, 0)
	w.WriteString(name)
	w.WriteByte(0)
	pad4(w)
	w.Write(contents)
	pad4(w)
}

func pad4(w *bytes.Buffer) {
	for w.Len()%4 != 0 {
		w.WriteByte(0)
	}
}

// gzipSmaller compresses b and reports whether that saves space once the
// result is base64-encoded.
func gzipSmaller(b []byte) ([]byte, bool) {
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return nil, false
	}
	if _, err := zw.Write(b); err != nil {
		return nil, false
	}
	if err := zw.Close(); err != nil {
		return nil, false
	}
	if len(gzipDataURL)+base64Len(out.Len())+len(`,"compression":"gzip"`) >= len(textDataURL)+base64Len(len(b)) {
		return nil, false
	}
	return out.Bytes(), true
}

func base64Len(n int) int { return (n + 2) / 3 * 4 }
