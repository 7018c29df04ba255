package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Lab network constants. Every address lives in the lab's own network
// namespace: the bridge is the only interface besides loopback.
const (
	BridgeName = "br-live"
	BridgeIP   = "192.168.111.1"
	PrefixLen  = 24
	// MirrorIP is the mirror registry's address: a second address of the
	// bridge outside the machine network (192.168.111.0/24), which the hosts
	// reach through their default gateway, BridgeIP. Outside the machine
	// network because agentiso (as upstream) puts the machine network in
	// NO_PROXY: a proxy scenario would otherwise never use its proxy.
	MirrorIP = "192.168.112.1"
	// NetnsEnv is set in the environment of the test binary once it runs
	// inside the lab namespace.
	NetnsEnv = "AGENTISO_LIVE_NETNS"
)

// run runs a command and returns its combined output in the error.
func run(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// InNetns reports whether this process was started inside a lab namespace.
func InNetns() bool { return os.Getenv(NetnsEnv) != "" }

// ReexecInNetns creates a fresh network namespace, runs this test binary
// again inside it (with the same arguments) and deletes the namespace
// afterwards. It returns the child's exit code.
func ReexecInNetns(ctx context.Context) (int, error) {
	ns := fmt.Sprintf("agentiso-live-%d", os.Getpid())
	if err := run(ctx, "ip", "netns", "add", ns); err != nil {
		return 1, fmt.Errorf("create the lab network namespace (needs root): %w", err)
	}
	defer func() { _ = run(context.Background(), "ip", "netns", "del", ns) }()
	if err := run(ctx, "ip", "-n", ns, "link", "set", "lo", "up"); err != nil {
		return 1, err
	}
	args := append([]string{"netns", "exec", ns, os.Args[0]}, os.Args[1:]...)
	cmd := exec.CommandContext(ctx, "ip", args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), NetnsEnv+"="+ns)
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	if err != nil {
		return 1, fmt.Errorf("run the test inside %s: %w", ns, err)
	}
	return 0, nil
}

// Network is the lab bridge with its taps, inside the lab namespace.
type Network struct {
	taps []string
}

// SetupNetwork creates the bridge with BridgeIP. It refuses to run outside
// a lab namespace, so that it never touches the machine's own network.
func SetupNetwork(ctx context.Context) (*Network, error) {
	if !InNetns() {
		return nil, errors.New("the lab network is only created inside its own network namespace (ReexecInNetns)")
	}
	_ = run(ctx, "ip", "link", "del", BridgeName) // left over by an earlier subtest
	steps := [][]string{
		{"link", "add", BridgeName, "type", "bridge", "stp_state", "0", "forward_delay", "0"},
		{"addr", "add", fmt.Sprintf("%s/%d", BridgeIP, PrefixLen), "dev", BridgeName},
		{"addr", "add", MirrorIP + "/24", "dev", BridgeName},
		{"link", "set", BridgeName, "up"},
	}
	for _, s := range steps {
		if err := run(ctx, "ip", s...); err != nil {
			return nil, err
		}
	}
	return &Network{}, nil
}

// AddTap creates a tap on the bridge and returns its name.
func (n *Network) AddTap(ctx context.Context) (string, error) {
	name := fmt.Sprintf("tap-live%d", len(n.taps))
	for _, s := range [][]string{
		{"tuntap", "add", "dev", name, "mode", "tap"},
		{"link", "set", name, "master", BridgeName},
		{"link", "set", name, "up"},
	} {
		if err := run(ctx, "ip", s...); err != nil {
			return "", err
		}
	}
	n.taps = append(n.taps, name)
	return name, nil
}

// AddVLAN adds a VLAN interface on the bridge with the given address, so the
// test machine is reachable on that VLAN too.
func (n *Network) AddVLAN(ctx context.Context, id int, cidr string) error {
	name := fmt.Sprintf("%s.%d", BridgeName, id)
	for _, s := range [][]string{
		{"link", "add", "link", BridgeName, "name", name, "type", "vlan", "id", fmt.Sprint(id)},
		{"addr", "add", cidr, "dev", name},
		{"link", "set", name, "up"},
	} {
		if err := run(ctx, "ip", s...); err != nil {
			return err
		}
	}
	return nil
}

