package isoeditor

import (
	"errors"
	"os"
	"strings"

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
