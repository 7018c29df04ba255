package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

func TestParseList(t *testing.T) {
	files, err := parseList(strings.NewReader("2119 1400 /EFI/redhat/grub.cfg\n\n41 4194304 /images/efi boot.img\n"))
	require.NoError(t, err)
	require.Equal(t, map[string]isoFile{
		"/EFI/redhat/grub.cfg": {LBA: 2119, Size: 1400},
		"/images/efi boot.img": {LBA: 41, Size: 4194304},
	}, files)

	for in, want := range map[string]string{
		"12 34\n":             `line 1: want "LBA SIZE /path"`,
		"12 34 relative\n":    `want "LBA SIZE /path"`,
		"x 34 /a\n":           "line 1: bad LBA or size",
		"1 -3 /a\n":           "bad LBA or size",
		"1 2 /a\n3 4 /a\n":    "line 2: /a listed twice",
		"1 2 /a\n3 4 /b\nz":   "line 3",
		"1 2 /a\n\n3 -4 /c\n": "line 3: bad LBA or size",
	} {
		_, err := parseList(strings.NewReader(in))
		require.ErrorContains(t, err, want, "input %q", in)
	}
}

// fixture writes a synthetic full ISO (testiso, with an all-zero
// miniso.dat placeholder) and a "minimal" image that holds two of its
// files at other sectors, a file of the same size but other bytes, a file
// the full ISO lacks, and bytes of its own; with their lists.
func fixture(t *testing.T) (dir string, minimal []byte) {
	t.Helper()
	dir = t.TempDir()
	f, err := os.Create(filepath.Join(dir, "full.iso"))
	require.NoError(t, err)
	lay, err := testiso.Write(f, testiso.Options{Size: 4 << 20, MinisoDat: make([]byte, 16384)})
	require.NoError(t, err)
	require.NoError(t, f.Close())
	full, err := os.ReadFile(filepath.Join(dir, "full.iso"))
	require.NoError(t, err)

	var fullList strings.Builder
	for p, e := range lay.Files {
		fmt.Fprintf(&fullList, "%d %d /%s\n", e.Offset/sector, e.Size, p)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "full.list"), []byte(fullList.String()), 0o644))

	minimal = make([]byte, 60*sector+300)
	for i := range minimal {
		minimal[i] = byte(i % 251)
	}
	var minList strings.Builder
	put := func(sec int64, path string, data []byte) {
		copy(minimal[sec*sector:], data)
		fmt.Fprintf(&minList, "%d %d %s\n", sec, len(data), path)
	}
	fileOf := func(p string) []byte {
		e, ok := lay.Files[p]
		require.True(t, ok, p)
		return full[e.Offset : e.Offset+e.Size]
	}
	put(3, "/coreos/kargs.json", fileOf("coreos/kargs.json"))
	grub := fileOf("EFI/redhat/grub.cfg")
	put(10, "/EFI/redhat/grub.cfg", grub)
	other := bytes.Repeat([]byte{'o'}, len(fileOf("coreos/igninfo.json")))
	put(20, "/coreos/igninfo.json", other) // same path and size, other bytes
	put(30, "/only/minimal.txt", []byte("not in the full ISO"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "minimal.list"), []byte(minList.String()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "minimal.iso"), minimal, 0o644))
	return dir, minimal
}

func args(dir string) []string {
	return []string{filepath.Join(dir, "full.iso"), filepath.Join(dir, "full.list"), filepath.Join(dir, "minimal.iso"), filepath.Join(dir, "minimal.list")}
}

func TestPack(t *testing.T) {
	dir, minimal := fixture(t)
	var log bytes.Buffer
	require.NoError(t, run(args(dir), &log))
	require.Contains(t, log.String(), "2 of 4 minimal-ISO files shared with the full ISO (not shared: /coreos/igninfo.json /only/minimal.txt)")

	// The full ISO now carries data from which isoeditor rebuilds the minimal image.
	iso, f, err := isoeditor.OpenFile(filepath.Join(dir, "full.iso"))
	require.NoError(t, err)
	defer f.Close()
	m, err := iso.MinisoData()
	require.NoError(t, err)
	require.Equal(t, appVersion, m.AppVersion)
	require.Len(t, m.Extents, 2)
	require.Equal(t, int64(3*sector), m.Extents[0].MinimalOffset)
	require.Equal(t, int64(10*sector), m.Extents[1].MinimalOffset)
	r, err := m.MinimalISO(f)
	require.NoError(t, err)
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, minimal, got)

	// A second run finds the placeholder filled.
	require.ErrorContains(t, run(args(dir), io.Discard), "is not an all-zero placeholder")
}

func TestPackErrors(t *testing.T) {
	dir, _ := fixture(t)
	require.ErrorContains(t, run(args(dir)[:3], io.Discard), "usage: packminiso")

	list := filepath.Join(dir, "minimal.list")
	b, err := os.ReadFile(list)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(list, append(b, "40 16384 /coreos/miniso.dat\n"...), 0o644))
	require.ErrorContains(t, run(args(dir), io.Discard), "minimal ISO must not contain /coreos/miniso.dat")

	require.NoError(t, os.WriteFile(list, []byte("1 2\n"), 0o644))
	require.ErrorContains(t, run(args(dir), io.Discard), "minimal.list: line 1")

	// No file in common: nothing to pack.
	require.NoError(t, os.WriteFile(list, []byte("3 5 /only/minimal.txt\n"), 0o644))
	require.ErrorContains(t, run(args(dir), io.Discard), "no extents shared with the full ISO")
}

// grub-mkrescue (the ppc64le live ISO's mastering) hardlinks its core image
// under three paths: one extent, which coreos-installer packs once (it
// dedups the table). Packing it three times made PackMiniso refuse the
// overlap.
func TestSharedExtentsHardlinks(t *testing.T) {
	data := bytes.Repeat([]byte("grub core image "), 2048) // 32 KiB, 16 sectors
	img := make([]byte, 40*sector)
	copy(img[20*sector:], data)
	same := bytes.NewReader(img)
	files := map[string]isoFile{
		"/boot/grub/powerpc.elf":                {LBA: 20, Size: int64(len(data))},
		"/boot/grub/powerpc-ieee1275/core.elf":  {LBA: 20, Size: int64(len(data))},
		"/System/Library/CoreServices/grub.elf": {LBA: 20, Size: int64(len(data))},
		"/mach_kernel":                          {LBA: 19, Size: 0},
	}
	ext, unshared, err := sharedExtents(same, files, same, files)
	require.NoError(t, err)
	require.Equal(t, []isoeditor.MinisoExtent{{MinimalOffset: 20 * sector, FullOffset: 20 * sector, Length: int64(len(data))}}, ext)
	require.Equal(t, []string{"/mach_kernel"}, unshared)
	_, err = isoeditor.PackMiniso(same, int64(len(img)), ext, appVersion)
	require.NoError(t, err)
}
