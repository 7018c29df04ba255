package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
	"github.com/seed-a052040e/agentiso/test/live/assisted"
)

// agentConfig is the discovery agent's command line and environment.
type agentConfig struct {
	URL, InfraEnvID, AgentVersion string
	Token                         string
	// SysRoot is "/" on a host; tests point it at a fake /sys and /proc.
	SysRoot string
	// Hostname and Interfaces read the machine (os.Hostname, net.Interfaces); tests replace them.
	Hostname   func() (string, error)
	Interfaces func() ([]assisted.Interface, error)
	// Run runs a command on the host (podman for the install step); tests replace it.
	Run   func(ctx context.Context, name string, args ...string) ([]byte, error)
	HTTP  *http.Client
	Retry time.Duration
	Out   io.Writer
}

func parseAgentArgs(args []string, getenv func(string) string, out io.Writer) (*agentConfig, error) {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(out)
	c := &agentConfig{SysRoot: "/", Retry: 5 * time.Second, Out: out, Hostname: os.Hostname, Interfaces: hostInterfaces, Run: runCommand}
	fs.StringVar(&c.URL, "url", "", "assisted-service base URL")
	fs.StringVar(&c.InfraEnvID, "infra-env-id", "", "infra-env to register with")
	fs.StringVar(&c.AgentVersion, "agent-version", "", "pull spec of the agent image")
	insecure := fs.Bool("insecure", false, "skip TLS verification (the lab serves plain HTTP)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() != 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch {
	case c.URL == "":
		return nil, errors.New("--url is required")
	case c.InfraEnvID == "":
		return nil, errors.New("--infra-env-id is required")
	case c.AgentVersion == "":
		return nil, errors.New("--agent-version is required")
	}
	c.Token = getenv("PULL_SECRET_TOKEN")
	if c.Token == "" {
		return nil, errors.New("PULL_SECRET_TOKEN (the agent token) is not set")
	}
	_ = insecure
	// Like the real agent, honour HTTP(S)_PROXY/NO_PROXY: a NO_PROXY that
	// misses the rendezvous host sends the agent to the proxy.
	c.HTTP = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}}
	return c, nil
}

func runAgent(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	c, err := parseAgentArgs(args, getenv, stdout)
	if err != nil {
		return err
	}
	return c.run(ctx)
}

func (c *agentConfig) call(ctx context.Context, method, path string, body, out any, want ...int) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	u := strings.TrimSuffix(c.URL, "/") + rendezvous.APIPath + path
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	req.Header.Set("X-Secret-Key", c.Token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if !slices.Contains(want, resp.StatusCode) {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, strings.TrimSpace(string(data)))
	}
	if out != nil && len(data) > 0 {
		return json.Unmarshal(data, out)
	}
	return nil
}

// run registers the host, then polls for steps until ctx is done.
func (c *agentConfig) run(ctx context.Context) error {
	hostID, err := c.hostID()
	if err != nil {
		return err
	}
	base := "/infra-envs/" + c.InfraEnvID + "/hosts"
	for {
		err := c.call(ctx, http.MethodPost, base, assisted.HostCreateParams{HostID: hostID, DiscoveryAgentVersion: c.AgentVersion}, nil, 201)
		if err == nil {
			break
		}
		fmt.Fprintf(c.Out, "registering host %s failed, retrying in %s: %v\n", hostID, c.Retry, err)
		if !sleepCtx(ctx, c.Retry) {
			return ctx.Err()
		}
	}
	fmt.Fprintf(c.Out, "registered host %s with infra-env %s\n", hostID, c.InfraEnvID)
	for {
		var steps assisted.Steps
		wait := c.Retry
		if err := c.call(ctx, http.MethodGet, base+"/"+hostID+"/instructions", nil, &steps, 200); err != nil {
			fmt.Fprintf(c.Out, "getting the next steps failed: %v\n", err)
		} else {
			for _, st := range steps.Instructions {
				c.runStep(ctx, base+"/"+hostID+"/instructions", st)
			}
			if steps.NextInstructionSeconds > 0 {
				wait = time.Duration(min(steps.NextInstructionSeconds, 60)) * time.Second
			}
		}
		if !sleepCtx(ctx, wait) {
			return nil
		}
	}
}

