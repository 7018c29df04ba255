// Command packminiso writes coreos/miniso.dat into the boot fixture
// (hack/build-boot-fixture.sh), as `coreos-installer pack minimal-iso` does
// for an RHCOS build: the full ISO and the minimal ISO (the same tree without
// images/pxeboot/rootfs.img and coreos/miniso.dat, mastered separately) are
// compared file by file, and the data records where the files they share lie
// in each, plus the xz-compressed rest of the minimal ISO (isoeditor.PackMiniso).
//
//	go run ./hack/packminiso FULL.iso FULL.list MINIMAL.iso MINIMAL.list
//
// A list has one line per file, "LBA SIZE /path" (from xorriso's
// report_lba). The full ISO's coreos/miniso.dat must be an all-zero
// placeholder; it is overwritten in place. Before writing, the data is
// checked by rebuilding the minimal ISO from the full one with
// isoeditor (MinisoData.MinimalISO) and comparing it with MINIMAL.iso.
//
// Unlike coreos-installer, which pairs files by path and size only, a file is
// shared only when its bytes are equal in both ISOs: isolinux.bin carries a
// boot-info table with its own LBA, so its bytes differ when the LBA does,
// and such a file goes into the packed data instead.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

const sector = 2048

// appVersion is recorded in the data file (informational only).
const appVersion = "agentiso-boot-fixture"

// isoFile is one file of an ISO: its first sector and its size.
type isoFile struct {
	LBA  int64
	Size int64
}

// parseList reads "LBA SIZE /path" lines.
func parseList(r io.Reader) (map[string]isoFile, error) {
	files := map[string]isoFile{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 || !strings.HasPrefix(f[2], "/") {
			return nil, fmt.Errorf("line %d: want \"LBA SIZE /path\", got %q", n, line)
		}
		lba, err1 := strconv.ParseInt(f[0], 10, 64)
		size, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || lba < 0 || size < 0 {
			return nil, fmt.Errorf("line %d: bad LBA or size in %q", n, line)
		}
		if _, dup := files[f[2]]; dup {
			return nil, fmt.Errorf("line %d: %s listed twice", n, f[2])
		}
		files[f[2]] = isoFile{LBA: lba, Size: size}
	}
	return files, sc.Err()
}

// sameBytes compares n bytes of a at offA with n bytes of b at offB.
func sameBytes(a io.ReaderAt, offA int64, b io.ReaderAt, offB, n int64) (bool, error) {
	const chunk = 1 << 20
	bufA, bufB := make([]byte, chunk), make([]byte, chunk)
	for done := int64(0); done < n; {
		k := min(n-done, chunk)
		if _, err := a.ReadAt(bufA[:k], offA+done); err != nil {
			return false, err
		}
		if _, err := b.ReadAt(bufB[:k], offB+done); err != nil {
			return false, err
		}
		if !bytes.Equal(bufA[:k], bufB[:k]) {
			return false, nil
		}
		done += k
	}
	return true, nil
}

// sharedExtents returns the extents of the minimal ISO that are byte-equal
// files of the full ISO (same path, same size, same bytes), sorted by
// minimal offset, each once, and the paths that were not shared.
func sharedExtents(full io.ReaderAt, fullFiles map[string]isoFile, minimal io.ReaderAt, minFiles map[string]isoFile) ([]isoeditor.MinisoExtent, []string, error) {
	var ext []isoeditor.MinisoExtent
	var unshared []string
	for _, p := range slices.Sorted(maps.Keys(minFiles)) {
		m := minFiles[p]
		f, ok := fullFiles[p]
		if !ok || f.Size != m.Size || m.Size == 0 {
			unshared = append(unshared, p)
			continue
		}
		eq, err := sameBytes(minimal, m.LBA*sector, full, f.LBA*sector, m.Size)
		if err != nil {
			return nil, nil, fmt.Errorf("comparing %s: %w", p, err)
		}
		if !eq {
			unshared = append(unshared, p)
			continue
		}
		ext = append(ext, isoeditor.MinisoExtent{MinimalOffset: m.LBA * sector, FullOffset: f.LBA * sector, Length: m.Size})
	}
	slices.SortFunc(ext, func(a, b isoeditor.MinisoExtent) int { return cmp.Compare(a.MinimalOffset, b.MinimalOffset) })
	// Hardlinked paths (grub-mkrescue's core image, on ppc64le) share one
	// extent: record it once, as coreos-installer dedups its table.
	return slices.Compact(ext), unshared, nil
}

