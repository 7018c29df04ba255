package isoeditor

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"

	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	kiso "github.com/kdomanski/iso9660"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
)

const testConfig = `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/hello","contents":{"source":"data:,hello"}}]}}`

// makeISO writes a synthetic ISO into a fresh temp dir and returns its path and layout.
func makeISO(t testing.TB, o testiso.Options) (string, *testiso.Layout) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "base.iso")
	lay, err := testiso.WriteFile(p, o)
	require.NoError(t, err)
	return p, lay
}

func openFile(t testing.TB, p string) (*ISO, *os.File) {
	t.Helper()
	f, err := os.Open(p)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	require.NoError(t, err)
	iso, err := Open(f, st.Size())
	require.NoError(t, err)
	return iso, f
}

// dirNames lists a directory, for "nothing left behind" checks.
func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestOpenSynthetic(t *testing.T) {
	p, lay := makeISO(t, testiso.Options{})
	iso, _ := openFile(t, p)
	assert.Equal(t, "rhcos-9.6.20251021-0", iso.VolumeID())
	assert.Equal(t, "x86_64", iso.Arch())
	assert.Equal(t, lay.Size, iso.Size())

	a := iso.IgnitionArea()
	assert.Equal(t, "images/ignition.img", a.File)
	assert.Equal(t, lay.Files["images/ignition.img"].Offset, a.ISOOffset())
	assert.Equal(t, int64(262144), a.Length)

	ka := iso.KargsAreas()
	require.NotNil(t, ka)
	assert.Equal(t, lay.DefaultKargs, ka.Default)
	assert.Equal(t, lay.KargsSize, ka.Size)
	require.Len(t, ka.Areas, 2)
	for _, ar := range ka.Areas {
		assert.Equal(t, lay.Files[ar.Path].Offset+lay.KargsOffsets[ar.Path], ar.Offset, ar.Path)
	}
	k, err := iso.Kargs()
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(lay.DefaultKargs), k)

	_, err = iso.EmbeddedIgnition()
	require.ErrorIs(t, err, ErrNoIgnition)
	assert.Contains(t, err.Error(), "images/ignition.img")
}

// TestOffsetsMatchKdomanski cross-checks file offsets against an independent
// ISO 9660 reader (kdomanski/iso9660, which reads Rock Ridge names).
func TestOffsetsMatchKdomanski(t *testing.T) {
	p, _ := makeISO(t, testiso.Options{})
	iso, f := openFile(t, p)
	img, err := kiso.OpenImage(f)
	require.NoError(t, err)
	root, err := img.RootDir()
	require.NoError(t, err)
	find := func(path string) *kiso.File {
		cur := root
		for _, part := range strings.Split(path, "/") {
			kids, err := cur.GetChildren()
			require.NoError(t, err)
			var next *kiso.File
			for _, k := range kids {
				if k.Name() == part {
					next = k
				}
			}
			require.NotNil(t, next, "kdomanski cannot find %s", path)
			cur = next
		}
		return cur
	}
	ign := find("images/ignition.img")
	sr := ign.Reader().(*io.SectionReader)
	_, off, n := sr.Outer()
	assert.Equal(t, iso.IgnitionArea().ISOOffset(), off)
	assert.Equal(t, iso.IgnitionArea().Length, n)
	for _, a := range iso.KargsAreas().Areas {
		_, off, _ := find(a.Path).Reader().(*io.SectionReader).Outer()
		b := make([]byte, 1024)
		_, err := f.ReadAt(b, off)
		require.NoError(t, err)
		assert.Contains(t, string(b), "coreos.liveiso=rhcos-9.6.20251021-0", a.Path)
		assert.Greater(t, a.Offset, off)
	}
	label, err := img.Label()
	require.NoError(t, err)
	assert.Equal(t, iso.VolumeID(), strings.TrimSpace(label))
}

