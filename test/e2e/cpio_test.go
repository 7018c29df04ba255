package e2e

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readNewc is an independent newc reader for checking WriteNewc.
func readNewc(t *testing.T, b []byte) []CpioEntry {
	t.Helper()
	var out []CpioEntry
	pos := 0
	field := func(i int) int {
		v, err := strconv.ParseUint(string(b[pos+6+8*i:pos+14+8*i]), 16, 32)
		require.NoError(t, err)
		return int(v)
	}
	align := func(n int) int { return (n + 3) &^ 3 }
	for {
		require.LessOrEqual(t, pos+110, len(b), "header past the end")
		require.Equal(t, "070701", string(b[pos:pos+6]))
		mode, size, nameSize := field(1), field(6), field(11)
		name := string(b[pos+110 : pos+110+nameSize-1])
		require.Equal(t, byte(0), b[pos+110+nameSize-1], "name NUL")
		data := align(pos + 110 + nameSize)
		if name == "TRAILER!!!" {
			assert.Equal(t, len(b), align(data), "nothing after the trailer")
			return out
		}
		out = append(out, CpioEntry{Name: name, Mode: uint32(mode), Data: append([]byte(nil), b[data:data+size]...)})
		pos = align(data + size)
	}
}

func TestWriteNewcHeader(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteNewc(&buf, []CpioEntry{File("a", []byte("xyz"))}))
	b := buf.Bytes()
	want := "070701" + "00000001" + "000081A4" + "00000000" + "00000000" + "00000001" + "00000000" +
		"00000003" + "00000000" + "00000000" + "00000000" + "00000000" + "00000002" + "00000000" + "a\x00"
	assert.Equal(t, want, string(b[:len(want)]))
	assert.Equal(t, "xyz\x00", string(b[112:116]), "data aligned to 4 and padded")
	assert.Zero(t, len(b)%4)
}

func TestWriteNewcRoundTrip(t *testing.T) {
	entries := WithParentDirs([]CpioEntry{
		File("etc/assisted/manifests/x.yaml", []byte("k: v\n")),
		File("config.ign", []byte("{}")),
		File("etc/NetworkManager/system-connections/eth0.nmconnection", []byte("[connection]\n")),
	})
	var names []string
	for _, e := range entries {
		names = append(names, fmt.Sprintf("%s %o", e.Name, e.Mode))
	}
	assert.Equal(t, []string{
		"config.ign 100644",
		"etc 40755",
		"etc/NetworkManager 40755",
		"etc/NetworkManager/system-connections 40755",
		"etc/NetworkManager/system-connections/eth0.nmconnection 100644",
		"etc/assisted 40755",
		"etc/assisted/manifests 40755",
		"etc/assisted/manifests/x.yaml 100644",
	}, names)

	gz, err := GzipNewc(entries)
	require.NoError(t, err)
	assert.Zero(t, len(gz)%4, "padded to 4 bytes")
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	require.NoError(t, err)
	zr.Multistream(false) // the NUL padding after the member is not a gzip header
	raw, err := io.ReadAll(zr)
	require.NoError(t, err)
	got := readNewc(t, raw)
	require.Len(t, got, len(entries))
	for i := range entries {
		assert.Equal(t, entries[i].Name, got[i].Name)
		assert.Equal(t, entries[i].Mode, got[i].Mode)
		assert.Equal(t, string(entries[i].Data), string(got[i].Data))
	}
}

func TestWriteNewcRejectsBadNames(t *testing.T) {
	for _, name := range []string{"", "/etc/x"} {
		err := WriteNewc(io.Discard, []CpioEntry{File(name, nil)})
		assert.ErrorContains(t, err, "must be relative and non-empty", name)
	}
}
