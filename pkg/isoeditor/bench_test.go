package isoeditor

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
)

// benchBase writes a synthetic base ISO for a benchmark. dense ISOs hold real
// bytes everywhere (what cp and the editor must really move); sparse ones
// are holes and cost no disk (fine for measuring memory).
func benchBase(b *testing.B, size int64, dense bool) string {
	b.Helper()
	p := filepath.Join(b.TempDir(), "base.iso")
	_, err := testiso.WriteFile(p, testiso.Options{Size: size, Dense: dense})
	require.NoError(b, err)
	return p
}

// copyLikeCp is the baseline: what cp does (io.Copy between two *os.File,
// which uses copy_file_range on Linux), plus the fsync WriteFile also does.
func copyLikeCp(src, dst string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	return copyRangeLikeCp(src, 0, fi.Size(), dst)
}

// copyRangeLikeCp copies n bytes of src from off the way copyLikeCp does
// (a LimitedReader over the *os.File keeps io.Copy on copy_file_range).
func copyRangeLikeCp(src string, off, n int64, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if _, err := in.Seek(off, io.SeekStart); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(in, n)); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func editOnce(base, dst string, opts WriteOptions) (*WriteResult, error) {
	iso, f, err := OpenFile(base)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, err := iso.Edit(Edit{Ignition: []byte(testConfig), AppendKargs: []string{"console=ttyS0"}})
	if err != nil {
		return nil, err
	}
	return WriteFile(context.Background(), dst, img, opts)
}

// BenchmarkEditVsCopy1GiB builds an edited ISO from a 1 GiB base and copies
// the same base like cp, alternately (and in alternating order) in the same
// run, each into a fresh output. It reports both mean times and the median
// of the per-iteration ratios (target <= 1.05 for the streaming path
// without reflink); the median resists the outliers of a shared machine.
func BenchmarkEditVsCopy1GiB(b *testing.B) {
	// One base for all sub-benchmarks, flushed to disk so its writeback does
	// not land in the middle of a measurement.
	base := benchBase(b, 1<<30, true)
	f, err := os.OpenFile(base, os.O_RDWR, 0)
	require.NoError(b, err)
	require.NoError(b, f.Sync())
	f.Close()
	for _, tc := range []struct {
		name string
		opts WriteOptions
	}{
		{"kernel-copy", WriteOptions{NoReflink: true}},
		{"kernel-copy-nohash", WriteOptions{NoReflink: true, NoChecksum: true}},
		{"portable", WriteOptions{NoKernelCopy: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			// warm the page cache so neither side pays the first read
			require.NoError(b, copyLikeCp(base, filepath.Join(dir, "warm")))
			os.Remove(filepath.Join(dir, "warm"))
			var tCopy, tEdit time.Duration
			var ratios []float64
			method := ""
			cpOut, edOut := filepath.Join(dir, "cp.iso"), filepath.Join(dir, "agent.iso")
			doCopy := func() {
				t0 := time.Now()
				require.NoError(b, copyLikeCp(base, cpOut))
				tCopy += time.Since(t0)
			}
			doEdit := func() {
				t0 := time.Now()
				res, err := editOnce(base, edOut, tc.opts)
				require.NoError(b, err)
				tEdit += time.Since(t0)
				method = res.Method
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c0, e0 := tCopy, tEdit
				if i%2 == 0 {
					doCopy()
					doEdit()
				} else {
					doEdit()
					doCopy()
				}
				ratios = append(ratios, (tEdit-e0).Seconds()/(tCopy-c0).Seconds())
				b.StopTimer()
				os.Remove(cpOut)
				os.Remove(edOut)
				os.Remove(edOut + ".sha256")
				b.StartTimer()
			}
			b.ReportMetric(tCopy.Seconds()/float64(b.N), "cp-s/op")
			b.ReportMetric(tEdit.Seconds()/float64(b.N), "edit-s/op")
			sort.Float64s(ratios)
			median := ratios[len(ratios)/2]
			if len(ratios)%2 == 0 {
				median = (ratios[len(ratios)/2-1] + median) / 2
			}
			b.ReportMetric(median, "median-edit/cp")
			b.Logf("method=%s n=%d cp=%v edit=%v median ratio=%.3f (per-iteration %.2f)", method, b.N, tCopy/time.Duration(b.N), tEdit/time.Duration(b.N), median, ratios)
		})
	}
}

// BenchmarkEditPeakRSS runs the edit in a child process and reports its peak
// RSS (rusage maxrss) for a 1 GiB and a 4 GiB base: it must not grow with
// the ISO size (target < 64 MiB).
func BenchmarkEditPeakRSS(b *testing.B) {
	for _, size := range []int64{1 << 30, 4 << 30} {
		b.Run(fmt.Sprintf("%dGiB", size>>30), func(b *testing.B) {
			base := benchBase(b, size, false)
			dir := b.TempDir()
			var peak int64
			for i := 0; i < b.N; i++ {
				out := filepath.Join(dir, "agent.iso")
				cmd := exec.Command(os.Args[0], "-test.run=^TestEditHelperProcess$", "-test.count=1")
				cmd.Env = append(os.Environ(), "AGENTISO_EDIT_HELPER_BASE="+base, "AGENTISO_EDIT_HELPER_OUT="+out)
				got, err := cmd.CombinedOutput()
				require.NoError(b, err, "%s", got)
				ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
				peak = max(peak, ru.Maxrss*1024) // Linux reports KiB
				os.Remove(out)
				os.Remove(out + ".sha256")
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
			b.Logf("peak RSS %.1f MiB for a %d GiB base", float64(peak)/(1<<20), size>>30)
		})
	}
}

// TestEditHelperProcess is the child of BenchmarkEditPeakRSS; it does nothing
// in a normal test run.
func TestEditHelperProcess(t *testing.T) {
	base, out := os.Getenv("AGENTISO_EDIT_HELPER_BASE"), os.Getenv("AGENTISO_EDIT_HELPER_OUT")
	if base == "" || out == "" {
		t.Skip("helper process for BenchmarkEditPeakRSS")
	}
	_, err := editOnce(base, out, WriteOptions{})
	require.NoError(t, err)
}
