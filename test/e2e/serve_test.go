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
