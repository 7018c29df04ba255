package e2e

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestArtifactServer(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.x86_64.ipxe"), []byte("#!ipxe\n"), 0o644))
	s, err := ServeArtifacts(dir)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()

	assert.Equal(t, "http://10.0.2.2:"+strconv.Itoa(s.Port)+"/agent.x86_64.ipxe", s.GuestURL("/agent.x86_64.ipxe"))
	assert.Equal(t, s.GuestURL("agent.x86_64.ipxe"), s.GuestURL("/agent.x86_64.ipxe"))

	local := "http://" + s.Addr
	resp, err := http.Get(local + "/agent.x86_64.ipxe")
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, "#!ipxe\n", string(b))
	resp, err = http.Get(local + "/missing.img")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	assert.Equal(t, []Request{
		{Method: "GET", Path: "/agent.x86_64.ipxe", Status: 200},
		{Method: "GET", Path: "/missing.img", Status: 404},
	}, s.Requests())
	assert.True(t, s.Served("/agent.x86_64.ipxe"))
	assert.False(t, s.Served("/missing.img"))
	s.Reset()
	assert.Empty(t, s.Requests())
	assert.Equal(t, "127.0.0.1:"+strconv.Itoa(s.Port), s.Addr, "loopback only")
}

func TestUserNetArgs(t *testing.T) {
	q := QEMU{Binary: "qemu", MemoryMiB: 512}
	args, err := q.Args("/x.iso", Mode{BIOS, CDROM}, "")
	require.NoError(t, err)
	assert.Contains(t, strings.Join(args, " "), "-nic none")

	q.Net = &UserNet{}
	args, err = q.Args("/x.iso", Mode{UEFI, CDROM}, "/vars")
	require.NoError(t, err)
	assert.Contains(t, strings.Join(args, " "), "-nic user,model=e1000,ipv6=off -no-reboot")

	q.Net = &UserNet{BootFile: "http://10.0.2.2:8080/agent.x86_64.ipxe"}
	args, err = q.Args("", Mode{BIOS, Network}, "")
	require.NoError(t, err)
	joined := strings.Join(args, " ")
	assert.Contains(t, joined, "-nic user,model=e1000,ipv6=off,bootfile=http://10.0.2.2:8080/agent.x86_64.ipxe")
	assert.Contains(t, joined, "-boot n")
	assert.NotContains(t, joined, "-drive")

	_, err = q.Args("/x.iso", Mode{BIOS, Network}, "")
	assert.ErrorContains(t, err, "no ISO")
	q.Net = &UserNet{}
	_, err = q.Args("", Mode{BIOS, Network}, "")
	assert.ErrorContains(t, err, "needs QEMU.Net with a BootFile")
	q.Net = &UserNet{BootFile: "http://h/a,b"}
	_, err = q.Args("", Mode{BIOS, Network}, "")
	assert.ErrorContains(t, err, "no commas")
}

func TestArchArgs(t *testing.T) {
	q := QEMU{Binary: "qemu", MemoryMiB: 1024, OVMFCode: "/AAVMF_CODE.fd"}
	args, err := q.Args("/a.iso", Mode{AAVMF, CDROM}, "/vars")
	require.NoError(t, err)
	joined := strings.Join(args, " ")
	assert.Contains(t, joined, "-cpu cortex-a57 -machine virt,accel=tcg")
	assert.Contains(t, joined, "-drive if=pflash,format=raw,readonly=on,file=/AAVMF_CODE.fd -drive if=pflash,format=raw,file=/vars")
	assert.Contains(t, joined, "-device virtio-scsi-pci -drive if=none,id=cd,media=cdrom,format=raw,readonly=on,file=/a.iso -device scsi-cd,drive=cd,bootindex=0")

	args, err = q.Args("/p.iso", Mode{SLOF, CDROM}, "")
	require.NoError(t, err)
	joined = strings.Join(args, " ")
	assert.Contains(t, joined, "-machine pseries,accel=tcg -device spapr-vscsi -drive if=none,id=cd")
	assert.NotContains(t, joined, "pflash")

	q.Net = &UserNet{Model: "virtio"}
	q.Direct = &DirectBoot{Kernel: "/k", Initrd: "/i", Append: "a=1 coreos.live.rootfs_url=http://10.0.2.2:1/r"}
	args, err = q.Args("", Mode{S390CCW, Kernel}, "")
	require.NoError(t, err)
	joined = strings.Join(args, " ")
	assert.Contains(t, joined, "-nic user,model=virtio,ipv6=off")
	assert.Contains(t, joined, "-machine s390-ccw-virtio,accel=tcg")
	assert.Equal(t, []string{"-kernel", "/k", "-initrd", "/i", "-append", "a=1 coreos.live.rootfs_url=http://10.0.2.2:1/r"}, args[len(args)-6:])
	assert.NotContains(t, joined, "-drive")

	_, err = q.Args("/s.iso", Mode{S390CCW, Kernel}, "")
	assert.ErrorContains(t, err, "no ISO")
	q.Direct = &DirectBoot{Kernel: "/k", Initrd: "/i", Append: "a\nb"}
	_, err = q.Args("", Mode{S390CCW, Kernel}, "")
	assert.ErrorContains(t, err, "newline")
	_, err = q.Args("/s.iso", Mode{S390CCW, Disk}, "")
	assert.ErrorContains(t, err, "x86_64 only")
	_, err = FindArchQEMU("riscv64")
	assert.ErrorContains(t, err, `"riscv64": want aarch64, ppc64le or s390x`)
}
