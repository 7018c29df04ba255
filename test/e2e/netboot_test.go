//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The network boots: a minimal ISO fetching its rootfs, and iPXE. Each
// guest gets one NIC on QEMU user networking and reaches only the test's
// artifact server on the host's loopback interface (10.0.2.2 to the guest).

const (
	rootfsName = "agent.x86_64-rootfs.img"
	ipxeName   = "agent.x86_64.ipxe"
	kernelName = "agent.x86_64-vmlinuz"
	initrdName = "agent.x86_64-initrd.img"
)

// netArtifacts are what the network boots boot from.
type netArtifacts struct {
	minimalISO string   // the agent minimal ISO
	isoKargs   []string // kernel arguments the minimal ISO's karg areas hold
	isoIgn     []byte   // the exact Ignition config the minimal ISO carries
	isoRootfs  string   // the rootfs URL's path on the server
	ipxe       string   // the iPXE script's path on the server
	ipxeKargs  []string // kernel arguments of the iPXE script's kernel line
	ipxeIgn    []byte   // the exact Ignition config the PXE initrd carries
	ipxeFiles  []string // the paths on the server iPXE and the guest fetch
	rootfs     []byte   // the fixture's rootfs.img, which both rootfs URLs must serve
}

// agentisoBin is the binary under test: AGENTISO_E2E_BIN (make e2e passes
// bin/agentiso), else built from this checkout.
func agentisoBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("AGENTISO_E2E_BIN"); p != "" {
		require.FileExists(t, p, "AGENTISO_E2E_BIN")
		return p
	}
	bin := filepath.Join(t.TempDir(), "agentiso")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/agentiso")
	cmd.Dir = repoRoot(t)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build ./cmd/agentiso:\n%s", out)
	return bin
}

func runAgentiso(t *testing.T, bin string, args ...string) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	require.NoError(t, err, "agentiso %s:\n%s", strings.Join(args, " "), out)
}

// copyExample copies examples/<name> to dst with bootArtifactsBaseURL set to url.
func copyExample(t *testing.T, name, dst, url string) {
	t.Helper()
	require.NoError(t, os.CopyFS(dst, os.DirFS(filepath.Join(repoRoot(t), "examples", name))))
	p := filepath.Join(dst, "agent-config.yaml")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasPrefix(l, "bootArtifactsBaseURL:") {
			lines = append(lines, l)
		}
	}
	cfg := strings.TrimRight(strings.Join(lines, ""), "\n") + "\nbootArtifactsBaseURL: " + url + "\n"
	require.NoError(t, os.WriteFile(p, []byte(cfg), 0o644))
}

// setArchitecture gives the control plane and the compute pool of the
// install-config at p the architecture goArch (the examples name none, or
// amd64).
func setArchitecture(t *testing.T, p, goArch string) {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	var out []string
	pools := 0
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if strings.TrimSpace(l) == "architecture: amd64" {
			continue
		}
		out = append(out, l)
		switch l {
		case "controlPlane:\n":
			out, pools = append(out, "  architecture: "+goArch+"\n"), pools+1
		case "  - name: worker\n":
			out, pools = append(out, "    architecture: "+goArch+"\n"), pools+1
		}
	}
	require.Equal(t, 2, pools, "%s: a controlPlane and a compute pool named worker", p)
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(out, "")), 0o644))
}

// offlineRelease gives agentiso, which pins no default release
// (docs/release.md), the release of the network boots: a made-up digest of
// a supported release, offline with its version (these boots check what
// reaches the kernel, never a payload), as make demo does.
var offlineRelease = []string{"--offline", "--release-version", "4.20.0",
	"--release-image", "quay.io/openshift-release-dev/ocp-release@sha256:4200000000000000000000000000000000000000000000000000000000000000"}

// buildExample copies examples/<example> to the server's sub/ with
// bootArtifactsBaseURL = the server's sub/boot-artifacts/, runs
// `agentiso create ignition` and `agentiso create <what>` there with the
// fixture as the base ISO, and returns the directory and its agent.ign.
func buildExample(t *testing.T, bin, fixture string, srv *ArtifactServer, example, sub, what string) (string, []byte) {
	return buildArchExample(t, bin, fixture, srv, example, sub, what, exampleEdits{})
}

