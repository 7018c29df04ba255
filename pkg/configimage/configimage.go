// Package configimage writes and reads the config image: the small ISO 9660 image (volume label agent_configimage) whose config.gz, a gzip-compressed newc cpio archive, carries one cluster's files for a host booted from the generic ISO (docs/unconfigured.md).
package configimage

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/cavaliercoder/go-cpio"
	kiso "github.com/kdomanski/iso9660"
)

// The image's layout; upstream's is the same (openshift/installer
// pkg/asset/agent/configimage/configiso.go).
const (
	// Label is the volume label a host finds the image by.
	Label = "agent_configimage"
	// ArchiveName is the image's one file.
	ArchiveName = "config.gz"
	// FileName is the image's name in the asset directory.
	FileName = "agentconfig.noarch.iso"
	// InfoPath and SumsPath are the members agentiso adds: what the image
	// is for, and the sha256 of every other member.
	InfoPath = "/etc/assisted/config-image/info.env"
	SumsPath = "/etc/assisted/config-image/sha256sums"
	// MaxArchive and MaxUnpacked bound what Read accepts, as the host's
	// loader does.
	MaxArchive  = 64 << 20
	MaxUnpacked = 256 << 20
)

// Member is one file of the archive, named by its absolute path on the
// host.
type Member struct {
	Path string
	Mode int64 // permission bits
	Data []byte
}

// Info is what a host checks the image against (info.env).
type Info struct {
	ReleaseImage   string
	ReleaseVersion string
	Arch           string
	Cluster        string // name.domain
	RendezvousIP   string
	CreatedBy      string
}

var infoValueRE = regexp.MustCompile(`^[A-Za-z0-9@:/._+-]*$`)

// env renders info.env; every value must be a plain word.
func (i Info) env() ([]byte, error) {
	var b strings.Builder
	for _, kv := range [][2]string{{"RELEASE_IMAGE", i.ReleaseImage}, {"RELEASE_VERSION", i.ReleaseVersion}, {"CPU_ARCH", i.Arch},
		{"CLUSTER", i.Cluster}, {"RENDEZVOUS_IP", i.RendezvousIP}, {"CREATED_BY", i.CreatedBy}} {
		if !infoValueRE.MatchString(kv[1]) {
			return nil, fmt.Errorf("config image info %s: %q may hold only letters, digits and @:/._+-", kv[0], kv[1])
		}
		fmt.Fprintf(&b, "%s=%s\n", kv[0], kv[1])
	}
	return []byte(b.String()), nil
}

// Archive builds config.gz: the members, info.env and sha256sums, as a
// gzip-compressed newc cpio archive of regular files with absolute names
// (no directory entries), sorted by path.
func Archive(members []Member, info Info) ([]byte, error) {
	infoEnv, err := info.env()
	if err != nil {
		return nil, err
	}
	all := append([]Member{{Path: InfoPath, Mode: 0o600, Data: infoEnv}}, members...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].Path < all[j].Path })
	var sums strings.Builder
	seen := map[string]bool{}
	for _, m := range all {
		if err := checkPath(m.Path); err != nil {
			return nil, err
		}
		if seen[m.Path] || m.Path == SumsPath {
			return nil, fmt.Errorf("config image member %s appears twice", m.Path)
		}
		seen[m.Path] = true
		sum := sha256.Sum256(m.Data)
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), strings.TrimPrefix(m.Path, "/"))
	}
	all = append(all, Member{Path: SumsPath, Mode: 0o600, Data: []byte(sums.String())})
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	cw := cpio.NewWriter(zw)
	for _, m := range all {
		h := &cpio.Header{Name: m.Path, Mode: cpio.ModeRegular | cpio.FileMode(m.Mode&0o777), Size: int64(len(m.Data)), Links: 1}
		if err := cw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("config image member %s: %w", m.Path, err)
		}
		if _, err := cw.Write(m.Data); err != nil {
			return nil, fmt.Errorf("config image member %s: %w", m.Path, err)
		}
	}
	if err := cw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func checkPath(p string) error {
	if !strings.HasPrefix(p, "/") || path.Clean(p) != p || strings.ContainsAny(p, " \t\n\r") {
		return fmt.Errorf("config image member %q must be a clean absolute path without spaces", p)
	}
	return nil
}

// WriteISO writes the image: ISO 9660 with the volume label Label and the
// archive as its one file. The ISO writer stages the archive in a private
// temporary directory (0700), removed before WriteISO returns.
func WriteISO(w io.Writer, archive []byte) error {
	iw, err := kiso.NewWriter()
	if err != nil {
		return fmt.Errorf("config image: %w", err)
	}
	defer iw.Cleanup() //nolint:errcheck // best effort: a leftover private temp dir
	if err := iw.AddFile(bytes.NewReader(archive), ArchiveName); err != nil {
		return fmt.Errorf("config image: stage %s: %w", ArchiveName, err)
	}
	if err := iw.WriteTo(w, Label); err != nil {
		return fmt.Errorf("config image: write ISO: %w", err)
	}
	return nil
}

