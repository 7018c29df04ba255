package isoeditor

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
)

// synthMiniso makes a "full" image and a "minimal" one that shares two
// sector-aligned files with it at other offsets, plus its own bytes.
func synthMiniso(t testing.TB) (full, minimal []byte, extents []MinisoExtent) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	full = make([]byte, 40*sectorSize)
	for i := range full {
		full[i] = byte(rng.Uint32())
	}
	minimal = make([]byte, 20*sectorSize+100)
	for i := range minimal {
		minimal[i] = byte(i % 7) // compressible, distinct from full
	}
	extents = []MinisoExtent{
		{MinimalOffset: 2 * sectorSize, FullOffset: 30 * sectorSize, Length: 3*sectorSize + 17},
		{MinimalOffset: 6 * sectorSize, FullOffset: 5 * sectorSize, Length: 0},
		{MinimalOffset: 10 * sectorSize, FullOffset: 12 * sectorSize, Length: 9 * sectorSize},
	}
	for _, e := range extents {
		copy(minimal[e.MinimalOffset:e.MinimalOffset+e.Length], full[e.FullOffset:])
	}
	return full, minimal, extents
}

func TestMinisoRoundTrip(t *testing.T) {
	full, minimal, extents := synthMiniso(t)
	m, err := PackMiniso(bytes.NewReader(minimal), int64(len(minimal)), extents, "0.99.0")
	require.NoError(t, err)
	require.Equal(t, sha256.Sum256(minimal), m.Digest)

	// as stored in the ISO: zero-padded to 16 KiB
	dat := make([]byte, 16384)
	enc := m.Marshal()
	require.Less(t, len(enc), len(dat))
	copy(dat, enc)
	got, err := ParseMinisoData(dat)
	require.NoError(t, err)
	require.Equal(t, m, got)
	require.Equal(t, "0.99.0", got.AppVersion)
	require.Equal(t, extents, got.Extents)

	r, err := got.MinimalISO(bytes.NewReader(full))
	require.NoError(t, err)
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, minimal, out)

	// small reads take the same path
	r, err = got.MinimalISO(bytes.NewReader(full))
	require.NoError(t, err)
	var small bytes.Buffer
	_, err = io.CopyBuffer(&small, onlyReader{r}, make([]byte, 333))
	require.NoError(t, err)
	require.Equal(t, minimal, small.Bytes())
}

type onlyReader struct{ io.Reader }

// The exact bytes of a known data file: magic, varint version 1, app version
// "1.0", two entries (one needing a u16 varint), digest, 3 packed bytes.
func TestParseMinisoDataBytes(t *testing.T) {
	b := []byte("MINISO\x00\x00")
	b = append(b, 1, 3, '1', '.', '0', 2)
	b = append(b, 16, 20, 200)                                    // minimal 16, full 20, length 200
	b = append(b, 251, 0x2c, 0x01, 252, 1, 0, 1, 0, 251, 0, 0x10) // 300, 65537, 4096
	b = append(b, bytes.Repeat([]byte{0xab}, 32)...)
	b = append(b, 3, 'x', 'y', 'z', 0, 0, 0)
	m, err := ParseMinisoData(b)
	require.NoError(t, err)
	require.Equal(t, "1.0", m.AppVersion)
	require.Equal(t, []MinisoExtent{
		{MinimalOffset: 16 * sectorSize, FullOffset: 20 * sectorSize, Length: 200},
		{MinimalOffset: 300 * sectorSize, FullOffset: 65537 * sectorSize, Length: 4096},
	}, m.Extents)
	require.Equal(t, []byte("xyz"), m.Packed)
	require.Equal(t, byte(0xab), m.Digest[31])
	require.Equal(t, b[:len(b)-3], m.Marshal())
}

func TestParseMinisoDataErrors(t *testing.T) {
	_, err := ParseMinisoData(make([]byte, 16384))
	require.ErrorIs(t, err, ErrNoMinisoData)
	require.ErrorContains(t, err, "base ISO has no minimal-ISO data")

	_, err = ParseMinisoData(nil)
	require.ErrorIs(t, err, ErrNoMinisoData)

	_, err = ParseMinisoData([]byte("MINISO\x00\x00\x02\x00"))
	require.ErrorIs(t, err, ErrNoMinisoData)
	require.ErrorContains(t, err, "version 2")

	_, err = ParseMinisoData([]byte("MINISO\x00\x00\x01\x05ab"))
	require.ErrorContains(t, err, "app_version: truncated")

	_, err = ParseMinisoData([]byte("MINISO\x00\x00\x01\x00\x00"))
	require.ErrorContains(t, err, "extent table is empty")

	// overlapping entries: sector 1 len 4096 then sector 2
	b := []byte("MINISO\x00\x00\x01\x00\x02\x01\x01\xfb\x00\x10\x02\x02\x01")
	_, err = ParseMinisoData(b)
	require.ErrorContains(t, err, "overlaps")

	_, err = ParseMinisoData([]byte("MINISO\x00\x00\x01\x00\x01\x01\x01\xff"))
	require.ErrorContains(t, err, "invalid varint tag 255")

	_, err = ParseMinisoData([]byte("MINISO\x00\x00\x01\x00\x01\x01\x01\xfd\x00\x00\x00\x00\x01\x00\x00\x00"))
	require.ErrorContains(t, err, "out of range")
}

