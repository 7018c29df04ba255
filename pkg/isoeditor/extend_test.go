package isoeditor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
