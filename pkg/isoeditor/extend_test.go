package isoeditor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
)

func streamBytes(n int64) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/2048)
	}
	return b
}

func appendix(stream []byte, piece int64) Appendix {
	return Appendix{Dir: "registry", Prefix: "data.iso.", PieceSize: piece, Size: int64(len(stream)),
		Write: func(ctx context.Context, w io.Writer) error {
			// in uneven chunks, as a stream of blobs would
			for off := 0; off < len(stream); off += 3000 {
				if _, err := w.Write(stream[off:min(off+3000, len(stream))]); err != nil {
					return err
				}
			}
			return nil
		}}
}

func osirrox(t *testing.T) string {
	t.Helper()
	x, err := exec.LookPath("osirrox")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("osirrox (xorriso) is required in CI")
		}
		t.Skip("osirrox (xorriso) not installed")
	}
	return x
}

func TestExtendedISOCarriesTheStreamAsPieces(t *testing.T) {
	for _, kernel := range []bool{true, false} {
		t.Run(map[bool]string{true: "kernel copy", false: "portable"}[kernel], func(t *testing.T) {
			p, _ := makeISO(t, testiso.Options{})
			iso, _ := openFile(t, p)
			img, err := iso.Edit(Edit{Ignition: []byte(testConfig)})
			require.NoError(t, err)
			stream := streamBytes(10 * 2048)
			x, err := iso.Extend(img, appendix(stream, 4*2048))
			require.NoError(t, err)
			dst := filepath.Join(t.TempDir(), "agent.x86_64.iso")
			st, err := WriteExtendedStaged(context.Background(), dst, x, WriteOptions{NoKernelCopy: !kernel})
			require.NoError(t, err)
			require.NoError(t, st.Commit())

			out, err := os.ReadFile(dst)
			require.NoError(t, err)
			require.Equal(t, x.Size(), int64(len(out)))
			sum := sha256.Sum256(out)
			sumFile, err := os.ReadFile(dst + ".sha256")
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(sumFile), hex.EncodeToString(sum[:])), "the .sha256 is the whole extended ISO's")
			assert.Equal(t, stream, out[x.StreamOffset():])
			assert.Equal(t, uint32(x.Size()/2048), binary.LittleEndian.Uint32(out[16*2048+80:]), "volume space size")

			// Still an agent ISO: the embedded Ignition reads back.
			again, err := Open(bytes.NewReader(out), int64(len(out)))
			require.NoError(t, err)
			assert.Equal(t, iso.VolumeID(), again.VolumeID())
			ign, err := again.EmbeddedIgnition()
			require.NoError(t, err)
			assert.JSONEq(t, testConfig, string(ign))

			// xorriso sees /registry/data.iso.{aa,ab,ac} and the base's files.
			dir := filepath.Join(t.TempDir(), "x")
			b, err := exec.Command(osirrox(t), "-indev", dst, "-extract", "/", dir).CombinedOutput()
			require.NoError(t, err, "%s", b)
			var joined []byte
			for _, n := range []string{"aa", "ab", "ac"} {
				piece, err := os.ReadFile(filepath.Join(dir, "registry", "data.iso."+n))
				require.NoError(t, err, n)
				joined = append(joined, piece...)
			}
			assert.Equal(t, stream, joined, "the pieces joined are the stream")
			_, err = os.Stat(filepath.Join(dir, "registry", "data.iso.ad"))
			assert.True(t, errors.Is(err, os.ErrNotExist))
			_, err = os.Stat(filepath.Join(dir, "coreos", "igninfo.json"))
			assert.NoError(t, err)

			// An extended ISO is not extended again.
			_, err = again.Extend(mustEdit(t, again), appendix(stream, 4*2048))
			assert.ErrorContains(t, err, "already has /registry")
		})
	}
}

func mustEdit(t *testing.T, iso *ISO) *Image {
	t.Helper()
	img, err := iso.Edit(Edit{})
	require.NoError(t, err)
	return img
}