// Close deletes the taps and the bridge.
func (n *Network) Close() {
	for _, t := range n.taps {
		_ = run(context.Background(), "ip", "link", "del", t)
	}
	_ = run(context.Background(), "ip", "link", "del", BridgeName)
}

// DHCPHost is a fixed DHCP lease.
type DHCPHost struct {
	MAC, IP, Hostname string
}

// Dnsmasq is a DHCP server on the lab bridge.
type Dnsmasq struct {
	cmd  *exec.Cmd
	Log  string
	done chan error
}

// StartDnsmasq serves DHCP on the bridge (fixed leases for hosts and a
// small dynamic range) when hosts are given, and DNS on the bridge with
// only the names of dns (name -> IPv4; a name covers its subdomains) when
// dns is not empty.
func StartDnsmasq(ctx context.Context, dir string, hosts []DHCPHost, dns map[string]string) (*Dnsmasq, error) {
	bin, err := exec.LookPath("dnsmasq")
	if err != nil {
		return nil, fmt.Errorf("dnsmasq not found (hack/live-deps.sh installs dnsmasq-base): %w", err)
	}
	logPath := filepath.Join(dir, "dnsmasq.log")
	args := []string{
		"--keep-in-foreground", "--no-daemon", "--conf-file=/dev/null",
		"--interface=" + BridgeName, "--bind-interfaces", "--except-interface=lo",
		"--log-facility=" + logPath, "--pid-file=",
	}
	if len(dns) == 0 {
		args = append(args, "--port=0")
	} else {
		// Only the lab's names: nothing is forwarded anywhere.
		args = append(args, "--no-resolv", "--no-hosts", "--log-queries")
		names := make([]string, 0, len(dns))
		for n := range dns {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			args = append(args, fmt.Sprintf("--address=/%s/%s", n, dns[n]))
		}
	}
	if len(hosts) > 0 {
		args = append(args, "--dhcp-range=192.168.111.100,192.168.111.150,255.255.255.0,1h",
			"--dhcp-option=option:router,"+BridgeIP,
			"--dhcp-leasefile="+filepath.Join(dir, "dnsmasq.leases"), "--log-dhcp")
	}
	for _, h := range hosts {
		args = append(args, fmt.Sprintf("--dhcp-host=%s,%s,%s", h.MAC, h.IP, h.Hostname))
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	out, err := os.Create(filepath.Join(dir, "dnsmasq.out"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("start dnsmasq: %w", err)
	}
	d := &Dnsmasq{cmd: cmd, Log: logPath, done: make(chan error, 1)}
	go func() { d.done <- cmd.Wait(); out.Close() }()
	select {
	case err := <-d.done:
		b, _ := os.ReadFile(filepath.Join(dir, "dnsmasq.out"))
		return nil, fmt.Errorf("dnsmasq exited at once: %v: %s", err, b)
	case <-time.After(time.Second):
	}
	return d, nil
}

// Close stops dnsmasq.
func (d *Dnsmasq) Close() {
	_ = d.cmd.Process.Kill()
	<-d.done
}

// VM is one QEMU guest booted from an ISO, with one NIC per MAC, each on
// its own tap on the lab bridge. Its serial console goes to Console.
type VM struct {
	Name    string
	Console string // serial console log (ttyS0)
	Reports string // the fixture's LIVE-REPORT blocks (ttyS1)
	Journal string // the guest's journal, streamed by the fixture (ttyS2)
	cmd     *exec.Cmd
	done    chan error
	cancel  context.CancelFunc
	qmp     string // QMP socket, with VMConfig.ConfigCD
}

// VMConfig describes a guest.
type VMConfig struct {
	Name      string
	ISO       string
	MACs      []string
	MemoryMiB int
	CPUs      int // vCPUs (TCG runs one host thread per vCPU)
	KVM       bool
	Timeout   time.Duration // hard limit: the guest is killed after it
	// UUID, when set, is the guest's SMBIOS system UUID (the real agent's
	// host ID).
	UUID string
	// DiskGiB, when not 0, gives the guest a sparse virtio disk of that
	// size (an installation disk for the real assisted-service's disk
	// eligibility rules); nothing is written to it.
	DiskGiB int
	// ConfigCD gives the guest a second, empty CD drive and a QMP socket
	// to insert media into it (VM.InsertCD), as an operator attaches the
	// config image through a BMC's virtual media.
	ConfigCD bool
}

// StartVM starts a guest in the background.
func StartVM(ctx context.Context, net *Network, dir string, c VMConfig) (*VM, error) {
	bin, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		return nil, fmt.Errorf("qemu-system-x86_64 not found (hack/live-deps.sh): %w", err)
	}
	accel, cpu := "tcg,thread=multi", "max"
	if c.KVM {
		accel, cpu = "kvm", "host"
	}
	console := filepath.Join(dir, c.Name+"-console.log")
	reports := filepath.Join(dir, c.Name+"-report.log")
	journal := filepath.Join(dir, c.Name+"-journal.log")
	cpus := c.CPUs
	if cpus < 1 {
		cpus = 1
	}
	args := []string{
		"-name", c.Name,
		"-machine", "pc", "-accel", accel, "-cpu", cpu, "-smp", fmt.Sprint(cpus),
		"-m", fmt.Sprint(c.MemoryMiB),
		"-display", "none", "-monitor", "none", "-serial", "file:" + console, "-serial", "file:" + reports, "-serial", "file:" + journal,
		"-no-reboot",
		"-drive", "file=" + c.ISO + ",format=raw,media=cdrom,readonly=on", "-boot", "d",
		"-object", "rng-random,filename=/dev/urandom,id=rng0", "-device", "virtio-rng-pci,rng=rng0",
	}
	if c.UUID != "" {
		args = append(args, "-uuid", c.UUID)
	}
	qmp := ""
	if c.ConfigCD {
		qmp = filepath.Join(dir, c.Name+"-qmp.sock")
		args = append(args, "-qmp", "unix:"+qmp+",server=on,wait=off", "-drive", "if=ide,media=cdrom,id="+configCDDrive)
	}
	if c.DiskGiB > 0 {
		disk := filepath.Join(dir, c.Name+"-disk.img")
		f, err := os.Create(disk)
		if err != nil {
			return nil, err
		}
		err = f.Truncate(int64(c.DiskGiB) << 30)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("sparse disk for %s: %w", c.Name, err)
		}
		args = append(args, "-drive", "file="+disk+",format=raw,if=virtio,cache=unsafe")
	}
	for i, mac := range c.MACs {
		tap, err := net.AddTap(ctx)
		if err != nil {
			return nil, err
		}
		args = append(args,
			"-netdev", fmt.Sprintf("tap,id=n%d,ifname=%s,script=no,downscript=no", i, tap),
			"-device", fmt.Sprintf("virtio-net-pci,netdev=n%d,mac=%s", i, mac))
	}
	vctx, cancel := context.WithTimeout(ctx, c.Timeout)
	cmd := exec.CommandContext(vctx, bin, args...)
	stderr, err := os.Create(filepath.Join(dir, c.Name+"-qemu.log"))
	if err != nil {
		cancel()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = stderr, stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		stderr.Close()
		return nil, fmt.Errorf("start qemu for %s: %w", c.Name, err)
	}
	vm := &VM{Name: c.Name, Console: console, Reports: reports, Journal: journal, cmd: cmd, done: make(chan error, 1), cancel: cancel, qmp: qmp}
	go func() { vm.done <- cmd.Wait(); stderr.Close() }()
	return vm, nil
}

// Read returns the console captured so far.
func (v *VM) Read() []byte {
	b, _ := os.ReadFile(v.Console)
	return b
}

// ReadReports returns the report port's output so far.
func (v *VM) ReadReports() []byte {
	b, _ := os.ReadFile(v.Reports)
	return b
}

// ReadJournal returns the guest's journal streamed so far.
func (v *VM) ReadJournal() []byte {
	b, _ := os.ReadFile(v.Journal)
	return b
}

// Exited reports whether QEMU has stopped.
func (v *VM) Exited() bool {
	select {
	case err := <-v.done:
		v.done <- err
		return true
	default:
		return false
	}
}

// CPUTime is the QEMU process's user and system time once it has
// stopped (0 before).
func (v *VM) CPUTime() time.Duration {
	if !v.Exited() || v.cmd.ProcessState == nil {
		return 0
	}
	return v.cmd.ProcessState.UserTime() + v.cmd.ProcessState.SystemTime()
}

// Stop kills the guest.
func (v *VM) Stop() {
	v.cancel()
	err := <-v.done
	v.done <- err
}

// Tail returns the last n bytes of b.
func Tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
