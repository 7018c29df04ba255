//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Environment:
//
//	AGENTISO_E2E_FIXTURE  boot fixture ISO (default: built into a temp dir
//	                      with hack/build-boot-fixture.sh)
//	AGENTISO_E2E_CASES    JSON cases file of further ISOs to boot (optional)
//	AGENTISO_E2E_ACCEL    tcg (default) or kvm

const defaultKargs = "rw coreos.liveiso=rhcos-9.6.20250523-0 ignition.firstboot ignition.platform.id=metal"

// requireTools finds QEMU and OVMF; it skips outside CI and fails in CI when they are missing.
func requireTools(t *testing.T) QEMU {
	t.Helper()
	q, err := FindQEMU(os.Getenv("AGENTISO_E2E_ACCEL"))
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("boot test needs QEMU and OVMF (hack/install-e2e-deps.sh): %v", err)
		}
		t.Fatalf("CI=true but the boot test's tools are missing: %v", err)
	}
	t.Logf("qemu: %s, KVM=%v, timeout %s per boot", q.Binary, q.KVM, q.Timeout)
	return q
}

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// fixtureISO returns the boot fixture, building it when none is given.
func fixtureISO(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("AGENTISO_E2E_FIXTURE"); p != "" {
		require.FileExists(t, p, "AGENTISO_E2E_FIXTURE")
		return p
	}
	out := filepath.Join(t.TempDir(), "fixture.iso")
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "hack", "build-boot-fixture.sh"), out)
	b, err := cmd.CombinedOutput()
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("cannot build the boot fixture (hack/install-e2e-deps.sh?): %v\n%s", err, b)
		}
		t.Fatalf("build boot fixture: %v\n%s", err, b)
	}
	return out
}

