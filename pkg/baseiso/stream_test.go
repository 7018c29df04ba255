package baseiso

import (
	"encoding/hex"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/data"
	"github.com/seed-a052040e/agentiso/pkg/arch"
)

func TestEmbeddedStreamHasEveryArch(t *testing.T) {
	st, err := ParseStream(data.RHCOSStream())
	require.NoError(t, err)
	assert.Equal(t, "rhcos-4.16", st.Stream)
	for _, cpu := range arch.Supported() {
		a, err := LiveISO(st, cpu)
		require.NoError(t, err, cpu)
		assert.Equal(t, "416.94.202405291527-0", a.Release)
		assert.Equal(t, "rhcos-416.94.202405291527-0-live."+cpu+".iso", a.FileName)
		assert.True(t, strings.HasPrefix(a.URL, "https://rhcos.mirror.openshift.com/"), a.URL)
		assert.True(t, strings.HasSuffix(a.URL, "/"+a.FileName))
		assert.Len(t, a.SHA256, 64)
	}
	a, err := LiveISO(st, "amd64")
	require.NoError(t, err)
	assert.Equal(t, "2840596e392bd0c9b6b0d30d12d6d82a13d42cd7114dd9f979a1e9dd759de386", a.SHA256)
}

func TestEmbeddedStreamIsACopy(t *testing.T) {
	b := data.RHCOSStream()
	b[0] = 'X'
	assert.Equal(t, byte('{'), data.RHCOSStream()[0])
}

func TestParseStreamErrors(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"not json":      {`nope`, "parse CoreOS stream metadata: invalid character"},
		"no name":       {`{"architectures":{"x86_64":{}}}`, `field "stream" is missing or empty`},
		"no arches":     {`{"stream":"s"}`, `"s": field "architectures" is missing or empty`},
		"wrong type":    {`{"stream":1}`, "cannot unmarshal number"},
		"array":         {`[]`, "cannot unmarshal array"},
		"trailing junk": {`{"stream":"s"} x`, "invalid character"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseStream([]byte(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestLiveISOErrors(t *testing.T) {
	good := "https://h.example/a/" + testISOName
	sum := strings.Repeat("ab", 32)
	mk := func(body string) string {
		return `{"stream":"s","architectures":{"x86_64":` + body + `}}`
	}
	for name, tc := range map[string]struct{ in, arch, want string }{
		"arch missing": {mk(`{}`), "arm64", `CoreOS stream "s" has no architecture "aarch64" (it has: x86_64)`},
		"no metal":     {mk(`{"artifacts":{}}`), "x86_64", "architectures.x86_64.artifacts.metal is missing"},
		"no iso":       {mk(`{"artifacts":{"metal":{"release":"r","formats":{}}}}`), "x86_64", "metal.formats.iso.disk is missing"},
		"bad sha":      {mk(`{"artifacts":{"metal":{"release":"r","formats":{"iso":{"disk":{"location":"` + good + `","sha256":"xyz"}}}}}}`), "x86_64", "iso.disk.sha256: sha256 \"xyz\" must be 64 hex digits"},
		"non-hex sha":  {mk(`{"artifacts":{"metal":{"release":"r","formats":{"iso":{"disk":{"location":"` + good + `","sha256":"` + strings.Repeat("zz", 32) + `"}}}}}}`), "x86_64", "is not hex"},
		"ftp url":      {mk(`{"artifacts":{"metal":{"release":"r","formats":{"iso":{"disk":{"location":"ftp://h/x.iso","sha256":"` + sum + `"}}}}}}`), "x86_64", "iso.disk.location: URL \"ftp://h/x.iso\" must use http or https"},
		"no file name": {mk(`{"artifacts":{"metal":{"release":"r","formats":{"iso":{"disk":{"location":"https://h/","sha256":"` + sum + `"}}}}}}`), "x86_64", "does not end in a file name"},
		"no host":      {mk(`{"artifacts":{"metal":{"release":"r","formats":{"iso":{"disk":{"location":"https:///x.iso","sha256":"` + sum + `"}}}}}}`), "x86_64", "has no host"},
		"bad arch":     {mk(`{}`), "mips", "unsupported CPU architecture"},
	} {
		t.Run(name, func(t *testing.T) {
			st, err := ParseStream([]byte(tc.in))
			require.NoError(t, err)
			_, err = LiveISO(st, tc.arch)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// FuzzParseStream feeds arbitrary bytes to the stream parser and ISO lookup:
// they must never panic, and any artifact they accept must be usable as-is.
func FuzzParseStream(f *testing.F) {
	f.Add(data.RHCOSStream())
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"stream":"s","architectures":{"x86_64":{"artifacts":{"metal":{"release":"r","formats":{"iso":{"disk":{"location":"https://h/x.iso","sha256":"` + strings.Repeat("0", 64) + `"}}}}}}}}`))
	f.Add([]byte(`{"stream":"s","architectures":{"s390x":{"artifacts":{"metal":{"formats":{"iso":{"disk":null}}}}}}}`))
	f.Add([]byte(`{"stream":"s","architectures":{"x86_64":{"artifacts":{"metal":{"release":"r","formats":{"iso":{"disk":{"location":"http://h/..","sha256":"` + strings.Repeat("A", 64) + `"}}}}}}}}`))
	f.Add([]byte("\x00\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := ParseStream(b)
		if err != nil {
			require.Nil(t, st)
			return
		}
		require.NotEmpty(t, st.Stream)
		for _, cpu := range arch.Supported() {
			a, err := LiveISO(st, cpu)
			if err != nil {
				continue
			}
			assert.Equal(t, cpu, a.Arch)
			_, herr := hex.DecodeString(a.SHA256)
			assert.NoError(t, herr)
			assert.Len(t, a.SHA256, 64)
			assert.Equal(t, strings.ToLower(a.SHA256), a.SHA256)
			assert.True(t, safeFileName(a.FileName), "file name %q", a.FileName)
			assert.NotContains(t, a.FileName, "/")
			u, uerr := url.Parse(a.URL)
			require.NoError(t, uerr)
			assert.Contains(t, []string{"http", "https"}, u.Scheme)
			assert.NotEmpty(t, u.Host)
			// the mirror URL built from the name stays inside the mirror path
			m, merr := mirrorURL("https://mirror.example/base", a.FileName)
			require.NoError(t, merr)
			assert.True(t, strings.HasPrefix(m, "https://mirror.example/base/"), m)
		}
	})
}