func (c *agentConfig) runStep(ctx context.Context, path string, st assisted.AgentStep) {
	rep := assisted.StepReply{StepType: st.StepType, StepID: st.StepID}
	switch st.StepType {
	case assisted.StepInventory:
		inv, err := c.collectInventory()
		if err != nil {
			rep.ExitCode, rep.Error = 1, err.Error()
			break
		}
		b, err := json.Marshal(inv)
		if err != nil {
			rep.ExitCode, rep.Error = 1, err.Error()
			break
		}
		rep.Output = string(b)
	case assisted.StepInstall:
		if len(st.Args) == 0 {
			rep.ExitCode, rep.Error = 1, "the install step names no installer image"
			break
		}
		args := installCommand(st.Args[0], st.Args[1:])
		fmt.Fprintf(c.Out, "running the installer: podman %s\n", strings.Join(args, " "))
		out, err := c.Run(ctx, "podman", args...)
		rep.Output = string(out)
		if err != nil {
			rep.ExitCode, rep.Error = 1, err.Error()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				rep.ExitCode = int64(ee.ExitCode())
			}
		}
	default:
		rep.ExitCode, rep.Error = 1, "the stand-in agent does not run "+st.StepType+" steps"
	}
	if err := c.call(ctx, http.MethodPost, path, rep, nil, 204, 200); err != nil {
		fmt.Fprintf(c.Out, "replying to step %s failed: %v\n", st.StepID, err)
		return
	}
	fmt.Fprintf(c.Out, "step %s (%s) done, exit code %d\n", st.StepID, st.StepType, rep.ExitCode)
}

// installCommand is the podman command line of the install step: the
// installer container runs privileged in the host's namespaces, with the
// agent token to report progress, like the real agent's.
func installCommand(image string, installerArgs []string) []string {
	args := []string{"run", "--privileged", "--pid=host", "--net=host", "--rm", "--name=assisted-installer",
		"-v", "/dev:/dev:rw", "-v", "/var/log:/var/log:rw", "--env", "PULL_SECRET_TOKEN", image}
	return append(args, installerArgs...)
}

func runCommand(ctx context.Context, name string, args ...string) ([]byte, error) {
	return exec.CommandContext(ctx, name, args...).CombinedOutput()
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// hostID is the machine's SMBIOS system UUID, as the real agent uses;
// without one (or with the all-zero one) it is derived from the MAC addresses.
func (c *agentConfig) hostID() (string, error) {
	b, err := os.ReadFile(filepath.Join(c.SysRoot, "sys/class/dmi/id/product_uuid"))
	if err == nil {
		id := strings.ToLower(strings.TrimSpace(string(b)))
		if uuidRE.MatchString(id) && id != "00000000-0000-0000-0000-000000000000" {
			return id, nil
		}
	}
	ifs, err := c.Interfaces()
	if err != nil {
		return "", err
	}
	var macs []string
	for _, i := range ifs {
		macs = append(macs, i.MacAddress)
	}
	if len(macs) == 0 {
		return "", errors.New("no system UUID and no network interface to derive a host id from")
	}
	slices.Sort(macs)
	h := sha256.Sum256([]byte(strings.Join(macs, ",")))
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16]), nil
}

// hostInterfaces lists the machine's interfaces with a MAC address (no
// loopback), with their addresses in CIDR form.
func hostInterfaces() ([]assisted.Interface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("list network interfaces: %w", err)
	}
	var out []assisted.Interface
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 || len(i.HardwareAddr) == 0 || containerInterface(i.Name) {
			continue
		}
		itf := assisted.Interface{Name: i.Name, MacAddress: i.HardwareAddr.String(), MTU: int64(i.MTU),
			IPV4Addresses: []string{}, IPV6Addresses: []string{}, Flags: strings.Split(i.Flags.String(), "|"),
			HasCarrier: i.Flags&net.FlagRunning != 0, Type: "physical"}
		addrs, err := i.Addrs()
		if err != nil {
			return nil, fmt.Errorf("addresses of %s: %w", i.Name, err)
		}
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			if n.IP.To4() != nil {
				itf.IPV4Addresses = append(itf.IPV4Addresses, n.String())
			} else if !n.IP.IsLinkLocalUnicast() {
				itf.IPV6Addresses = append(itf.IPV6Addresses, n.String())
			}
		}
		out = append(out, itf)
	}
	return out, nil
}

