package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Firmware is the virtual machine's firmware.
type Firmware string

// Firmwares the harness boots with.
const (
	BIOS Firmware = "bios" // SeaBIOS, machine type pc
	UEFI Firmware = "uefi" // OVMF, machine type q35
)

// Media is how the ISO is attached.
type Media string

// Media kinds.
const (
	CDROM   Media = "cdrom" // El Torito boot
	Disk    Media = "disk"  // isohybrid MBR (BIOS) or GPT ESP (UEFI)
	Network Media = "net"   // no drive: the NIC's iPXE ROM boots QEMU.Net's BootFile
)

// Mode is one way of booting an ISO.
type Mode struct {
	Firmware Firmware
	Media    Media
}

func (m Mode) String() string { return string(m.Firmware) + "-" + string(m.Media) }

// CDModes are the boots every agent ISO must pass: BIOS and UEFI from a CD.
func CDModes() []Mode { return []Mode{{BIOS, CDROM}, {UEFI, CDROM}} }

// AllModes adds the isohybrid disk boots (USB-stick style) to CDModes.
func AllModes() []Mode { return append(CDModes(), Mode{BIOS, Disk}, Mode{UEFI, Disk}) }

// QEMU runs qemu-system-x86_64.
type QEMU struct {
	Binary    string        // qemu-system-x86_64
	OVMFCode  string        // UEFI firmware code (read-only pflash)
	OVMFVars  string        // UEFI variable store template (copied per boot)
	KVM       bool          // use KVM instead of TCG
	MemoryMiB int           // guest memory
	Timeout   time.Duration // hard limit for one boot, power-on to power-off
	// Net, when set, gives the guest a NIC; without it the guest has none.
	Net *UserNet
}

// UserNet is one e1000 NIC on QEMU user networking (slirp): the guest gets
// 10.0.2.15 by DHCP from QEMU itself and reaches the host's loopback
// interface as 10.0.2.2, so a server listening on 127.0.0.1 is all it needs.
// e1000 because the fixture's initramfs has its driver and QEMU's iPXE has
// a ROM for it.
type UserNet struct {
	// BootFile is the DHCP boot file name QEMU offers (a network boot): an
	// http URL, which iPXE fetches and runs as its script.
	BootFile string
}

// netdev returns the -nic option value.
func (n *UserNet) netdev() (string, error) {
	if n == nil {
		return "none", nil
	}
	v := "user,model=e1000,ipv6=off"
	if n.BootFile != "" {
		if strings.ContainsAny(n.BootFile, ", \t\n") {
			return "", fmt.Errorf("boot file %q: no commas or spaces in a QEMU option", n.BootFile)
		}
		v += ",bootfile=" + n.BootFile
	}
	return v, nil
}

// ovmfPairs are the Debian ovmf package's code/vars pairs, preferred first.
func ovmfPairs() [][2]string {
	return [][2]string{
		{"/usr/share/OVMF/OVMF_CODE_4M.fd", "/usr/share/OVMF/OVMF_VARS_4M.fd"},
		{"/usr/share/OVMF/OVMF_CODE.fd", "/usr/share/OVMF/OVMF_VARS.fd"},
	}
}