// complementHash hashes every byte of r outside the given overlays.
func complementHash(t *testing.T, r io.ReaderAt, size int64, ovs []Overlay) string {
	t.Helper()
	img, err := NewImage(r, size, ovs...)
	require.NoError(t, err)
	h := sha256.New()
	for _, s := range img.segments() {
		if s.overlay != nil {
			continue
		}
		_, err := io.Copy(h, io.NewSectionReader(r, s.off, s.n))
		require.NoError(t, err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func fileSHA(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	h := sha256.New()
	_, err = io.Copy(h, f)
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts WriteOptions
		want string
	}{
		{"kernel", WriteOptions{}, MethodCopyFileRange},
		{"portable", WriteOptions{NoKernelCopy: true}, MethodReadWrite},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, lay := makeISO(t, testiso.Options{Size: 24 << 20})
			iso, _ := openFile(t, p)
			nm := InitrdFile{Path: "etc/coreos-firstboot-network/eth0.nmconnection", Mode: 0o600, Data: []byte("[connection]\nid=eth0\n")}
			img, err := iso.Edit(Edit{Ignition: []byte(testConfig), InitrdFiles: []InitrdFile{nm}, AppendKargs: []string{"console=ttyS0", "fips=1"}})
			require.NoError(t, err)
			require.Len(t, img.Overlays(), 3)

			out := filepath.Join(t.TempDir(), "agent.x86_64.iso")
			var last, calls int64
			tc.opts.Progress = func(done, total int64) {
				assert.GreaterOrEqual(t, done, last)
				assert.Equal(t, lay.Size, total)
				last, calls = done, calls+1
			}
			res, err := WriteFile(context.Background(), out, img, tc.opts)
			require.NoError(t, err)
			if runtime.GOOS == "linux" || tc.want == MethodReadWrite {
				// ext4/tmpfs: no reflink; copy_file_range must be the path taken.
				if res.Method != MethodReflink {
					assert.Equal(t, tc.want, res.Method)
				}
			}
			assert.Equal(t, lay.Size, last, "progress must reach the total")
			assert.Positive(t, calls)

			st, err := os.Stat(out)
			require.NoError(t, err)
			assert.Equal(t, lay.Size, st.Size())
			assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())

			// checksum file and hash computed during the write
			sum := fileSHA(t, out)
			assert.Equal(t, sum, res.SHA256)
			sf, err := os.ReadFile(out + ".sha256")
			require.NoError(t, err)
			assert.Equal(t, sum+"  agent.x86_64.iso\n", string(sf))

			// read back through our parser
			got, f := openFile(t, out)
			ign, err := got.EmbeddedIgnition()
			require.NoError(t, err)
			assert.Equal(t, testConfig, string(ign))
			files, err := got.EmbeddedFiles()
			require.NoError(t, err)
			require.Len(t, files, 2)
			assert.Equal(t, nm.Path, files[1].Path)
			assert.Equal(t, nm.Data, files[1].Data)
			assert.Equal(t, os.FileMode(0o600), files[1].Mode)
			k, err := got.Kargs()
			require.NoError(t, err)
			assert.Equal(t, strings.TrimSpace(lay.DefaultKargs)+" console=ttyS0 fips=1", k)

			// the marker line after each area is intact
			for _, a := range got.KargsAreas().Areas {
				b := make([]byte, got.KargsAreas().Size+25)
				_, err := f.ReadAt(b, a.Offset)
				require.NoError(t, err)
				assert.True(t, strings.HasSuffix(string(b), "# COREOS_KARG_EMBED_AREA\n"), a.Path)
			}

			// every byte outside the overlays equals the base
			bf, err := os.Open(p)
			require.NoError(t, err)
			defer bf.Close()
			assert.Equal(t, complementHash(t, bf, lay.Size, img.Overlays()), complementHash(t, f, lay.Size, img.Overlays()))
			// and the overlays are exactly what was planned
			for _, o := range img.Overlays() {
				b := make([]byte, len(o.Data))
				_, err := f.ReadAt(b, o.Offset)
				require.NoError(t, err)
				assert.Equal(t, o.Data, b, o.Region)
			}
			assert.ElementsMatch(t, []string{"agent.x86_64.iso", "agent.x86_64.iso.sha256"}, dirNames(t, filepath.Dir(out)))
		})
	}
}

func TestWriteFileNoChecksum(t *testing.T) {
	p, _ := makeISO(t, testiso.Options{})
	iso, _ := openFile(t, p)
	img, err := iso.Edit(Edit{Ignition: []byte(testConfig)})
	require.NoError(t, err)
	for _, opts := range []WriteOptions{{NoChecksum: true}, {NoChecksum: true, NoKernelCopy: true}} {
		dir := t.TempDir()
		out := filepath.Join(dir, "a.iso")
		res, err := WriteFile(context.Background(), out, img, opts)
		require.NoError(t, err)
		assert.Empty(t, res.SHA256)
		assert.Equal(t, []string{"a.iso"}, dirNames(t, dir))
		var want bytes.Buffer
		_, err = img.WriteTo(&want)
		require.NoError(t, err)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want.Bytes(), got), "output differs from the streamed image")
	}
}