// pack builds the data for minimal, writes it into full's coreos/miniso.dat
// placeholder and checks that the full ISO now rebuilds minimal exactly.
func pack(full *os.File, fullFiles map[string]isoFile, minimal *os.File, minFiles map[string]isoFile, log io.Writer) error {
	dat, ok := fullFiles["/"+isoeditor.MinisoPath]
	if !ok {
		return fmt.Errorf("full ISO has no /%s placeholder", isoeditor.MinisoPath)
	}
	if _, ok := minFiles["/"+isoeditor.MinisoPath]; ok {
		return fmt.Errorf("minimal ISO must not contain /%s", isoeditor.MinisoPath)
	}
	old := make([]byte, dat.Size)
	if _, err := full.ReadAt(old, dat.LBA*sector); err != nil {
		return fmt.Errorf("reading the placeholder: %w", err)
	}
	if !bytes.Equal(old, make([]byte, dat.Size)) {
		return fmt.Errorf("/%s in the full ISO is not an all-zero placeholder", isoeditor.MinisoPath)
	}
	st, err := minimal.Stat()
	if err != nil {
		return err
	}
	ext, unshared, err := sharedExtents(full, fullFiles, minimal, minFiles)
	if err != nil {
		return err
	}
	m, err := isoeditor.PackMiniso(minimal, st.Size(), ext, appVersion)
	if err != nil {
		return err
	}
	enc := m.Marshal()
	if int64(len(enc)) > dat.Size {
		return fmt.Errorf("minimal-ISO data is %d bytes, the placeholder only %d", len(enc), dat.Size)
	}
	padded := make([]byte, dat.Size)
	copy(padded, enc)
	if _, err := full.WriteAt(padded, dat.LBA*sector); err != nil {
		return fmt.Errorf("writing /%s: %w", isoeditor.MinisoPath, err)
	}
	if err := full.Sync(); err != nil {
		return err
	}
	if len(unshared) == 0 {
		unshared = []string{"none"}
	}
	fmt.Fprintf(log, "packminiso: %d of %d minimal-ISO files shared with the full ISO (not shared: %s); data %d bytes (xz %d)\n",
		len(ext), len(minFiles), strings.Join(unshared, " "), len(enc), len(m.Packed))
	return verify(full, minimal)
}

// verify rebuilds the minimal ISO from the full one through isoeditor and
// compares it with the mastered minimal ISO.
func verify(full, minimal *os.File) error {
	fst, err := full.Stat()
	if err != nil {
		return err
	}
	iso, err := isoeditor.Open(full, fst.Size())
	if err != nil {
		return err
	}
	m, err := iso.MinisoData()
	if err != nil {
		return err
	}
	r, err := m.MinimalISO(full)
	if err != nil {
		return err
	}
	got := sha256.New()
	if _, err := io.Copy(got, r); err != nil {
		return fmt.Errorf("rebuilding the minimal ISO: %w", err)
	}
	want := sha256.New()
	if _, err := io.Copy(want, io.NewSectionReader(minimal, 0, 1<<62)); err != nil {
		return err
	}
	if !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		return errors.New("the rebuilt minimal ISO differs from the mastered one")
	}
	return nil
}

func run(args []string, log io.Writer) error {
	if len(args) != 4 {
		return errors.New("usage: packminiso FULL.iso FULL.list MINIMAL.iso MINIMAL.list")
	}
	lists := make([]map[string]isoFile, 2)
	for i, p := range []string{args[1], args[3]} {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if lists[i], err = parseList(bytes.NewReader(b)); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	full, err := os.OpenFile(args[0], os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer full.Close()
	minimal, err := os.Open(args[2])
	if err != nil {
		return err
	}
	defer minimal.Close()
	return pack(full, lists[0], minimal, lists[1], log)
}

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "packminiso:", err)
		os.Exit(1)
	}
}