// FindQEMU locates qemu-system-x86_64 and OVMF. accel is "tcg" (also the
// default for "") or "kvm". TCG is the default because an openable /dev/kvm
// does not prove KVM works: in nested sandboxes it can fail to start a
// guest or hang it, while TCG behaves the same everywhere.
func FindQEMU(accel string) (QEMU, error) {
	q := QEMU{MemoryMiB: 512, Timeout: 5 * time.Minute}
	bin, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		return q, fmt.Errorf("qemu-system-x86_64 not found (run hack/install-e2e-deps.sh): %w", err)
	}
	q.Binary = bin
	for _, p := range ovmfPairs() {
		if fileExists(p[0]) && fileExists(p[1]) {
			q.OVMFCode, q.OVMFVars = p[0], p[1]
			break
		}
	}
	if q.OVMFCode == "" {
		return q, errors.New("OVMF firmware not found under /usr/share/OVMF (run hack/install-e2e-deps.sh)")
	}
	switch accel {
	case "", "tcg":
	case "kvm":
		f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
		if err != nil {
			return q, fmt.Errorf("KVM requested but /dev/kvm cannot be opened: %w", err)
		}
		f.Close()
		q.KVM = true
	default:
		return q, fmt.Errorf("accelerator %q: want tcg or kvm", accel)
	}
	return q, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Args returns the qemu command line for booting iso in mode (iso is
// empty for a Network boot). The serial console goes to stdout; varsPath is
// the writable UEFI variable store.
func (q QEMU) Args(iso string, mode Mode, varsPath string) ([]string, error) {
	accel, cpu := "tcg", "max"
	if q.KVM {
		accel, cpu = "kvm", "host"
	}
	nic, err := q.Net.netdev()
	if err != nil {
		return nil, err
	}
	args := []string{
		"-m", fmt.Sprint(q.MemoryMiB), "-smp", "1", "-cpu", cpu,
		"-display", "none", "-monitor", "none", "-serial", "stdio",
		"-nic", nic, "-no-reboot",
	}
	switch mode.Firmware {
	case BIOS:
		args = append(args, "-machine", "pc,accel="+accel)
	case UEFI:
		args = append(args, "-machine", "q35,accel="+accel,
			"-drive", "if=pflash,format=raw,readonly=on,file="+q.OVMFCode,
			"-drive", "if=pflash,format=raw,file="+varsPath)
	default:
		return nil, fmt.Errorf("unknown firmware %q", mode.Firmware)
	}
	switch mode.Media {
	case CDROM:
		args = append(args, "-drive", "file="+iso+",format=raw,media=cdrom,readonly=on", "-boot", "d")
	case Disk:
		args = append(args, "-drive", "file="+iso+",format=raw,media=disk,snapshot=on", "-boot", "c")
	case Network:
		if q.Net == nil || q.Net.BootFile == "" || iso != "" {
			return nil, errors.New("a network boot needs QEMU.Net with a BootFile and no ISO")
		}
		args = append(args, "-boot", "n")
	default:
		return nil, fmt.Errorf("unknown media %q", mode.Media)
	}
	return args, nil
}

// Boot boots iso in mode and returns the serial console output, which is
// also written to workDir/console-<mode>.log. It fails when QEMU fails or
// does not power off within q.Timeout; the console captured so far is
// returned in every case.
func (q QEMU) Boot(ctx context.Context, iso string, mode Mode, workDir string) ([]byte, error) {
	absISO, what := "", "" // what: the boot's name in errors
	if mode.Media == Network {
		if q.Net != nil {
			what = q.Net.BootFile
		}
	} else {
		var err error
		if absISO, err = filepath.Abs(iso); err != nil {
			return nil, err
		}
		what = iso
	}
	vars := filepath.Join(workDir, "OVMF_VARS-"+mode.String()+".fd")
	if mode.Firmware == UEFI {
		b, err := os.ReadFile(q.OVMFVars)
		if err != nil {
			return nil, fmt.Errorf("read OVMF vars: %w", err)
		}
		if err := os.WriteFile(vars, b, 0o600); err != nil {
			return nil, fmt.Errorf("write OVMF vars copy: %w", err)
		}
	}
	args, err := q.Args(absISO, mode, vars)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(workDir, "console-"+mode.String()+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()

	ctx, cancel := context.WithTimeout(ctx, q.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, q.Binary, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.WaitDelay = 10 * time.Second
	runErr := cmd.Run()
	console, readErr := os.ReadFile(logPath)
	switch {
	case ctx.Err() != nil:
		return console, fmt.Errorf("%s boot of %s did not power off within %s", mode, what, q.Timeout)
	case runErr != nil:
		return console, fmt.Errorf("qemu (%s) failed: %w", mode, runErr)
	case readErr != nil:
		return console, readErr
	}
	return console, nil
}

// BootAndVerify boots iso in mode and checks the guest's report against exp.
// For a Network boot iso is empty and the guest must not have a
// coreos.liveiso= argument (there is no ISO volume to name).
func (q QEMU) BootAndVerify(ctx context.Context, iso string, mode Mode, exp Expect, workDir string) ([]byte, error) {
	volID, what := "", iso
	if mode.Media == Network {
		if q.Net != nil {
			what = q.Net.BootFile
		}
	} else {
		f, err := os.Open(iso)
		if err != nil {
			return nil, err
		}
		volID, err = VolumeID(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", iso, err)
		}
	}
	console, err := q.Boot(ctx, iso, mode, workDir)
	if err != nil {
		return console, err
	}
	if err := Verify(console, volID, exp); err != nil {
		return console, fmt.Errorf("%s boot of %s: %w", mode, what, err)
	}
	return console, nil
}
