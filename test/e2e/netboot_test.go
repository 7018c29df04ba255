//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

// The network boots: a minimal ISO fetching its rootfs, and iPXE. Each
// guest gets one NIC on QEMU user networking and reaches only the test's
// artifact server on the host's loopback interface (10.0.2.2 to the guest).

const (
	rootfsName = "agent.x86_64-rootfs.img"
	ipxeName   = "agent.x86_64.ipxe"
	kernelName = "agent.x86_64-vmlinuz"
	initrdName = "agent.x86_64-initrd.img"
	// fixedKargs sit before the fixture's karg area (hack/build-boot-fixture.sh).
	fixedKargs = "console=ttyS0,115200n8 panic=5"
)

// netArtifacts are what the network boots boot from.
type netArtifacts struct {
	minimalISO string   // the agent minimal ISO
	isoKargs   []string // kernel arguments the minimal ISO's karg areas hold
	ipxe       string   // the iPXE script's name in the server's directory
	ipxeKargs  []string // kernel arguments of the iPXE script's kernel line
	ignition   []byte   // the exact Ignition config both carry
	rootfs     []byte   // what the rootfs URL serves
}

// extractFile copies a file of the ISO at isoPath to dst.
func extractFile(t *testing.T, isoPath, path, dst string) []byte {
	t.Helper()
	f, err := os.Open(isoPath)
	require.NoError(t, err)
	defer f.Close()
	ext, err := LocateFile(f, path)
	require.NoError(t, err, "%s in %s", path, isoPath)
	b := make([]byte, ext.Size)
	_, err = f.ReadAt(b, ext.Offset)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(dst, b, 0o644))
	return b
}

// withoutLiveISO drops coreos.liveiso=: a minimal ISO or a PXE boot fetches
// its root instead of looking for a CD (as coreos-installer does).
func withoutLiveISO(kargs []string) []string {
	return slices.DeleteFunc(slices.Clone(kargs), func(k string) bool { return strings.HasPrefix(k, "coreos.liveiso=") })
}

// libraryArtifacts makes the minimal ISO and the PXE files with
// pkg/isoeditor directly, the way `agentiso create image` (minimalISO) and
// `create pxe-files` do.
func libraryArtifacts(t *testing.T, fixture string, srv *ArtifactServer, config []byte) netArtifacts {
	t.Helper()
	work := t.TempDir()
	a := netArtifacts{ignition: config, ipxe: ipxeName}
	a.rootfs = extractFile(t, fixture, "images/pxeboot/rootfs.img", filepath.Join(srv.Dir, rootfsName))
	rootfsURL := srv.GuestURL(rootfsName)

	// Minimal ISO: rebuilt from coreos/miniso.dat, then the Ignition
	// config and the kargs (default - coreos.liveiso + rootfs URL).
	iso, f, err := isoeditor.OpenFile(fixture)
	require.NoError(t, err)
	defer f.Close()
	m, err := iso.MinisoData()
	require.NoError(t, err)
	r, err := m.MinimalISO(f)
	require.NoError(t, err)
	a.minimalISO = filepath.Join(work, "agent.x86_64.iso")
	out, err := os.Create(a.minimalISO)
	require.NoError(t, err)
	_, err = io.Copy(out, r)
	require.NoError(t, err, "rebuild the minimal ISO")
	require.NoError(t, out.Close())
	archive, err := isoeditor.IgnitionArchive(config)
	require.NoError(t, err)
	require.NoError(t, EmbedIgnitionArchive(a.minimalISO, archive))
	a.isoKargs = append(withoutLiveISO(strings.Fields(defaultKargs)), "coreos.live.rootfs_url="+rootfsURL)
	require.NoError(t, SetKargs(a.minimalISO, strings.Join(a.isoKargs, " ")))

	// PXE: kernel, initrd + Ignition archive, rootfs, iPXE script.
	extractFile(t, fixture, "images/pxeboot/vmlinuz", filepath.Join(srv.Dir, kernelName))
	initrd := extractFile(t, fixture, "images/pxeboot/initrd.img", filepath.Join(work, "initrd.img"))
	pr, _ := isoeditor.PXEInitrd(bytes.NewReader(initrd), int64(len(initrd)), archive)
	b, err := io.ReadAll(pr)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(srv.Dir, initrdName), b, 0o644))
	kargs := withoutLiveISO(strings.Fields(fixedKargs + " " + defaultKargs))
	script, err := isoeditor.IPXEScript(srv.GuestURL(kernelName), srv.GuestURL(initrdName), rootfsURL, kargs)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(srv.Dir, ipxeName), []byte(script), 0o644))
	a.ipxeKargs = append(append([]string{"initrd=main"}, kargs...), "coreos.live.rootfs_url="+rootfsURL)
	return a
}

