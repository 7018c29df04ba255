package live

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
	"github.com/seed-a052040e/agentiso/test/e2e"
)

func TestEditUnit(t *testing.T) {
	dir := t.TempDir()
	iso := filepath.Join(dir, "agent.iso")
	_, err := testiso.WriteFile(iso, testiso.Options{})
	require.NoError(t, err)
	unit := "[Service]\nExecStart=/usr/bin/podman run --net host --restart=on-failure:10 img cmd\n"
	other := "[Service]\nExecStart=/bin/true\n"
	cfg := types.Config{Ignition: types.Ignition{Version: "3.2.0"}}
	cfg.Systemd.Units = []types.Unit{{Name: "a.service", Contents: &unit}, {Name: "b.service", Contents: &other}}
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	nm := isoeditor.InitrdFile{Path: "etc/x.nmconnection", Mode: 0o600, Data: []byte("[connection]\n")}
	archive, err := isoeditor.IgnitionArchive(b, nm)
	require.NoError(t, err)
	require.NoError(t, e2e.EmbedIgnitionArchive(iso, archive))

	require.NoError(t, EditUnit(iso, "a.service", AddPodmanFlag("--rm")))

	got, f, err := isoeditor.OpenFile(iso)
	require.NoError(t, err)
	defer f.Close()
	files, err := got.EmbeddedFiles()
	require.NoError(t, err)
	var out types.Config
	var sawNM bool
	for _, file := range files {
		switch file.Path {
		case isoeditor.IgnitionConfigName:
			require.NoError(t, json.Unmarshal(file.Data, &out))
		case nm.Path:
			sawNM = true
			assert.Equal(t, nm.Data, file.Data)
		}
	}
	assert.True(t, sawNM, "the other files of the embed area are kept")
	require.Len(t, out.Systemd.Units, 2)
	assert.Equal(t, "[Service]\nExecStart=/usr/bin/podman run --rm --net host --restart=on-failure:10 img cmd\n", *out.Systemd.Units[0].Contents)
	assert.Equal(t, other, *out.Systemd.Units[1].Contents)

	require.ErrorContains(t, EditUnit(iso, "missing.service", AddPodmanFlag("--rm")), "no unit missing.service")
	require.ErrorContains(t, EditUnit(iso, "b.service", AddPodmanFlag("--rm")), "no /usr/bin/podman run command")
	_, err = os.Stat(iso)
	require.NoError(t, err)
}

