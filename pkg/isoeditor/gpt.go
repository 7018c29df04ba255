package isoeditor

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// The GUID partition table of an isohybrid image (xorriso
// -isohybrid-gpt-basdat, as RHCOS live ISOs are made; UEFI 2.10 section
// 5.3): the primary header in the 512-byte block 1, its partition entries
// from PartitionEntryLBA, and the backup: the same entries, then the
// header, in the last blocks of the image.
const (
	gptBlock     = 512
	gptSignature = "EFI PART"
	// maxGPTEntries bounds the entry array read from a base (xorriso
	// writes 248 entries of 128 bytes).
	maxGPTEntryBytes = 1 << 20
)

type gpt struct {
	header   []byte // HeaderSize bytes
	entries  []byte // NumberOfPartitionEntries * SizeOfPartitionEntry
	entryLBA int64
	entSecs  int64 // blocks the entry array takes
	lastUse  int64
}

// readGPT reads the base's primary GPT; ok is false when there is none,
// or one whose checksums do not hold (not ours to repair: it is left as
// it is).
func (iso *ISO) readGPT() (*gpt, bool, error) {
	blk := make([]byte, gptBlock)
	if _, err := iso.r.ReadAt(blk, gptBlock); err != nil {
		return nil, false, err
	}
	if string(blk[:8]) != gptSignature {
		return nil, false, nil
	}
	hs := binary.LittleEndian.Uint32(blk[12:])
	if hs < 92 || hs > gptBlock {
		return nil, false, nil
	}
	h := append([]byte(nil), blk[:hs]...)
	if gptHeaderCRC(h) != binary.LittleEndian.Uint32(h[16:]) || binary.LittleEndian.Uint64(h[24:]) != 1 {
		return nil, false, nil
	}
	g := &gpt{header: h, entryLBA: int64(binary.LittleEndian.Uint64(h[72:])), lastUse: int64(binary.LittleEndian.Uint64(h[48:]))}
	n, es := int64(binary.LittleEndian.Uint32(h[80:])), int64(binary.LittleEndian.Uint32(h[84:]))
	if es < 128 || es%8 != 0 || n*es > maxGPTEntryBytes || g.entryLBA < 2 || g.entryLBA*gptBlock+n*es > iso.size {
		return nil, false, nil
	}
	g.entries = make([]byte, n*es)
	if _, err := iso.r.ReadAt(g.entries, g.entryLBA*gptBlock); err != nil {
		return nil, false, err
	}
	if crc32.ChecksumIEEE(g.entries) != binary.LittleEndian.Uint32(h[88:]) {
		return nil, false, nil
	}
	g.entSecs = (n*es + gptBlock - 1) / gptBlock
	return g, true, nil
}

// gptHeaderCRC is the header's CRC32 with its own CRC field zeroed.
func gptHeaderCRC(h []byte) uint32 {
	c := append([]byte(nil), h...)
	binary.LittleEndian.PutUint32(c[16:], 0)
	return crc32.ChecksumIEEE(c)
}

// tailSize is the size of the backup GPT at the end of an extended image:
// the entries and the header, padded at the front to ISO sectors.
func (g *gpt) tailSize() int64 {
	n := (g.entSecs + 1) * gptBlock
	return (n + sectorSize - 1) / sectorSize * sectorSize
}

// extend moves the table's end to an image of size bytes (its last
// tailSize bytes for the backup): the entry from block 0 to the base's last
// usable ISO sector (xorriso's "ISOHybrid" entry, which spans the image up
// to the backup table, ending on a 2048-byte boundary) now reaches the new
// last usable ISO sector; it returns the overlays of the primary header and
// entries, and the tail holding the backup entries and header.
func (g *gpt) extend(size int64) (ovs []Overlay, tail []byte, err error) {
	last := size/gptBlock - 1
	lastUse := last - g.entSecs - 1
	if lastUse < g.lastUse {
		return nil, nil, fmt.Errorf("extend: the GPT's last usable block %d is past the new end", g.lastUse)
	}
	ents := append([]byte(nil), g.entries...)
	es := int(binary.LittleEndian.Uint32(g.header[84:]))
	for off := 0; off+es <= len(ents); off += es {
		e := ents[off:]
		start, end := int64(binary.LittleEndian.Uint64(e[32:])), int64(binary.LittleEndian.Uint64(e[40:]))
		if start == 0 && end <= g.lastUse && end > g.lastUse-sectorSize/gptBlock && !allZero(e[:16]) {
			binary.LittleEndian.PutUint64(e[40:], uint64((lastUse+1)/(sectorSize/gptBlock)*(sectorSize/gptBlock)-1))
		}
	}
	ecrc := crc32.ChecksumIEEE(ents)
	hdr := func(my, alt, entryLBA int64) []byte {
		h := append([]byte(nil), g.header...)
		binary.LittleEndian.PutUint64(h[24:], uint64(my))
		binary.LittleEndian.PutUint64(h[32:], uint64(alt))
		binary.LittleEndian.PutUint64(h[48:], uint64(lastUse))
		binary.LittleEndian.PutUint64(h[72:], uint64(entryLBA))
		binary.LittleEndian.PutUint32(h[88:], ecrc)
		binary.LittleEndian.PutUint32(h[16:], gptHeaderCRC(h))
		return h
	}
	ovs = []Overlay{
		{Region: "GPT header", Offset: gptBlock, Data: hdr(1, last, g.entryLBA)},
		{Region: "GPT entries", Offset: g.entryLBA * gptBlock, Data: ents},
	}
	tail = make([]byte, g.tailSize())
	backupEntries := int64(len(tail)) - (g.entSecs+1)*gptBlock
	copy(tail[backupEntries:], ents)
	copy(tail[int64(len(tail))-gptBlock:], hdr(last, 1, last-g.entSecs))
	return ovs, tail, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
