package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	shaA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	shaB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// console wraps report lines the way the serial console shows them: noise
// before, CRLF line ends, a kernel line interleaved.
func console(lines ...string) []byte {
	body := strings.Join(lines, "\r\n")
	return []byte("SeaBIOS\r\n[    0.1] Linux version\r\n" + beginMarker + "\r\n" + body + "\r\n" + endMarker + "\r\n[ 2.0] reboot: Power down\r\n")
}

func goodConsole() []byte {
	return console(
		"IGNITION-SHA256 "+shaA,
		"PATH D /etc",
		"PATH D /etc/assisted",
		"PATH F /etc/assisted/a file.yaml 12 "+shaB,
		"PATH F /config.ign 2 "+shaA,
		"[    3.1] random: crng init done",
		"CMDLINE BOOT_IMAGE=/images/pxeboot/vmlinuz console=ttyS0  rw coreos.liveiso=rhcos-x ip=dhcp",
		"DMESG [    1.0] Trying to unpack rootfs image as initramfs...",
	)
}

func TestParseReportRealConsole(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "console-uefi-pristine.log"))
	require.NoError(t, err)
	rep, err := ParseReport(b)
	require.NoError(t, err)
	assert.False(t, rep.IgnitionPresent)
	assert.False(t, rep.UnpackFailed)
	assert.Equal(t, map[string]PathInfo{"/root": {Type: 'D'}}, rep.Paths)
	assert.Equal(t, "BOOT_IMAGE=/images/pxeboot/vmlinuz console=ttyS0,115200n8 panic=5 rw coreos.liveiso=rhcos-9.6.20250523-0 ignition.firstboot ignition.platform.id=metal", rep.Cmdline)
	require.NoError(t, Verify(b, "rhcos-9.6.20250523-0", Expect{Kargs: []string{"ignition.firstboot"}}))
}

func TestParseReport(t *testing.T) {
	rep, err := ParseReport(goodConsole())
	require.NoError(t, err)
	assert.True(t, rep.IgnitionPresent)
	assert.Equal(t, shaA, rep.IgnitionSHA256)
	assert.Equal(t, PathInfo{Type: 'F', Size: 12, SHA256: shaB}, rep.Paths["/etc/assisted/a file.yaml"])
	assert.Equal(t, PathInfo{Type: 'D'}, rep.Paths["/etc/assisted"])
	assert.Len(t, rep.Paths, 4)
	assert.Equal(t, []string{"BOOT_IMAGE=/images/pxeboot/vmlinuz", "console=ttyS0", "rw", "coreos.liveiso=rhcos-x", "ip=dhcp"}, rep.Kargs())
	assert.Len(t, rep.Dmesg, 1)

	for name, tc := range map[string]struct {
		in   []byte
		want string
	}{
		"no report":   {[]byte("kernel panic\n"), "never reached"},
		"truncated":   {[]byte(beginMarker + "\nIGNITION-ABSENT\nCMDLINE x\n"), "truncated"},
		"no cmdline":  {console("IGNITION-ABSENT"), "cmdline line missing"},
		"bad digest":  {console("IGNITION-SHA256 xyz", "CMDLINE x"), "bad ignition digest"},
		"bad path":    {console("IGNITION-ABSENT", "PATH F /x 1", "CMDLINE x"), "bad PATH line"},
		"bad size":    {console("IGNITION-ABSENT", "PATH F /x -1 "+shaA, "CMDLINE x"), "bad size"},
		"bad type":    {console("IGNITION-ABSENT", "PATH Q /x", "CMDLINE x"), "bad PATH type"},
		"rel path":    {console("IGNITION-ABSENT", "PATH D x", "CMDLINE x"), "bad PATH line"},
		"empty block": {[]byte(beginMarker + "\n" + endMarker + "\n"), "missing"},
		"rootfs sum":  {console("ROOTFS-SHA256 xyz 12", "IGNITION-ABSENT", "CMDLINE x"), "bad rootfs line"},
		"rootfs size": {console("ROOTFS-SHA256 "+shaA+" -1", "IGNITION-ABSENT", "CMDLINE x"), "bad rootfs line"},
		"rootfs bare": {console("ROOTFS-SHA256 "+shaA, "IGNITION-ABSENT", "CMDLINE x"), "bad rootfs line"},
	} {
		_, err := ParseReport(tc.in)
		assert.ErrorContains(t, err, tc.want, name)
	}
}

