package isoeditor

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
)

// The new directory is inserted where ECMA-119 orders it, and every
// parent number after it moves up by one.
func TestWithRootDir(t *testing.T) {
	es := []pathEntry{{"\x00", 20, 1}, {"A", 21, 1}, {"Z", 22, 1}, {"B", 23, 2}, {"CHILD", 24, 3}, {"DEEP", 25, 5}}
	got, err := withRootDir(es, "M", 99)
	require.NoError(t, err)
	assert.Equal(t, []pathEntry{{"\x00", 20, 1}, {"A", 21, 1}, {"M", 99, 1}, {"Z", 22, 1}, {"B", 23, 2}, {"CHILD", 24, 4}, {"DEEP", 25, 6}}, got)
	last, err := withRootDir(es, "ZZ", 99)
	require.NoError(t, err)
	assert.Equal(t, []pathEntry{{"\x00", 20, 1}, {"A", 21, 1}, {"Z", 22, 1}, {"ZZ", 99, 1}, {"B", 23, 2}, {"CHILD", 24, 3}, {"DEEP", 25, 6}}, last,
		"after the root's last child: only the numbers from 4 on move")
	_, err = withRootDir(es, "Z", 99)
	assert.ErrorContains(t, err, "already lists /Z")

	for _, big := range []bool{false, true} {
		back, err := parsePathTable(serializePathTable(got, big), big)
		require.NoError(t, err)
		assert.Equal(t, got, back)
	}
	_, err = parsePathTable([]byte{1, 0, 0, 0, 0, 0, 9, 0, 0, 0}, false)
	assert.ErrorContains(t, err, "names parent 9")
	_, err = parsePathTable([]byte{5, 0, 0, 0}, false)
	assert.ErrorContains(t, err, "cut short")
}

// isoinfo (genisoimage), an independent reader of the path tables, lists
// the new directory with its extent, and the tables still agree with the
// directory records.
func TestExtendListsTheDirectoryInThePathTables(t *testing.T) {
	isoinfo, err := exec.LookPath("isoinfo")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("isoinfo (genisoimage) is required in CI")
		}
		t.Skip("isoinfo (genisoimage) not installed")
	}
	p, _ := makeISO(t, testiso.Options{})
	iso, _ := openFile(t, p)
	before, err := exec.Command(isoinfo, "-p", "-i", p).CombinedOutput()
	require.NoError(t, err, "%s", before)
	x, err := iso.Extend(mustEdit(t, iso), appendix(streamBytes(4*2048), 2048))
	require.NoError(t, err)
	assert.True(t, x.PathTables)
	dst := filepath.Join(t.TempDir(), "x.iso")
	st, err := WriteExtendedStaged(context.Background(), dst, x, WriteOptions{})
	require.NoError(t, err)
	require.NoError(t, st.Commit())
	after, err := exec.Command(isoinfo, "-p", "-i", dst).CombinedOutput()
	require.NoError(t, err, "%s", after)
	t.Logf("before:\n%s\nafter:\n%s", before, after)

	entry := regexp.MustCompile(`(?m)^\s*(\d+):\s+(\d+)\s+([0-9a-f]+)\s+(\S*)\s*$`)
	parse := func(out []byte) map[string][2]string { // name -> parent name, extent
		ms := entry.FindAllStringSubmatch(string(out), -1)
		names := map[string]string{}
		for _, m := range ms {
			names[m[1]] = m[4]
		}
		got := map[string][2]string{}
		for _, m := range ms {
			got[m[4]] = [2]string{names[m[2]], m[3]}
		}
		return got
	}
	b, a := parse(before), parse(after)
	require.NotEmpty(t, b)
	want := map[string][2]string{}
	for k, v := range b {
		want[k] = v
	}
	want["REGISTRY"] = [2]string{"", fmt.Sprintf("%x", x.start/sectorSize)}
	assert.Equal(t, want, a, "every directory keeps its parent and extent; /REGISTRY joins the root's")
	size := regexp.MustCompile(`size (\d+)`)
	sb, sa := size.FindStringSubmatch(string(before)), size.FindStringSubmatch(string(after))
	require.NotNil(t, sb)
	require.NotNil(t, sa)
	nb, _ := strconv.Atoi(sb[1])
	na, _ := strconv.Atoi(sa[1])
	assert.Equal(t, nb+16, na, "one record of 8 bytes and the 8-byte name REGISTRY")

	// The type M table (big-endian) says the same as the type L one.
	out, err := os.ReadFile(dst)
	require.NoError(t, err)
	pvd := out[16*sectorSize:]
	n := int(binary.LittleEndian.Uint32(pvd[132:]))
	l, err := parsePathTable(out[int(binary.LittleEndian.Uint32(pvd[140:]))*sectorSize:][:n], false)
	require.NoError(t, err)
	m, err := parsePathTable(out[int(binary.BigEndian.Uint32(pvd[148:]))*sectorSize:][:n], true)
	require.NoError(t, err)
	assert.Equal(t, l, m)
	assert.Equal(t, uint32(n), binary.BigEndian.Uint32(pvd[136:]), "both byte orders of the size")
}

// A base ISO's path table is outside input: never a panic, and what parses
// serializes back to the same bytes.
func FuzzParsePathTable(f *testing.F) {
	f.Add(serializePathTable([]pathEntry{{"\x00", 20, 1}, {"COREOS", 21, 1}, {"EFI", 22, 1}, {"REDHAT", 23, 3}}, false), false)
	f.Add(serializePathTable([]pathEntry{{"\x00", 20, 1}, {"AB", 21, 1}}, true), true)
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, false)
	f.Fuzz(func(t *testing.T, b []byte, big bool) {
		es, err := parsePathTable(b, big)
		if err != nil {
			return
		}
		again := serializePathTable(es, big)
		back, err := parsePathTable(again, big)
		require.NoError(t, err)
		require.Equal(t, es, back)
		if _, err := withRootDir(es, "REGISTRY", 7); err == nil {
			require.NotPanics(t, func() { serializePathTable(es, !big) })
		}
	})
}
