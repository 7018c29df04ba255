package isoeditor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
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

func TestParseIPXEScriptRoundTrip(t *testing.T) {
	s, err := IPXEScript("http://h/k", "http://h/i", "http://h/r.img", []string{"rw", "ignition.firstboot", "console=ttyS0"})
	require.NoError(t, err)
	b, err := ParseIPXEScript([]byte(s))
	require.NoError(t, err)
	require.Equal(t, &IPXEBoot{KernelURL: "http://h/k", InitrdURL: "http://h/i", RootfsURL: "http://h/r.img",
		Kargs: []string{"rw", "ignition.firstboot", "console=ttyS0"}}, b)
	// upstream's form: --name initrd, the rootfs URL first
	b, err = ParseIPXEScript([]byte("#!ipxe\ninitrd --name initrd http://h/i\nkernel http://h/k initrd=initrd coreos.live.rootfs_url=http://h/r a=b\nboot\n"))
	require.NoError(t, err)
	require.Equal(t, []string{"a=b"}, b.Kargs)
	require.Equal(t, "http://h/r", b.RootfsURL)
}

func TestParseIPXEScriptErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":                            "not an iPXE script",
		"#!ipxe\nboot\n":              "no kernel line",
		"#!ipxe\nkernel http://h/k\n": "no initrd line",
		"#!ipxe\nchain http://h/x\n":  `line 2: command "chain" is not one agentiso writes`,
		"#!ipxe\ninitrd a b\n":        "line 2: initrd wants one URL",
		"#!ipxe\ninitrd --name x http://i\nkernel http://k initrd=y\nboot\n": `kernel uses initrd "y" but the initrd is named "x"`,
		"#!ipxe\ninitrd http://i\nkernel http://k\nboot\nkernel http://k2\n": `line 5: "kernel" after boot`,
	} {
		_, err := ParseIPXEScript([]byte(in))
		require.ErrorContains(t, err, want, in)
	}
	_, err := ParseIPXEScript(bytes.Repeat([]byte("#"), maxIPXEScript+1))
	require.ErrorContains(t, err, "at most")
}

func FuzzParseIPXEScript(f *testing.F) {
	s, err := IPXEScript("http://h/k", "http://h/i", "http://h/r.img", []string{"rw", "a=b"})
	require.NoError(f, err)
	f.Add([]byte(s))
	f.Add([]byte("#!ipxe\ninitrd --name initrd http://h/i\nkernel http://h/k initrd=initrd x\nboot\n"))
	f.Add([]byte("#!ipxe\n\n# c\ninitrd --name=main u\nkernel k\nboot"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseIPXEScript(b)
		if err != nil {
			return
		}
		require.NotEmpty(t, p.KernelURL)
		require.NotEmpty(t, p.InitrdURL)
		for _, k := range p.Kargs {
			require.NotContains(t, k, "coreos.live.rootfs_url=")
			require.NotEmpty(t, k)
		}
	})
}

func TestWriteReaderStaged(t *testing.T) {
	dir := t.TempDir()
	dst := dir + "/out.img"
	st, err := WriteReaderStaged(context.Background(), dst, strings.NewReader("hello"), 5, WriteOptions{Perm: 0o644})
	require.NoError(t, err)
	require.NoFileExists(t, dst, "nothing in place before Commit")
	require.NoError(t, st.Commit())
	b, err := os.ReadFile(dst)
	require.NoError(t, err)
	require.Equal(t, "hello", string(b))
	sum, err := os.ReadFile(dst + ".sha256")
	require.NoError(t, err)
	require.Equal(t, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824  out.img\n", string(sum))

	// unknown size: whatever the reader has
	st, err = WriteReaderStaged(context.Background(), dir+"/any.img", strings.NewReader("abc"), -1, WriteOptions{})
	require.NoError(t, err)
	require.Equal(t, int64(3), st.Result.Size)
	st.Discard()

	_, err = WriteReaderStaged(context.Background(), dir+"/short.img", strings.NewReader("abc"), 5, WriteOptions{})
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	_, err = WriteReaderStaged(context.Background(), dir+"/long.img", strings.NewReader("abcdef"), 5, WriteOptions{})
	require.ErrorContains(t, err, "more than the 5 bytes expected")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2, "only out.img and its checksum: failed writes leave nothing")
}

// A range of a file, copied by the kernel or by the portable path, is the
// same bytes with the same checksum.
func TestWriteFileRangeStaged(t *testing.T) {
	dir := t.TempDir()
	src := dir + "/src"
	data := bytes.Repeat([]byte("0123456789abcdef"), 300000)
	require.NoError(t, os.WriteFile(src, data, 0o644))
	f, err := os.Open(src)
	require.NoError(t, err)
	defer f.Close()
	for _, opts := range []WriteOptions{{}, {NoKernelCopy: true}, {NoChecksum: true}} {
		dst := fmt.Sprintf("%s/out-%v-%v", dir, opts.NoKernelCopy, opts.NoChecksum)
		st, err := WriteFileRangeStaged(context.Background(), dst, f, 1000, 4<<20, opts)
		require.NoError(t, err)
		require.NoError(t, st.Commit())
		got, err := os.ReadFile(dst)
		require.NoError(t, err)
		require.Equal(t, data[1000:1000+4<<20], got)
		if opts.NoChecksum {
			require.Empty(t, st.Result.SHA256)
			continue
		}
		sum := sha256.Sum256(got)
		require.Equal(t, hex.EncodeToString(sum[:]), st.Result.SHA256)
	}
	// a range past the end of the source is an error, whichever path
	for _, opts := range []WriteOptions{{}, {NoKernelCopy: true}} {
		_, err = WriteFileRangeStaged(context.Background(), dir+"/past", f, int64(len(data))-10, 100, opts)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	}
}
