package isoeditor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
)

// PXEFileInfo describes one PXE file agentiso wrote.
type PXEFileInfo struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"` // kernel, initrd, rootfs, addrsize, ins, prm or ipxe
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"` // from <file>.sha256
	// Verified is set when the file was read and matched its .sha256.
	Verified bool `json:"verified,omitempty"`
}

// PXEInfo describes the PXE files of a directory: each file, and what its
// iPXE script boots.
type PXEInfo struct {
	Dir   string        `json:"dir"`
	Files []PXEFileInfo `json:"files"`
	IPXE  *IPXEBoot     `json:"ipxe,omitempty"`
}

// pxeKind tells what an agentiso boot artifact is from its name ("" for
// anything else).
func pxeKind(name string) string {
	switch {
	case !strings.HasPrefix(name, "agent."):
		return ""
	case strings.HasSuffix(name, "-"+assetdir.PXEKernel):
		return "kernel"
	case strings.HasSuffix(name, "-"+assetdir.PXEInitrd):
		return "initrd"
	case strings.HasSuffix(name, "-"+assetdir.PXERootfs):
		return "rootfs"
	case strings.HasSuffix(name, ".ipxe"):
		return "ipxe"
	case strings.HasSuffix(name, "-"+assetdir.PXEAddrsize):
		return "addrsize"
	case strings.HasSuffix(name, "-"+assetdir.PXEGenericIns):
		return "ins"
	case strings.HasSuffix(name, "-"+assetdir.PXEParm):
		return "prm"
	}
	return ""
}

// InspectPXE lists the PXE files (kernel, initrd, root file system, s390x
// files, iPXE script) in dir, or in dir's boot-artifacts directory when it
// has one, with the sha256 each .sha256 file records, and parses the iPXE
// script. With verify every file is read and checked against its .sha256
// (a mismatch, or no usable .sha256, is an error).
func InspectPXE(ctx context.Context, dir string, verify bool) (*PXEInfo, error) {
	if fi, err := os.Stat(filepath.Join(dir, assetdir.BootArtifactsDir)); err == nil && fi.IsDir() {
		dir = filepath.Join(dir, assetdir.BootArtifactsDir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("pxe info: %w", err)
	}
	res := &PXEInfo{Dir: dir}
	for _, e := range entries {
		kind := pxeKind(e.Name())
		if kind == "" || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		f := PXEFileInfo{Name: e.Name(), Kind: kind, Size: fi.Size()}
		if b, err := fsutil.ReadRegular(p+".sha256", 4096); err == nil {
			if sum, name, ok := strings.Cut(strings.TrimSpace(string(b)), "  "); ok && name == e.Name() && len(sum) == 64 {
				f.SHA256 = sum
			}
		}
		if verify {
			if f.SHA256 == "" {
				return nil, fmt.Errorf("%s: no usable %s.sha256 to verify against", p, e.Name())
			}
			got, err := fileSHA256(ctx, p)
			if err != nil {
				return nil, err
			}
			if got != f.SHA256 {
				return nil, fmt.Errorf("%s: sha256 is %s but %s.sha256 says %s", p, got, e.Name(), f.SHA256)
			}
			f.Verified = true
		}
		if kind == "ipxe" {
			b, err := fsutil.ReadRegular(p, 64<<10)
			if err != nil {
				return nil, err
			}
			if res.IPXE, err = ParseIPXEScript(b); err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
		}
		res.Files = append(res.Files, f)
	}
	if len(res.Files) == 0 {
		return nil, fmt.Errorf("pxe info: no agent boot artifacts (agent.<arch>-vmlinuz, -initrd.img, -rootfs.img, .ipxe) in %s: run agentiso create pxe-files", dir)
	}
	order := map[string]int{"kernel": 0, "initrd": 1, "rootfs": 2, "addrsize": 3, "ins": 4, "prm": 5, "ipxe": 6}
	sort.SliceStable(res.Files, func(i, j int) bool { return order[res.Files[i].Kind] < order[res.Files[j].Kind] })
	return res, nil
}

// WriteText prints the PXE files and what the iPXE script boots, one
// value a line. Names and URLs are escaped (internal/termsafe).
func (r *PXEInfo) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Directory:    %s\n", termsafe.String(r.Dir))
	for _, f := range r.Files {
		sum := f.SHA256
		if sum == "" {
			sum = "no .sha256"
		}
		if f.Verified {
			sum += " (verified)"
		}
		fmt.Fprintf(&b, "%-13s %s, %d bytes, sha256 %s\n", f.Kind+":", termsafe.String(f.Name), f.Size, sum)
	}
	if p := r.IPXE; p != nil {
		fmt.Fprintf(&b, "Kernel URL:   %s\n", termsafe.String(p.KernelURL))
		fmt.Fprintf(&b, "Initrd URL:   %s\n", termsafe.String(p.InitrdURL))
		fmt.Fprintf(&b, "Rootfs URL:   %s\n", termsafe.String(p.RootfsURL))
		fmt.Fprintf(&b, "Kernel args:  %s\n", termsafe.String(strings.Join(p.Kargs, " ")))
	} else {
		b.WriteString("iPXE script:  none (no bootArtifactsBaseURL when the files were built)\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fileSHA256 hashes a file, checking ctx as it goes.
func fileSHA256(ctx context.Context, p string) (string, error) {
	f, err := fsutil.OpenRegular(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		n, err := f.Read(buf)
		h.Write(buf[:n])
		if errors.Is(err, io.EOF) {
			return hex.EncodeToString(h.Sum(nil)), nil
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", p, err)
		}
	}
}
