package testiso

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	kiso "github.com/kdomanski/iso9660"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLayoutReadByKdomanski(t *testing.T) {
	b, lay, err := Bytes(Options{Size: 3 << 20})
	require.NoError(t, err)
	require.Len(t, b, 3<<20)
	assert.Equal(t, int64(3<<20), lay.Size)
	img, err := kiso.OpenImage(bytes.NewReader(b))
	require.NoError(t, err)
	label, err := img.Label()
	require.NoError(t, err)
	assert.Equal(t, "rhcos-9.6.20251021-0", strings.TrimSpace(label))
	root, err := img.RootDir()
	require.NoError(t, err)
	seen := map[string]int64{}
	var walk func(f *kiso.File, prefix string)
	walk = func(f *kiso.File, prefix string) {
		kids, err := f.GetChildren()
		require.NoError(t, err)
		for _, k := range kids {
			p := prefix + k.Name()
			if k.IsDir() {
				walk(k, p+"/")
				continue
			}
			_, off, n := k.Reader().(*io.SectionReader).Outer()
			seen[p] = n
			assert.Equal(t, lay.Files[p], Extent{Offset: off, Size: n}, p)
		}
	}
	walk(root, "")
	assert.Len(t, seen, len(lay.Files))
	for _, p := range []string{"coreos/igninfo.json", "coreos/kargs.json", "EFI/redhat/grub.cfg", "isolinux/isolinux.cfg",
		"images/ignition.img", "images/pxeboot/vmlinuz", "images/pxeboot/initrd.img", "images/pxeboot/rootfs.img"} {
		assert.Contains(t, seen, p)
	}
	assert.Equal(t, int64(262144), seen["images/ignition.img"])

	// kargs.json offsets point at the default kargs in each config
	var kj struct {
		Default string
		Files   []struct {
			Path   string
			Offset int64
		}
		Size int64
	}
	ext := lay.Files["coreos/kargs.json"]
	require.NoError(t, json.Unmarshal(b[ext.Offset:ext.Offset+ext.Size], &kj))
	assert.Equal(t, int64(len(kj.Default)+1+1023), kj.Size)
	require.Len(t, kj.Files, 2)
	for _, f := range kj.Files {
		fe := lay.Files[f.Path]
		area := string(b[fe.Offset+f.Offset : fe.Offset+f.Offset+kj.Size+25])
		assert.Equal(t, kj.Default+"\n"+strings.Repeat("#", 1024)+" COREOS_KARG_EMBED_AREA\n", area, f.Path)
	}
}

func TestLargeSparse(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.iso")
	lay, err := WriteFile(p, Options{Size: 5 << 30})
	require.NoError(t, err)
	st, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, int64(5<<30), st.Size())
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		assert.Less(t, sys.Blocks*512, int64(64<<20), "filler must be sparse")
	}
	// a single extent holds at most 4 GiB - 2 KiB: the rest goes to a second filler
	assert.Equal(t, int64(maxExtent), lay.Files["images/pxeboot/rootfs.img"].Size)
	assert.Positive(t, lay.Files["images/filler/fill01.img"].Size)
}

func TestOptionsErrors(t *testing.T) {
	_, _, err := Bytes(Options{Size: 64 << 10})
	assert.ErrorContains(t, err, "too small")
	_, _, err = Bytes(Options{Arch: "mips"})
	assert.ErrorContains(t, err, `unsupported arch "mips"`)
	_, _, err = Bytes(Options{VolumeID: strings.Repeat("x", 33)})
	assert.ErrorContains(t, err, "longer than 32")
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "2048": 2048, "4KiB": 4096, "64MiB": 64 << 20, "1GiB": 1 << 30} {
		got, err := ParseSize(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "MiB", "-1", "1.5GiB", "10GB", "99999999999GiB"} {
		_, err := ParseSize(bad)
		assert.Error(t, err, bad)
	}
}