func TestParseReportRootfs(t *testing.T) {
	rep, err := ParseReport(console("ROOTFS-SHA256 "+shaB+" 1181696", "IGNITION-ABSENT", "CMDLINE coreos.live.rootfs_url=http://10.0.2.2:1/r"))
	require.NoError(t, err)
	assert.Equal(t, shaB, rep.RootfsSHA256)
	assert.Equal(t, int64(1181696), rep.RootfsSize)
	assert.Empty(t, rep.RootfsFetchFailed)

	rep, err = ParseReport(console("ROOTFS-FETCH-FAILED wget http://10.0.2.2:1/r: server returned error: HTTP/1.1 404 Not Found ", "IGNITION-ABSENT", "CMDLINE x"))
	require.NoError(t, err)
	assert.Equal(t, "wget http://10.0.2.2:1/r: server returned error: HTTP/1.1 404 Not Found", rep.RootfsFetchFailed)
	assert.Empty(t, rep.RootfsSHA256)

	rep, err = ParseReport(console("ROOTFS-FETCH-FAILED", "IGNITION-ABSENT", "CMDLINE x"))
	require.NoError(t, err)
	assert.Equal(t, "no reason given", rep.RootfsFetchFailed)
}

func TestVerifyRootfs(t *testing.T) {
	fetched := console("ROOTFS-SHA256 "+shaB+" 10", "IGNITION-ABSENT", "CMDLINE initrd=main coreos.live.rootfs_url=http://10.0.2.2:1/r")
	require.NoError(t, Verify(fetched, "", Expect{RootfsSHA256: strings.ToUpper(shaB)}))
	// Only the failure is checked when no rootfs is expected.
	require.NoError(t, Verify(fetched, "", Expect{}))
	assert.ErrorContains(t, Verify(fetched, "", Expect{RootfsSHA256: shaA}), "fetched rootfs sha256 is "+shaB+" (10 bytes), want "+shaA)

	failed := console("ROOTFS-FETCH-FAILED no DHCP lease on eth0", "IGNITION-ABSENT", "CMDLINE x")
	assert.ErrorContains(t, Verify(failed, "", Expect{RootfsSHA256: shaB}), "could not fetch its rootfs (coreos.live.rootfs_url): no DHCP lease on eth0")
	assert.ErrorContains(t, Verify(failed, "", Expect{}), "could not fetch its rootfs")

	assert.ErrorContains(t, Verify(console("IGNITION-ABSENT", "CMDLINE x"), "v", Expect{RootfsSHA256: shaB}), "fetched no rootfs")
	// A network boot has no ISO: coreos.liveiso= there would send RHCOS looking for a CD.
	assert.ErrorContains(t, Verify(console("IGNITION-ABSENT", "CMDLINE coreos.liveiso=rhcos-x"), "", Expect{}), "coreos.liveiso=rhcos-x on a network boot")
}

func TestVerify(t *testing.T) {
	good := Expect{
		IgnitionSHA256: strings.ToUpper(shaA),
		Paths:          []string{"/etc/assisted"},
		Files:          map[string]string{"/etc/assisted/a file.yaml": shaB},
		AbsentPaths:    []string{"/etc/assisted/b"},
		Kargs:          []string{"ip=dhcp", "rw"},
	}
	require.NoError(t, Verify(goodConsole(), "rhcos-x", good))

	for name, tc := range map[string]struct {
		console []byte
		vol     string
		mod     func(*Expect)
		want    string
	}{
		"sha":        {goodConsole(), "rhcos-x", func(e *Expect) { e.IgnitionSHA256 = shaB }, "/config.ign sha256 is " + shaA},
		"no config":  {goodConsole(), "rhcos-x", func(e *Expect) { e.IgnitionSHA256 = "" }, "no config was expected"},
		"path":       {goodConsole(), "rhcos-x", func(e *Expect) { e.Paths = []string{"/etc/x"} }, "missing path /etc/x"},
		"file sum":   {goodConsole(), "rhcos-x", func(e *Expect) { e.Files["/etc/assisted/a file.yaml"] = shaA }, "a file.yaml sha256 is"},
		"file dir":   {goodConsole(), "rhcos-x", func(e *Expect) { e.Files = map[string]string{"/etc": shaA} }, "not a regular file"},
		"file gone":  {goodConsole(), "rhcos-x", func(e *Expect) { e.Files = map[string]string{"/y": shaA} }, "missing file /y"},
		"absent":     {goodConsole(), "rhcos-x", func(e *Expect) { e.AbsentPaths = []string{"/etc"} }, "should be absent"},
		"karg":       {goodConsole(), "rhcos-x", func(e *Expect) { e.Kargs = []string{"ip=dhc"} }, `kernel argument "ip=dhc" missing`},
		"volume":     {goodConsole(), "rhcos-y", func(*Expect) {}, "does not match the ISO volume ID"},
		"no ign":     {console("IGNITION-ABSENT", "CMDLINE x"), "v", func(e *Expect) { *e = Expect{IgnitionSHA256: shaA} }, "/config.ign missing"},
		"unpack":     {console("IGNITION-ABSENT", "CMDLINE x", "UNPACK-FAILED"), "v", func(e *Expect) { *e = Expect{} }, "could not unpack"},
		"unpack log": {append([]byte("[ 1.0] Initramfs unpacking failed: junk\n"), console("IGNITION-ABSENT", "CMDLINE x")...), "v", func(e *Expect) { *e = Expect{} }, `console shows "Initramfs unpacking failed"`},
		"ramdisk": {append([]byte("[ 1.0] rootfs image is not initramfs (junk); looks like an initrd\n"), console("IGNITION-ABSENT", "CMDLINE x")...), "v",
			func(e *Expect) { *e = Expect{} }, "could not unpack"},
		"no report": {[]byte("Kernel panic - not syncing"), "v", func(*Expect) {}, "never reached"},
	} {
		exp := good
		exp.Files = map[string]string{"/etc/assisted/a file.yaml": shaB}
		tc.mod(&exp)
		assert.ErrorContains(t, Verify(tc.console, tc.vol, exp), tc.want, name)
	}
}

