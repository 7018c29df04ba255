package ignition

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runOCIScript runs oci-eval-user-data.sh as shipped, with a fake chassis
// tag file and a curl stub that answers with code and body.
func runOCIScript(t *testing.T, tag, code, body string, curlFails bool) (string, string, error) {
	t.Helper()
	cfg, _ := mustBuild(t, snoInput())
	script, ok := fileContents(t, cfg, "/usr/local/bin/oci-eval-user-data.sh")
	require.True(t, ok, "the OCI user-data script is shipped")
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	curl := "#!/bin/bash\necho \"$@\" >>" + filepath.Join(dir, "curl.log") + "\n"
	if curlFails {
		curl += "exit 7\n"
	} else {
		curl += "out=''\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --output ]; then out=$2; fi; shift; done\n" +
			"printf '%s' " + shellQuoted(body) + " >\"$out\"\nprintf '%s' " + code + "\n"
	}
	require.NoError(t, os.WriteFile(filepath.Join(bin, "curl"), []byte(curl), 0o755))
	tagFile := filepath.Join(dir, "chassis_asset_tag")
	require.NoError(t, os.WriteFile(tagFile, []byte(tag+"\n"), 0o644))
	p := filepath.Join(dir, "oci.sh")
	require.NoError(t, os.WriteFile(p, script, 0o755))
	cmd := exec.Command(requireTool(t, "bash"), p)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "OCI_CHASSIS_TAG_FILE=" + tagFile, "OCI_USER_DATA_URL=http://127.0.0.1:9/user_data", "TMPDIR=" + dir}
	out, err := cmd.CombinedOutput()
	log, _ := os.ReadFile(filepath.Join(dir, "curl.log"))
	return dir, string(out) + string(log), err
}

func TestOCIUserDataScript(t *testing.T) {
	userData := base64.StdEncoding.EncodeToString([]byte("#!/bin/bash\ntouch RAN\n"))

	dir, out, err := runOCIScript(t, "OracleCloud.com", "200", userData, false)
	require.NoError(t, err, out)
	assert.FileExists(t, filepath.Join(dir, "RAN"), out)
	assert.Contains(t, out, "Authorization: Bearer Oracle")

	dir, out, err = runOCIScript(t, "Not Specified", "200", userData, false)
	require.NoError(t, err, out)
	assert.NoFileExists(t, filepath.Join(dir, "RAN"))
	assert.NoFileExists(t, filepath.Join(dir, "curl.log"), "no metadata request off OCI")

	_, out, err = runOCIScript(t, "OracleCloud.com", "404", "Not Found", false)
	require.NoError(t, err, out)
	assert.Contains(t, out, "no user data")

	_, out, err = runOCIScript(t, "OracleCloud.com", "200", "", true)
	require.Error(t, err, out)

	_, out, err = runOCIScript(t, "OracleCloud.com", "200", "!!not base64!!", false)
	require.Error(t, err, out)
}

func TestOCIUserDataUnitEnabled(t *testing.T) {
	cfg, _ := mustBuild(t, snoInput())
	u, ok := unitContents(cfg, "oci-eval-user-data.service")
	require.True(t, ok)
	assert.Contains(t, u, "ExecStart=/usr/local/bin/oci-eval-user-data.sh\n")
	assert.True(t, slices.Contains(EnabledUnits(), "oci-eval-user-data.service"))
	assert.False(t, strings.Contains(u, "StandardOutput=syslog"), "syslog output is obsolete in systemd")
}

// TestOCIUserDataUnitOrder: the unit starts once NetworkManager has started,
// as upstream's (openshift/installer
// data/data/agent/systemd/units/oci-eval-user-data.service), not after
// network-online.target: the user data may be what brings the network
// online (a keyfile for a secondary NIC, iSCSI), and the script's curl
// retries plus Restart=on-failure cover a metadata service not reachable
// yet.
func TestOCIUserDataUnitOrder(t *testing.T) {
	cfg, _ := mustBuild(t, snoInput())
	u, ok := unitContents(cfg, "oci-eval-user-data.service")
	require.True(t, ok)
	assert.Equal(t, []string{"NetworkManager.service"}, unitKeys(u, "After"))
	assert.Empty(t, unitKeys(u, "Wants"), "nothing pulled in: network-online.target would hold the script back")
	assert.Equal(t, []string{"on-failure"}, unitKeys(u, "Restart"))
}

// TestReleaseImageDigest sources release-image.sh with a podman stub: the
// pulled release is addressed by its own manifest digest (.Digest, not the
// first of RepoDigests, which may name another repository), and by its tag
// when podman knows no digest.
func TestReleaseImageDigest(t *testing.T) {
	cfg, _ := mustBuild(t, snoInput())
	script, ok := fileContents(t, cfg, "/usr/local/bin/release-image.sh")
	require.True(t, ok)
	for _, tc := range []struct{ digest, want string }{
		{"sha256:" + strings.Repeat("c", 64), "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("c", 64)},
		{"", "quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64"},
	} {
		dir := t.TempDir()
		stub := "#!/bin/bash\nif [ \"$1\" = inspect ]; then case \"$*\" in *.Digest*) printf '%s\\n' " + shellQuoted(tc.digest) + ";; *) echo mirror.example.com/other@sha256:" + strings.Repeat("d", 64) + ";; esac; fi\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "podman"), []byte(stub), 0o755))
		p := filepath.Join(dir, "release-image.sh")
		require.NoError(t, os.WriteFile(p, script, 0o644))
		cmd := exec.Command(requireTool(t, "bash"), "-c", ". "+shellQuoted(p)+" && release_image_by_digest")
		cmd.Env = []string{"PATH=" + dir + ":" + os.Getenv("PATH")}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		assert.Equal(t, tc.want, strings.TrimSpace(string(out)))
	}
}