// copyISO gives each case its own writable copy of the fixture.
func copyISO(t *testing.T, src string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	dst := filepath.Join(t.TempDir(), "case.iso")
	require.NoError(t, os.WriteFile(dst, b, 0o644))
	return dst
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// bootAndCheck boots iso in every mode and requires exp to hold in each.
func bootAndCheck(t *testing.T, q QEMU, iso string, exp Expect, modes []Mode) map[Mode][]byte {
	t.Helper()
	consoles := map[Mode][]byte{}
	for _, m := range modes {
		run, err := q.BootAndVerify(context.Background(), iso, m, exp, t.TempDir())
		if err != nil {
			t.Errorf("%v (after %s, load %s)\n--- serial console (%s), last 4 KiB ---\n%s", err, run.Cost(), loadAvg(), m, tail(run.Console, 4096))
			continue
		}
		t.Logf("%s: ok in %s, load %s", m, run.Cost(), loadAvg())
		consoles[m] = run.Console
	}
	return consoles
}

// bootExpectingFailure boots iso once and returns the verification error,
// which must not be nil: the harness has to notice a broken ISO.
func bootExpectingFailure(t *testing.T, q QEMU, iso string, exp Expect, mode Mode) error {
	t.Helper()
	run, err := q.BootAndVerify(context.Background(), iso, mode, exp, t.TempDir())
	require.Error(t, err, "a broken ISO passed the boot check; console:\n%s", tail(run.Console, 4096))
	t.Logf("%s: detected as expected in %s, load %s: %v", mode, run.Cost(), loadAvg(), err)
	return err
}

// loadAvg is the 1-minute load average ("?" when unknown): boot times
// under TCG grow with it.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// TestBoot boots the x86_64 fixture and the agent ISOs of the cases file.
// Every top-level subtest is parallel (each has its own ISO copy and, for
// the network boots, its own server; those boots share it and run in
// order), so go test runs -parallel guests at once: one per core, each TCG
// guest being one thread.
func TestBoot(t *testing.T) {
	q := requireTools(t)
	fixture := fixtureISO(t)
	bios := Mode{BIOS, CDROM}
	config := []byte(`{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/e2e","contents":{"source":"data:,agentiso"}}]}}`)
	nm := []byte("[connection]\nid=eth0\ntype=ethernet\ninterface-name=eth0\n[ipv4]\nmethod=auto\n")
	manifest := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: e2e\n")

	t.Run("fixture/pristine", func(t *testing.T) {
		t.Parallel()
		// The unmodified fixture boots every way and carries no config.
		bootAndCheck(t, q, fixture, Expect{
			Kargs:       strings.Fields(defaultKargs),
			AbsentPaths: []string{"/config.ign"},
		}, AllModes())
	})

	t.Run("fixture/gzip-ignition-network-kargs", func(t *testing.T) {
		t.Parallel()
		iso := copyISO(t, fixture)
		archive, err := GzipNewc(WithParentDirs([]CpioEntry{
			File("config.ign", config),
			File("etc/assisted/manifests/e2e.yaml", manifest),
			File("etc/NetworkManager/system-connections/eth0.nmconnection", nm),
		}))
		require.NoError(t, err)
		require.NoError(t, EmbedIgnitionArchive(iso, archive))
		require.NoError(t, AppendKargs(iso, "agentiso.e2e=1 ip=dhcp"))
		exp := Expect{
			IgnitionSHA256: sha(config),
			Paths:          []string{"/etc/assisted", "/etc/NetworkManager/system-connections"},
			Files: map[string]string{
				"/etc/assisted/manifests/e2e.yaml":                         sha(manifest),
				"/etc/NetworkManager/system-connections/eth0.nmconnection": sha(nm),
			},
			Kargs: append(strings.Fields(defaultKargs), "agentiso.e2e=1", "ip=dhcp"),
		}
		consoles := bootAndCheck(t, q, iso, exp, CDModes())
		console, ok := consoles[bios]
		require.True(t, ok, "BIOS boot failed, see above")

		// The harness's own checks must reject what this boot did not show.
		f, err := os.Open(iso)
		require.NoError(t, err)
		vol, err := VolumeID(f)
		f.Close()
		require.NoError(t, err)
		require.NoError(t, Verify(console, vol, exp))
		wrong := exp
		wrong.IgnitionSHA256 = sha([]byte("another config"))
		require.ErrorContains(t, Verify(console, vol, wrong), "/config.ign sha256 is "+sha(config))
		wrong = exp
		wrong.Kargs = []string{"agentiso.e2e=2"}
		require.ErrorContains(t, Verify(console, vol, wrong), `kernel argument "agentiso.e2e=2" missing`)
		wrong = exp
		wrong.Paths = []string{"/etc/assisted/other.yaml"}
		require.ErrorContains(t, Verify(console, vol, wrong), "missing path /etc/assisted/other.yaml")
		require.ErrorContains(t, Verify(console, "rhcos-other", exp), "does not match the ISO volume ID")
		require.ErrorContains(t, Verify(bytes.ReplaceAll(console, []byte(endMarker), nil), vol, exp), "truncated")
	})

	t.Run("fixture/negative-nested-file-without-dirs", func(t *testing.T) {
		t.Parallel()
		// Linux drops a file whose parent directory does not exist: an
		// archive without directory entries loses etc/assisted/x.
		iso := copyISO(t, fixture)
		x := []byte("x\n")
		archive, err := GzipNewc([]CpioEntry{File("config.ign", config), File("etc/assisted/x", x)})
		require.NoError(t, err)
		require.NoError(t, EmbedIgnitionArchive(iso, archive))
		err = bootExpectingFailure(t, q, iso, Expect{
			IgnitionSHA256: sha(config),
			Files:          map[string]string{"/etc/assisted/x": sha(x)},
		}, bios)
		require.ErrorContains(t, err, "missing file /etc/assisted/x")
		require.NotContains(t, err.Error(), "config.ign", "config.ign itself must still arrive")
	})

	t.Run("fixture/negative-corrupt-gzip", func(t *testing.T) {
		t.Parallel()
		iso := copyISO(t, fixture)
		archive, err := GzipNewc(WithParentDirs([]CpioEntry{File("config.ign", config)}))
		require.NoError(t, err)
		for i := 12; i < len(archive)-8; i++ { // keep the header, ruin the deflate data
			archive[i] ^= 0x5a
		}
		require.NoError(t, EmbedIgnitionArchive(iso, archive))
		err = bootExpectingFailure(t, q, iso, Expect{IgnitionSHA256: sha(config)}, bios)
		require.ErrorContains(t, err, "kernel could not unpack an initrd")
	})

	// xz: the kernel accepts only the CRC32 integrity check (spec §9), while
	// userspace readers accept CRC64 too: only a boot tells them apart.
	xzArchive := func(t *testing.T, check string) []byte {
		t.Helper()
		xzBin, err := exec.LookPath("xz")
		if err != nil {
			if os.Getenv("CI") == "" {
				t.Skip("xz not installed (hack/install-e2e-deps.sh)")
			}
			t.Fatal("CI=true but xz is missing")
		}
		var raw bytes.Buffer
		require.NoError(t, WriteNewc(&raw, WithParentDirs([]CpioEntry{File("config.ign", config)})))
		cmd := exec.Command(xzBin, "-9", "--check="+check, "-c")
		cmd.Stdin = &raw
		out, err := cmd.Output()
		require.NoError(t, err)
		return out
	}

	t.Run("fixture/xz-crc32-ignition", func(t *testing.T) {
		t.Parallel()
		iso := copyISO(t, fixture)
		require.NoError(t, EmbedIgnitionArchive(iso, xzArchive(t, "crc32")))
		bootAndCheck(t, q, iso, Expect{IgnitionSHA256: sha(config)}, []Mode{bios})
	})

	t.Run("fixture/negative-xz-crc64", func(t *testing.T) {
		t.Parallel()
		iso := copyISO(t, fixture)
		require.NoError(t, EmbedIgnitionArchive(iso, xzArchive(t, "crc64")))
		err := bootExpectingFailure(t, q, iso, Expect{IgnitionSHA256: sha(config)}, bios)
		require.ErrorContains(t, err, "kernel could not unpack an initrd")
		require.ErrorContains(t, err, "/config.ign missing")
	})

	t.Run("network", func(t *testing.T) {
		t.Parallel()
		// Minimal ISO and iPXE: the guest fetches its rootfs over HTTP.
		testNetworkBoots(t, q, fixture)
	})

	cases := os.Getenv(CasesEnv)
	if cases == "" {
		return // no agent ISOs given: no such subtests at all
	}
	loaded, err := LoadCases(cases)
	require.NoError(t, err, CasesEnv)
	for _, c := range loaded {
		t.Run("case/"+c.Name, func(t *testing.T) {
			t.Parallel()
			f, err := os.Open(c.ISO)
			require.NoError(t, err)
			kargs, err := Kargs(f)
			f.Close()
			require.NoError(t, err, "%s: read the kargs embed areas", c.ISO)
			// Whatever the ISO's kargs areas hold must reach the kernel.
			exp := c.Expect
			exp.Kargs = append(append([]string(nil), exp.Kargs...), strings.Fields(kargs)...)
			t.Logf("%s: kargs %q, expecting /config.ign sha256 %s", c.ISO, kargs, exp.IgnitionSHA256)
			bootAndCheck(t, q, c.ISO, exp, c.BootModes())
		})
	}
}
