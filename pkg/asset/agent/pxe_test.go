package agent_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

// The PXE files are the base ISO's live files, the initrd unchanged with
// the agent config appended as its own archive; without
// bootArtifactsBaseURL there is no iPXE script.
func TestPXEFiles(t *testing.T) {
	dir, base := newImageDir(t)
	s := imageStore(t, dir, base, agent.Reporter{})
	for _, a := range agent.PXETargets() {
		_, err := s.Fetch(context.Background(), a)
		require.NoError(t, err, a.Name())
	}
	require.NoError(t, s.Persist(context.Background(), agent.PXETargets()...))
	px, err := asset.Fetch[*agent.PXEFiles](context.Background(), s)
	require.NoError(t, err)
	assert.Empty(t, px.IPXE)
	assert.Len(t, px.Results(), 3)
	assert.Equal(t, "rw  ignition.firstboot ignition.platform.id=metal", px.Kargs)
	assert.NoFileExists(t, filepath.Join(dir, "boot-artifacts", "agent.x86_64.ipxe"))

	iso, f, err := isoeditor.OpenFile(base)
	require.NoError(t, err)
	defer f.Close()
	read := func(p string) []byte {
		off, size, err := iso.FileExtent(p)
		require.NoError(t, err)
		b := make([]byte, size)
		_, err = f.ReadAt(b, off)
		require.NoError(t, err)
		return b
	}
	for isoPath, out := range map[string]string{"images/pxeboot/vmlinuz": "agent.x86_64-vmlinuz", isoeditor.RootfsPath: "agent.x86_64-rootfs.img"} {
		got, err := os.ReadFile(filepath.Join(dir, "boot-artifacts", out))
		require.NoError(t, err)
		assert.Equal(t, read(isoPath), got, out)
	}
	initrd := read("images/pxeboot/initrd.img")
	p := filepath.Join(dir, "boot-artifacts", "agent.x86_64-initrd.img")
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, initrd, got[:len(initrd)], "the live initrd's bytes are kept")
	pad := (4 - len(initrd)%4) % 4
	files, err := isoeditor.ParseInitrd(got[len(initrd)+pad:])
	require.NoError(t, err)
	require.Len(t, files, 1)
	ign, err := asset.Fetch[*agent.AgentIgnition](context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, isoeditor.IgnitionConfigName, files[0].Path)
	assert.Equal(t, ign.Config, files[0].Data)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// On s390x the base ISO's initrd.addrsize and generic.ins are written for
// the PXE files: the load address kept, the new initrd's size, and a
// .ins whose every file is one of boot-artifacts/ beside it (the HMC loads
// them relative to the .ins), at the base's addresses: the kernel, the
// agent initrd, agent.s390x-initrd.addrsize and agent.s390x-generic.prm,
// which holds the PXE kernel arguments. Both generic.ins layouts: RHCOS
// before 2025 (images/kernel.img, images/initrd.img) and after
// (images/pxeboot/vmlinuz, images/pxeboot/initrd.img).
func TestPXEFilesS390x(t *testing.T) {
	for name, ins := range map[string]string{
		"old-layout":     "* minimal lpar ins file\nimages/kernel.img 0x00000000\nimages/initrd.img 0x02000000\nimages/genericdvd.prm 0x00010480\nimages/initrd.addrsize 0x00010408\n",
		"current-layout": "* minimal lpar ins file\nimages/pxeboot/vmlinuz 0x00000000\nimages/pxeboot/initrd.img 0x02000000\nimages/genericdvd.prm 0x00010480\nimages/initrd.addrsize 0x00010408\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ic := strings.Replace(testfixture.SNOInstallConfig, "controlPlane:\n", "controlPlane:\n  architecture: s390x\n", 1)
			require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.InstallConfig), []byte(ic), 0o644))
			ac := testfixture.AgentConfig + "bootArtifactsBaseURL: http://10.0.0.1:8080/boot\n"
			require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.AgentConfig), []byte(ac), 0o644))
			base := filepath.Join(t.TempDir(), "base.iso")
			addrsize := []byte{0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0}
			_, err := testiso.WriteFile(base, testiso.Options{Size: 4 << 20, Arch: "s390x",
				Extra: map[string][]byte{"images/initrd.addrsize": addrsize, "generic.ins": []byte(ins)}})
			require.NoError(t, err)
			s := imageStore(t, dir, base, agent.Reporter{})
			for _, a := range agent.PXETargets() {
				_, err := s.Fetch(context.Background(), a)
				require.NoError(t, err, a.Name())
			}
			require.NoError(t, s.Persist(context.Background(), agent.PXETargets()...))
			px, err := asset.Fetch[*agent.PXEFiles](context.Background(), s)
			require.NoError(t, err)
			ba := filepath.Join(dir, "boot-artifacts")
			initrd, err := os.Stat(filepath.Join(ba, "agent.s390x-initrd.img"))
			require.NoError(t, err)
			got, err := os.ReadFile(filepath.Join(ba, "agent.s390x-initrd.addrsize"))
			require.NoError(t, err)
			want := binary.BigEndian.AppendUint64(append([]byte{}, addrsize[:8]...), uint64(initrd.Size()))
			assert.Equal(t, want, got)
			gotIns, err := os.ReadFile(filepath.Join(ba, "agent.s390x-generic.ins"))
			require.NoError(t, err)
			assert.Equal(t, "* minimal lpar ins file\nagent.s390x-vmlinuz 0x00000000\nagent.s390x-initrd.img 0x02000000\nagent.s390x-generic.prm 0x00010480\nagent.s390x-initrd.addrsize 0x00010408\n", string(gotIns))
			for _, l := range strings.Split(strings.TrimSpace(string(gotIns)), "\n")[1:] {
				assert.FileExists(t, filepath.Join(ba, strings.Fields(l)[0]), "named by agent.s390x-generic.ins")
			}
			prm, err := os.ReadFile(filepath.Join(ba, "agent.s390x-generic.prm"))
			require.NoError(t, err)
			assert.Equal(t, px.Kargs+" coreos.live.rootfs_url=http://10.0.0.1:8080/boot/agent.s390x-rootfs.img\n", string(prm))
			for _, f := range []string{"agent.s390x-generic.ins", "agent.s390x-generic.prm"} {
				assert.FileExists(t, filepath.Join(ba, f+".sha256"))
			}
		})
	}
}