func TestImageReadAtMatchesStream(t *testing.T) {
	b, _, err := testiso.Bytes(testiso.Options{Size: 1 << 20, EmbedAreaSize: 8192})
	require.NoError(t, err)
	iso, err := Open(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	img, err := iso.Edit(Edit{Ignition: []byte(testConfig), AppendKargs: []string{"a=b"}})
	require.NoError(t, err)
	var buf bytes.Buffer
	n, err := img.WriteTo(&buf)
	require.NoError(t, err)
	require.Equal(t, int64(len(b)), n)
	// Unaligned reads that straddle overlay boundaries.
	for _, o := range img.Overlays() {
		for _, d := range []int64{-3, 0, 5} {
			p := make([]byte, 777)
			off := o.Offset + d
			_, err := img.ReadAt(p, off)
			require.NoError(t, err)
			assert.Equal(t, buf.Bytes()[off:off+777], p)
		}
	}
	p := make([]byte, 10)
	n2, err := img.ReadAt(p, img.Size()-4)
	assert.Equal(t, 4, n2)
	assert.ErrorIs(t, err, io.EOF)
	// reopen the edited image in memory
	got, err := Open(img, img.Size())
	require.NoError(t, err)
	ign, err := got.EmbeddedIgnition()
	require.NoError(t, err)
	assert.Equal(t, testConfig, string(ign))
}

func TestShortBase(t *testing.T) {
	// A base that is shorter than its claimed size must fail, not pad with garbage.
	img, err := NewImage(bytes.NewReader(make([]byte, 3<<20)), 4<<20)
	require.NoError(t, err)
	_, err = img.WriteTo(io.Discard)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Contains(t, err.Error(), "reading base image at byte 3145728")
	dir := t.TempDir()
	_, err = WriteFile(context.Background(), filepath.Join(dir, "x.iso"), img, WriteOptions{})
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Empty(t, dirNames(t, dir))

	// the same through the kernel-copy path
	short := filepath.Join(t.TempDir(), "short.iso")
	require.NoError(t, os.WriteFile(short, make([]byte, 3<<20), 0o644))
	f, err := os.Open(short)
	require.NoError(t, err)
	defer f.Close()
	img, err = NewImage(f, 4<<20)
	require.NoError(t, err)
	_, err = WriteFile(context.Background(), filepath.Join(dir, "x.iso"), img, WriteOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "x.iso")
	assert.Empty(t, dirNames(t, dir))
}

func TestIgnitionTooLarge(t *testing.T) {
	p, _ := makeISO(t, testiso.Options{})
	iso, _ := openFile(t, p)
	big := make([]byte, 300<<10) // incompressible
	_, err := rand.Read(big)
	require.NoError(t, err)
	_, err = iso.Edit(Edit{Ignition: big})
	var tl *IgnitionTooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, int64(262144), tl.Limit)
	assert.Greater(t, tl.Size, int64(300<<10))
	assert.Contains(t, err.Error(), "images/ignition.img")
	assert.Contains(t, err.Error(), "262144")
	assert.Equal(t, []string{"base.iso"}, dirNames(t, filepath.Dir(p)))
}

func TestKargsTooLong(t *testing.T) {
	p, lay := makeISO(t, testiso.Options{})
	iso, _ := openFile(t, p)
	_, err := iso.Edit(Edit{AppendKargs: []string{strings.Repeat("x", 1024)}})
	var kl *KargsTooLongError
	require.ErrorAs(t, err, &kl)
	assert.Equal(t, lay.KargsSize, kl.Limit)
	assert.Contains(t, err.Error(), "EFI/redhat/grub.cfg")
	// exactly filling the area (args + terminator == size) is allowed
	room := int(lay.KargsSize) - len(strings.TrimSpace(lay.DefaultKargs)) - 2
	_, err = iso.Edit(Edit{AppendKargs: []string{strings.Repeat("y", room)}})
	require.NoError(t, err)
	_, err = iso.Edit(Edit{AppendKargs: []string{strings.Repeat("y", room+1)}})
	require.ErrorAs(t, err, &kl)
}

