package isoeditor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// KargsJSONPath is the ISO path of the kernel-argument embed-area descriptor.
const KargsJSONPath = "coreos/kargs.json"

// maxKargsAreaSize is the largest area size accepted (coreos-installer's limit).
const maxKargsAreaSize = 2048

// KargsJSON is the content of coreos/kargs.json.
type KargsJSON struct {
	Default string          `json:"default"`
	Files   []KargsJSONFile `json:"files"`
	Size    int64           `json:"size"`
}

// KargsJSONFile is one entry of kargs.json "files".
type KargsJSONFile struct {
	Path   string  `json:"path"`
	Offset int64   `json:"offset"`
	Pad    *string `json:"pad,omitempty"`
	End    *string `json:"end,omitempty"`
}

// ParseKargsJSON decodes and validates coreos/kargs.json.
func ParseKargsJSON(b []byte) (KargsJSON, error) {
	var kj KargsJSON
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&kj); err != nil {
		return KargsJSON{}, fmt.Errorf("%s: invalid JSON: %w", KargsJSONPath, err)
	}
	if kj.Size <= 0 || kj.Size > maxKargsAreaSize {
		return KargsJSON{}, fmt.Errorf("%s: field \"size\" is %d; it must be between 1 and %d", KargsJSONPath, kj.Size, maxKargsAreaSize)
	}
	if len(kj.Files) == 0 {
		return KargsJSON{}, fmt.Errorf("%s: field \"files\" lists no boot configs", KargsJSONPath)
	}
	for i, f := range kj.Files {
		if strings.TrimSpace(f.Path) == "" {
			return KargsJSON{}, fmt.Errorf("%s: files[%d].path is empty", KargsJSONPath, i)
		}
		if f.Offset < 0 {
			return KargsJSON{}, fmt.Errorf("%s: files[%d].offset is negative (%d)", KargsJSONPath, i, f.Offset)
		}
		for name, v := range map[string]*string{"pad": f.Pad, "end": f.End} {
			if v != nil && (len(*v) != 1 || (*v)[0] >= utf8.RuneSelf) {
				return KargsJSON{}, fmt.Errorf("%s: files[%d].%s must be a single ASCII character, got %q", KargsJSONPath, i, name, *v)
			}
		}
	}
	return kj, nil
}

// KargsArea is one kernel-argument embed area inside a boot config.
type KargsArea struct {
	Path   string // ISO path of the boot config, e.g. "EFI/redhat/grub.cfg"
	Offset int64  // byte offset of the area in the ISO
	Pad    byte   // padding character, normally '#'
	End    byte   // terminator, normally '\n'
}

// KargsAreas are the kernel-argument embed areas of an ISO: every area has
// the same Size and must hold the same arguments.
type KargsAreas struct {
	Default string // default kernel arguments from kargs.json
	Size    int64  // length of every area
	Areas   []KargsArea
}

// KargsTooLongError reports kernel arguments that do not fit the embed areas.
type KargsTooLongError struct {
	Path  string // boot config holding the first area
	Size  int64  // bytes needed (arguments plus terminator)
	Limit int64  // area size
}

func (e *KargsTooLongError) Error() string {
	return fmt.Sprintf("kernel-argument embed area in %s is too small: the arguments need %d bytes with their terminator but the area holds %d; pass fewer kernel arguments", e.Path, e.Size, e.Limit)
}

func (iso *ISO) findKargsAreas(root dirRecord) (*KargsAreas, error) {
	f, ok, err := iso.lookup(root, KargsJSONPath)
	if err != nil || !ok {
		return nil, err
	}
	b, err := iso.readSmall(f, 64<<10)
	if err != nil {
		return nil, err
	}
	kj, err := ParseKargsJSON(b)
	if err != nil {
		return nil, err
	}
	ka := &KargsAreas{Default: kj.Default, Size: kj.Size}
	for i, kf := range kj.Files {
		cfg, ok, err := iso.lookup(root, kf.Path)
		if err != nil {
			return nil, fmt.Errorf("%s: files[%d]: %w", KargsJSONPath, i, err)
		}
		if !ok {
			return nil, fmt.Errorf("%s: files[%d].path %q is not in the ISO", KargsJSONPath, i, kf.Path)
		}
		if kf.Offset+kj.Size > cfg.Size {
			return nil, fmt.Errorf("%s: files[%d]: area at offset %d with size %d runs past the end of %s (%d bytes)", KargsJSONPath, i, kf.Offset, kj.Size, kf.Path, cfg.Size)
		}
		a := KargsArea{Path: kf.Path, Offset: cfg.Offset + kf.Offset, Pad: '#', End: '\n'}
		if kf.Pad != nil {
			a.Pad = (*kf.Pad)[0]
		}
		if kf.End != nil {
			a.End = (*kf.End)[0]
		}
		ka.Areas = append(ka.Areas, a)
	}
	return ka, nil
}

// Read returns the current kernel arguments. Every area must agree.
func (k *KargsAreas) Read(r io.ReaderAt) (string, error) {
	var first string
	for i, a := range k.Areas {
		b := make([]byte, k.Size)
		if _, err := r.ReadAt(b, a.Offset); err != nil {
			return "", fmt.Errorf("reading kernel-argument area in %s: %w", a.Path, err)
		}
		if !utf8.Valid(b) {
			return "", fmt.Errorf("kernel-argument area in %s is not valid UTF-8", a.Path)
		}
		s := strings.TrimRight(string(b), string(a.Pad))
		s = strings.TrimRight(s, string(a.End))
		s = strings.TrimSpace(s)
		if i == 0 {
			first = s
		} else if s != first {
			return "", fmt.Errorf("kernel arguments differ between %s (%q) and %s (%q); reset the ISO's kernel arguments", k.Areas[0].Path, first, a.Path, s)
		}
	}
	return first, nil
}

// Overlays returns the overlays that set kargs in every area: the trimmed
// arguments, the terminator, then padding to Size.
func (k *KargsAreas) Overlays(kargs string) ([]Overlay, error) {
	kargs = strings.TrimSpace(kargs)
	if int64(len(kargs))+1 > k.Size {
		return nil, &KargsTooLongError{Path: k.Areas[0].Path, Size: int64(len(kargs)) + 1, Limit: k.Size}
	}
	var ovs []Overlay
	for _, a := range k.Areas {
		if strings.IndexByte(kargs, a.End) >= 0 {
			return nil, fmt.Errorf("kernel arguments must not contain the area terminator %q", a.End)
		}
		d := make([]byte, k.Size)
		n := copy(d, kargs)
		d[n] = a.End
		for i := n + 1; i < len(d); i++ {
			d[i] = a.Pad
		}
		ovs = append(ovs, Overlay{Region: fmt.Sprintf("kernel-argument area in %s (ISO bytes %d-%d)", a.Path, a.Offset, a.Offset+k.Size), Offset: a.Offset, Data: d})
	}
	return ovs, nil
}

// Kargs returns the ISO's current kernel arguments, or an error wrapping [ErrNoKargs].
func (iso *ISO) Kargs() (string, error) {
	if iso.kargs == nil {
		return "", fmt.Errorf("%w: the ISO has no %s", ErrNoKargs, KargsJSONPath)
	}
	return iso.kargs.Read(iso.r)
}
