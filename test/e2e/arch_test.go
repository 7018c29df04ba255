//go:build e2e

package e2e

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The other architectures (make e2e-arch; docs/e2e.md): per architecture
// the fixture of hack/build-arch-fixture.sh, and what agentiso makes of it
// booted under that architecture's QEMU (TCG) and firmware: the agent ISO
// from a CD, a copy whose Ignition was changed after agentiso wrote it (the
// negative control), the minimal ISO fetching its rootfs, and the PXE
// files by a direct kernel boot.
//
//	AGENTISO_E2E_ARCHES  architectures to boot (default "aarch64 ppc64le s390x")

// goArch is the install-config spelling of each architecture.
var goArch = map[string]string{"aarch64": "arm64", "ppc64le": "ppc64le", "s390x": "s390x"}

func TestBootArch(t *testing.T) {
	arches := strings.Fields(os.Getenv("AGENTISO_E2E_ARCHES"))
	if len(arches) == 0 {
		arches = []string{"aarch64", "ppc64le", "s390x"}
	}
	bin := agentisoBin(t)
	for _, a := range arches {
		t.Run(a, func(t *testing.T) { testArch(t, bin, a) })
	}
}

// requireArch finds arch's QEMU; it skips outside CI and fails in CI when it is missing.
func requireArch(t *testing.T, arch string) ArchQEMU {
	t.Helper()
	q, err := FindArchQEMU(arch)
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("boot test of %s: %v", arch, err)
		}
		t.Fatalf("CI=true but the %s boot test's tools are missing: %v", arch, err)
	}
	t.Logf("qemu: %s, firmware %s, NIC %s, timeout %s per boot", q.Binary, q.Firmware, q.NIC, q.Timeout)
	return q
}

// archFixture builds (or finds in ~/.cache/agentiso) arch's fixture.
func archFixture(t *testing.T, arch string) string {
	t.Helper()
	start := time.Now()
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "hack", "build-arch-fixture.sh"), arch)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "hack/build-arch-fixture.sh %s:\n%s", arch, stderr.Bytes())
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	p := lines[len(lines)-1]
	require.FileExists(t, p)
	t.Logf("fixture %s (%s)", p, time.Since(start).Round(100*time.Millisecond))
	return p
}

func testArch(t *testing.T, bin, arch string) {
	q := requireArch(t, arch)
	fixture := archFixture(t, arch)
	srv, err := ServeArtifacts(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	rootfs := extractFile(t, fixture, "images/pxeboot/rootfs.img", filepath.Join(t.TempDir(), "rootfs.img"))
	rootfsSHA := sha(rootfs)
	cd := Mode{q.Firmware, CDROM}
	isoName := "agent." + arch + ".iso"

	t.Run("agent-iso", func(t *testing.T) {
		dir, ign := buildArchExample(t, bin, fixture, srv, "sno", "iso", "image", exampleEdits{GoArch: goArch[arch]})
		iso := filepath.Join(dir, isoName)
		kargs := isoKargs(t, iso)
		require.Contains(t, kargs, "coreos.liveiso=rhcos-9.6.20250523-0")
		exp := Expect{IgnitionSHA256: sha(ign), Kargs: kargs}
		consoles := bootAndCheck(t, q.QEMU, iso, exp, []Mode{cd})
		require.Len(t, consoles, 1, "the agent ISO must boot")

		// The negative control: the same ISO with another config put in its
		// Ignition area after agentiso wrote it must fail the check.
		t.Run("negative-ignition-changed", func(t *testing.T) {
			bad := copyISO(t, iso)
			other := []byte(string(ign) + " ") // another config: one more byte
			archive, err := GzipNewc(WithParentDirs([]CpioEntry{File("config.ign", other)}))
			require.NoError(t, err)
			require.NoError(t, EmbedIgnitionArchive(bad, archive))
			err = bootExpectingFailure(t, q.QEMU, bad, exp, cd)
			require.ErrorContains(t, err, "/config.ign sha256 is "+sha(other)+", want "+sha(ign))
		})
	})

	t.Run("minimal-iso", func(t *testing.T) {
		dir, ign := buildArchExample(t, bin, fixture, srv, "sno", "minimal", "image", exampleEdits{GoArch: goArch[arch], MinimalISO: true})
		iso := filepath.Join(dir, isoName)
		f, err := os.Open(iso)
		require.NoError(t, err)
		_, err = LocateFile(f, "images/pxeboot/rootfs.img")
		f.Close()
		require.Error(t, err, "the minimal ISO has no rootfs.img")
		kargs := isoKargs(t, iso)
		rootfsPath := "/minimal/boot-artifacts/agent." + arch + "-rootfs.img"
		require.Contains(t, kargs, "coreos.live.rootfs_url="+srv.GuestURL(rootfsPath))
		qn := q.QEMU
		qn.Net = &UserNet{Model: q.NIC}
		srv.Reset()
		bootAndCheck(t, qn, iso, Expect{IgnitionSHA256: sha(ign), Kargs: kargs, RootfsSHA256: rootfsSHA}, []Mode{cd})
		require.True(t, srv.Served(rootfsPath), "the guest fetched %s: %v", rootfsPath, srv.Requests())
	})

	t.Run("pxe", func(t *testing.T) {
		dir, ign := buildArchExample(t, bin, fixture, srv, "sno", "pxe", "pxe-files", exampleEdits{GoArch: goArch[arch]})
		arts := filepath.Join(dir, "boot-artifacts")
		name := func(kind string) string { return filepath.Join(arts, "agent."+arch+"-"+kind) }
		script, err := os.ReadFile(filepath.Join(arts, "agent."+arch+".ipxe"))
		require.NoError(t, err)
		kargs := ipxeKernelArgs(t, string(script))
		rootfsPath := "/pxe/boot-artifacts/agent." + arch + "-rootfs.img"
		require.Contains(t, kargs, "coreos.live.rootfs_url="+srv.GuestURL(rootfsPath))
		if arch == "s390x" {
			// initrd.addrsize: the load address, then the PXE initrd's size.
			st, err := os.Stat(name("initrd.img"))
			require.NoError(t, err)
			as, err := os.ReadFile(name("initrd.addrsize"))
			require.NoError(t, err)
			require.Len(t, as, 16)
			require.Equal(t, uint64(0x02000000), binary.BigEndian.Uint64(as[:8]), "initrd load address")
			require.Equal(t, uint64(st.Size()), binary.BigEndian.Uint64(as[8:]), "initrd size")
		}
		qk := q.QEMU
		qk.Net = &UserNet{Model: q.NIC}
		qk.Direct = &DirectBoot{Kernel: name("vmlinuz"), Initrd: name("initrd.img"), Append: strings.Join(kargs, " ")}
		srv.Reset()
		bootAndCheck(t, qk, "", Expect{IgnitionSHA256: sha(ign), Kargs: kargs, RootfsSHA256: rootfsSHA}, []Mode{{q.Firmware, Kernel}})
		require.True(t, srv.Served(rootfsPath), "the guest fetched %s: %v", rootfsPath, srv.Requests())
	})
}

// isoKargs returns the words of the ISO's kernel-argument areas.
func isoKargs(t *testing.T, iso string) []string {
	t.Helper()
	f, err := os.Open(iso)
	require.NoError(t, err)
	defer f.Close()
	k, err := Kargs(f)
	require.NoError(t, err, "%s: read the kargs embed areas", iso)
	return strings.Fields(k)
}