func TestWriteFileCancelled(t *testing.T) {
	p, _ := makeISO(t, testiso.Options{Size: 64 << 20})
	iso, _ := openFile(t, p)
	img, err := iso.Edit(Edit{Ignition: []byte(testConfig)})
	require.NoError(t, err)
	for _, opts := range []WriteOptions{{}, {NoKernelCopy: true}} {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		// cancel half way, as Ctrl-C would
		opts.Progress = func(done, total int64) {
			if done > total/2 {
				cancel()
			}
		}
		_, err = WriteFile(ctx, filepath.Join(dir, "out.iso"), img, opts)
		require.ErrorIs(t, err, context.Canceled)
		assert.Contains(t, err.Error(), "out.iso")
		assert.Empty(t, dirNames(t, dir), "no output or temp file may remain")

		ctx, cancel = context.WithCancel(context.Background())
		cancel()
		opts.Progress = nil
		_, err = WriteFile(ctx, filepath.Join(dir, "out.iso"), img, opts)
		require.ErrorIs(t, err, context.Canceled)
		assert.Empty(t, dirNames(t, dir))
	}
}

func TestWriteFileUnwritable(t *testing.T) {
	p, _ := makeISO(t, testiso.Options{})
	iso, _ := openFile(t, p)
	img, err := iso.Edit(Edit{Ignition: []byte(testConfig)})
	require.NoError(t, err)
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	for _, dst := range []string{filepath.Join(dir, "missing", "out.iso"), filepath.Join(notDir, "out.iso")} {
		_, err := WriteFile(context.Background(), dst, img, WriteOptions{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), dst)
	}
	if os.Getuid() != 0 {
		ro := filepath.Join(dir, "ro")
		require.NoError(t, os.Mkdir(ro, 0o555))
		_, err := WriteFile(context.Background(), filepath.Join(ro, "out.iso"), img, WriteOptions{})
		require.ErrorIs(t, err, os.ErrPermission)
		assert.Empty(t, dirNames(t, ro))
	}
	assert.Equal(t, []string{"file"}, dirNames(t, dir))
}

func TestOpenRejects(t *testing.T) {
	random := make([]byte, 1<<20)
	_, err := rand.Read(random)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		data []byte
		is   error
		msg  string
	}{
		{"empty", nil, ErrNotISO, "too small"},
		{"random", random, ErrNotISO, "no ISO 9660 volume descriptor at byte 32768"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(bytes.NewReader(tc.data), int64(len(tc.data)))
			require.ErrorIs(t, err, tc.is)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	t.Run("no embed area", func(t *testing.T) {
		b, _, err := testiso.Bytes(testiso.Options{Size: 1 << 20, OmitIgnInfo: true, OmitIgnitionImg: true})
		require.NoError(t, err)
		_, err = Open(bytes.NewReader(b), int64(len(b)))
		require.ErrorIs(t, err, ErrNotLiveISO)
		assert.Contains(t, err.Error(), "coreos/igninfo.json")
		assert.Contains(t, err.Error(), "images/ignition.img")
	})
	t.Run("igninfo names a missing file", func(t *testing.T) {
		b, _, err := testiso.Bytes(testiso.Options{Size: 1 << 20, OmitIgnitionImg: true})
		require.NoError(t, err)
		_, err = Open(bytes.NewReader(b), int64(len(b)))
		require.ErrorIs(t, err, ErrNotLiveISO)
		assert.Contains(t, err.Error(), `"images/ignition.img", which is not in the ISO`)
	})
	t.Run("bad igninfo", func(t *testing.T) {
		b, _, err := testiso.Bytes(testiso.Options{Size: 1 << 20, IgnInfoJSON: []byte(`{"file": ""}`)})
		require.NoError(t, err)
		_, err = Open(bytes.NewReader(b), int64(len(b)))
		assert.EqualError(t, err, `coreos/igninfo.json: field "file" is missing or empty`)
	})
	t.Run("truncated", func(t *testing.T) {
		b, _, err := testiso.Bytes(testiso.Options{Size: 2 << 20})
		require.NoError(t, err)
		_, err = Open(bytes.NewReader(b[:1<<20]), 1<<20)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "truncated")
	})
}

