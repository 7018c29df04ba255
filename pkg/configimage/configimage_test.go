package configimage

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testInfo = Info{ReleaseImage: "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("4", 64),
	ReleaseVersion: "4.20.0", Arch: "x86_64", Cluster: "sno.example.com", RendezvousIP: "192.168.111.80", CreatedBy: "agentiso-test"}

func testMembers() []Member {
	return []Member{
		{Path: "/etc/assisted/rendezvous-host.env", Mode: 0o600, Data: []byte("NODE_ZERO_IP=192.168.111.80\n")},
		{Path: "/etc/assisted/manifests/infraenv.yaml", Mode: 0o600, Data: []byte("kind: InfraEnv\n")},
		{Path: "/etc/assisted/hostconfig/sno/role", Mode: 0o644, Data: []byte("master")},
	}
}

func buildISO(t *testing.T) []byte {
	t.Helper()
	a, err := Archive(testMembers(), testInfo)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, WriteISO(&buf, a))
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	iso := buildISO(t)
	img, err := Read(bytes.NewReader(iso))
	require.NoError(t, err)
	assert.Equal(t, Label, img.Label)
	var paths []string
	for _, m := range img.Members {
		paths = append(paths, m.Path)
	}
	// sorted, info.env first among the agentiso members, sha256sums last
	assert.Equal(t, []string{"/etc/assisted/config-image/info.env", "/etc/assisted/hostconfig/sno/role",
		"/etc/assisted/manifests/infraenv.yaml", "/etc/assisted/rendezvous-host.env", SumsPath}, paths)
	assert.Equal(t, int64(0o644), img.Members[1].Mode)
	assert.Equal(t, int64(0o600), img.Members[2].Mode)
	assert.Equal(t, "4.20.0", img.Info["RELEASE_VERSION"])
	assert.Equal(t, testInfo.ReleaseImage, img.Info["RELEASE_IMAGE"])
	assert.Equal(t, "192.168.111.80", img.Info["RENDEZVOUS_IP"])
}

// TestHostToolsReadIt reads the image with the tools the host uses:
// blkid finds the label, GNU cpio lists absolute names and sha256sum
// checks the sums, as agent-config-image-wait.sh does.
func TestHostToolsReadIt(t *testing.T) {
	for _, tool := range []string{"blkid", "cpio", "sha256sum", "xorriso"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not found but CI is set", tool)
			}
			t.Skipf("%s not found", tool)
		}
	}
	dir := t.TempDir()
	isoPath := filepath.Join(dir, FileName)
	require.NoError(t, os.WriteFile(isoPath, buildISO(t), 0o600))
	out, err := exec.Command("blkid", "-p", "-s", "LABEL", "-o", "value", isoPath).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, Label, strings.TrimSpace(string(out)))
	// the file name as Linux shows it (no Rock Ridge: lower case, no ;1)
	out, err = exec.Command("xorriso", "-indev", isoPath, "-ls", "/").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, strings.ToLower(string(out)), "'config.gz")
	a, err := Archive(testMembers(), testInfo)
	require.NoError(t, err)
	gz := filepath.Join(dir, "config.gz")
	require.NoError(t, os.WriteFile(gz, a, 0o600))
	list, err := exec.Command("sh", "-c", "gzip -dc "+gz+" | cpio -it --quiet").CombinedOutput()
	require.NoError(t, err, "%s", list)
	assert.Contains(t, string(list), "/etc/assisted/rendezvous-host.env\n")
	tree := filepath.Join(dir, "tree")
	require.NoError(t, os.Mkdir(tree, 0o700))
	out, err = exec.Command("sh", "-c", "gzip -dc "+gz+" | (cd "+tree+" && cpio -idm --quiet --no-absolute-filenames) && cd "+tree+" && sha256sum --check --strict --quiet etc/assisted/config-image/sha256sums").CombinedOutput()
	require.NoError(t, err, "%s", out)
	st, err := os.Stat(filepath.Join(tree, "etc/assisted/rendezvous-host.env"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}

func TestReadRefuses(t *testing.T) {
	iso := buildISO(t)
	// Flip a byte inside config.gz's compressed data.
	i := bytes.Index(iso, []byte{0x1f, 0x8b, 0x08})
	require.Positive(t, i)
	bad := append([]byte(nil), iso...)
	bad[i+40] ^= 0xff
	_, err := Read(bytes.NewReader(bad))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "corrupt")

	_, err = Archive([]Member{{Path: "etc/relative", Data: nil}}, testInfo)
	assert.ErrorContains(t, err, "clean absolute path")
	_, err = Archive([]Member{{Path: SumsPath}}, testInfo)
	assert.ErrorContains(t, err, "appears twice")
	_, err = Archive(nil, Info{Cluster: "a b"})
	assert.ErrorContains(t, err, "CLUSTER")

	// Not a config image at all.
	_, err = Read(bytes.NewReader(make([]byte, 64<<10)))
	assert.ErrorIs(t, err, ErrNotConfigImage)
}

func TestSumMismatch(t *testing.T) {
	a, err := Archive(testMembers(), testInfo)
	require.NoError(t, err)
	img, err := ParseArchive(a)
	require.NoError(t, err)
	// Rebuild the archive by hand with one member altered after summing.
	for i := range img.Members {
		if img.Members[i].Path == "/etc/assisted/manifests/infraenv.yaml" {
			img.Members[i].Data = []byte("kind: Tampered\n")
		}
	}
	raw, err := rawArchive(img.Members)
	require.NoError(t, err)
	_, err = ParseArchive(raw)
	assert.ErrorContains(t, err, "does not match its sha256")
}

func FuzzParseArchive(f *testing.F) {
	a, err := Archive(testMembers(), testInfo)
	require.NoError(f, err)
	f.Add(a)
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, b []byte) {
		img, err := ParseArchive(b)
		if err == nil && img == nil {
			t.Fatal("nil image without error")
		}
	})
}
