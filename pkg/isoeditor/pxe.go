package isoeditor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
)

// PXEInitrd streams the live initrd followed by the agent's Ignition
// archive (from [IgnitionArchive]: a separate gzip-compressed newc cpio
// holding config.ign). The original initrd bytes are never rewritten: the
// output is the initrd, zero padding to a 4-byte boundary (the kernel skips
// zeros between concatenated archives) and the archive. It also returns the
// output's total size.
func PXEInitrd(initrd io.Reader, initrdSize int64, ignitionArchive []byte) (io.Reader, int64) {
	pad := (4 - initrdSize%4) % 4
	r := io.MultiReader(
		&exactReader{r: initrd, n: initrdSize},
		bytes.NewReader(make([]byte, pad)),
		bytes.NewReader(ignitionArchive),
	)
	return r, initrdSize + pad + int64(len(ignitionArchive))
}

// exactReader reads exactly n bytes and fails if the source is shorter, so a
// truncated initrd is an error rather than a short, unbootable file.
type exactReader struct {
	r io.Reader
	n int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.n {
		p = p[:e.n]
	}
	n, err := e.r.Read(p)
	e.n -= int64(n)
	if err == io.EOF && e.n > 0 {
		return n, fmt.Errorf("initrd ends %d bytes early: %w", e.n, io.ErrUnexpectedEOF)
	}
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// IPXEScript is the text of an iPXE script that boots the PXE files from
// URLs: kernelURL with kargs (the live kargs, the agent's, and
// coreos.live.rootfs_url=rootfsURL), and initrdURL as its initrd. The
// rootfs URL must be http(s) and no karg may contain a newline.
func IPXEScript(kernelURL, initrdURL, rootfsURL string, kargs []string) (string, error) {
	for name, u := range map[string]string{"kernel": kernelURL, "initrd": initrdURL, "rootfs": rootfsURL} {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || strings.ContainsAny(u, " \t\r\n") {
			return "", fmt.Errorf("%s URL %q must be an http or https URL without spaces", name, u)
		}
	}
	args := []string{"initrd=main"}
	for _, k := range kargs {
		if k == "" {
			continue
		}
		if strings.ContainsAny(k, "\r\n") || strings.HasPrefix(k, "coreos.live.rootfs_url=") || strings.HasPrefix(k, "coreos.liveiso=") {
			return "", fmt.Errorf("kernel argument %q cannot be used in an iPXE script (newline, or a rootfs argument agentiso sets itself)", k)
		}
		args = append(args, k)
	}
	args = append(args, "coreos.live.rootfs_url="+rootfsURL)
	var b strings.Builder
	b.WriteString("#!ipxe\n")
	fmt.Fprintf(&b, "initrd --name main %s\n", initrdURL)
	fmt.Fprintf(&b, "kernel %s %s\n", kernelURL, strings.Join(args, " "))
	b.WriteString("boot\n")
	return b.String(), nil
}

// IPXEBoot is what an iPXE script written by [IPXEScript] boots.
type IPXEBoot struct {
	KernelURL string   `json:"kernelURL"`
	InitrdURL string   `json:"initrdURL"`
	RootfsURL string   `json:"rootfsURL,omitempty"`
	Kargs     []string `json:"kargs"` // without initrd= and coreos.live.rootfs_url=
}

// maxIPXEScript bounds the script ParseIPXEScript reads.
const maxIPXEScript = 64 << 10

// ParseIPXEScript reads back an iPXE script of the form [IPXEScript]
// writes: "#!ipxe", one "initrd [--name N] URL", one "kernel URL args",
// "boot"; blank lines and # comments are skipped. Anything else is an
// error naming the line.
func ParseIPXEScript(b []byte) (*IPXEBoot, error) {
	if len(b) > maxIPXEScript {
		return nil, fmt.Errorf("iPXE script is %d bytes; at most %d expected", len(b), maxIPXEScript)
	}
	lines := strings.Split(string(b), "\n")
	if strings.TrimSpace(lines[0]) != "#!ipxe" {
		return nil, errors.New("line 1: not an iPXE script (no #!ipxe)")
	}
	out := &IPXEBoot{}
	var initrdName string
	booted := false
	for i, l := range lines[1:] {
		n := i + 2
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if booted {
			return nil, fmt.Errorf("line %d: %q after boot", n, f[0])
		}
		switch f[0] {
		case "initrd":
			if out.InitrdURL != "" {
				return nil, fmt.Errorf("line %d: a second initrd", n)
			}
			args := f[1:]
			if len(args) >= 2 && args[0] == "--name" {
				initrdName, args = args[1], args[2:]
			} else if len(args) >= 1 && strings.HasPrefix(args[0], "--name=") {
				initrdName, args = strings.TrimPrefix(args[0], "--name="), args[1:]
			}
			if len(args) != 1 {
				return nil, fmt.Errorf("line %d: initrd wants one URL", n)
			}
			out.InitrdURL = args[0]
		case "kernel":
			if out.KernelURL != "" {
				return nil, fmt.Errorf("line %d: a second kernel", n)
			}
			if len(f) < 2 {
				return nil, fmt.Errorf("line %d: kernel without a URL", n)
			}
			out.KernelURL = f[1]
			out.Kargs = []string{}
			for _, k := range f[2:] {
				switch {
				case strings.HasPrefix(k, "initrd="):
					if name := strings.TrimPrefix(k, "initrd="); initrdName != "" && name != initrdName {
						return nil, fmt.Errorf("line %d: kernel uses initrd %q but the initrd is named %q", n, name, initrdName)
					}
				case strings.HasPrefix(k, "coreos.live.rootfs_url="):
					out.RootfsURL = strings.TrimPrefix(k, "coreos.live.rootfs_url=")
				default:
					out.Kargs = append(out.Kargs, k)
				}
			}
		case "boot":
			booted = true
		default:
			return nil, fmt.Errorf("line %d: command %q is not one agentiso writes", n, f[0])
		}
	}
	switch {
	case out.KernelURL == "":
		return nil, errors.New("no kernel line")
	case out.InitrdURL == "":
		return nil, errors.New("no initrd line")
	case !booted:
		return nil, errors.New("no boot line")
	}
	return out, nil
}