// A generic.ins naming a file agentiso does not write is refused, naming
// the line, rather than written with a file that is not there.
func TestPXEFilesS390xUnknownInsFile(t *testing.T) {
	dir := t.TempDir()
	ic := strings.Replace(testfixture.SNOInstallConfig, "controlPlane:\n", "controlPlane:\n  architecture: s390x\n", 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.InstallConfig), []byte(ic), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.AgentConfig), []byte(testfixture.AgentConfig), 0o644))
	base := filepath.Join(t.TempDir(), "base.iso")
	ins := "* lpar\nimages/pxeboot/vmlinuz 0x00000000\nimages/redhat.exec 0x00100000\n"
	_, err := testiso.WriteFile(base, testiso.Options{Size: 4 << 20, Arch: "s390x", Extra: map[string][]byte{"generic.ins": []byte(ins)}})
	require.NoError(t, err)
	s := imageStore(t, dir, base, agent.Reporter{})
	_, err = s.Fetch(context.Background(), &agent.PXEFiles{})
	require.Error(t, err)
	assert.ErrorContains(t, err, "generic.ins: line 3 names \"images/redhat.exec\"")
}

// On aarch64 a gzip-compressed live kernel is written gunzipped (firmware
// there boots an uncompressed Image), as upstream does.
func TestPXEFilesAArch64Gunzip(t *testing.T) {
	dir := t.TempDir()
	ic := strings.Replace(testfixture.SNOInstallConfig, "controlPlane:\n", "controlPlane:\n  architecture: arm64\n", 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.InstallConfig), []byte(ic), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.AgentConfig), []byte(testfixture.AgentConfig), 0o644))
	kernel := testiso.KernelImage("aarch64")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err := zw.Write(kernel)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	base := filepath.Join(t.TempDir(), "base.iso")
	_, err = testiso.WriteFile(base, testiso.Options{Size: 4 << 20, Arch: "aarch64", Kernel: gz.Bytes()})
	require.NoError(t, err)
	s := imageStore(t, dir, base, agent.Reporter{})
	for _, a := range agent.PXETargets() {
		_, err := s.Fetch(context.Background(), a)
		require.NoError(t, err, a.Name())
	}
	require.NoError(t, s.Persist(context.Background(), agent.PXETargets()...))
	got, err := os.ReadFile(filepath.Join(dir, "boot-artifacts", "agent.aarch64-vmlinuz"))
	require.NoError(t, err)
	assert.Equal(t, kernel, got)
	sum, err := os.ReadFile(filepath.Join(dir, "boot-artifacts", "agent.aarch64-vmlinuz.sha256"))
	require.NoError(t, err)
	want := sha256.Sum256(kernel)
	assert.Equal(t, hex.EncodeToString(want[:])+"  agent.aarch64-vmlinuz\n", string(sum))
}
