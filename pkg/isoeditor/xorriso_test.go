package isoeditor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
)

// needTool skips when a tool is missing outside CI and fails when it is missing in CI.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("%s not installed (run hack/install-deps.sh); skipping outside CI", name)
		}
		t.Fatalf("%s is required in CI: run hack/install-deps.sh", name)
	}
	return p
}

func xorriso(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(needTool(t, "xorriso"), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "xorriso %v: %s", args, stderr.String())
	return string(out)
}

// TestXorrisoCrossCheck reads the edited ISO with an independent
// implementation (libisofs via xorriso, Rock Ridge names): the tree is
// unchanged and the extracted embed area decodes to the config.
func TestXorrisoCrossCheck(t *testing.T) {
	needTool(t, "xorriso")
	dir := t.TempDir()
	base := filepath.Join(dir, "base.iso")
	_, err := testiso.WriteFile(base, testiso.Options{Size: 20 << 20})
	require.NoError(t, err)
	iso, f := openFile(t, base)
	img, err := iso.Edit(Edit{Ignition: []byte(testConfig), AppendKargs: []string{"console=ttyS0"}})
	require.NoError(t, err)
	out := filepath.Join(dir, "agent.iso")
	_, err = WriteFile(context.Background(), out, img, WriteOptions{})
	require.NoError(t, err)
	f.Close()

	list := func(p string) string { return xorriso(t, "-indev", p, "-find", "/", "-exec", "lsdl") }
	baseTree, outTree := list(base), list(out)
	assert.Contains(t, baseTree, "'/coreos/igninfo.json'")
	assert.Contains(t, baseTree, "'/images/pxeboot/rootfs.img'")
	assert.Equal(t, baseTree, outTree)

	ign := filepath.Join(dir, "ignition.img")
	grub := filepath.Join(dir, "grub.cfg")
	xorriso(t, "-osirrox", "on", "-indev", out, "-extract", "/images/ignition.img", ign, "-extract", "/EFI/redhat/grub.cfg", grub)
	area, err := os.ReadFile(ign)
	require.NoError(t, err)
	require.Len(t, area, 262144)
	files, err := ParseInitrd(area)
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.Equal(t, "config.ign", files[0].Path)
	assert.Equal(t, testConfig, string(files[0].Data))
	cfg, err := os.ReadFile(grub)
	require.NoError(t, err)
	assert.Contains(t, string(cfg), "\tlinux /images/pxeboot/vmlinuz rw  coreos.liveiso=rhcos-9.6.20251021-0 ignition.firstboot ignition.platform.id=metal console=ttyS0\n#")
	assert.Contains(t, string(cfg), "# COREOS_KARG_EMBED_AREA\n\tinitrd /images/pxeboot/initrd.img /images/ignition.img\n")
}