func TestExtendedWriteFailureLeavesNothing(t *testing.T) {
	p, _ := makeISO(t, testiso.Options{})
	iso, _ := openFile(t, p)
	img, err := iso.Edit(Edit{Ignition: []byte(testConfig)})
	require.NoError(t, err)
	outDir := t.TempDir()
	for name, a := range map[string]Appendix{
		"short": {Dir: "registry", Prefix: "data.iso.", PieceSize: 2048, Size: 4096, Write: func(_ context.Context, w io.Writer) error {
			_, err := w.Write(make([]byte, 2048))
			return err
		}},
		"long": {Dir: "registry", Prefix: "data.iso.", PieceSize: 2048, Size: 4096, Write: func(_ context.Context, w io.Writer) error {
			_, err := w.Write(make([]byte, 4097))
			return err
		}},
		"digest": {Dir: "registry", Prefix: "data.iso.", PieceSize: 2048, Size: 4096, Write: func(_ context.Context, w io.Writer) error {
			return errors.New("blob sha256:abc: digest mismatch")
		}},
	} {
		x, err := iso.Extend(img, a)
		require.NoError(t, err)
		_, err = WriteExtendedStaged(context.Background(), filepath.Join(outDir, "agent.iso"), x, WriteOptions{})
		assert.Error(t, err, name)
		assert.Empty(t, dirNames(t, outDir), name)
	}
}

func TestExtendRefusesBadAppendix(t *testing.T) {
	p, _ := makeISO(t, testiso.Options{})
	iso, _ := openFile(t, p)
	img := mustEdit(t, iso)
	for _, a := range []Appendix{
		{Dir: "registry", Prefix: "p", PieceSize: 1000, Size: 2048},
		{Dir: "registry", Prefix: "p", PieceSize: 4 << 30, Size: 2048},
		{Dir: "registry", Prefix: "p", PieceSize: 2048, Size: 100},
		{Dir: "a/b", Prefix: "p", PieceSize: 2048, Size: 2048},
		{Dir: "registry", Prefix: "p", PieceSize: 2048, Size: 2048 * 677},
	} {
		_, err := iso.Extend(img, a)
		assert.Error(t, err)
	}
}

