package upstream

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// overlayCheck runs inside a throwaway module that holds the overlay as the
// binding's package, at the binding module's language version (go 1.16, as
// the vendored module builds): what docs/e2e.md says the overlay does.
const overlayCheck = `package nmstate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestOverlay(t *testing.T) {
	var logs bytes.Buffer
	n := New(WithLogsWritter(&logs), WithTimeout(0))
	out, err := n.GenerateConfiguration(` + "`" + `{"interfaces":[{"name":"enp1s0","type":"ethernet","state":"up"},{"name":"bond0","type":"bond"}],"routes":{}}` + "`" + `)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string][][2]string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	nm := got["NetworkManager"]
	if len(nm) != 2 || nm[0][0] != "enp1s0.nmconnection" || nm[1][0] != "bond0.nmconnection" ||
		nm[0][1] != "[connection]\nid=enp1s0\ninterface-name=enp1s0\ntype=ethernet\n" || !strings.Contains(nm[1][1], "type=bond\n") {
		t.Fatalf("unexpected output %s", out)
	}
	if !strings.Contains(logs.String(), "nmstate not run") {
		t.Fatalf("logs %q", logs.String())
	}
	if out, err := n.GenerateConfiguration("{}"); err != nil || out != ` + "`" + `{"NetworkManager":[]}` + "`" + ` {
		t.Fatalf("no interfaces: %q %v", out, err)
	}
	for _, bad := range []string{"", "[]", "interfaces: []", ` + "`" + `{"interfaces":{}}` + "`" + `, ` + "`" + `{"interfaces":[{"type":"ethernet"}]}` + "`" + `, ` + "`" + `{"interfaces":[{"name":"a/b"}]}` + "`" + `} {
		if _, err := n.GenerateConfiguration(bad); err == nil || !strings.Contains(err.Error(), "nmstate overlay") {
			t.Fatalf("%q: want an overlay error, got %v", bad, err)
		}
	}
	for name, f := range map[string]func() (string, error){
		"retrieve": n.RetrieveNetState,
		"apply":    func() (string, error) { return n.ApplyNetState("{}") },
		"commit":   func() (string, error) { return n.CommitCheckpoint("x") },
		"rollback": func() (string, error) { return n.RollbackCheckpoint("x") },
	} {
		if _, err := f(); err == nil || !strings.Contains(err.Error(), "libnmstate is not linked") {
			t.Fatalf("%s: %v", name, err)
		}
	}
}
`

// TestNmstateOverlay builds the nmstate overlay (testdata/overlay) at Go
// 1.16 and checks its behaviour.
func TestNmstateOverlay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test in a temp module")
	}
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "overlay", "nmstate.go"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module github.com/nmstate/nmstate/rust/src/go/nmstate\n\ngo 1.16\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nmstate.go"), src, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "overlay_test.go"), []byte(overlayCheck), 0o644))
	cmd := exec.Command("go", "test", "-count=1", "-vet=all", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}
