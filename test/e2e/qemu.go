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
	// The other architectures' firmware (QEMU.Binary must be theirs).
	AAVMF   Firmware = "aavmf"    // aarch64: UEFI (QEMU.OVMFCode/OVMFVars are AAVMF's), machine virt
	SLOF    Firmware = "slof"     // ppc64le: Open Firmware, machine pseries
	S390CCW Firmware = "s390-ccw" // s390x: the s390-ccw IPL firmware, machine s390-ccw-virtio
)

// Media is how the ISO is attached.
type Media string

// Media kinds.
const (
	CDROM   Media = "cdrom" // El Torito boot
	Disk    Media = "disk"  // isohybrid MBR (BIOS) or GPT ESP (UEFI)
	Network Media = "net"   // no drive: the NIC's iPXE ROM boots QEMU.Net's BootFile
	// Kernel is a direct kernel boot of QEMU.Direct (the PXE files), what
	// a network boot loader would load; no drive.
	Kernel Media = "kernel"
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

// QEMU runs qemu-system-x86_64 (FindQEMU) or another architecture's QEMU
// (FindArchQEMU).
type QEMU struct {
	Binary    string        // qemu-system-x86_64, qemu-system-aarch64, ...
	OVMFCode  string        // UEFI firmware code (read-only pflash; AAVMF's on aarch64)
	OVMFVars  string        // UEFI variable store template (copied per boot)
	KVM       bool          // use KVM instead of TCG
	MemoryMiB int           // guest memory
	Timeout   time.Duration // hard limit for one boot, power-on to power-off
	// Net, when set, gives the guest a NIC; without it the guest has none.
	Net *UserNet
	// Direct is what a Kernel boot boots.
	Direct *DirectBoot
}

// DirectBoot is a kernel, its initrd and its command line, booted by QEMU
// itself (-kernel, -initrd, -append).
type DirectBoot struct {
	Kernel, Initrd, Append string
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
	// Model is the NIC (default e1000; s390x has only virtio-net-ccw,
	// which -nic calls virtio).
	Model string
}

// netdev returns the -nic option value.
func (n *UserNet) netdev() (string, error) {
	if n == nil {
		return "none", nil
	}
	model := n.Model
	if model == "" {
		model = "e1000"
	}
	v := "user,model=" + model + ",ipv6=off"
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

// ArchQEMU is how the boot test boots one architecture other than x86_64.
type ArchQEMU struct {
	QEMU
	Arch     string   // aarch64, ppc64le or s390x
	Firmware Firmware // AAVMF, SLOF or S390CCW
	NIC      string   // the NIC model the fixture's initramfs has a driver for
}

// archQEMU is each architecture's emulator, firmware and NIC: the Debian
// packages qemu-system-arm + qemu-efi-aarch64 (AAVMF), qemu-system-ppc
// (SLOF is built in) and qemu-system-misc (s390-ccw is built in).
var archQEMU = map[string]struct {
	binary   string
	firmware Firmware
	nic      string
	code     [2]string // AAVMF code and vars
}{
	"aarch64": {"qemu-system-aarch64", AAVMF, "e1000", [2]string{"/usr/share/AAVMF/AAVMF_CODE.fd", "/usr/share/AAVMF/AAVMF_VARS.fd"}},
	"ppc64le": {"qemu-system-ppc64", SLOF, "e1000", [2]string{}},
	"s390x":   {"qemu-system-s390x", S390CCW, "virtio", [2]string{}}, // virtio-net-ccw
}

// FindArchQEMU locates the emulator and firmware of arch (aarch64, ppc64le
// or s390x). Always TCG: the host is x86_64.
func FindArchQEMU(arch string) (ArchQEMU, error) {
	a, ok := archQEMU[arch]
	if !ok {
		return ArchQEMU{}, fmt.Errorf("architecture %q: want aarch64, ppc64le or s390x", arch)
	}
	// 10 minutes per boot: a ppc64le boot took 4m52s on the shared 2-core
	// machine at load 25, and one minimal-ISO boot went past 5 minutes.
	q := ArchQEMU{QEMU: QEMU{MemoryMiB: 1024, Timeout: 10 * time.Minute}, Arch: arch, Firmware: a.firmware, NIC: a.nic}
	bin, err := exec.LookPath(a.binary)
	if err != nil {
		return q, fmt.Errorf("%s not found (run hack/install-e2e-deps.sh arch): %w", a.binary, err)
	}
	q.Binary = bin
	if a.code[0] != "" {
		if !fileExists(a.code[0]) || !fileExists(a.code[1]) {
			return q, fmt.Errorf("%s firmware %s or %s missing (run hack/install-e2e-deps.sh arch)", arch, a.code[0], a.code[1])
		}
		q.OVMFCode, q.OVMFVars = a.code[0], a.code[1]
	}
	return q, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Args returns the qemu command line for booting iso in mode (iso is
// empty for a Network or Kernel boot). The serial console goes to stdout;
// varsPath is the writable UEFI variable store.
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
		"-m", fmt.Sprint(q.MemoryMiB), "-smp", "1",
		"-display", "none", "-monitor", "none", "-serial", "stdio",
		"-nic", nic, "-no-reboot",
	}
	// cd attaches the ISO as a CD on the architecture's SCSI controller
	// (virt, s390-ccw-virtio and pseries have no IDE).
	cd := func(ctrl string) []string {
		return []string{"-device", ctrl, "-drive", "if=none,id=cd,media=cdrom,format=raw,readonly=on,file=" + iso,
			"-device", "scsi-cd,drive=cd,bootindex=0"}
	}
	var cdArgs []string
	switch mode.Firmware {
	case BIOS:
		args = append(args, "-cpu", cpu, "-machine", "pc,accel="+accel)
	case UEFI, AAVMF:
		machine := "q35"
		if mode.Firmware == AAVMF {
			// cortex-a57: "max" emulates pointer authentication, which
			// makes TCG several times slower.
			machine, cpu = "virt", "cortex-a57"
			cdArgs = cd("virtio-scsi-pci")
		}
		args = append(args, "-cpu", cpu, "-machine", machine+",accel="+accel,
			"-drive", "if=pflash,format=raw,readonly=on,file="+q.OVMFCode,
			"-drive", "if=pflash,format=raw,file="+varsPath)
	case SLOF:
		args = append(args, "-machine", "pseries,accel="+accel)
		cdArgs = cd("spapr-vscsi")
	case S390CCW:
		args = append(args, "-machine", "s390-ccw-virtio,accel="+accel)
		cdArgs = cd("virtio-scsi-ccw")
	default:
		return nil, fmt.Errorf("unknown firmware %q", mode.Firmware)
	}
	switch mode.Media {
	case CDROM:
		if cdArgs != nil {
			args = append(args, cdArgs...)
		} else {
			args = append(args, "-drive", "file="+iso+",format=raw,media=cdrom,readonly=on", "-boot", "d")
		}
	case Disk:
		if mode.Firmware != BIOS && mode.Firmware != UEFI {
			return nil, fmt.Errorf("%s: disk boots are x86_64 only (isohybrid)", mode)
		}
		args = append(args, "-drive", "file="+iso+",format=raw,media=disk,snapshot=on", "-boot", "c")
	case Network:
		if q.Net == nil || q.Net.BootFile == "" || iso != "" {
			return nil, errors.New("a network boot needs QEMU.Net with a BootFile and no ISO")
		}
		args = append(args, "-boot", "n")
	case Kernel:
		if q.Direct == nil || q.Direct.Kernel == "" || q.Direct.Initrd == "" || iso != "" {
			return nil, errors.New("a kernel boot needs QEMU.Direct with a kernel and an initrd, and no ISO")
		}
		if strings.ContainsAny(q.Direct.Append, "\n") {
			return nil, errors.New("kernel boot: the command line has a newline")
		}
		args = append(args, "-kernel", q.Direct.Kernel, "-initrd", q.Direct.Initrd, "-append", q.Direct.Append)
	default:
		return nil, fmt.Errorf("unknown media %q", mode.Media)
	}
	return args, nil
}

// BootRun is what one boot printed and what it cost.
type BootRun struct {
	Console []byte        // the serial console output
	Wall    time.Duration // QEMU's start to its exit
	CPU     time.Duration // QEMU's user + system CPU time (0 when it did not exit)
}

// Cost is "<wall> (CPU <cpu>)", for the logs: on a loaded machine the
// wall time grows with the load, the CPU time much less.
func (r BootRun) Cost() string {
	return fmt.Sprintf("%s (CPU %s)", r.Wall.Round(100*time.Millisecond), r.CPU.Round(100*time.Millisecond))
}

// Boot boots iso in mode and returns the serial console output, which is
// also written to workDir/console-<mode>.log. It fails when QEMU fails or
// does not power off within q.Timeout; the console captured so far is
// returned in every case.
func (q QEMU) Boot(ctx context.Context, iso string, mode Mode, workDir string) (BootRun, error) {
	absISO, what := "", "" // what: the boot's name in errors
	switch {
	case mode.Media == Network:
		if q.Net != nil {
			what = q.Net.BootFile
		}
	case mode.Media == Kernel:
		if q.Direct != nil {
			what = q.Direct.Kernel
		}
	default:
		var err error
		if absISO, err = filepath.Abs(iso); err != nil {
			return BootRun{}, err
		}
		what = iso
	}
	vars := filepath.Join(workDir, "OVMF_VARS-"+mode.String()+".fd")
	if mode.Firmware == UEFI || mode.Firmware == AAVMF {
		b, err := os.ReadFile(q.OVMFVars)
		if err != nil {
			return BootRun{}, fmt.Errorf("read OVMF vars: %w", err)
		}
		if err := os.WriteFile(vars, b, 0o600); err != nil {
			return BootRun{}, fmt.Errorf("write OVMF vars copy: %w", err)
		}
	}
	args, err := q.Args(absISO, mode, vars)
	if err != nil {
		return BootRun{}, err
	}
	logPath := filepath.Join(workDir, "console-"+mode.String()+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return BootRun{}, err
	}
	defer logFile.Close()

	ctx, cancel := context.WithTimeout(ctx, q.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, q.Binary, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	runErr := cmd.Run()
	run := BootRun{Wall: time.Since(start)}
	if cmd.ProcessState != nil {
		run.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	var readErr error
	run.Console, readErr = os.ReadFile(logPath)
	switch {
	case ctx.Err() != nil:
		return run, fmt.Errorf("%s boot of %s did not power off within %s", mode, what, q.Timeout)
	case runErr != nil:
		return run, fmt.Errorf("qemu (%s) failed: %w", mode, runErr)
	case readErr != nil:
		return run, readErr
	}
	return run, nil
}

// BootAndVerify boots iso in mode and checks the guest's report against exp.
// For a Network or Kernel boot iso is empty and the guest must not have a
// coreos.liveiso= argument (there is no ISO volume to name).
func (q QEMU) BootAndVerify(ctx context.Context, iso string, mode Mode, exp Expect, workDir string) (BootRun, error) {
	volID, what := "", iso
	switch {
	case mode.Media == Network:
		if q.Net != nil {
			what = q.Net.BootFile
		}
	case mode.Media == Kernel:
		if q.Direct != nil {
			what = q.Direct.Kernel
		}
	default:
		f, err := os.Open(iso)
		if err != nil {
			return BootRun{}, err
		}
		volID, err = VolumeID(f)
		f.Close()
		if err != nil {
			return BootRun{}, fmt.Errorf("%s: %w", iso, err)
		}
	}
	run, err := q.Boot(ctx, iso, mode, workDir)
	if err != nil {
		return run, err
	}
	if err := Verify(run.Console, volID, exp); err != nil {
		return run, fmt.Errorf("%s boot of %s: %w", mode, what, err)
	}
	return run, nil
}