func TestMinimalISODigestMismatch(t *testing.T) {
	full, minimal, extents := synthMiniso(t)
	m, err := PackMiniso(bytes.NewReader(minimal), int64(len(minimal)), extents, "x")
	require.NoError(t, err)
	full[12*sectorSize+5] ^= 1 // a modified base ISO
	r, err := m.MinimalISO(bytes.NewReader(full))
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, r)
	var dm *DigestMismatchError
	require.ErrorAs(t, err, &dm)
	require.ErrorContains(t, err, "does not match its minimal-ISO data")
	// the error sticks
	_, err = r.Read(make([]byte, 1))
	require.ErrorAs(t, err, &dm)
}

func TestMinimalISOShortFull(t *testing.T) {
	full, minimal, extents := synthMiniso(t)
	m, err := PackMiniso(bytes.NewReader(minimal), int64(len(minimal)), extents, "x")
	require.NoError(t, err)
	r, err := m.MinimalISO(bytes.NewReader(full[:20*sectorSize]))
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, r)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.ErrorContains(t, err, "reading full ISO")
}

func TestMinimalISOShortPacked(t *testing.T) {
	full, minimal, extents := synthMiniso(t)
	// pack a shorter minimal ISO, then claim an extent beyond its end
	m, err := PackMiniso(bytes.NewReader(minimal), 6*sectorSize, extents[:1], "x")
	require.NoError(t, err)
	m.Extents = append(m.Extents, MinisoExtent{MinimalOffset: 8 * sectorSize, FullOffset: 0, Length: 10})
	r, err := m.MinimalISO(bytes.NewReader(full))
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, r)
	require.ErrorContains(t, err, "packed data ends")
	require.False(t, errors.Is(err, io.EOF))
}

func TestPackMinisoErrors(t *testing.T) {
	_, minimal, extents := synthMiniso(t)
	_, err := PackMiniso(bytes.NewReader(minimal), int64(len(minimal)), nil, "x")
	require.ErrorContains(t, err, "no extents")
	bad := append([]MinisoExtent{}, extents...)
	bad[1].MinimalOffset = 3 * sectorSize
	_, err = PackMiniso(bytes.NewReader(minimal), int64(len(minimal)), bad, "x")
	require.ErrorContains(t, err, "overlaps")
	bad = append([]MinisoExtent{}, extents...)
	bad[0].MinimalOffset++
	_, err = PackMiniso(bytes.NewReader(minimal), int64(len(minimal)), bad, "x")
	require.ErrorContains(t, err, "sector-aligned")
}

func FuzzParseMinisoData(f *testing.F) {
	_, minimal, extents := synthMiniso(f)
	m, err := PackMiniso(bytes.NewReader(minimal), int64(len(minimal)), extents, "0.99.0")
	require.NoError(f, err)
	f.Add(m.Marshal())
	f.Add(make([]byte, 64))
	f.Add([]byte("MINISO\x00\x00\x01\x00\x01\x01\x01\xfd\x00\x00\x00\x00\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMinisoData(b)
		if err != nil {
			require.Contains(t, err.Error(), MinisoPath)
			return
		}
		require.NotEmpty(t, m.Extents)
		var end int64
		for _, e := range m.Extents {
			require.GreaterOrEqual(t, e.MinimalOffset, end)
			require.GreaterOrEqual(t, e.Length, int64(0))
			end = e.MinimalOffset + e.Length
		}
		// re-encoding and re-parsing is stable
		m2, err := ParseMinisoData(m.Marshal())
		require.NoError(t, err)
		require.Equal(t, m, m2)
		// streaming it against an arbitrary "full ISO" ends in an error or a checked digest, never a panic
		r, err := m.MinimalISO(bytes.NewReader(b))
		if err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(r, 1<<20))
		}
	})
}

