package e2e

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const miniDefault = "rw coreos.liveiso=rhcos-mini ignition.firstboot"

// miniISO returns the bytes of testdata/mini.iso.gz (see mini-iso.sh).
func miniISO(t testing.TB) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "mini.iso.gz"))
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	return b
}

func miniISOFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mini.iso")
	require.NoError(t, os.WriteFile(p, miniISO(t), 0o644))
	return p
}

func TestVolumeID(t *testing.T) {
	id, err := VolumeID(bytes.NewReader(miniISO(t)))
	require.NoError(t, err)
	assert.Equal(t, "rhcos-mini", id)

	_, err = VolumeID(bytes.NewReader(make([]byte, 40000)))
	assert.ErrorContains(t, err, "no ISO 9660 primary volume descriptor")
}

func TestLocateFile(t *testing.T) {
	iso := miniISO(t)
	r := bytes.NewReader(iso)
	for path, want := range map[string]string{
		"coreos/igninfo.json":     "{\n  \"file\": \"images/ignition.img\"\n}\n",
		"/COREOS/IGNINFO.JSO":     "{\n  \"file\": \"images/ignition.img\"\n}\n",
		"images/long_nam.txt":     "hello\n",
		"EFI/redhat/grub.cfg":     "menuentry x {\n",
		"isolinux/isolinux.cfg":   "label linux\n",
		"images/IGNITION.IMG":     strings.Repeat("\x00", 8192),
		"coreos/../coreos/x.json": "",
	} {
		ext, err := LocateFile(r, path)
		if want == "" {
			assert.Error(t, err, path)
			continue
		}
		require.NoError(t, err, path)
		assert.Zero(t, ext.Offset%sectorSize, path)
		got := iso[ext.Offset : ext.Offset+ext.Size]
		assert.True(t, bytes.HasPrefix(got, []byte(want)), "%s: %q", path, got)
	}

	_, err := LocateFile(r, "coreos/missing.json")
	assert.ErrorContains(t, err, `"missing.json" not found`)
	_, err = LocateFile(r, "coreos")
	assert.ErrorContains(t, err, "wrong type")
	_, err = LocateFile(r, "coreos/igninfo.json/x")
	assert.ErrorContains(t, err, "wrong type")
}

func TestIgnitionAreaAndEmbed(t *testing.T) {
	p := miniISOFile(t)
	f, err := os.Open(p)
	require.NoError(t, err)
	area, err := IgnitionArea(f)
	f.Close()
	require.NoError(t, err)
	assert.Equal(t, int64(8192), area.Size)

	// Embedding twice must leave only the second archive, zero padded.
	require.NoError(t, EmbedIgnitionArchive(p, bytes.Repeat([]byte{0xff}, 5000)))
	require.NoError(t, EmbedIgnitionArchive(p, []byte("archive")))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	got := b[area.Offset : area.Offset+area.Size]
	assert.Equal(t, append([]byte("archive"), make([]byte, 8192-7)...), got)
	// Nothing outside the area changed.
	orig := miniISO(t)
	assert.Equal(t, orig[:area.Offset], b[:area.Offset])
	assert.Equal(t, orig[area.Offset+area.Size:], b[area.Offset+area.Size:])

	err = EmbedIgnitionArchive(p, make([]byte, 8193))
	assert.ErrorContains(t, err, "exceeds the 8192-byte embed area")
}

func TestKargs(t *testing.T) {
	p := miniISOFile(t)
	read := func() string {
		f, err := os.Open(p)
		require.NoError(t, err)
		defer f.Close()
		k, err := Kargs(f)
		require.NoError(t, err)
		return k
	}
	assert.Equal(t, miniDefault, read())

	require.NoError(t, AppendKargs(p, "ip=dhcp agentiso.e2e=1"))
	assert.Equal(t, miniDefault+" ip=dhcp agentiso.e2e=1", read())

	// The boot configs now hold the new line, and the marker survives.
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	f := bytes.NewReader(b)
	for _, cfg := range []string{"EFI/redhat/grub.cfg", "isolinux/isolinux.cfg"} {
		ext, err := LocateFile(f, cfg)
		require.NoError(t, err)
		text := string(b[ext.Offset : ext.Offset+ext.Size])
		assert.Contains(t, text, "console=ttyS0 "+miniDefault+" ip=dhcp agentiso.e2e=1\n#", cfg)
		assert.Contains(t, text, "# COREOS_KARG_EMBED_AREA\n", cfg)
	}

	require.NoError(t, SetKargs(p, "  short  "))
	assert.Equal(t, "short", read())
	err = SetKargs(p, strings.Repeat("a", 111))
	assert.ErrorContains(t, err, "do not fit the 111-byte area")
}

// FuzzLocateFile overwrites part of the descriptor and directory sectors
// (16 to 35) of the mini ISO with fuzz bytes, keeping inputs small.
func FuzzLocateFile(f *testing.F) {
	base := miniISO(f)[:46*sectorSize]
	f.Add([]byte{}, uint16(0), "coreos/igninfo.json")
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f}, uint16(3*sectorSize+2), "EFI/redhat/grub.cfg")
	f.Add([]byte{0}, uint16(156), "isolinux/isolinux.cfg")
	f.Add([]byte("CD001"), uint16(1), "a/b/c")
	f.Fuzz(func(t *testing.T, patch []byte, at uint16, path string) {
		if len(patch) > sectorSize {
			patch = patch[:sectorSize]
		}
		data := append([]byte(nil), base...)
		copy(data[16*sectorSize+int(at)%(20*sectorSize):], patch)
		r := bytes.NewReader(data)
		ext, err := LocateFile(r, path)
		if err == nil {
			assert.Zero(t, ext.Offset%sectorSize, "extents start on a sector")
			assert.GreaterOrEqual(t, ext.Size, int64(0))
		}
		if id, err := VolumeID(r); err == nil {
			assert.Equal(t, strings.TrimRight(id, " \x00"), id)
			assert.LessOrEqual(t, len(id), 32)
		}
		if k, err := Kargs(r); err == nil {
			assert.Equal(t, strings.TrimSpace(k), k)
		}
	})
}