// containerInterface tells the interfaces podman creates, which the real
// agent leaves out of the inventory too.
func containerInterface(name string) bool {
	for _, p := range []string{"veth", "podman", "cni", "docker"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// collectInventory reads the machine's inventory: hostname, interfaces,
// CPUs, memory (/proc/meminfo), disks (/sys/block), DMI vendor data.
func (c *agentConfig) collectInventory() (*assisted.Inventory, error) {
	root := c.SysRoot
	hn, err := c.Hostname()
	if err != nil {
		return nil, err
	}
	ifs, err := c.Interfaces()
	if err != nil {
		return nil, err
	}
	inv := &assisted.Inventory{Hostname: hn, Interfaces: ifs, Timestamp: time.Now().Unix(),
		CPU: assisted.CPU{Count: int64(runtime.NumCPU()), Architecture: goArchToRelease(runtime.GOARCH)}}
	if mem, err := readMemTotal(filepath.Join(root, "proc/meminfo")); err == nil {
		inv.Memory = assisted.Memory{PhysicalBytes: mem, UsableBytes: mem}
	} else {
		return nil, err
	}
	disks, err := readDisks(root)
	if err != nil {
		return nil, err
	}
	inv.Disks = disks
	dmi := func(f string) string {
		b, _ := os.ReadFile(filepath.Join(root, "sys/class/dmi/id", f))
		return strings.TrimSpace(string(b))
	}
	inv.SystemVendor = assisted.SystemVendor{Manufacturer: dmi("sys_vendor"), ProductName: dmi("product_name"), SerialNumber: dmi("product_serial")}
	inv.SystemVendor.Virtual = strings.Contains(inv.SystemVendor.Manufacturer, "QEMU") || strings.Contains(inv.SystemVendor.ProductName, "KVM") || strings.Contains(inv.SystemVendor.ProductName, "Standard PC")
	inv.Boot.CurrentBootMode = "bios"
	if _, err := os.Stat(filepath.Join(root, "sys/firmware/efi")); err == nil {
		inv.Boot.CurrentBootMode = "uefi"
	}
	return inv, nil
}

func readMemTotal(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: MemTotal: %w", path, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("%s: no MemTotal", path)
}

// readDisks lists the whole disks of /sys/block (no loop, ram, zram, dm or
// partitions). Read-only devices and CD-ROMs are listed but not eligible.
func readDisks(root string) ([]assisted.Disk, error) {
	dir := filepath.Join(root, "sys/block")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list disks: %w", err)
	}
	disks := []assisted.Disk{}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "loop") || strings.HasPrefix(name, "ram") || strings.HasPrefix(name, "zram") || strings.HasPrefix(name, "dm-") || strings.HasPrefix(name, "nbd") {
			continue
		}
		read := func(f string) string {
			b, _ := os.ReadFile(filepath.Join(dir, name, f))
			return strings.TrimSpace(string(b))
		}
		sectors, _ := strconv.ParseInt(read("size"), 10, 64)
		d := assisted.Disk{ID: "/dev/" + name, Name: name, Path: "/dev/" + name, SizeBytes: sectors * 512,
			Model: read("device/model"), Vendor: read("device/vendor"), Serial: read("device/serial"), Wwn: read("device/wwid"),
			Removable: read("removable") == "1"}
		d.DriveType = "SSD"
		if read("queue/rotational") == "1" {
			d.DriveType = "HDD"
		}
		var reasons []string
		if strings.HasPrefix(name, "sr") {
			d.DriveType = "ODD"
			reasons = append(reasons, "Disk is a CD-ROM")
		}
		if read("ro") == "1" {
			reasons = append(reasons, "Disk is read-only")
		}
		if d.SizeBytes == 0 {
			reasons = append(reasons, "Disk has no size")
		}
		d.InstallationEligibility = assisted.DiskEligibility{Eligible: len(reasons) == 0, NotEligibleReasons: reasons}
		if d.InstallationEligibility.NotEligibleReasons == nil {
			d.InstallationEligibility.NotEligibleReasons = []string{}
		}
		disks = append(disks, d)
	}
	return disks, nil
}
