package redfishsim

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSushyCrossCheck drives the emulator with Debian's python3-sushy
// (hack/redfish-deps.sh installs it): the Redfish library Ironic uses
// against real BMCs must find what agentiso boot finds and do the same
// calls, so the emulator speaks the Redfish real clients expect. Without
// python3-sushy it is skipped (in CI, CI=true, it fails).
func TestSushyCrossCheck(t *testing.T) {
	py := sushyPython(t)
	img := make([]byte, 40000)
	copy(img[32768:], "\x01CD001")
	media := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(img))
	}))
	defer media.Close()
	b := New(Options{Username: "admin", Password: "pw-123", Systems: []System{{ID: "1"}, {ID: "2", MediaUnderSystem: true}}})
	hs := httptest.NewServer(b)
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	image := media.URL + "/agent.x86_64.iso"
	out, err := exec.CommandContext(ctx, py, "testdata/sushy_check.py", hs.URL, "admin", "pw-123", image, "1").CombinedOutput()
	t.Logf("sushy:\n%s", out)
	require.NoError(t, err)
	for _, want := range []string{
		"SUSHY root 1.11.0",
		"SUSHY systems ['1', '2']",
		"SUSHY power Off",
		"SUSHY reset-allowed ['ForceOff', 'ForceRestart', 'GracefulRestart', 'GracefulShutdown', 'On', 'PowerCycle']",
		"SUSHY cd /redfish/v1/Managers/BMC-1/VirtualMedia/Cd False",
		"SUSHY inserted " + image,
		"SUSHY boot Once Cd",
		"SUSHY power On",
		"SUSHY ejected False",
		"SUSHY wrong-password AccessError 401",
		"SUSHY-OK",
	} {
		assert.Contains(t, string(out), want+"\n")
	}
	assert.Equal(t, 1, b.Logins(), "sushy logged in with a Redfish session (its default), the wrong password with basic auth")
	st := b.State("1")
	assert.Equal(t, []string{"cd:" + image}, st.Boots, "sushy's calls booted the CD once")
	assert.False(t, st.Inserted)
	assert.Contains(t, strings.Join(st.Calls, "\n"), "POST /redfish/v1/Managers/BMC-1/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia")
}

// sushyPython is the Python with Debian's python3-sushy
// (hack/redfish-deps.sh installs it); without it the test is skipped, and
// fails in CI (CI=true).
func sushyPython(t *testing.T) string {
	t.Helper()
	// Debian's interpreter first: python3-sushy is a Debian package, and
	// the python3 on PATH may be another installation (pyenv).
	var py string
	var err error
	for _, cand := range []string{"/usr/bin/python3", "python3"} {
		if py, err = exec.LookPath(cand); err == nil {
			if err = exec.Command(py, "-c", "import sushy").Run(); err == nil {
				return py
			}
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("python3-sushy is missing in CI (hack/redfish-deps.sh installs it): %v", err)
	}
	t.Skipf("python3-sushy is not installed (hack/redfish-deps.sh installs it): %v", err)
	return ""
}
