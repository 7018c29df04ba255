package isoeditor

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Overlay replaces len(Data) bytes of the base image at Offset.
type Overlay struct {
	Region string // what the bytes are, for errors and reports
	Offset int64
	Data   []byte
}

// End is the offset just past the overlay.
func (o Overlay) End() int64 { return o.Offset + int64(len(o.Data)) }

// Image is an edited ISO: a base image plus non-overlapping overlays, sorted
// by offset. Nothing is read until it is streamed; it has the base's size.
type Image struct {
	base     io.ReaderAt
	size     int64
	overlays []Overlay
	// verify, if set, runs after Stream has produced the whole image and
	// fails the stream when what was read is not what it should be (the
	// minimal ISO's sha256).
	verify func() error
}

// NewImage validates overlays against a base of the given size: each must lie
// inside the base and none may overlap another.
func NewImage(base io.ReaderAt, size int64, overlays ...Overlay) (*Image, error) {
	ovs := make([]Overlay, 0, len(overlays))
	for _, o := range overlays {
		if len(o.Data) > 0 {
			ovs = append(ovs, o)
		}
	}
	sort.SliceStable(ovs, func(i, j int) bool { return ovs[i].Offset < ovs[j].Offset })
	for i, o := range ovs {
		if o.Offset < 0 || o.End() > size {
			return nil, fmt.Errorf("overlay %s (bytes %d-%d) lies outside the %d-byte base image", o.Region, o.Offset, o.End(), size)
		}
		if i > 0 && ovs[i-1].End() > o.Offset {
			return nil, fmt.Errorf("overlays %s and %s overlap", ovs[i-1].Region, o.Region)
		}
	}
	return &Image{base: base, size: size, overlays: ovs}, nil
}

// Size is the image size in bytes (equal to the base's).
func (m *Image) Size() int64 { return m.size }

// Overlays returns the sorted overlays.
func (m *Image) Overlays() []Overlay { return m.overlays }

// ReadAt reads the edited image.
func (m *Image) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("negative offset %d", off)
	}
	if off >= m.size {
		return 0, io.EOF
	}
	var eof error
	if rest := m.size - off; int64(len(p)) > rest {
		p, eof = p[:rest], io.EOF
	}
	n, err := m.base.ReadAt(p, off)
	if n < len(p) {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return n, err
	}
	m.patch(p, off)
	return len(p), eof
}

// patches says whether an overlay lies in bytes [from, to).
func (m *Image) patches(from, to int64) bool {
	i := sort.Search(len(m.overlays), func(i int) bool { return m.overlays[i].End() > from })
	return i < len(m.overlays) && m.overlays[i].Offset < to
}

// patch copies the overlays over p, the base's bytes at off.
func (m *Image) patch(p []byte, off int64) {
	end := off + int64(len(p))
	i := sort.Search(len(m.overlays), func(i int) bool { return m.overlays[i].End() > off })
	for ; i < len(m.overlays) && m.overlays[i].Offset < end; i++ {
		o := m.overlays[i]
		lo, hi := max(o.Offset, off), min(o.End(), end)
		copy(p[lo-off:hi-off], o.Data[lo-o.Offset:hi-o.Offset])
	}
}

// segment is a run of the output: either base bytes or one overlay.
type segment struct {
	off, n  int64
	overlay *Overlay
}

func (m *Image) segments() []segment {
	var segs []segment
	pos := int64(0)
	for i := range m.overlays {
		o := &m.overlays[i]
		if o.Offset > pos {
			segs = append(segs, segment{off: pos, n: o.Offset - pos})
		}
		segs = append(segs, segment{off: o.Offset, n: int64(len(o.Data)), overlay: o})
		pos = o.End()
	}
	if pos < m.size {
		segs = append(segs, segment{off: pos, n: m.size - pos})
	}
	return segs
}

// streamBuf is the copy buffer of the portable path.
const streamBuf = 1 << 20