// formatReport renders a report the way the fixture's /init prints it.
func formatReport(rep Report) string {
	var b strings.Builder
	b.WriteString(beginMarker + "\n")
	if rep.IgnitionPresent {
		fmt.Fprintf(&b, "IGNITION-SHA256 %s\n", rep.IgnitionSHA256)
	} else {
		b.WriteString("IGNITION-ABSENT\n")
	}
	for p, info := range rep.Paths {
		if info.Type == 'F' {
			fmt.Fprintf(&b, "PATH F %s %d %s\n", p, info.Size, info.SHA256)
		} else {
			fmt.Fprintf(&b, "PATH %c %s\n", info.Type, p)
		}
	}
	fmt.Fprintf(&b, "CMDLINE %s\n%s\n", rep.Cmdline, endMarker)
	return b.String()
}

func FuzzParseReport(f *testing.F) {
	f.Add(string(goodConsole()), "/etc/x y", int64(3), "a=b c")
	real, err := os.ReadFile(filepath.Join("testdata", "console-uefi-pristine.log"))
	require.NoError(f, err)
	f.Add(string(real), "/root", int64(0), "")
	f.Add("", "/", int64(-1), "x")
	f.Add(string(console("ROOTFS-SHA256 "+shaA+" 5", "ROOTFS-FETCH-FAILED x", "IGNITION-ABSENT", "CMDLINE y")), "/r", int64(5), "coreos.live.rootfs_url=http://h/r")
	f.Fuzz(func(t *testing.T, raw, path string, size int64, cmdline string) {
		// Any input: no panic, and a parsed report is well formed.
		if rep, err := ParseReport([]byte(raw)); err == nil {
			if rep.IgnitionPresent {
				assert.True(t, isSHA256(rep.IgnitionSHA256))
			}
			if rep.RootfsSHA256 != "" {
				assert.True(t, isSHA256(rep.RootfsSHA256))
				assert.GreaterOrEqual(t, rep.RootfsSize, int64(0))
			}
			for p, info := range rep.Paths {
				assert.True(t, strings.HasPrefix(p, "/"), p)
				if info.Type == 'F' {
					assert.True(t, isSHA256(info.SHA256))
					assert.GreaterOrEqual(t, info.Size, int64(0))
				}
			}
		}
		// A report printed by the fixture parses back to what was printed.
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, "\r\n") ||
			strings.ContainsAny(cmdline, "\r\n") || size < 0 ||
			strings.TrimRight(path, " ") != path || strings.TrimRight(cmdline, " ") != cmdline {
			return
		}
		want := Report{
			IgnitionPresent: true, IgnitionSHA256: shaA, Cmdline: cmdline,
			Paths: map[string]PathInfo{path: {Type: 'F', Size: size, SHA256: shaB}},
		}
		got, err := ParseReport([]byte("noise\n" + formatReport(want)))
		require.NoError(t, err)
		assert.Equal(t, want, got)
	})
}
