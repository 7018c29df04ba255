package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

func newCreatePXEFilesCmd(g *globals) *cobra.Command {
	o := &imageOptions{}
	c := &cobra.Command{
		Use:   "pxe-files",
		Short: "Build the PXE files: kernel, initrd with the agent config, root file system, iPXE script",
		Long: `Validate the inputs in --dir and build the files that boot a host from the
network instead of the agent ISO. They are taken from the same base RHCOS
live ISO as create image (found the same way: --base-iso, the cache, the
release's stream, the payload's machine-os-images), streamed from it
without extraction:

  boot-artifacts/agent.<arch>-vmlinuz      the live kernel (gunzipped on
                                           aarch64)
  boot-artifacts/agent.<arch>-initrd.img   the live initrd, unchanged, then
                                           the agent Ignition config as a
                                           separate gzip newc cpio archive
                                           (0600: it carries the pull secret)
  boot-artifacts/agent.<arch>-rootfs.img   the live root file system
  boot-artifacts/agent.<arch>.ipxe         with bootArtifactsBaseURL in
                                           agent-config.yaml: an iPXE script
                                           that boots the three from there

Each has a <file>.sha256. Serve boot-artifacts/ at bootArtifactsBaseURL
and chain-load the .ipxe script (or use your own PXE configuration with the
kernel arguments the command prints: the live ISO's defaults without
coreos.liveiso=, the agent's, and coreos.live.rootfs_url=<URL of the
rootfs>). Every file is written to a temporary name and renamed at the end,
with auth/ and the state, as one unit; a failed run leaves the previous
files. Also writes rendezvousIP and auth/ like create image.

s390x, when the base ISO has them (as upstream):
  boot-artifacts/agent.s390x-initrd.addrsize  the initrd's load address and
                                              the new initrd's size
  boot-artifacts/agent.s390x-generic.ins      the ISO's generic.ins naming
                                              the files above
The .prm files are not written: the kernel arguments are printed.`,
		Example: `  # agent-config.yaml has bootArtifactsBaseURL: http://10.0.0.1:8080/boot
  agentiso create pxe-files --dir mycluster --base-iso rhcos-live.x86_64.iso
  agentiso pxe info mycluster
  # serve mycluster/boot-artifacts/ as http://10.0.0.1:8080/boot/, then
  # chain http://10.0.0.1:8080/boot/agent.x86_64.ipxe from iPXE

  # The release's own RHCOS ISO (cache or download), no iPXE script
  agentiso create pxe-files --dir mycluster`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCreatePXEFiles(cmd.Context(), g, o)
		},
	}
	o.addFlags(c.Flags())
	return c
}

func runCreatePXEFiles(ctx context.Context, g *globals, o *imageOptions) error {
	s, err := persistImageTargets(ctx, g, o, agent.PXETargets())
	if err != nil {
		return err
	}
	px, err := asset.Fetch[*agent.PXEFiles](ctx, s)
	if err != nil {
		return err
	}
	for _, r := range px.Results() {
		g.log.Debug("wrote", "file", r.Path, "bytes", r.Size, "sha256", r.SHA256, "method", r.Method, "sha256-from", r.HashSource())
	}
	g.log.Info("PXE boot artifacts created in " + filepath.Join(s.Dir(), assetdir.BootArtifactsDir))
	g.log.Info("Kernel parameters for PXE boot: " + px.Kargs)
	if px.IPXE != "" {
		g.log.Info("Created iPXE script "+px.IPXE, "rootfs", px.RootfsURL)
	} else {
		g.log.Info("No iPXE script: set bootArtifactsBaseURL in agent-config.yaml for one; boot with coreos.live.rootfs_url=<URL of " + filepath.Base(px.Rootfs) + "> added")
		stale := filepath.Join(s.Dir(), strings.TrimSuffix(px.Kernel, "-"+assetdir.PXEKernel)+".ipxe")
		if _, err := os.Stat(stale); err == nil {
			g.log.Warn("The iPXE script " + stale + " is from an earlier run and was left as it was: it boots from the bootArtifactsBaseURL of that run")
		}
	}
	g.log.Warn("The initrd " + filepath.Join(s.Dir(), px.Initrd) + " carries the pull secret and install credentials, so it is readable only by you (0600): " +
		"serve it as yourself, or copy it for the web server's group only (README, \"Serving the PXE files\"); never make it world-readable")
	return nil
}

// newPXECmd groups the commands that inspect PXE files.
func newPXECmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "pxe",
		Short:   "Inspect the PXE files create pxe-files wrote",
		Long:    "Inspect the PXE files (boot-artifacts/) that agentiso create pxe-files wrote.",
		Example: `  agentiso pxe info mycluster`,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newPXEInfoCmd(g))
	return cmd
}

type pxeInfoOptions struct {
	dir    string
	asJSON bool
	verify bool
	out    io.Writer
}