// Stream writes the image to w in one sequential pass with a fixed-size
// buffer, checking ctx between chunks and reporting progress (may be nil).
func (m *Image) Stream(ctx context.Context, w io.Writer, progress func(written, total int64)) (int64, error) {
	buf := make([]byte, streamBuf)
	var done int64
	for _, s := range m.segments() {
		if s.overlay != nil {
			if _, err := w.Write(s.overlay.Data); err != nil {
				return done, err
			}
			done += s.n
			if progress != nil {
				progress(done, m.size)
			}
			continue
		}
		for pos := s.off; pos < s.off+s.n; {
			if err := ctx.Err(); err != nil {
				return done, err
			}
			n := min(int64(len(buf)), s.off+s.n-pos)
			if got, err := m.base.ReadAt(buf[:n], pos); int64(got) != n {
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return done, fmt.Errorf("reading base image at byte %d: %w", pos, err)
			}
			if _, err := w.Write(buf[:n]); err != nil {
				return done, err
			}
			pos += n
			done += n
			if progress != nil {
				progress(done, m.size)
			}
		}
	}
	if m.verify != nil {
		if err := m.verify(); err != nil {
			return done, err
		}
	}
	return done, nil
}

// WriteTo implements io.WriterTo.
func (m *Image) WriteTo(w io.Writer) (int64, error) {
	return m.Stream(context.Background(), w, nil)
}

// Edit describes changes to a live ISO.
type Edit struct {
	// Ignition, if non-nil, is the Ignition config to embed as config.ign.
	// The whole embed area is rewritten: anything there before is dropped.
	Ignition []byte
	// InitrdFiles are extra files put into the same embed-area archive
	// (e.g. NetworkManager keyfiles). They require Ignition.
	InitrdFiles []InitrdFile
	// AppendKargs are kernel arguments appended to the ISO's current ones.
	AppendKargs []string
	// ResetKargs appends to the ISO's default kernel arguments instead of
	// its current ones, dropping what an earlier customisation appended.
	ResetKargs bool
}

// Customized reports how the ISO differs from a plain live ISO: an
// embedded Ignition config, kernel arguments beyond its defaults (as an
// agent ISO built by agentiso or coreos-installer has). Empty means plain.
func (iso *ISO) Customized() ([]string, error) {
	var out []string
	if _, err := iso.EmbeddedIgnition(); err == nil {
		out = append(out, "an embedded Ignition config")
	}
	if iso.kargs != nil {
		cur, err := iso.kargs.Read(iso.r)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(cur) != strings.TrimSpace(iso.kargs.Default) {
			out = append(out, "kernel arguments beyond the ISO's defaults")
		}
	}
	return out, nil
}

// Edit returns the edited image for e. It fails if the archive or the kernel
// arguments do not fit their areas ([*IgnitionTooLargeError],
// [*KargsTooLongError]) or if kargs are requested on an ISO without areas.
func (iso *ISO) Edit(e Edit) (*Image, error) {
	var cur string
	if len(e.AppendKargs) > 0 || (e.ResetKargs && iso.kargs != nil) {
		var err error
		if cur, err = iso.Kargs(); err != nil {
			return nil, fmt.Errorf("cannot append kernel arguments: %w", err)
		}
		if e.ResetKargs {
			cur = iso.kargs.Default
		}
	}
	ovs, err := iso.overlays(e, cur)
	if err != nil {
		return nil, err
	}
	return NewImage(iso.r, iso.size, ovs...)
}

// overlays turns e into the overlays of the Ignition area and, when kernel
// arguments are appended or reset, of every kernel-argument area, which
// then hold cur followed by e.AppendKargs.
func (iso *ISO) overlays(e Edit, cur string) ([]Overlay, error) {
	var ovs []Overlay
	if e.Ignition == nil && len(e.InitrdFiles) > 0 {
		return nil, fmt.Errorf("initrd files given without an Ignition config")
	}
	if e.Ignition != nil {
		arc, err := IgnitionArchive(e.Ignition, e.InitrdFiles...)
		if err != nil {
			return nil, err
		}
		o, err := iso.ign.Overlay(arc)
		if err != nil {
			return nil, err
		}
		ovs = append(ovs, o)
	}
	if len(e.AppendKargs) > 0 || (e.ResetKargs && iso.kargs != nil) {
		if iso.kargs == nil {
			return nil, fmt.Errorf("cannot append kernel arguments: %w: the ISO has no %s", ErrNoKargs, KargsJSONPath)
		}
		for _, a := range e.AppendKargs {
			if strings.TrimSpace(a) == "" {
				return nil, fmt.Errorf("empty kernel argument in %q", e.AppendKargs)
			}
		}
		ko, err := iso.kargs.Overlays(strings.TrimSpace(cur + " " + strings.Join(e.AppendKargs, " ")))
		if err != nil {
			return nil, err
		}
		ovs = append(ovs, ko...)
	}
	return ovs, nil
}