func TestISOMinisoData(t *testing.T) {
	_, minimal, extents := synthMiniso(t)
	m, err := PackMiniso(bytes.NewReader(minimal), int64(len(minimal)), extents, "0.99.0")
	require.NoError(t, err)
	dat := make([]byte, 16384)
	copy(dat, m.Marshal())
	for name, tc := range map[string]struct {
		dat     []byte
		wantErr string
	}{
		"real":        {dat: dat},
		"zero-filled": {dat: make([]byte, 16384), wantErr: "base ISO has no minimal-ISO data"},
		"absent":      {wantErr: "coreos/miniso.dat not found: base ISO has no minimal-ISO data"},
	} {
		t.Run(name, func(t *testing.T) {
			b, _, err := testiso.Bytes(testiso.Options{Size: 4 << 20, MinisoDat: tc.dat})
			require.NoError(t, err)
			iso, err := Open(bytes.NewReader(b), int64(len(b)))
			require.NoError(t, err)
			got, err := iso.MinisoData()
			if tc.wantErr != "" {
				require.ErrorIs(t, err, ErrNoMinisoData)
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, m.Extents, got.Extents)
			require.Equal(t, m.Digest, got.Digest)
		})
	}
}

// BenchmarkMinimalISO rebuilds a 64 MiB minimal ISO whose bytes are almost
// all shared files of the full ISO (as RHCOS's are: kernel, initrd, EFI
// image); the cost should be one read of what it keeps plus sha256.
func BenchmarkMinimalISO(b *testing.B) {
	const size = 64 << 20
	full := make([]byte, size+(4<<20))
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < len(full); i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8 && i+j < len(full); j++ {
			full[i+j] = byte(v >> (8 * j))
		}
	}
	minimal := make([]byte, size)
	extents := []MinisoExtent{
		{MinimalOffset: 32 * sectorSize, FullOffset: 512 * sectorSize, Length: 16 << 20},
		{MinimalOffset: 32*sectorSize + 16<<20, FullOffset: 9000 * sectorSize, Length: size - 64*sectorSize - 16<<20},
	}
	for _, e := range extents {
		copy(minimal[e.MinimalOffset:e.MinimalOffset+e.Length], full[e.FullOffset:])
	}
	m, err := PackMiniso(bytes.NewReader(minimal), size, extents, "bench")
	require.NoError(b, err)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := m.MinimalISO(bytes.NewReader(full))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}

// The reader at any offset, with the packed part cached (the usual case)
// and without (a packed part over maxPackedCache, decompressed again as
// reads go back).
func TestMinimalReaderAtPaths(t *testing.T) {
	full, minimal, extents := synthMiniso(t)
	m, err := PackMiniso(bytes.NewReader(minimal), int64(len(minimal)), extents, "x")
	require.NoError(t, err)
	for _, cached := range []bool{true, false} {
		r, err := newMinimalReaderAt(m, bytes.NewReader(full))
		require.NoError(t, err)
		require.Equal(t, int64(len(minimal)), r.size)
		require.NotNil(t, r.cache)
		if !cached {
			r.cache = nil
		}
		rng := rand.New(rand.NewPCG(7, 8))
		for range 300 {
			off := rng.Int64N(int64(len(minimal)))
			n := rng.Int64N(int64(len(minimal))-off) + 1
			got := make([]byte, n)
			_, err := r.ReadAt(got, off)
			require.NoError(t, err)
			require.Equal(t, minimal[off:off+n], got, "cached=%v bytes %d-%d", cached, off, off+n)
		}
		_, err = r.ReadAt(make([]byte, 10), int64(len(minimal))-5)
		require.ErrorIs(t, err, io.EOF)
	}
}

// The kernel copies the extents of a minimal ISO only when the full ISO is
// a file and the packed part is in memory: the hash, behind the copy, reads
// back over packed bytes the copy has passed, which would otherwise be
// decompressed again from the start each time.
func TestMinimalReaderAtFileSpans(t *testing.T) {
	full, minimal, extents := synthMiniso(t)
	m, err := PackMiniso(bytes.NewReader(minimal), int64(len(minimal)), extents, "x")
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "full.iso")
	require.NoError(t, os.WriteFile(p, full, 0o600))
	fullFile, err := os.Open(p)
	require.NoError(t, err)
	defer fullFile.Close()

	r, err := newMinimalReaderAt(m, fullFile)
	require.NoError(t, err)
	f, spans, raw := r.fileSpans()
	require.Equal(t, fullFile, f)
	var want []fileSpan
	for _, e := range extents {
		if e.Length > 0 { // an empty extent is no span
			want = append(want, fileSpan{off: e.MinimalOffset, fileOff: e.FullOffset, n: e.Length})
		}
	}
	assert.Equal(t, want, spans)
	assert.Equal(t, r, raw)

	r.cache = nil
	f, _, _ = r.fileSpans()
	assert.Nil(t, f, "packed part not in memory")
	r, err = newMinimalReaderAt(m, bytes.NewReader(full))
	require.NoError(t, err)
	f, _, _ = r.fileSpans()
	assert.Nil(t, f, "the full ISO is not a file")
}
