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
// Every boot is a parallel subtest, so go test runs -parallel of them at
// once (default GOMAXPROCS: one guest per core; each TCG guest is one
// thread); each has its own server and directories.
//
//	AGENTISO_E2E_ARCHES  architectures to boot (default "ppc64le aarch64 s390x")

// goArch is the install-config spelling of each architecture.
var goArch = map[string]string{"aarch64": "arm64", "ppc64le": "ppc64le", "s390x": "s390x"}

func TestBootArch(t *testing.T) {
	arches := strings.Fields(os.Getenv("AGENTISO_E2E_ARCHES"))
	if len(arches) == 0 {
		arches = []string{"ppc64le", "aarch64", "s390x"}
	}
	bin := agentisoBin(t)
	start := time.Now()
	t.Cleanup(func() { t.Logf("all boots: %s, load %s", time.Since(start).Round(time.Second), loadAvg()) })
	for _, a := range arches {
		t.Run(a, func(t *testing.T) {
			t.Parallel()
			testArch(t, bin, a)
		})
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
	rootfs := extractFile(t, fixture, "images/pxeboot/rootfs.img", filepath.Join(t.TempDir(), "rootfs.img"))
	rootfsSHA := sha(rootfs)
	cd := Mode{q.Firmware, CDROM}
	isoName := "agent." + arch + ".iso"
	server := func(t *testing.T) *ArtifactServer {
		srv, err := ServeArtifacts(t.TempDir())
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, srv.Close()) })
		return srv
	}

	t.Run("agent-iso", func(t *testing.T) {
		t.Parallel()
		dir, ign := buildArchExample(t, bin, fixture, server(t), "sno", "iso", "image", exampleEdits{GoArch: goArch[arch]})
		iso := filepath.Join(dir, isoName)
		kargs := isoKargs(t, iso)
		require.Contains(t, kargs, "coreos.liveiso=rhcos-9.6.20250523-0")
		exp := Expect{IgnitionSHA256: sha(ign), Kargs: kargs}

		// The negative control: the same ISO with another config put in its
		// Ignition area after agentiso wrote it must fail the check.
		t.Run("negative-ignition-changed", func(t *testing.T) {
			bad := copyISO(t, iso)
			t.Parallel()
			other := []byte(string(ign) + " ") // another config: one more byte
			archive, err := GzipNewc(WithParentDirs([]CpioEntry{File("config.ign", other)}))
			require.NoError(t, err)
			require.NoError(t, EmbedIgnitionArchive(bad, archive))
			err = bootExpectingFailure(t, q.QEMU, bad, exp, cd)
			require.ErrorContains(t, err, "/config.ign sha256 is "+sha(other)+", want "+sha(ign))
		})
		consoles := bootAndCheck(t, q.QEMU, iso, exp, []Mode{cd})
		require.Len(t, consoles, 1, "the agent ISO must boot")
	})

	t.Run("minimal-iso", func(t *testing.T) {
		t.Parallel()
		srv := server(t)
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
		bootAndCheck(t, qn, iso, Expect{IgnitionSHA256: sha(ign), Kargs: kargs, RootfsSHA256: rootfsSHA}, []Mode{cd})
		require.True(t, srv.Served(rootfsPath), "the guest fetched %s: %v", rootfsPath, srv.Requests())
	})

	t.Run("pxe", func(t *testing.T) {
		t.Parallel()
		srv := server(t)
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
			// generic.ins (the fixture's has the current RHCOS layout's
			// paths): each file it names is beside it, as an HMC load
			// needs, at the ISO's addresses.
			ins, err := os.ReadFile(name("generic.ins"))
			require.NoError(t, err)
			loads := map[string]string{}
			for _, l := range strings.Split(string(ins), "\n") {
				if f := strings.Fields(l); len(f) >= 2 && !strings.HasPrefix(f[0], "*") {
					require.FileExists(t, filepath.Join(arts, f[0]), "named by agent.s390x-generic.ins:\n%s", ins)
					loads[f[0]] = f[1]
				}
			}
			require.Equal(t, map[string]string{"agent.s390x-vmlinuz": "0x00000000", "agent.s390x-initrd.img": "0x02000000",
				"agent.s390x-generic.prm": "0x00010480", "agent.s390x-initrd.addrsize": "0x00010408"}, loads)
			// The kernel boots with the parm file's arguments, what an
			// LPAR's kernel gets: the iPXE script's, without initrd=.
			prm, err := os.ReadFile(name("generic.prm"))
			require.NoError(t, err)
			require.Equal(t, kargs[1:], strings.Fields(string(prm)), "agent.s390x-generic.prm")
			require.Equal(t, "initrd=main", kargs[0])
			kargs = strings.Fields(string(prm))
		}
		qk := q.QEMU
		qk.Net = &UserNet{Model: q.NIC}
		qk.Direct = &DirectBoot{Kernel: name("vmlinuz"), Initrd: name("initrd.img"), Append: strings.Join(kargs, " ")}
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