func TestExtendWidensTheHybridPartition(t *testing.T) {
	p, lay := makeISO(t, testiso.Options{})
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	require.NoError(t, err)
	mbr := make([]byte, 512)
	e := mbr[446:]
	e[0], e[4] = 0x80, 0x00
	binary.LittleEndian.PutUint32(e[12:], uint32(lay.Size/512))
	e2 := mbr[446+16:]
	e2[4] = 0xEF
	binary.LittleEndian.PutUint32(e2[8:], 100)
	binary.LittleEndian.PutUint32(e2[12:], 50)
	mbr[510], mbr[511] = 0x55, 0xAA
	_, err = f.WriteAt(mbr, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	iso, _ := openFile(t, p)
	x, err := iso.Extend(mustEdit(t, iso), appendix(streamBytes(2048), 2048))
	require.NoError(t, err)
	buf := make([]byte, 512)
	_, err = x.Image.ReadAt(buf, 0)
	require.NoError(t, err)
	assert.Equal(t, uint32(x.Size()/512), binary.LittleEndian.Uint32(buf[446+12:]), "the partition spanning the base spans the extended ISO")
	assert.Equal(t, uint32(50), binary.LittleEndian.Uint32(buf[446+16+12:]), "the EFI partition is left alone")
}

// failingAt fails every read that reaches byte at.
type failingAt struct {
	r  io.ReaderAt
	at int64
}

var errInjected = errors.New("injected read error")

func (f failingAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.at {
		return 0, errInjected
	}
	return f.r.ReadAt(p, off)
}

// The output's hash runs on its own goroutine, behind the writes: a
// failure there (a read of the written bytes) fails the write, named, and
// leaves nothing, whether it comes in the base or in the appendix.
func TestExtendedWriteHashErrorSurfaces(t *testing.T) {
	p, _ := makeISO(t, testiso.Options{})
	iso, _ := openFile(t, p)
	img, err := iso.Edit(Edit{Ignition: []byte(testConfig)})
	require.NoError(t, err)
	stream := streamBytes(64 * 2048)
	x, err := iso.Extend(img, appendix(stream, 16*2048))
	require.NoError(t, err)
	for _, kernel := range []bool{true, false} {
		for where, at := range map[string]int64{"base": img.size / 2, "appendix": x.StreamOffset() + 10*2048} {
			t.Run(fmt.Sprintf("kernel %v, %s", kernel, where), func(t *testing.T) {
				dir := t.TempDir()
				opts := WriteOptions{NoKernelCopy: !kernel, hashSourceWrap: func(r io.ReaderAt) io.ReaderAt { return failingAt{r, at} }}
				_, err := WriteExtendedStaged(context.Background(), filepath.Join(dir, "agent.iso"), x, opts)
				require.ErrorIs(t, err, errInjected)
				assert.Empty(t, dirNames(t, dir))
			})
		}
	}
}

// Cancelled while the appendix is being written (as Ctrl-C during a
// blob), the write stops, its goroutines (hash, writeback) end, and no
// file is left.
func TestExtendedWriteCancelledMidStreamLeavesNothing(t *testing.T) {
	p, _ := makeISO(t, testiso.Options{})
	iso, _ := openFile(t, p)
	img, err := iso.Edit(Edit{Ignition: []byte(testConfig)})
	require.NoError(t, err)
	for _, kernel := range []bool{true, false} {
		t.Run(map[bool]string{true: "kernel copy", false: "portable"}[kernel], func(t *testing.T) {
			before := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stream := streamBytes(64 * 2048)
			a := appendix(stream, 16*2048)
			a.Write = func(ctx context.Context, w io.Writer) error {
				if _, err := w.Write(stream[:len(stream)/2]); err != nil {
					return err
				}
				cancel()
				<-ctx.Done()
				return ctx.Err()
			}
			x, err := iso.Extend(img, a)
			require.NoError(t, err)
			dir := t.TempDir()
			_, err = WriteExtendedStaged(ctx, filepath.Join(dir, "agent.iso"), x, WriteOptions{NoKernelCopy: !kernel})
			require.ErrorIs(t, err, context.Canceled)
			assert.Empty(t, dirNames(t, dir))
			// (not assert.Eventually: it runs the condition on a goroutine of its own)
			for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > before {
				buf := make([]byte, 1<<20)
				t.Errorf("the hash and writeback goroutines did not end: %d goroutines before, %d now:\n%s", before, n, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}

// The kernel is asked to write the output to disk behind the writes, in
// order, each range once, so that the final fsync finds little left; the
// output is the same.
func TestExtendedWriteStartsWritebackBehindTheWrites(t *testing.T) {
	p, _ := makeISO(t, testiso.Options{})
	iso, _ := openFile(t, p)
	img, err := iso.Edit(Edit{Ignition: []byte(testConfig)})
	require.NoError(t, err)
	stream := streamBytes(3*writebackChunk + 5*2048)
	x, err := iso.Extend(img, appendix(stream, 1<<30))
	require.NoError(t, err)
	for _, kernel := range []bool{true, false} {
		t.Run(map[bool]string{true: "kernel copy", false: "portable"}[kernel], func(t *testing.T) {
			var ranges [][2]int64
			var mu sync.Mutex
			opts := WriteOptions{NoKernelCopy: !kernel, writeback: func(f *os.File, off, n int64) {
				mu.Lock()
				defer mu.Unlock()
				ranges = append(ranges, [2]int64{off, n})
			}}
			dst := filepath.Join(t.TempDir(), "agent.iso")
			st, err := WriteExtendedStaged(context.Background(), dst, x, opts)
			require.NoError(t, err)
			require.NoError(t, st.Commit())
			out, err := os.ReadFile(dst)
			require.NoError(t, err)
			assert.Equal(t, stream, out[x.StreamOffset():x.StreamOffset()+int64(len(stream))])
			sum := sha256.Sum256(out)
			assert.Equal(t, hex.EncodeToString(sum[:]), st.Result.SHA256)

			mu.Lock()
			defer mu.Unlock()
			require.NotEmpty(t, ranges)
			var end int64
			for _, r := range ranges {
				assert.Equal(t, end, r[0], "in order, each byte once")
				assert.GreaterOrEqual(t, r[1], int64(writebackChunk))
				end = r[0] + r[1]
			}
			assert.LessOrEqual(t, end, x.Size())
			assert.Greater(t, end, x.Size()-writebackChunk, "all but less than a chunk at the end")
		})
	}
}
