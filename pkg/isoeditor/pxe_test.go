package isoeditor

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPXEInitrd(t *testing.T) {
	arch, err := IgnitionArchive([]byte(testConfig))
	require.NoError(t, err)
	for _, n := range []int{0, 1, 2, 3, 4, 4097} {
		orig := bytes.Repeat([]byte{0x5a}, n)
		r, size := PXEInitrd(bytes.NewReader(orig), int64(n), arch)
		out, err := io.ReadAll(r)
		require.NoError(t, err)
		require.Equal(t, size, int64(len(out)))
		require.Equal(t, orig, out[:n], "original initrd bytes are kept as they are")
		pad := (4 - n%4) % 4
		require.Equal(t, make([]byte, pad), out[n:n+pad])
		require.Equal(t, arch, out[n+pad:])
		// the appended member holds exactly the config
		files, err := ParseInitrd(out[n+pad:])
		require.NoError(t, err)
		require.Len(t, files, 1)
		require.Equal(t, IgnitionConfigName, files[0].Path)
		require.Equal(t, testConfig, string(files[0].Data))
	}
}

func TestPXEInitrdShortBase(t *testing.T) {
	r, _ := PXEInitrd(strings.NewReader("abc"), 10, []byte("x"))
	_, err := io.ReadAll(r)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.ErrorContains(t, err, "initrd ends 7 bytes early")
}

func TestIPXEScript(t *testing.T) {
	got, err := IPXEScript("http://10.0.2.2:8080/agent.x86_64-vmlinuz", "http://10.0.2.2:8080/agent.x86_64-initrd.img",
		"https://boot.example.com/agent.x86_64-rootfs.img",
		[]string{"rw", "ignition.firstboot", "ignition.platform.id=metal", "", "console=ttyS0"})
	require.NoError(t, err)
	require.Equal(t, "#!ipxe\n"+
		"initrd --name main http://10.0.2.2:8080/agent.x86_64-initrd.img\n"+
		"kernel http://10.0.2.2:8080/agent.x86_64-vmlinuz initrd=main rw ignition.firstboot ignition.platform.id=metal console=ttyS0 coreos.live.rootfs_url=https://boot.example.com/agent.x86_64-rootfs.img\n"+
		"boot\n", got)

	for _, tc := range []struct {
		kernel, rootfs string
		kargs          []string
		want           string
	}{
		{"http://h/k", "ftp://h/r", nil, `rootfs URL "ftp://h/r" must be an http or https URL`},
		{"http://h/k", "/r", nil, `rootfs URL "/r"`},
		{"http://h/k", "http://h/r x", nil, "without spaces"},
		{"tftp://h/k", "http://h/r", nil, `kernel URL "tftp://h/k"`},
		{"http://h/k", "http://h/r", []string{"a\nboot"}, "newline"},
		{"http://h/k", "http://h/r", []string{"coreos.liveiso=x"}, "sets itself"},
	} {
		_, err := IPXEScript(tc.kernel, "http://h/i", tc.rootfs, tc.kargs)
		require.ErrorContains(t, err, tc.want)
	}
}

// BenchmarkPXEInitrd streams a 64 MiB initrd plus the Ignition member: one
// pass over the base, the archive built once outside the loop.
func BenchmarkPXEInitrd(b *testing.B) {
	base := bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, (64<<20)/7)
	arch, err := IgnitionArchive([]byte(testConfig))
	require.NoError(b, err)
	b.SetBytes(int64(len(base)))
	b.ReportAllocs()
	for b.Loop() {
		r, _ := PXEInitrd(bytes.NewReader(base), int64(len(base)), arch)
		if _, err := io.Copy(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}
