package ignition

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/seed-a052040e/agentiso/pkg/isoeditor"

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

// Measure computes the size report of cfg as it is embedded: indented JSON
// (the bytes of agent.ign) in the ISO's gzip cpio archive.
func Measure(cfg types.Config) (Size, error) {
	raw, err := MarshalIndent(cfg)
	if err != nil {
		return Size{}, err
	}
	archive, err := isoeditor.IgnitionArchive(raw)
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