func TestEditFiles(t *testing.T) {
	dir := t.TempDir()
	iso := filepath.Join(dir, "agent.iso")
	_, err := testiso.WriteFile(iso, testiso.Options{})
	require.NoError(t, err)
	const digest = "quay.io/r/release@sha256:abcd"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err = zw.Write([]byte("RELEASE_IMAGE=" + digest + "\n"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	plain := "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString([]byte("echo "+digest+"\n"))
	compressed := "data:;base64," + base64.StdEncoding.EncodeToString(gz.Bytes())
	escaped := "data:,a%20b+c"
	gzipName := "gzip"
	cfg := types.Config{Ignition: types.Ignition{Version: "3.2.0"}}
	cfg.Storage.Files = []types.File{
		{Node: types.Node{Path: "/usr/local/bin/a.sh"}, FileEmbedded1: types.FileEmbedded1{Contents: types.Resource{Source: &plain}}},
		{Node: types.Node{Path: "/etc/b.env"}, FileEmbedded1: types.FileEmbedded1{Contents: types.Resource{Source: &compressed, Compression: &gzipName}}},
		{Node: types.Node{Path: "/etc/c"}, FileEmbedded1: types.FileEmbedded1{Contents: types.Resource{Source: &escaped}}},
	}
	for _, c := range []struct{ path, want string }{{"/usr/local/bin/a.sh", "echo " + digest + "\n"}, {"/etc/b.env", "RELEASE_IMAGE=" + digest + "\n"}, {"/etc/c", "a b+c"}} {
		for _, f := range cfg.Storage.Files {
			if f.Path == c.path {
				got, err := FileContents(f)
				require.NoError(t, err)
				assert.Equal(t, c.want, string(got))
			}
		}
	}
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	archive, err := isoeditor.IgnitionArchive(b)
	require.NoError(t, err)
	require.NoError(t, e2e.EmbedIgnitionArchive(iso, archive))

	require.NoError(t, EditFiles(iso, ReplaceAll(digest, "quay.io/r/release:4.20.0")))
	got, f, err := isoeditor.OpenFile(iso)
	require.NoError(t, err)
	files, err := got.EmbeddedFiles()
	f.Close()
	require.NoError(t, err)
	var out types.Config
	require.NoError(t, json.Unmarshal(files[0].Data, &out))
	want := map[string]string{"/usr/local/bin/a.sh": "echo quay.io/r/release:4.20.0\n", "/etc/b.env": "RELEASE_IMAGE=quay.io/r/release:4.20.0\n", "/etc/c": "a b+c"}
	for _, file := range out.Storage.Files {
		data, err := FileContents(file)
		require.NoError(t, err)
		assert.Equal(t, want[file.Path], string(data), file.Path)
	}
	require.ErrorContains(t, EditFiles(iso, ReplaceAll(digest, "x")), "no file of the Ignition config changed")
	notURL := "https://example.com/x"
	_, err = FileContents(types.File{Node: types.Node{Path: "/x"}, FileEmbedded1: types.FileEmbedded1{Contents: types.Resource{Source: &notURL}}})
	require.ErrorContains(t, err, "not a data URL")
}

// ISOFile reads one file of the embedded Ignition config; EnvValue one
// variable of an environment file.
func TestISOFile(t *testing.T) {
	iso := filepath.Join(t.TempDir(), "node.iso")
	_, err := testiso.WriteFile(iso, testiso.Options{})
	require.NoError(t, err)
	src := "data:;base64," + base64.StdEncoding.EncodeToString([]byte("NODE_ZERO_IP=127.0.0.1\nUSER_AUTH_TOKEN=eyJ.a.b\n"))
	cfg := types.Config{Ignition: types.Ignition{Version: "3.2.0"}}
	cfg.Storage.Files = []types.File{{Node: types.Node{Path: "/etc/assisted/rendezvous-host.env"}, FileEmbedded1: types.FileEmbedded1{Contents: types.Resource{Source: &src}}}}
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	archive, err := isoeditor.IgnitionArchive(b)
	require.NoError(t, err)
	require.NoError(t, e2e.EmbedIgnitionArchive(iso, archive))

	env, err := ISOFile(iso, "/etc/assisted/rendezvous-host.env")
	require.NoError(t, err)
	tok, ok := EnvValue(env, "USER_AUTH_TOKEN")
	assert.True(t, ok)
	assert.Equal(t, "eyJ.a.b", tok)
	_, ok = EnvValue(env, "AUTH_TOKEN")
	assert.False(t, ok, "a name is matched whole")
	_, err = ISOFile(iso, "/etc/none")
	assert.ErrorContains(t, err, "no file /etc/none")
}

func TestCorruptBlob(t *testing.T) {
	blob := []byte(`{"architecture":"amd64","config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin"]},"os":"linux"}`)
	// the blob across the 8 MiB read boundary, amid other bytes
	data := bytes.Repeat([]byte{0xAA}, 9<<20)
	at := (8 << 20) - 10
	copy(data[at:], blob)
	iso := filepath.Join(t.TempDir(), "x.iso")
	require.NoError(t, os.WriteFile(iso, data, 0o600))

	off, err := CorruptBlob(iso, blob)
	require.NoError(t, err)
	assert.Equal(t, int64(at+len(blob)/2), off)
	got, err := os.ReadFile(iso)
	require.NoError(t, err)
	require.Len(t, got, len(data), "the size stays")
	changed := 0
	for i := range got {
		if got[i] != data[i] {
			changed++
			assert.Equal(t, int(off), i)
		}
	}
	assert.Equal(t, 1, changed, "one byte changed")
	assert.NotEqual(t, sha256.Sum256(blob), sha256.Sum256(got[at:at+len(blob)]), "the blob's digest breaks")

	// Now it is gone; twice is refused, as is a blob too short to be unique.
	_, err = CorruptBlob(iso, blob)
	require.ErrorContains(t, err, "occurs 0 times")
	copy(got[100:], blob)
	copy(got[5000:], blob)
	require.NoError(t, os.WriteFile(iso, got, 0o600))
	_, err = CorruptBlob(iso, blob)
	require.ErrorContains(t, err, "occurs 2 times")
	_, err = CorruptBlob(iso, []byte("short"))
	require.ErrorContains(t, err, "at least 64")
}