// ipxeKernelArgs returns the arguments of the script's kernel line (after the URL).
func ipxeKernelArgs(t *testing.T, script string) []string {
	t.Helper()
	for _, line := range strings.Split(script, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "kernel" {
			return f[2:]
		}
	}
	t.Fatalf("no kernel line in the iPXE script:\n%s", script)
	return nil
}

func testNetworkBoots(t *testing.T, q QEMU, fixture string, config []byte) {
	srv, err := ServeArtifacts(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	a := libraryArtifacts(t, fixture, srv, config)
	rootfsSHA := sha(a.rootfs)

	t.Run("minimal-iso", func(t *testing.T) {
		st, err := os.Stat(a.minimalISO)
		require.NoError(t, err)
		fst, err := os.Stat(fixture)
		require.NoError(t, err)
		require.Less(t, st.Size(), fst.Size(), "the minimal ISO is smaller than the full one")
		f, err := os.Open(a.minimalISO)
		require.NoError(t, err)
		_, err = LocateFile(f, "images/pxeboot/rootfs.img")
		f.Close()
		require.Error(t, err, "the minimal ISO has no rootfs.img")

		qn := q
		qn.Net = &UserNet{}
		exp := Expect{IgnitionSHA256: sha(a.ignition), Kargs: a.isoKargs, RootfsSHA256: rootfsSHA}
		for _, m := range CDModes() {
			srv.Reset()
			bootAndCheck(t, qn, a.minimalISO, exp, []Mode{m})
			require.True(t, srv.Served("/"+rootfsName), "%s: the guest fetched %s from the server: %v", m, rootfsName, srv.Requests())
		}
	})

	t.Run("pxe", func(t *testing.T) {
		script, err := os.ReadFile(filepath.Join(srv.Dir, a.ipxe))
		require.NoError(t, err)
		require.Equal(t, a.ipxeKargs, ipxeKernelArgs(t, string(script)))
		qn := q
		qn.Net = &UserNet{BootFile: srv.GuestURL(a.ipxe)}
		srv.Reset()
		pxe := Mode{BIOS, Network}
		bootAndCheck(t, qn, "", Expect{IgnitionSHA256: sha(a.ignition), Kargs: a.ipxeKargs, RootfsSHA256: rootfsSHA}, []Mode{pxe})
		for _, name := range []string{a.ipxe, kernelName, initrdName, rootfsName} {
			require.True(t, srv.Served("/"+name), "iPXE or the guest fetched %s: %v", name, srv.Requests())
		}
	})

	t.Run("pxe/negative-wrong-rootfs-url", func(t *testing.T) {
		// The same script with a rootfs URL the server does not have: the
		// guest must report the failed fetch and the harness must fail it.
		script, err := os.ReadFile(filepath.Join(srv.Dir, a.ipxe))
		require.NoError(t, err)
		good := srv.GuestURL(rootfsName)
		wrongURL := srv.GuestURL("missing-" + rootfsName)
		wrong := strings.Replace(string(script), "coreos.live.rootfs_url="+good, "coreos.live.rootfs_url="+wrongURL, 1)
		require.NotEqual(t, string(script), wrong)
		require.NoError(t, os.WriteFile(filepath.Join(srv.Dir, "wrong-rootfs.ipxe"), []byte(wrong), 0o644))
		qn := q
		qn.Net = &UserNet{BootFile: srv.GuestURL("wrong-rootfs.ipxe")}
		srv.Reset()
		console, err := qn.BootAndVerify(context.Background(), "", Mode{BIOS, Network}, Expect{IgnitionSHA256: sha(a.ignition), RootfsSHA256: rootfsSHA}, t.TempDir())
		require.Error(t, err, "a wrong rootfs URL passed the boot check; console:\n%s", tail(console, 4096))
		t.Logf("detected as expected: %v", err)
		require.ErrorContains(t, err, "could not fetch its rootfs")
		require.ErrorContains(t, err, "404")
		rep, perr := ParseReport(console)
		require.NoError(t, perr)
		require.Contains(t, rep.Kargs(), "coreos.live.rootfs_url="+wrongURL)
		require.Equal(t, sha(a.ignition), rep.IgnitionSHA256, "everything but the rootfs still arrived")
	})
}
