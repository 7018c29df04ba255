package isoeditor_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/internal/fake/testiso/testminiso"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

func writeFullWithMiniso(t testing.TB, o testiso.Options) (string, *testminiso.Result) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "full.iso")
	res, err := testminiso.WriteFile(p, o)
	require.NoError(t, err)
	return p, res
}

// openMinimal opens the full ISO at p and its minimal ISO; the file is
// closed when the test ends.
func openMinimal(t *testing.T, p string) (*isoeditor.ISO, *isoeditor.Minimal) {
	t.Helper()
	iso, f, err := isoeditor.OpenFile(p)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	m, err := iso.Minimal()
	require.NoError(t, err)
	return iso, m
}

// The rebuilt minimal ISO reads back byte for byte at any offset, in any
// order (forward and backward through the packed data).
func TestMinimalReadAt(t *testing.T) {
	p, res := writeFullWithMiniso(t, testiso.Options{Size: 8 << 20})
	iso, m := openMinimal(t, p)
	want := res.MinimalBytes
	require.Equal(t, int64(len(want)), m.Size())
	assert.Less(t, m.Size(), iso.Size()/2, "the minimal ISO has no rootfs")
	r := m.ReaderAt()
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		off := rng.Int64N(int64(len(want)))
		n := rng.Int64N(min(int64(len(want))-off, 70000)) + 1
		got := make([]byte, n)
		_, err := r.ReadAt(got, off)
		require.NoError(t, err)
		require.Equal(t, want[off:off+n], got, "bytes %d-%d", off, off+n)
	}
	all, err := io.ReadAll(io.NewSectionReader(r, 0, m.Size()))
	require.NoError(t, err)
	require.Equal(t, want, all)
	assert.Equal(t, "rw  ignition.firstboot ignition.platform.id=metal", m.DefaultKargs())
}

// An edited minimal ISO carries the config and kernel arguments in its own
// areas, the root file system URL instead of coreos.liveiso=, a kargs.json
// default without coreos.liveiso=, no rootfs.img, and every other byte of
// the minimal ISO unchanged.
//
// The bytes it shares with the full ISO (here mostly the 2 MiB initrd) are
// copied by the kernel, or cloned where the file system can, unless the
// kernel copy is turned off; every way writes the same bytes and sum.
func TestMinimalEdit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    isoeditor.WriteOptions
		methods []string
	}{
		{"default", isoeditor.WriteOptions{}, kernelMethods()},
		{"no reflink", isoeditor.WriteOptions{NoReflink: true}, kernelMethods()[:1]},
		{"no kernel copy", isoeditor.WriteOptions{NoKernelCopy: true}, []string{isoeditor.MethodReadWrite}},
	} {
		t.Run(tc.name, func(t *testing.T) { testMinimalEdit(t, tc.opts, tc.methods) })
	}
}

// kernelMethods are the methods of a write the kernel copies: off Linux,
// the portable one.
func kernelMethods() []string {
	if runtime.GOOS != "linux" {
		return []string{isoeditor.MethodReadWrite}
	}
	return []string{isoeditor.MethodCopyFileRange, isoeditor.MethodReflink}
}

func testMinimalEdit(t *testing.T, opts isoeditor.WriteOptions, methods []string) {
	p, res := writeFullWithMiniso(t, testiso.Options{Size: 8 << 20, InitrdSize: 2 << 20, Dense: true})
	_, m := openMinimal(t, p)
	cfg := []byte(`{"ignition":{"version":"3.2.0"}}`)
	const url = "http://10.0.0.1:8080/boot/agent.x86_64-rootfs.img"
	img, err := m.Edit(isoeditor.Edit{Ignition: cfg, AppendKargs: []string{"console=ttyS0"}}, url)
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "agent.x86_64.iso")
	wr, err := isoeditor.WriteFile(context.Background(), out, img, opts)
	require.NoError(t, err)
	assert.Contains(t, methods, wr.Method)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Len(t, b, len(res.MinimalBytes))
	sum := sha256.Sum256(b)
	assert.Equal(t, hex.EncodeToString(sum[:]), wr.SHA256)

	edited, err := isoeditor.Open(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	got, err := edited.EmbeddedIgnition()
	require.NoError(t, err)
	assert.Equal(t, cfg, got)
	kargs, err := edited.Kargs()
	require.NoError(t, err)
	assert.Equal(t, "rw  ignition.firstboot ignition.platform.id=metal console=ttyS0 coreos.live.rootfs_url="+url, kargs)
	assert.Equal(t, "rw  ignition.firstboot ignition.platform.id=metal", edited.KargsAreas().Default)
	kj := res.Minimal.Files["coreos/kargs.json"]
	var parsed map[string]any
	require.NoError(t, json.Unmarshal(b[kj.Offset:kj.Offset+kj.Size], &parsed), "kargs.json stays valid JSON (space padded)")
	info, err := edited.Info()
	require.NoError(t, err)
	assert.True(t, info.Minimal)
	assert.Equal(t, url, info.RootfsURL)

	// outside the overlays, the bytes are the minimal ISO's
	var prev int64
	for _, o := range img.Overlays() {
		require.Equal(t, res.MinimalBytes[prev:o.Offset], b[prev:o.Offset])
		prev = o.End()
	}
	require.Equal(t, res.MinimalBytes[prev:], b[prev:])
}

