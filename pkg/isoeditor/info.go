package isoeditor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
)

// Info summarizes a live ISO's embed areas, for display.
type Info struct {
	VolumeID string `json:"volumeID"`
	Arch     string `json:"arch"`
	Size     int64  `json:"size"`
	// Minimal is true for a minimal ISO: no images/pxeboot/rootfs.img, the
	// live system downloads its root file system from RootfsURL.
	Minimal bool `json:"minimal"`
	// RootfsURL is the coreos.live.rootfs_url= kernel argument, if any.
	RootfsURL string `json:"rootfsURL,omitempty"`
	// MinisoData is true when the ISO carries coreos/miniso.dat (a full
	// ISO agentiso can build a minimal ISO from).
	MinisoData bool         `json:"minisoData"`
	Ignition   IgnitionInfo `json:"ignition"`
	Kargs      *KargsInfo   `json:"kargs,omitempty"`
}

// IgnitionInfo describes the Ignition embed area.
type IgnitionInfo struct {
	File      string `json:"file"`
	Offset    int64  `json:"offset"` // ISO byte offset of the area
	Length    int64  `json:"length"`
	Used      int64  `json:"used"` // bytes up to the last non-zero byte
	HasConfig bool   `json:"hasConfig"`
}

// KargsInfo describes the kernel-argument embed areas.
type KargsInfo struct {
	Default string          `json:"default"`
	Current string          `json:"current"`
	Size    int64           `json:"size"`
	Free    int64           `json:"free"` // bytes still available for appended arguments (including the separating space)
	Areas   []KargsAreaInfo `json:"areas"`
}

// KargsAreaInfo is one kernel-argument area.
type KargsAreaInfo struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"` // ISO byte offset of the area
}

// FileInfo opens the ISO at path and describes it (see [ISO.Info]).
func FileInfo(path string) (Info, error) {
	iso, f, err := OpenFile(path)
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	return iso.Info()
}

// FileIgnition is the Ignition config embedded in the ISO at path
// (EmbeddedIgnition), an error naming the file when there is none.
func FileIgnition(path string) ([]byte, error) {
	iso, f, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cfg, err := iso.EmbeddedIgnition()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// FileKargs are the kernel arguments the ISO at path boots with (Kargs),
// or with defaults those recorded in its coreos/kargs.json; an error
// naming the file when the ISO has no such areas or they disagree.
func FileKargs(path string, defaults bool) (string, error) {
	iso, f, err := OpenFile(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if !defaults {
		k, err := iso.Kargs()
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		return k, nil
	}
	if iso.KargsAreas() == nil {
		return "", fmt.Errorf("%s: %w: the ISO has no %s", path, ErrNoKargs, KargsJSONPath)
	}
	return iso.KargsAreas().Default, nil
}

// OpenFile opens the live ISO at path. The caller closes the returned file.
func OpenFile(path string) (*ISO, *os.File, error) {
	f, err := fsutil.OpenRegular(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && st.IsDir() {
		err = errors.New("is a directory")
	}
	if err != nil {
		f.Close()
		return nil, nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	iso, err := Open(f, st.Size())
	if err != nil {
		f.Close()
		return nil, nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return iso, f, nil
}

// Info describes the ISO: volume ID, arch, and where its embed areas are and how full.
func (iso *ISO) Info() (Info, error) {
	a := iso.ign
	area, err := a.Read(iso.r)
	if err != nil {
		return Info{}, err
	}
	in := Info{VolumeID: iso.volumeID, Arch: iso.arch, Size: iso.size,
		Ignition: IgnitionInfo{File: a.File, Offset: a.ISOOffset(), Length: a.Length, Used: UsedBytes(area)}}
	if _, err := iso.EmbeddedIgnition(); err == nil {
		in.Ignition.HasConfig = true
	}
	_, hasRootfs, err := iso.lookup(iso.root, RootfsPath)
	if err != nil {
		return Info{}, err
	}
	in.Minimal = !hasRootfs
	if _, err := iso.MinisoData(); err == nil {
		in.MinisoData = true
	}
	if k := iso.kargs; k != nil {
		cur, err := k.Read(iso.r)
		if err != nil {
			return Info{}, err
		}
		for _, w := range strings.Fields(cur) {
			if u, ok := strings.CutPrefix(w, RootfsURLKarg); ok {
				in.RootfsURL = u
			}
		}
		ki := &KargsInfo{Default: k.Default, Current: cur, Size: k.Size, Free: k.Size - int64(len(cur)) - 1}
		for _, ar := range k.Areas {
			ki.Areas = append(ki.Areas, KargsAreaInfo{Path: ar.Path, Offset: ar.Offset})
		}
		in.Kargs = ki
	}
	return in, nil
}

// WriteText prints the information one value a line, as agentiso iso info
// does. The volume ID comes from the ISO and is escaped
// (internal/termsafe), as is the rootfs URL.
func (in Info) WriteText(w io.Writer) error {
	arch := in.Arch
	if arch == "" {
		arch = "unknown"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Volume ID:      %s\n", termsafe.String(in.VolumeID))
	fmt.Fprintf(&b, "Architecture:   %s\n", arch)
	fmt.Fprintf(&b, "Size:           %d bytes\n", in.Size)
	switch {
	case in.Minimal:
		fmt.Fprintf(&b, "Type:           minimal (no %s; the live system downloads it)\n", RootfsPath)
	case in.MinisoData:
		fmt.Fprintf(&b, "Type:           full (carries %s: a minimal ISO can be built from it)\n", MinisoPath)
	default:
		fmt.Fprintf(&b, "Type:           full (no usable %s: no minimal ISO can be built from it)\n", MinisoPath)
	}
	if in.RootfsURL != "" {
		fmt.Fprintf(&b, "Rootfs URL:     %s\n", termsafe.String(in.RootfsURL))
	} else if in.Minimal {
		b.WriteString("Rootfs URL:     none (coreos.live.rootfs_url= is not set: the ISO cannot boot)\n")
	}
	ig := in.Ignition
	fmt.Fprintf(&b, "Ignition area:  %s, offset %d, length %d, used %d (%.2f%%)\n",
		ig.File, ig.Offset, ig.Length, ig.Used, 100*float64(ig.Used)/float64(ig.Length))
	fmt.Fprintf(&b, "Ignition:       %s\n", map[bool]string{true: "embedded", false: "none"}[ig.HasConfig])
	if k := in.Kargs; k != nil {
		fmt.Fprintf(&b, "Kargs areas:    %d of %d bytes, %d free\n", len(k.Areas), k.Size, k.Free)
		for _, a := range k.Areas {
			fmt.Fprintf(&b, "  %s, offset %d\n", a.Path, a.Offset)
		}
		fmt.Fprintf(&b, "Default kargs:  %s\n", k.Default)
		fmt.Fprintf(&b, "Current kargs:  %s\n", k.Current)
	} else {
		fmt.Fprintf(&b, "Kargs areas:    none (no %s)\n", KargsJSONPath)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
