package isoeditor_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/internal/fake/testiso/testminiso"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

// BenchmarkMinimalAgentISO builds a minimal agent ISO (config, kargs,
// rootfs URL) from a dense 256 MiB full ISO whose minimal ISO is mostly its
// initrd, against copying a file of the minimal ISO's size. The cost is one
// pass over the minimal ISO (reading what it shares with the full ISO,
// decompressing the rest, hashing the pristine bytes for the miniso
// digest and the output for its .sha256). B/op does not grow with the
// minimal ISO's size.
func BenchmarkMinimalAgentISO(b *testing.B) {
	for _, initrd := range []int64{16 << 20, 64 << 20} {
		b.Run(fmt.Sprintf("initrd=%dMiB", initrd>>20), func(b *testing.B) {
			dir := b.TempDir()
			full := filepath.Join(dir, "full.iso")
			res, err := testminiso.WriteFile(full, testiso.Options{Size: 256 << 20, InitrdSize: initrd, Dense: true})
			require.NoError(b, err)
			size := int64(len(res.MinimalBytes))
			res.MinimalBytes = nil
			out := filepath.Join(dir, "agent.iso")
			b.SetBytes(size)
			b.ReportAllocs()
			var edit, cp time.Duration
			for b.Loop() {
				t0 := time.Now()
				require.NoError(b, isoeditor.CopyRangeLikeCp(full, 0, size, out+".cp"))
				t1 := time.Now()
				iso, f, err := isoeditor.OpenFile(full)
				require.NoError(b, err)
				m, err := iso.Minimal()
				require.NoError(b, err)
				img, err := m.Edit(isoeditor.Edit{Ignition: []byte(`{"ignition":{"version":"3.2.0"}}`), AppendKargs: []string{"console=ttyS0"}}, "http://10.0.0.1/boot/agent.x86_64-rootfs.img")
				require.NoError(b, err)
				_, err = isoeditor.WriteFile(context.Background(), out, img, isoeditor.WriteOptions{})
				require.NoError(b, err)
				f.Close()
				edit += time.Since(t1)
				cp += t1.Sub(t0)
			}
			b.ReportMetric(edit.Seconds()/cp.Seconds(), "x-cp")
		})
	}
}

// BenchmarkPXEFiles writes the PXE files of a dense 256 MiB full ISO
// as create pxe-files does (kernel and rootfs copied by the kernel while
// hashed, initrd with the Ignition archive appended through user space,
// each with its sha256), against copying the same bytes: one pass over the
// base.
func BenchmarkPXEFiles(b *testing.B) {
	dir := b.TempDir()
	full := filepath.Join(dir, "full.iso")
	_, err := testiso.WriteFile(full, testiso.Options{Size: 256 << 20, InitrdSize: 32 << 20, Dense: true})
	require.NoError(b, err)
	arc, err := isoeditor.IgnitionArchive([]byte(`{"ignition":{"version":"3.2.0"}}`))
	require.NoError(b, err)
	iso, f, err := isoeditor.OpenFile(full)
	require.NoError(b, err)
	defer f.Close()
	type ext struct{ off, size int64 }
	var parts []ext
	var total int64
	for _, p := range []string{"images/pxeboot/vmlinuz", "images/pxeboot/initrd.img", isoeditor.RootfsPath} {
		off, size, err := iso.FileExtent(p)
		require.NoError(b, err)
		parts = append(parts, ext{off, size})
		total += size
	}
	b.SetBytes(total)
	b.ReportAllocs()
	var write, cp time.Duration
	for b.Loop() {
		t0 := time.Now()
		for i, p := range parts {
			require.NoError(b, isoeditor.CopyRangeLikeCp(full, p.off, p.size, filepath.Join(dir, fmt.Sprintf("cp%d", i))))
		}
		t1 := time.Now()
		for i, p := range parts {
			dst := filepath.Join(dir, fmt.Sprintf("out%d", i))
			var st *isoeditor.Staged
			if i == 1 {
				r, n := isoeditor.PXEInitrd(io.NewSectionReader(f, p.off, p.size), p.size, arc)
				st, err = isoeditor.WriteReaderStaged(context.Background(), dst, r, n, isoeditor.WriteOptions{})
			} else {
				st, err = isoeditor.WriteFileRangeStaged(context.Background(), dst, f, p.off, p.size, isoeditor.WriteOptions{})
			}
			require.NoError(b, err)
			require.NoError(b, st.Commit())
		}
		write += time.Since(t1)
		cp += t1.Sub(t0)
	}
	b.ReportMetric(write.Seconds()/cp.Seconds(), "x-cp")
}
