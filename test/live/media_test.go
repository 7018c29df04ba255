package live

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestConfigCD drives a paused QEMU (nothing boots) through the QMP socket
// the lab attaches config images with: insert, eject, insert again, and a
// missing file refused.
func TestConfigCD(t *testing.T) {
	bin, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("qemu-system-x86_64 not found but CI is set")
		}
		t.Skip("qemu-system-x86_64 not found")
	}
	dir := t.TempDir()
	img := filepath.Join(dir, "config.iso")
	require.NoError(t, os.WriteFile(img, make([]byte, 64<<10), 0o600))
	vm := &VM{Name: "qmp-test", qmp: filepath.Join(dir, "qmp.sock")}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-machine", "pc", "-accel", "tcg", "-S", "-display", "none", "-nodefaults",
		"-qmp", "unix:"+vm.qmp+",server=on,wait=off", "-drive", "if=ide,media=cdrom,id="+configCDDrive)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(vm.qmp); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, vm.InsertCD(ctx, img))
	require.NoError(t, vm.EjectCD(ctx))
	require.NoError(t, vm.InsertCD(ctx, img))
	err = vm.InsertCD(ctx, filepath.Join(dir, "missing.iso"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "missing.iso")
	require.ErrorContains(t, (&VM{Name: "x"}).EjectCD(ctx), "no QMP socket")
}