func newPXEInfoCmd(g *globals) *cobra.Command {
	o := pxeInfoOptions{}
	cmd := &cobra.Command{
		Use:   "info [DIR]",
		Short: "List the PXE files in DIR with sizes, checksums, URLs and kernel arguments",
		Long: `List the PXE files in DIR/boot-artifacts (or DIR itself when it is the
boot-artifacts directory; DIR defaults to --dir): each kernel, initrd, root file system and iPXE
script with its size and the sha256 its .sha256 file records, then what the
iPXE script boots: kernel, initrd and root file system URLs and the kernel
arguments. With --verify the files are read and their sha256 checked
against the .sha256 files (a mismatch is an error). Minimal ISOs' root file
systems written by create image are listed too.`,
		Example: `  agentiso pxe info mycluster
  agentiso pxe info --verify mycluster/boot-artifacts
  agentiso pxe info --json mycluster | jq -r .ipxe.rootfsURL`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.dir, o.out = g.dir, g.out
			if len(args) == 1 {
				if cmd.Flags().Changed("dir") && args[0] != g.dir {
					return fmt.Errorf("pxe info: both DIR (%s) and --dir (%s) given: name the directory once", args[0], g.dir)
				}
				o.dir = args[0]
			}
			return pxeInfo(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the information as JSON")
	cmd.Flags().BoolVar(&o.verify, "verify", false, "read every file and check it against its .sha256")
	return cmd
}

// pxeFileInfo describes one file.
type pxeFileInfo struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"` // from <file>.sha256
	// Verified is set with --verify.
	Verified bool `json:"verified,omitempty"`
}

type pxeInfoResult struct {
	Dir   string              `json:"dir"`
	Files []pxeFileInfo       `json:"files"`
	IPXE  *isoeditor.IPXEBoot `json:"ipxe,omitempty"`
}

// pxeKind tells what an agentiso boot artifact is from its name.
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
	}
	return ""
}

func pxeInfo(ctx context.Context, o pxeInfoOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	dir := o.dir
	if fi, err := os.Stat(filepath.Join(dir, assetdir.BootArtifactsDir)); err == nil && fi.IsDir() {
		dir = filepath.Join(dir, assetdir.BootArtifactsDir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("pxe info: %w", err)
	}
	res := pxeInfoResult{Dir: dir}
	for _, e := range entries {
		kind := pxeKind(e.Name())
		if kind == "" || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		fi, err := e.Info()
		if err != nil {
			return err
		}
		f := pxeFileInfo{Name: e.Name(), Kind: kind, Size: fi.Size()}
		if b, err := fsutil.ReadRegular(p+".sha256", 4096); err == nil {
			if sum, name, ok := strings.Cut(strings.TrimSpace(string(b)), "  "); ok && name == e.Name() && len(sum) == 64 {
				f.SHA256 = sum
			}
		}
		if o.verify {
			if f.SHA256 == "" {
				return fmt.Errorf("%s: no usable %s.sha256 to verify against", p, e.Name())
			}
			got, err := fileSHA256(ctx, p)
			if err != nil {
				return err
			}
			if got != f.SHA256 {
				return fmt.Errorf("%s: sha256 is %s but %s.sha256 says %s", p, got, e.Name(), f.SHA256)
			}
			f.Verified = true
		}
		if kind == "ipxe" {
			b, err := fsutil.ReadRegular(p, 64<<10)
			if err != nil {
				return err
			}
			if res.IPXE, err = isoeditor.ParseIPXEScript(b); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		res.Files = append(res.Files, f)
	}
	if len(res.Files) == 0 {
		return fmt.Errorf("pxe info: no agent boot artifacts (agent.<arch>-vmlinuz, -initrd.img, -rootfs.img, .ipxe) in %s: run agentiso create pxe-files", dir)
	}
	order := map[string]int{"kernel": 0, "initrd": 1, "rootfs": 2, "addrsize": 3, "ins": 4, "ipxe": 5}
	sort.SliceStable(res.Files, func(i, j int) bool { return order[res.Files[i].Kind] < order[res.Files[j].Kind] })
	if o.asJSON {
		enc := json.NewEncoder(o.out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Directory:    %s\n", termsafe.String(dir))
	for _, f := range res.Files {
		sum := f.SHA256
		if sum == "" {
			sum = "no .sha256"
		}
		if f.Verified {
			sum += " (verified)"
		}
		fmt.Fprintf(&b, "%-13s %s, %d bytes, sha256 %s\n", f.Kind+":", termsafe.String(f.Name), f.Size, sum)
	}
	if p := res.IPXE; p != nil {
		fmt.Fprintf(&b, "Kernel URL:   %s\n", termsafe.String(p.KernelURL))
		fmt.Fprintf(&b, "Initrd URL:   %s\n", termsafe.String(p.InitrdURL))
		fmt.Fprintf(&b, "Rootfs URL:   %s\n", termsafe.String(p.RootfsURL))
		fmt.Fprintf(&b, "Kernel args:  %s\n", termsafe.String(strings.Join(p.Kargs, " ")))
	} else {
		b.WriteString("iPXE script:  none (no bootArtifactsBaseURL when the files were built)\n")
	}
	_, err = io.WriteString(o.out, b.String())
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
