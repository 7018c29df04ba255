package isoeditor

import (
	"encoding/binary"
	"fmt"
)

// pathEntry is one record of an ISO 9660 path table (ECMA-119 9.4): a
// directory, its extent and its parent's number (1-based, in table order).
type pathEntry struct {
	name   string
	lba    uint32
	parent uint16
}

// maxPathTable bounds the path table read from a base ISO.
const maxPathTable = 1 << 20

// parsePathTable reads a type L (little-endian) or M (big-endian) table.
func parsePathTable(b []byte, big bool) ([]pathEntry, error) {
	var out []pathEntry
	for off := 0; off < len(b); {
		if off+8 > len(b) {
			return nil, fmt.Errorf("path table record at byte %d is cut short", off)
		}
		n := int(b[off])
		if n == 0 || off+8+n > len(b) {
			return nil, fmt.Errorf("path table record at byte %d: identifier of %d bytes", off, n)
		}
		e := pathEntry{name: string(b[off+8 : off+8+n])}
		if big {
			e.lba, e.parent = binary.BigEndian.Uint32(b[off+2:]), binary.BigEndian.Uint16(b[off+6:])
		} else {
			e.lba, e.parent = binary.LittleEndian.Uint32(b[off+2:]), binary.LittleEndian.Uint16(b[off+6:])
		}
		if e.parent == 0 || int(e.parent) > len(out)+1 {
			return nil, fmt.Errorf("path table record %d (%q) names parent %d", len(out)+1, e.name, e.parent)
		}
		out = append(out, e)
		off += 8 + n + n%2
	}
	if len(out) == 0 || out[0].name != "\x00" || out[0].parent != 1 {
		return nil, fmt.Errorf("path table does not start with the root")
	}
	return out, nil
}

// serializePathTable is parsePathTable's inverse.
func serializePathTable(es []pathEntry, big bool) []byte {
	var b []byte
	for _, e := range es {
		r := make([]byte, 8+len(e.name)+len(e.name)%2)
		r[0] = byte(len(e.name))
		if big {
			binary.BigEndian.PutUint32(r[2:], e.lba)
			binary.BigEndian.PutUint16(r[6:], e.parent)
		} else {
			binary.LittleEndian.PutUint32(r[2:], e.lba)
			binary.LittleEndian.PutUint16(r[6:], e.parent)
		}
		copy(r[8:], e.name)
		b = append(b, r...)
	}
	return b
}

// withRootDir is es with a directory of the root inserted where ECMA-119
// 9.4 orders it (by level, then parent number, then identifier), every
// parent number after it moved up by one.
func withRootDir(es []pathEntry, name string, lba uint32) ([]pathEntry, error) {
	at := 1
	for at < len(es) && es[at].parent == 1 && es[at].name < name {
		at++
	}
	for i := 1; i < len(es) && es[i].parent == 1; i++ {
		if es[i].name == name {
			return nil, fmt.Errorf("the path table already lists /%s", name)
		}
	}
	num := uint16(at + 1) // the new entry's number
	out := make([]pathEntry, 0, len(es)+1)
	for i, e := range es {
		if i == at {
			out = append(out, pathEntry{name: name, lba: lba, parent: 1})
		}
		if e.parent >= num {
			e.parent++
		}
		out = append(out, e)
	}
	if at == len(es) {
		out = append(out, pathEntry{name: name, lba: lba, parent: 1})
	}
	return out, nil
}

// pathTableOverlays list a new directory of the root in the path tables
// of the volume descriptor in sector vd (the primary's, 16, or a Joliet
// one's, whose identifiers are UCS-2; type L and M, and their optional
// copies) and set the tables' new size. A reader that finds directories through the
// path tables (Windows', some firmware) then sees it too; Linux and
// xorriso read the directory records. The tables grow in place: a base
// whose tables have no room left in their last sector gets no overlay,
// and ok is false.
func (iso *ISO) pathTableOverlays(vd int64, name string, lba int64) (ovs []Overlay, ok bool, err error) {
	pvd := make([]byte, sectorSize)
	if _, err := iso.r.ReadAt(pvd, vd*sectorSize); err != nil {
		return nil, false, fmt.Errorf("extend: reading the volume descriptor in sector %d: %w", vd, err)
	}
	if (pvd[0] != 1 && pvd[0] != 2) || string(pvd[1:6]) != "CD001" || (vd == 16) != (pvd[0] == 1) {
		return nil, false, fmt.Errorf("extend: sector %d is no primary or supplementary volume descriptor", vd)
	}
	size := int64(binary.LittleEndian.Uint32(pvd[132:]))
	if size == 0 || size > maxPathTable {
		return nil, false, fmt.Errorf("extend: path table of %d bytes", size)
	}
	tables := []struct {
		lba int64
		big bool
	}{
		{int64(binary.LittleEndian.Uint32(pvd[140:])), false},
		{int64(binary.LittleEndian.Uint32(pvd[144:])), false},
		{int64(binary.BigEndian.Uint32(pvd[148:])), true},
		{int64(binary.BigEndian.Uint32(pvd[152:])), true},
	}
	room := (size + sectorSize - 1) / sectorSize * sectorSize
	for i, t := range tables {
		if t.lba == 0 {
			if i == 0 || i == 2 {
				return nil, false, fmt.Errorf("extend: the volume descriptor in sector %d has no type %c path table", vd, "LM"[i/2])
			}
			continue
		}
		if t.lba < 17 || (t.lba*sectorSize+room) > iso.size {
			return nil, false, fmt.Errorf("extend: path table at sector %d is outside the ISO", t.lba)
		}
		buf := make([]byte, room)
		if _, err := iso.r.ReadAt(buf, t.lba*sectorSize); err != nil {
			return nil, false, fmt.Errorf("extend: reading the path table at sector %d: %w", t.lba, err)
		}
		es, err := parsePathTable(buf[:size], t.big)
		if err != nil {
			return nil, false, fmt.Errorf("extend: the path table at sector %d: %w", t.lba, err)
		}
		if int64(len(es)) >= 0xFFFF {
			return nil, false, nil
		}
		nes, err := withRootDir(es, name, uint32(lba))
		if err != nil {
			return nil, false, fmt.Errorf("extend: %w: is it an extended ISO already?", err)
		}
		nb := serializePathTable(nes, t.big)
		if int64(len(nb)) > room {
			return nil, false, nil
		}
		for _, c := range buf[size:] {
			if c != 0 { // the rest of the sector holds something else
				return nil, false, nil
			}
		}
		ovs = append(ovs, Overlay{Region: fmt.Sprintf("path table at sector %d", t.lba), Offset: t.lba * sectorSize, Data: nb})
		if i == 0 {
			s := make([]byte, 8)
			binary.LittleEndian.PutUint32(s, uint32(len(nb)))
			binary.BigEndian.PutUint32(s[4:], uint32(len(nb)))
			ovs = append(ovs, Overlay{Region: fmt.Sprintf("path table size (sector %d)", vd), Offset: vd*sectorSize + 132, Data: s})
		}
	}
	return ovs, true, nil
}