func TestOpenFallbacks(t *testing.T) {
	t.Run("no igninfo uses images/ignition.img", func(t *testing.T) {
		b, lay, err := testiso.Bytes(testiso.Options{Size: 1 << 20, OmitIgnInfo: true, EmbedAreaSize: 4096})
		require.NoError(t, err)
		iso, err := Open(bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		assert.Equal(t, lay.Files["images/ignition.img"].Offset, iso.IgnitionArea().ISOOffset())
		assert.Equal(t, int64(4096), iso.IgnitionArea().Length)
	})
	t.Run("igninfo with offset and length", func(t *testing.T) {
		b, lay, err := testiso.Bytes(testiso.Options{Size: 1 << 20, EmbedAreaOffset: 10000, EmbedAreaSize: 8192})
		require.NoError(t, err)
		iso, err := Open(bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		a := iso.IgnitionArea()
		assert.Equal(t, lay.Files["images/ignition.img"].Offset+10000, a.ISOOffset())
		assert.Equal(t, int64(8192), a.Length)
		img, err := iso.Edit(Edit{Ignition: []byte(testConfig)})
		require.NoError(t, err)
		// the bytes before the area inside the file are untouched
		assert.Equal(t, a.ISOOffset(), img.Overlays()[0].Offset)
		got, err := Open(img, img.Size())
		require.NoError(t, err)
		ign, err := got.EmbeddedIgnition()
		require.NoError(t, err)
		assert.Equal(t, testConfig, string(ign))
	})
	t.Run("no kargs.json", func(t *testing.T) {
		b, _, err := testiso.Bytes(testiso.Options{Size: 1 << 20, OmitKargsJSON: true})
		require.NoError(t, err)
		iso, err := Open(bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		assert.Nil(t, iso.KargsAreas())
		_, err = iso.Kargs()
		require.ErrorIs(t, err, ErrNoKargs)
		_, err = iso.Edit(Edit{AppendKargs: []string{"a"}})
		require.ErrorIs(t, err, ErrNoKargs)
		assert.Contains(t, err.Error(), "coreos/kargs.json")
	})
}

func TestArch(t *testing.T) {
	for _, arch := range []string{"x86_64", "aarch64", "ppc64le", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			b, _, err := testiso.Bytes(testiso.Options{Size: 1 << 20, Arch: arch})
			require.NoError(t, err)
			iso, err := Open(bytes.NewReader(b), int64(len(b)))
			require.NoError(t, err)
			assert.Equal(t, arch, iso.Arch())
			require.NoError(t, iso.CheckArch(arch))
		})
	}
	b, _, err := testiso.Bytes(testiso.Options{Size: 1 << 20, Arch: "aarch64"})
	require.NoError(t, err)
	iso, err := Open(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	require.NoError(t, iso.CheckArch("arm64"))
	err = iso.CheckArch("amd64")
	var am *ArchMismatchError
	require.ErrorAs(t, err, &am)
	assert.Equal(t, "x86_64", am.Want)
	assert.Equal(t, "aarch64", am.Got)
	assert.EqualError(t, err, "ISO is for aarch64 but x86_64 is required: use the x86_64 live ISO")
	// aarch64 has no isolinux: a single kargs area in grub.cfg
	assert.Len(t, iso.KargsAreas().Areas, 1)
}

func TestInitrd(t *testing.T) {
	arc, err := NewInitrd(
		InitrdFile{Path: "usr/lib/ignition/base.d/a.ign", Data: []byte("a")},
		InitrdFile{Path: "config.ign", Mode: 0o600, Data: []byte("{}")},
		InitrdFile{Path: "usr/lib/x", Mode: 0o755, Data: []byte("#!/bin/sh\n")},
	)
	require.NoError(t, err)
	assert.Zero(t, len(arc)%4, "gzip output must be padded to 4 bytes")
	files, err := ParseInitrd(append(make([]byte, 16), append(arc, make([]byte, 100)...)...))
	require.NoError(t, err)
	require.Len(t, files, 3)
	assert.Equal(t, "config.ign", files[0].Path)
	assert.Equal(t, os.FileMode(0o600), files[0].Mode)
	assert.Equal(t, "usr/lib/ignition/base.d/a.ign", files[1].Path)
	assert.Equal(t, os.FileMode(0o644), files[1].Mode)
	assert.Equal(t, os.FileMode(0o755), files[2].Mode)

	// Directory entries precede nested files, with type bits set (the kernel needs both).
	raw := gunzipAll(t, arc)
	for _, d := range []string{"usr", "usr/lib", "usr/lib/ignition", "usr/lib/ignition/base.d"} {
		i := bytes.Index(raw, []byte(d+"\x00"))
		require.GreaterOrEqual(t, i, 110, d)
		assert.Equal(t, "000041ED", string(raw[i-110+14:i-110+22]), "mode of %s", d)
		assert.Less(t, i, bytes.Index(raw, []byte("usr/lib/ignition/base.d/a.ign\x00")))
	}
	i := bytes.Index(raw, []byte("config.ign\x00"))
	assert.Equal(t, "00008180", string(raw[i-110+14:i-110+22]), "config.ign mode 0100600")

	for _, bad := range []string{"/abs", "../x", "a/../b", ""} {
		_, err := NewInitrd(InitrdFile{Path: bad})
		assert.Error(t, err, bad)
	}
	_, err = NewInitrd(InitrdFile{Path: "a"}, InitrdFile{Path: "a/b"})
	assert.ErrorContains(t, err, "both a file and a directory")

	// Two concatenated archives: the later copy of a name is kept last.
	arc2, err := IgnitionArchive([]byte(`{"second":true}`))
	require.NoError(t, err)
	files, err = ParseInitrd(append(append(arc, 0, 0, 0, 0), arc2...))
	require.NoError(t, err)
	require.Len(t, files, 4)
	assert.Equal(t, `{"second":true}`, string(files[3].Data))

	_, err = ParseInitrd([]byte{0xfd, '7', 'z', 'X', 'Z', 0, 1, 2})
	assert.ErrorContains(t, err, "xz-compressed archive at byte 0 is not supported")
	_, err = ParseInitrd([]byte("\x00\x00garbage"))
	assert.ErrorContains(t, err, "unrecognized data at byte 2")
}

func gunzipAll(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := newGzipReader(bytes.NewReader(b))
	require.NoError(t, err)
	out, err := io.ReadAll(zr)
	require.NoError(t, err)
	return out
}

func TestNewImageRejects(t *testing.T) {
	base := bytes.NewReader(make([]byte, 100))
	_, err := NewImage(base, 100, Overlay{Region: "a", Offset: 90, Data: make([]byte, 20)})
	assert.ErrorContains(t, err, "overlay a (bytes 90-110) lies outside the 100-byte base image")
	_, err = NewImage(base, 100, Overlay{Region: "a", Offset: 10, Data: make([]byte, 20)}, Overlay{Region: "b", Offset: 29, Data: []byte{1}})
	assert.ErrorContains(t, err, "overlays a and b overlap")
	_, err = NewImage(base, 100, Overlay{Region: "a", Offset: 10, Data: make([]byte, 20)}, Overlay{Region: "b", Offset: 30, Data: []byte{1}})
	assert.NoError(t, err)
}

func TestKernelArch(t *testing.T) {
	assert.Equal(t, "", kernelArch(nil, true))
	assert.Equal(t, "", kernelArch([]byte("MZ"), true))
	elf := []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x3e\x00")
	assert.Equal(t, "x86_64", kernelArch(elf, true))
	elf[18] = 183
	assert.Equal(t, "aarch64", kernelArch(elf, true))
	// gzip-compressed arm64 Image (older aarch64 RHCOS vmlinuz)
	img := make([]byte, 64)
	copy(img[0x38:], "ARM\x64")
	var buf bytes.Buffer
	zw := gzipWriter(&buf)
	zw.Write(img)
	zw.Close()
	assert.Equal(t, "aarch64", kernelArch(buf.Bytes(), true))
	assert.Equal(t, "", kernelArch(buf.Bytes(), false))
}

// A staged output leaves the previous ISO and checksum alone until Commit;
// Discard removes every temporary file.
func TestWriteStagedLeavesPreviousUntilCommit(t *testing.T) {
	p, _ := makeISO(t, testiso.Options{})
	iso, _ := openFile(t, p)
	img, err := iso.Edit(Edit{Ignition: []byte(testConfig)})
	require.NoError(t, err)
	dir := t.TempDir()
	out := filepath.Join(dir, "a.iso")
	require.NoError(t, os.WriteFile(out, []byte("previous"), 0o600))
	require.NoError(t, os.WriteFile(out+".sha256", []byte("previous-sum"), 0o644))

	st, err := WriteStaged(context.Background(), out, img, WriteOptions{})
	require.NoError(t, err)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "previous", string(b))
	st.Discard()
	assert.Equal(t, []string{"a.iso", "a.iso.sha256"}, dirNames(t, dir))
	b, err = os.ReadFile(out + ".sha256")
	require.NoError(t, err)
	assert.Equal(t, "previous-sum", string(b))

	st, err = WriteStaged(context.Background(), out, img, WriteOptions{})
	require.NoError(t, err)
	require.NoError(t, st.Commit())
	st.Discard() // a no-op after Commit
	assert.Equal(t, []string{"a.iso", "a.iso.sha256"}, dirNames(t, dir))
	assert.Equal(t, st.Result.SHA256, fileSHA(t, out))
	require.Error(t, st.Commit())
}
