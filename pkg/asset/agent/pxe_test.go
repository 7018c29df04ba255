package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
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
