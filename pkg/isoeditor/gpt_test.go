package isoeditor

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
)

// writeGPT gives the image at p (size bytes) a GPT as xorriso
// -isohybrid-gpt-basdat writes one for RHCOS live ISOs (read from such an
// image with sgdisk): 248 entries of 128 bytes from block 2, entry 0
// "ISOHybrid" from block 0 to the last usable block, entry 1 the EFI
// image, first usable block 64, the backup entries and header in the last
// 63 blocks.
func writeGPT(t testing.TB, p string, size int64) {
	t.Helper()
	const n, es = 248, 128
	last := size/512 - 1
	entSecs := int64(n * es / 512)
	lastUse := last - entSecs - 1
	ents := make([]byte, n*es)
	entry := func(i int, start, end int64, name string) {
		e := ents[i*es:]
		e[0], e[16] = 0xA2, byte(i+1) // type and unique GUIDs, not zero
		binary.LittleEndian.PutUint64(e[32:], uint64(start))
		binary.LittleEndian.PutUint64(e[40:], uint64(end))
		for k, r := range utf16.Encode([]rune(name)) {
			binary.LittleEndian.PutUint16(e[56+2*k:], r)
		}
	}
	entry(0, 0, (lastUse+1)/4*4-1, "ISOHybrid") // xorriso ends it on a 2048-byte boundary
	entry(1, 164, 8355, "ISOHybrid1")
	hdr := func(my, alt, entryLBA int64) []byte {
		h := make([]byte, 92)
		copy(h, "EFI PART")
		binary.LittleEndian.PutUint32(h[8:], 0x00010000)
		binary.LittleEndian.PutUint32(h[12:], 92)
		binary.LittleEndian.PutUint64(h[24:], uint64(my))
		binary.LittleEndian.PutUint64(h[32:], uint64(alt))
		binary.LittleEndian.PutUint64(h[40:], 64)
		binary.LittleEndian.PutUint64(h[48:], uint64(lastUse))
		copy(h[56:72], "agentiso-test-gd")
		binary.LittleEndian.PutUint64(h[72:], uint64(entryLBA))
		binary.LittleEndian.PutUint32(h[80:], n)
		binary.LittleEndian.PutUint32(h[84:], es)
		binary.LittleEndian.PutUint32(h[88:], crc32.ChecksumIEEE(ents))
		binary.LittleEndian.PutUint32(h[16:], crc32.ChecksumIEEE(h))
		return h
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	for _, w := range []struct {
		b   []byte
		off int64
	}{{hdr(1, last, 2), 512}, {ents, 1024}, {ents, (last - entSecs) * 512}, {hdr(last, 1, last-entSecs), last * 512}} {
		_, err := f.WriteAt(w.b, w.off)
		require.NoError(t, err)
	}
}

// gptAt reads and checks the GPT header in block lba of b and its entries.
func gptAt(t *testing.T, b []byte, lba int64) (h, ents []byte) {
	t.Helper()
	h = append([]byte(nil), b[lba*512:lba*512+92]...)
	require.Equal(t, "EFI PART", string(h[:8]), "block %d", lba)
	assert.Equal(t, binary.LittleEndian.Uint32(h[16:]), gptHeaderCRC(h), "header CRC of block %d", lba)
	assert.Equal(t, uint64(lba), binary.LittleEndian.Uint64(h[24:]), "MyLBA")
	el := int64(binary.LittleEndian.Uint64(h[72:]))
	ents = b[el*512 : el*512+248*128]
	assert.Equal(t, binary.LittleEndian.Uint32(h[88:]), crc32.ChecksumIEEE(ents), "entries CRC of the header in block %d", lba)
	return h, ents
}

// An extended isohybrid image keeps a valid GPT: the primary header names
// the new last block as its backup's, the backup (entries, header) is in
// the last blocks, the entry that spanned the base spans the image, the
// EFI entry is left alone; sgdisk finds no problem. Before, the backup
// stayed where the base ended, in the middle of the image.
func TestExtendMovesTheBackupGPT(t *testing.T) {
	p, lay := makeISO(t, testiso.Options{})
	writeGPT(t, p, lay.Size)
	iso, _ := openFile(t, p)
	x, err := iso.Extend(mustEdit(t, iso), appendix(streamBytes(5*2048), 2048))
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "ext.iso")
	s, err := WriteExtendedStaged(context.Background(), out, x, WriteOptions{})
	require.NoError(t, err)
	require.NoError(t, s.Commit())
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, x.Size(), int64(len(b)))
	last := int64(len(b))/512 - 1

	ph, pents := gptAt(t, b, 1)
	assert.Equal(t, uint64(last), binary.LittleEndian.Uint64(ph[32:]), "the primary names the last block as the backup's")
	lastUse := last - 62 - 1
	assert.Equal(t, uint64(lastUse), binary.LittleEndian.Uint64(ph[48:]))
	bh, bents := gptAt(t, b, last)
	assert.Equal(t, uint64(1), binary.LittleEndian.Uint64(bh[32:]))
	assert.Equal(t, uint64(last-62), binary.LittleEndian.Uint64(bh[72:]))
	assert.True(t, bytes.Equal(pents, bents), "the backup entries are the primary's")
	assert.Equal(t, uint64((lastUse+1)/4*4-1), binary.LittleEndian.Uint64(pents[40:]), "ISOHybrid spans the image")
	assert.Equal(t, uint64(8355), binary.LittleEndian.Uint64(pents[128+40:]), "the EFI entry is left alone")
	// the pieces still hold the stream: the tail comes after it
	assert.Equal(t, streamBytes(5*2048), b[x.StreamOffset():x.StreamOffset()+5*2048])

	sg, err := exec.LookPath("sgdisk")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("sgdisk (gdisk) is required in CI")
		}
		t.Skip("sgdisk (gdisk) not installed")
	}
	// sgdisk finds on the extended image exactly what it finds on the base:
	// xorriso's layout has its ISOHybrid entry start at block 0, over the
	// table itself ("overlaps the first partition"), which RHCOS's ISO
	// shows too; nothing about the backup header or the disk's end.
	base, _ := exec.Command(sg, "-v", p).CombinedOutput()
	ext, _ := exec.Command(sg, "-v", out).CombinedOutput()
	assert.Equal(t, string(base), string(ext))
	assert.NotContains(t, string(ext), "secondary")
	assert.NotContains(t, string(ext), "backup")
	assert.Contains(t, string(base), "Identified 1 problems", "the base's one known problem: %s", base)
}

