// Package testminiso writes synthetic full live ISOs (internal/fake/testiso) whose coreos/miniso.dat really describes their minimal ISO, packed with isoeditor.PackMiniso as a live ISO build packs it.
// Make writes the test ISOs of `agentiso-dev make-test-iso`, with or without
// that file, edited as agent ISOs are when asked.
package testminiso

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

// datSize is the size of coreos/miniso.dat in a real live ISO.
const datSize = 16 << 10

// AppVersion is the packer version recorded in the data file.
const AppVersion = "agentiso-testminiso"

// Result describes the full ISO written and the minimal ISO it carries.
type Result struct {
	Full    *testiso.Layout
	Minimal *testiso.Layout
	// MinimalBytes is the minimal ISO exactly as miniso.dat rebuilds it.
	MinimalBytes []byte
	Data         *isoeditor.MinisoData
}

// WriteFile writes the full ISO of o to path, with a coreos/miniso.dat
// that rebuilds the minimal ISO of the same options (testiso.Options.Minimal):
// every file the two images share byte for byte is an extent of the full
// ISO, everything else is packed.
func WriteFile(path string, o testiso.Options) (*Result, error) {
	o.Minimal = false
	o.MinisoDat = make([]byte, datSize)
	full, err := testiso.WriteFile(path, o)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	res, err := pack(f, full, o)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	return res, nil
}

type file interface {
	io.ReaderAt
	io.WriterAt
}

func pack(f file, full *testiso.Layout, o testiso.Options) (*Result, error) {
	o.Minimal, o.MinisoDat = true, nil
	minimal, mlay, err := testiso.Bytes(o)
	if err != nil {
		return nil, err
	}
	var extents []isoeditor.MinisoExtent
	for p, me := range mlay.Files {
		fe, ok := full.Files[p]
		if !ok || fe.Size != me.Size || me.Size == 0 {
			continue
		}
		b := make([]byte, fe.Size)
		if _, err := f.ReadAt(b, fe.Offset); err != nil {
			return nil, fmt.Errorf("testminiso: reading %s: %w", p, err)
		}
		if bytes.Equal(b, minimal[me.Offset:me.Offset+me.Size]) {
			extents = append(extents, isoeditor.MinisoExtent{MinimalOffset: me.Offset, FullOffset: fe.Offset, Length: me.Size})
		}
	}
	sort.Slice(extents, func(i, j int) bool { return extents[i].MinimalOffset < extents[j].MinimalOffset })
	m, err := isoeditor.PackMiniso(bytes.NewReader(minimal), int64(len(minimal)), extents, AppVersion)
	if err != nil {
		return nil, err
	}
	dat := m.Marshal()
	if len(dat) > datSize {
		return nil, fmt.Errorf("testminiso: packed data is %d bytes, more than the %d-byte coreos/miniso.dat", len(dat), datSize)
	}
	if _, err := f.WriteAt(dat, full.Files[isoeditor.MinisoPath].Offset); err != nil {
		return nil, err
	}
	return &Result{Full: full, Minimal: mlay, MinimalBytes: minimal, Data: m}, nil
}
