package isoeditor

import (
	"bytes"

	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
)

func FuzzParseIgnInfo(f *testing.F) {
	f.Add([]byte("{\n  \"file\": \"images/ignition.img\"\n}\n"))
	f.Add([]byte(`{"file": "images/cdboot.img", "length": 262144, "offset": 123456}`))
	f.Add([]byte(`{"file": "", "offset": -1}`))
	f.Add([]byte(`{"file": "x", "length": 0}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ii, err := ParseIgnInfo(b)
		if err != nil {
			require.Contains(t, err.Error(), IgnInfoPath)
			return
		}
		require.NotEmpty(t, ii.File)
		if ii.Offset != nil {
			require.GreaterOrEqual(t, *ii.Offset, int64(0))
		}
		if ii.Length != nil {
			require.Positive(t, *ii.Length)
		}
	})
}

func FuzzParseKargsJSON(f *testing.F) {
	f.Add([]byte(`{"default": "mitigations=auto,nosmt coreos.liveiso=fedora-coreos-38 ignition.firstboot ignition.platform.id=metal",
  "files": [{"end": "\n", "offset": 970, "pad": "#", "path": "EFI/fedora/grub.cfg"},
            {"end": "\n", "offset": 1869, "pad": "#", "path": "isolinux/isolinux.cfg"}], "size": 1139}`))
	f.Add([]byte(`{"default": "", "files": [{"end": "\u0000", "offset": 0, "pad": "\u0000", "path": "images/cdboot.img"}], "size": 896}`))
	f.Add([]byte(`{"files": [{"pad": "##", "path": "a"}], "size": 4096}`))
	f.Add([]byte(`{"files": [], "size": 1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		kj, err := ParseKargsJSON(b)
		if err != nil {
			require.Contains(t, err.Error(), KargsJSONPath)
			return
		}
		require.NotEmpty(t, kj.Files)
		require.True(t, kj.Size > 0 && kj.Size <= maxKargsAreaSize)
		for _, fl := range kj.Files {
			require.GreaterOrEqual(t, fl.Offset, int64(0))
			if fl.Pad != nil {
				require.Len(t, *fl.Pad, 1)
			}
		}
	})
}

func FuzzParseInitrd(f *testing.F) {
	arc, err := IgnitionArchive([]byte(`{"ignition":{"version":"3.2.0"}}`), InitrdFile{Path: "etc/a/b", Data: []byte("x")})
	require.NoError(f, err)
	f.Add(arc)
	f.Add(append(make([]byte, 8), arc...))
	f.Add([]byte("070701"))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		files, err := ParseInitrd(b)
		if err != nil {
			return
		}
		var total int
		for _, fl := range files {
			total += len(fl.Data)
		}
		require.LessOrEqual(t, total, maxInitrdData)
		// What parsed can be rebuilt and parses back the same (when names are valid and unique).
		arc, err := NewInitrd(files...)
		if err != nil {
			return
		}
		again, err := ParseInitrd(arc)
		require.NoError(t, err)
		require.Len(t, again, len(files))
	})
}

// FuzzOpen patches a small valid live ISO at a fuzzed offset (mostly inside
// its metadata) and also tries the raw input as an ISO. Open and the readers
// must return errors, never panic, and anything they return must lie inside the image.
func FuzzOpen(f *testing.F) {
	base, _, err := testiso.Bytes(testiso.Options{Size: 128 << 10, EmbedAreaSize: 4096})
	require.NoError(f, err)
	f.Add(uint32(32768+156), []byte{0xff, 0xff, 0xff, 0xff}, false)
	f.Add(uint32(32768+40), []byte("fedora-coreos-38"), false)
	f.Add(uint32(20*2048), []byte{200, 0, 1, 2, 3}, false)
	f.Add(uint32(0), []byte("CD001"), true)
	f.Fuzz(func(t *testing.T, off uint32, patch []byte, raw bool) {
		var img []byte
		if raw {
			img = patch
		} else {
			img = bytes.Clone(base)
			o := int(off) % len(img)
			copy(img[o:], patch)
		}
		iso, err := Open(bytes.NewReader(img), int64(len(img)))
		if err != nil {
			return
		}
		size := int64(len(img))
		a := iso.IgnitionArea()
		require.True(t, a.Length > 0 && a.ISOOffset() >= 0 && a.ISOOffset()+a.Length <= size)
		if ka := iso.KargsAreas(); ka != nil {
			for _, ar := range ka.Areas {
				require.True(t, ar.Offset >= 0 && ar.Offset+ka.Size <= size)
			}
			_, _ = iso.Kargs()
		}
		_, _ = iso.EmbeddedIgnition()
		_, _ = iso.Edit(Edit{Ignition: []byte("{}"), AppendKargs: []string{"x=y"}})

	})
}