// exampleEdits change an example before it is built.
type exampleEdits struct {
	// GoArch is the cluster's install-config architecture (arm64,
	// ppc64le, s390x); "" leaves the example's.
	GoArch string
	// MinimalISO sets agent-config's minimalISO: true (platform external,
	// which always gets one, is x86_64 and aarch64 only).
	MinimalISO bool
}

// buildArchExample is buildExample with the example edited first.
func buildArchExample(t *testing.T, bin, fixture string, srv *ArtifactServer, example, sub, what string, edits exampleEdits) (string, []byte) {
	t.Helper()
	dir := filepath.Join(srv.Dir, sub)
	copyExample(t, example, dir, srv.GuestURL(sub+"/boot-artifacts"))
	if edits.GoArch != "" {
		setArchitecture(t, filepath.Join(dir, "install-config.yaml"), edits.GoArch)
	}
	if edits.MinimalISO {
		f, err := os.OpenFile(filepath.Join(dir, "agent-config.yaml"), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString("minimalISO: true\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	// --base-iso for create ignition too: offline, OS_IMAGES names the
	// base ISO's RHCOS, so the config is the one the image carries.
	runAgentiso(t, bin, append([]string{"create", "ignition", "--dir", dir, "--base-iso", fixture, "--log-level", "warn"}, offlineRelease...)...)
	runAgentiso(t, bin, append([]string{"create", what, "--dir", dir, "--base-iso", fixture, "--log-level", "warn"}, offlineRelease...)...)
	ign, err := os.ReadFile(filepath.Join(dir, "agent.ign"))
	require.NoError(t, err)
	return dir, ign
}

// cliMinimalISO builds the minimal ISO of examples/oci-sno (platform
// external) with `agentiso create image`, its boot artifacts under the
// server's minimal/boot-artifacts/.
func cliMinimalISO(t *testing.T, bin, fixture string, srv *ArtifactServer, a *netArtifacts) {
	t.Helper()
	var dir string
	dir, a.isoIgn = buildExample(t, bin, fixture, srv, "oci-sno", "minimal", "image")
	a.minimalISO = filepath.Join(dir, "agent.x86_64.iso")
	f, err := os.Open(a.minimalISO)
	require.NoError(t, err)
	defer f.Close()
	kargs, err := Kargs(f)
	require.NoError(t, err)
	a.isoKargs = strings.Fields(kargs)
	a.isoRootfs = "/minimal/boot-artifacts/" + rootfsName
	require.Contains(t, a.isoKargs, "coreos.live.rootfs_url="+srv.GuestURL(a.isoRootfs), "the minimal ISO's kargs")
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

// cliPXE writes the PXE files of examples/sno with `agentiso create
// pxe-files`, bootArtifactsBaseURL being the server's pxe/boot-artifacts/.
func cliPXE(t *testing.T, bin, fixture string, srv *ArtifactServer, a *netArtifacts) {
	t.Helper()
	var dir string
	dir, a.ipxeIgn = buildExample(t, bin, fixture, srv, "sno", "pxe", "pxe-files")
	script, err := os.ReadFile(filepath.Join(dir, "boot-artifacts", ipxeName))
	require.NoError(t, err)
	a.ipxeKargs = ipxeKernelArgs(t, string(script))
	for _, name := range []string{ipxeName, kernelName, initrdName, rootfsName} {
		a.ipxeFiles = append(a.ipxeFiles, "/pxe/boot-artifacts/"+name)
	}
	a.ipxe = a.ipxeFiles[0]
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

func testNetworkBoots(t *testing.T, q QEMU, fixture string) {
	srv, err := ServeArtifacts(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	var a netArtifacts
	a.rootfs = extractFile(t, fixture, "images/pxeboot/rootfs.img", filepath.Join(t.TempDir(), "rootfs.img"))
	rootfsSHA := sha(a.rootfs)
	bin := agentisoBin(t)
	cliMinimalISO(t, bin, fixture, srv, &a)
	cliPXE(t, bin, fixture, srv, &a)
	// What the rootfs URLs serve is the base ISO's rootfs, byte for byte.
	for _, p := range []string{a.isoRootfs, a.ipxeFiles[len(a.ipxeFiles)-1]} {
		b, err := os.ReadFile(filepath.Join(srv.Dir, filepath.FromSlash(p)))
		require.NoError(t, err)
		require.Equal(t, rootfsSHA, sha(b), "%s is the fixture's rootfs.img", p)
	}

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

		require.NotContains(t, strings.Join(a.isoKargs, " "), "coreos.liveiso=", "a minimal ISO's root is not on the CD")
		qn := q
		qn.Net = &UserNet{}
		exp := Expect{IgnitionSHA256: sha(a.isoIgn), Kargs: a.isoKargs, RootfsSHA256: rootfsSHA}
		for _, m := range CDModes() {
			srv.Reset()
			bootAndCheck(t, qn, a.minimalISO, exp, []Mode{m})
			require.True(t, srv.Served(a.isoRootfs), "%s: the guest fetched %s from the server: %v", m, a.isoRootfs, srv.Requests())
		}
	})

	t.Run("pxe", func(t *testing.T) {
		require.Contains(t, a.ipxeKargs, "initrd=main")
		require.Contains(t, a.ipxeKargs, "coreos.live.rootfs_url="+srv.GuestURL(a.ipxeFiles[len(a.ipxeFiles)-1]))
		qn := q
		qn.Net = &UserNet{BootFile: srv.GuestURL(a.ipxe)}
		srv.Reset()
		pxe := Mode{BIOS, Network}
		bootAndCheck(t, qn, "", Expect{IgnitionSHA256: sha(a.ipxeIgn), Kargs: a.ipxeKargs, RootfsSHA256: rootfsSHA}, []Mode{pxe})
		for _, p := range a.ipxeFiles {
			require.True(t, srv.Served(p), "iPXE or the guest fetched %s: %v", p, srv.Requests())
		}
	})

	t.Run("pxe/negative-wrong-rootfs-url", func(t *testing.T) {
		// The same script with a rootfs URL the server does not have: the
		// guest must report the failed fetch and the harness must fail it.
		script, err := os.ReadFile(filepath.Join(srv.Dir, filepath.FromSlash(a.ipxe)))
		require.NoError(t, err)
		good := srv.GuestURL(a.ipxeFiles[len(a.ipxeFiles)-1])
		wrongURL := good + ".missing"
		wrong := strings.Replace(string(script), "coreos.live.rootfs_url="+good, "coreos.live.rootfs_url="+wrongURL, 1)
		require.NotEqual(t, string(script), wrong)
		require.NoError(t, os.WriteFile(filepath.Join(srv.Dir, "wrong-rootfs.ipxe"), []byte(wrong), 0o644))
		qn := q
		qn.Net = &UserNet{BootFile: srv.GuestURL("wrong-rootfs.ipxe")}
		srv.Reset()
		run, err := qn.BootAndVerify(context.Background(), "", Mode{BIOS, Network}, Expect{IgnitionSHA256: sha(a.ipxeIgn), RootfsSHA256: rootfsSHA}, t.TempDir())
		console := run.Console
		require.Error(t, err, "a wrong rootfs URL passed the boot check; console:\n%s", tail(console, 4096))
		t.Logf("detected as expected: %v", err)
		require.ErrorContains(t, err, "could not fetch its rootfs")
		require.ErrorContains(t, err, "404")
		rep, perr := ParseReport(console)
		require.NoError(t, perr)
		require.Contains(t, rep.Kargs(), "coreos.live.rootfs_url="+wrongURL)
		require.Equal(t, sha(a.ipxeIgn), rep.IgnitionSHA256, "everything but the rootfs still arrived")
	})
}