// A base without a GPT gets no tail.
func TestExtendWithoutGPTHasNoTail(t *testing.T) {
	p, _ := makeISO(t, testiso.Options{})
	iso, _ := openFile(t, p)
	x, err := iso.Extend(mustEdit(t, iso), appendix(streamBytes(2048), 2048))
	require.NoError(t, err)
	assert.Equal(t, x.StreamOffset()+2048, x.Size())
}

// A base's GPT is outside input: whatever its bytes, reading it and moving
// it to a larger image fails cleanly or yields headers whose checksums
// hold and a tail that fits the new image; it never panics.
func FuzzReadGPT(f *testing.F) {
	p, lay := makeISO(f, testiso.Options{Size: 1 << 20})
	writeGPT(f, p, lay.Size)
	b, err := os.ReadFile(p)
	require.NoError(f, err)
	f.Add(b[:34*512])
	f.Add([]byte("EFI PART"))
	f.Fuzz(func(t *testing.T, data []byte) {
		img := make([]byte, 1<<20)
		copy(img[512:], data)
		iso := &ISO{r: bytes.NewReader(img), size: int64(len(img))}
		g, ok, err := iso.readGPT()
		if err != nil || !ok {
			return
		}
		size := int64(len(img)) + 64<<10 + g.tailSize()
		ovs, tail, err := g.extend(size)
		if err != nil {
			return
		}
		require.Equal(t, g.tailSize(), int64(len(tail)))
		h := ovs[0].Data
		assert.Equal(t, binary.LittleEndian.Uint32(h[16:]), gptHeaderCRC(h))
		bh := tail[len(tail)-512 : len(tail)-512+len(h)]
		assert.Equal(t, binary.LittleEndian.Uint32(bh[16:]), gptHeaderCRC(bh))
		assert.Equal(t, uint64(size/512-1), binary.LittleEndian.Uint64(bh[24:]))
	})
}