// Image is a config image read back.
type Image struct {
	Label   string
	Archive []byte
	Members []Member
	Info    map[string]string
}

// ErrNotConfigImage is returned by Read for an ISO without the label or
// the archive.
var ErrNotConfigImage = errors.New("not a config image")

// Read reads a config image and checks it as the host does: the label,
// config.gz (bounded), regular members with clean absolute paths, and
// every member's sha256 against sha256sums. It does not compare the image
// with any generic ISO.
func Read(r io.ReaderAt) (*Image, error) {
	img, err := kiso.OpenImage(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotConfigImage, err)
	}
	label, err := img.Label()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotConfigImage, err)
	}
	if label != Label {
		return nil, fmt.Errorf("%w: volume label %q, want %q", ErrNotConfigImage, label, Label)
	}
	root, err := img.RootDir()
	if err != nil {
		return nil, err
	}
	children, err := root.GetChildren()
	if err != nil {
		return nil, err
	}
	for _, c := range children {
		if strings.EqualFold(c.Name(), ArchiveName) && !c.IsDir() {
			if c.Size() > MaxArchive {
				return nil, fmt.Errorf("%s is %d bytes, more than %d", ArchiveName, c.Size(), MaxArchive)
			}
			archive, err := io.ReadAll(io.LimitReader(c.Reader(), MaxArchive+1))
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", ArchiveName, err)
			}
			out, err := ParseArchive(archive)
			if err != nil {
				return nil, err
			}
			out.Label = label
			return out, nil
		}
	}
	return nil, fmt.Errorf("%w: no %s", ErrNotConfigImage, ArchiveName)
}

// ParseArchive reads and checks config.gz (see Read).
func ParseArchive(archive []byte) (*Image, error) {
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("%s is corrupt: %w", ArchiveName, err)
	}
	lr := &io.LimitedReader{R: zr, N: MaxUnpacked + 1}
	cr := cpio.NewReader(lr)
	out := &Image{Archive: archive, Info: map[string]string{}}
	for {
		h, err := cr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s is corrupt: %w", ArchiveName, err)
		}
		if h.Mode&cpio.ModeType != cpio.ModeRegular {
			return nil, fmt.Errorf("%s: member %s is not a regular file", ArchiveName, h.Name)
		}
		if err := checkPath(h.Name); err != nil {
			return nil, err
		}
		if h.Size > lr.N {
			return nil, fmt.Errorf("%s unpacks to more than %d bytes", ArchiveName, MaxUnpacked)
		}
		data := make([]byte, h.Size)
		if _, err := io.ReadFull(cr, data); err != nil {
			return nil, fmt.Errorf("%s is corrupt: member %s: %w", ArchiveName, h.Name, err)
		}
		out.Members = append(out.Members, Member{Path: h.Name, Mode: int64(h.Mode.Perm()), Data: data})
	}
	if lr.N <= 0 {
		return nil, fmt.Errorf("%s unpacks to more than %d bytes", ArchiveName, MaxUnpacked)
	}
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return nil, fmt.Errorf("%s is corrupt: %w", ArchiveName, err)
	}
	return out, out.verify()
}

// verify checks sha256sums against the members and reads info.env.
func (im *Image) verify() error {
	byPath := map[string][]byte{}
	for _, m := range im.Members {
		byPath[m.Path] = m.Data
	}
	sums, ok := byPath[SumsPath]
	if !ok {
		return fmt.Errorf("%s has no %s: it was not made by agentiso create config-image", ArchiveName, SumsPath)
	}
	listed := 0
	for _, line := range strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		data, present := byPath["/"+name]
		if !ok || !present {
			return fmt.Errorf("%s: %q names no member", SumsPath, line)
		}
		got := sha256.Sum256(data)
		if hex.EncodeToString(got[:]) != sum {
			return fmt.Errorf("member /%s does not match its sha256 in %s (corrupt)", name, SumsPath)
		}
		listed++
	}
	if listed != len(im.Members)-1 {
		return fmt.Errorf("%s lists %d files, the archive holds %d", SumsPath, listed, len(im.Members)-1)
	}
	info, ok := byPath[InfoPath]
	if !ok {
		return fmt.Errorf("%s has no %s", ArchiveName, InfoPath)
	}
	for _, line := range strings.Split(string(info), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			im.Info[k] = v
		}
	}
	return nil
}
