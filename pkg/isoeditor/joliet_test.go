package isoeditor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
)

// jolietBase is the test base ISO remastered as RHCOS's is, with both
// Rock Ridge and Joliet trees (coreos-assembler's live-artifacts stage:
// genisoimage or xorrisofs -rational-rock -J -joliet-long), by tool.
func jolietBase(t *testing.T, tool string) string {
	t.Helper()
	p, _ := makeISO(t, testiso.Options{})
	tree := filepath.Join(t.TempDir(), "tree")
	b, err := exec.Command(osirrox(t), "-indev", p, "-extract", "/", tree).CombinedOutput()
	require.NoError(t, err, "%s", b)
	out := filepath.Join(t.TempDir(), "joliet.iso")
	args := []string{"-V", "rhcos-9.6.20251021-0", "-rational-rock", "-J", "-joliet-long", "-o", out, tree}
	if tool == "xorrisofs" {
		args = append([]string{"-as", "mkisofs"}, args...)
		tool = "xorriso"
	}
	b, err = exec.Command(needTool(t, tool), args...).CombinedOutput()
	require.NoError(t, err, "%s", b)
	return out
}

// TestExtendListsTheDirectoryInTheJolietTree: a base with a Joliet tree
// gets /registry there too, as genisoimage or xorrisofs would have listed
// it: isoinfo -J (the Joliet tree) lists exactly the files isoinfo -R
// (Rock Ridge) lists, each piece reads back the same through Joliet, and
// the Joliet path table has the directory.
func TestExtendListsTheDirectoryInTheJolietTree(t *testing.T) {
	isoinfo := needTool(t, "isoinfo")
	for _, tool := range []string{"genisoimage", "xorrisofs"} {
		t.Run(tool, func(t *testing.T) {
			base := jolietBase(t, tool)
			list := func(p, tree string) []string {
				out, err := exec.Command(isoinfo, tree, "-f", "-i", p).CombinedOutput()
				require.NoError(t, err, "%s", out)
				ls := strings.Fields(string(out))
				sort.Strings(ls)
				return ls
			}
			require.Equal(t, list(base, "-R"), list(base, "-J"), "the base's two trees")

			iso, _ := openFile(t, base)
			stream := streamBytes(5 * 2048)
			x, err := iso.Extend(mustEdit(t, iso), appendix(stream, 2*2048))
			require.NoError(t, err)
			assert.True(t, x.PathTables)
			dst := filepath.Join(t.TempDir(), "x.iso")
			st, err := WriteExtendedStaged(context.Background(), dst, x, WriteOptions{})
			require.NoError(t, err)
			require.NoError(t, st.Commit())

			rr, joliet := list(dst, "-R"), list(dst, "-J")
			assert.Equal(t, rr, joliet, "the Joliet tree lists what the Rock Ridge tree lists")
			for _, f := range []string{"/registry", "/registry/data.iso.aa", "/registry/data.iso.ab", "/registry/data.iso.ac"} {
				assert.Contains(t, joliet, f)
			}
			var joined []byte
			for _, piece := range []string{"aa", "ab", "ac"} {
				out, err := exec.Command(isoinfo, "-J", "-i", dst, "-x", "/registry/data.iso."+piece).Output()
				require.NoError(t, err)
				joined = append(joined, out...)
			}
			assert.True(t, bytes.Equal(stream, joined), "the pieces read through Joliet are the stream")

			pt, err := exec.Command(isoinfo, "-J", "-p", "-i", dst).CombinedOutput()
			require.NoError(t, err, "%s", pt)
			jdir := x.start/sectorSize + 1 // after the primary tree's one-sector directory
			assert.Regexp(t, regexp.MustCompile(fmt.Sprintf(`(?m)^\s*\d+:\s+1\s+%x\s+registry\s*$`, jdir)), string(pt))
			// the rest of the ISO is still an ISO the kernel-less readers accept
			b, err := exec.Command(osirrox(t), "-indev", dst, "-find", "/registry").CombinedOutput()
			require.NoError(t, err, "%s", b)
			assert.Contains(t, string(b), "/registry/data.iso.ac")
			_ = os.Remove(dst)
		})
	}
}

// FuzzExtendJoliet patches a base with a Joliet tree (genisoimage's) at a
// fuzzed offset: the Joliet volume descriptor, root directory and path
// tables are outside input. Extend must return an error or an extension
// whose overlays lie inside the base, never panic.
func FuzzExtendJoliet(f *testing.F) {
	gen, err := exec.LookPath("genisoimage")
	if err != nil {
		if os.Getenv("CI") != "" {
			f.Fatal("genisoimage is required in CI: run hack/install-deps.sh")
		}
		f.Skip("genisoimage not installed")
	}
	dir := f.TempDir()
	tree := filepath.Join(dir, "tree")
	for p, data := range map[string]string{"images/ignition.img": strings.Repeat("\x00", 4096), "coreos/igninfo.json": `{"file": "images/ignition.img"}`, "EFI/x": "x"} {
		require.NoError(f, os.MkdirAll(filepath.Dir(filepath.Join(tree, p)), 0o755))
		require.NoError(f, os.WriteFile(filepath.Join(tree, p), []byte(data), 0o644))
	}
	out := filepath.Join(dir, "j.iso")
	b, err := exec.Command(gen, "-quiet", "-V", "rhcos-9.6.20251021-0", "-rational-rock", "-J", "-joliet-long", "-o", out, tree).CombinedOutput()
	require.NoError(f, err, "%s", b)
	base, err := os.ReadFile(out)
	require.NoError(f, err)
	if _, err := Open(bytes.NewReader(base), int64(len(base))); err != nil {
		f.Skipf("the genisoimage base is no live ISO for Open: %v", err)
	}
	f.Add(uint32(17*2048+156), []byte{0xff, 0xff, 0xff, 0xff}) // Joliet root's extent
	f.Add(uint32(17*2048+132), []byte{0xff, 0xff, 0xff, 0x7f}) // Joliet path table size
	f.Add(uint32(17*2048+140), []byte{0x01, 0x00, 0x00, 0x00}) // its type L table in sector 1
	f.Add(uint32(17*2048+88), []byte("%/@"))
	f.Fuzz(func(t *testing.T, off uint32, patch []byte) {
		img := bytes.Clone(base)
		copy(img[int(off)%len(img):], patch)
		iso, err := Open(bytes.NewReader(img), int64(len(img)))
		if err != nil {
			return
		}
		ed, err := iso.Edit(Edit{Ignition: []byte("{}")})
		if err != nil {
			return
		}
		x, err := iso.Extend(ed, appendix(streamBytes(2048), 2048))
		if err != nil {
			return
		}
		for _, o := range x.Image.overlays {
			require.True(t, o.Offset >= 0 && o.End() <= int64(len(img)), "%s at %d", o.Region, o.Offset)
		}
	})
}