// A full ISO whose shared bytes differ from what miniso.dat was packed
// against gives no output: the write fails with the digest error.
func TestMinimalEditDigestMismatch(t *testing.T) {
	p, res := writeFullWithMiniso(t, testiso.Options{Size: 8 << 20, InitrdSize: 2 << 20})
	fw, err := os.OpenFile(p, os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = fw.WriteAt([]byte{0xff, 0xfe}, res.Full.Files["images/pxeboot/initrd.img"].Offset+100)
	require.NoError(t, err)
	require.NoError(t, fw.Close())
	_, m := openMinimal(t, p)
	img, err := m.Edit(isoeditor.Edit{Ignition: []byte(`{}`)}, "https://example.com/r.img")
	require.NoError(t, err)
	for _, opts := range []isoeditor.WriteOptions{{}, {NoChecksum: true}, {NoKernelCopy: true}} {
		out := filepath.Join(t.TempDir(), "agent.x86_64.iso")
		_, err = isoeditor.WriteFile(context.Background(), out, img, opts)
		var dm *isoeditor.DigestMismatchError
		require.ErrorAs(t, err, &dm, "%+v", opts)
		assert.NoFileExists(t, out)
		entries, err := os.ReadDir(filepath.Dir(out))
		require.NoError(t, err)
		assert.Empty(t, entries, "no temporary file left")
	}
}

func TestMinimalErrors(t *testing.T) {
	t.Run("no miniso data", func(t *testing.T) {
		b, _, err := testiso.Bytes(testiso.Options{Size: 4 << 20})
		require.NoError(t, err)
		iso, err := isoeditor.Open(bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		_, err = iso.Minimal()
		require.ErrorIs(t, err, isoeditor.ErrNoMinisoData)
	})
	t.Run("customised base", func(t *testing.T) {
		p, _ := writeFullWithMiniso(t, testiso.Options{Size: 4 << 20})
		iso, f, err := isoeditor.OpenFile(p)
		require.NoError(t, err)
		defer f.Close()
		img, err := iso.Edit(isoeditor.Edit{Ignition: []byte(`{}`)})
		require.NoError(t, err)
		out := filepath.Join(t.TempDir(), "agent.iso")
		_, err = isoeditor.WriteFile(context.Background(), out, img, isoeditor.WriteOptions{})
		require.NoError(t, err)
		iso2, f2, err := isoeditor.OpenFile(out)
		require.NoError(t, err)
		defer f2.Close()
		_, err = iso2.Minimal()
		var np *isoeditor.NotPristineError
		require.ErrorAs(t, err, &np)
		assert.ErrorContains(t, err, "carries an embedded Ignition config")
	})
	t.Run("bad URLs and kargs", func(t *testing.T) {
		p, _ := writeFullWithMiniso(t, testiso.Options{Size: 4 << 20})
		iso, f, err := isoeditor.OpenFile(p)
		require.NoError(t, err)
		defer f.Close()
		m, err := iso.Minimal()
		require.NoError(t, err)
		for _, u := range []string{"", "ftp://h/x", "http:///x", "http://h/a b", "http://h/$x", `http://h/a\b`, "/boot/x"} {
			_, err := m.Edit(isoeditor.Edit{}, u)
			assert.ErrorContains(t, err, "must be an http or https URL", u)
		}
		_, err = m.Edit(isoeditor.Edit{AppendKargs: []string{"coreos.liveiso=x"}}, "http://h/r")
		assert.ErrorContains(t, err, "cannot be added to a minimal ISO")
	})
}

// A minimal ISO written again from the same base file with the same edit
// takes its sum from the record of the first write, whose check of the
// rebuilt bytes passed, and hashes nothing; a base changed since is
// checked (and hashed) again.
func TestMinimalEditReusesTheRecordedSum(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("file identity is read on Linux only")
	}
	p, res := writeFullWithMiniso(t, testiso.Options{Size: 8 << 20, InitrdSize: 2 << 20, Dense: true})
	recs := fsutil.HashRecords{Dir: filepath.Join(t.TempDir(), "records")}
	write := func(name string) (*isoeditor.WriteResult, int64, error) {
		t.Helper()
		_, m := openMinimal(t, p)
		img, err := m.Edit(isoeditor.Edit{Ignition: []byte(`{"ignition":{"version":"3.2.0"}}`)}, "http://10.0.0.1/r.img")
		require.NoError(t, err)
		var hashed atomic.Int64
		out := filepath.Join(t.TempDir(), name)
		wr, err := isoeditor.WriteFile(context.Background(), out, img, isoeditor.CountHashed(isoeditor.WriteOptions{HashRecords: recs}, &hashed))
		if err == nil {
			b, rerr := os.ReadFile(out)
			require.NoError(t, rerr)
			sum := sha256.Sum256(b)
			assert.Equal(t, hex.EncodeToString(sum[:]), wr.SHA256, "%s: the sum is the output's", name)
		}
		return wr, hashed.Load(), err
	}
	first, n, err := write("a.iso")
	require.NoError(t, err)
	assert.False(t, first.HashReused)
	assert.Equal(t, first.Size, n)
	again, n, err := write("b.iso")
	require.NoError(t, err)
	assert.True(t, again.HashReused, "same base file, same edit")
	assert.Zero(t, n, "nothing hashed")
	assert.Equal(t, first.SHA256, again.SHA256)

	// The base rewritten in place (its times change): checked again.
	fw, err := os.OpenFile(p, os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = fw.WriteAt([]byte{0xff, 0xfe}, res.Full.Files["images/pxeboot/initrd.img"].Offset+100)
	require.NoError(t, err)
	require.NoError(t, fw.Close())
	_, _, err = write("c.iso")
	var dm *isoeditor.DigestMismatchError
	require.ErrorAs(t, err, &dm)
}
