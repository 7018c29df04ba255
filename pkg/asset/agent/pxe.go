package agent

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/arch"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/baseiso"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

// The live files of the base ISO the PXE files come from.
const (
	isoKernel = "images/pxeboot/vmlinuz"
	isoInitrd = "images/pxeboot/initrd.img"
	// s390x: the initrd's load address and size (two big-endian u64),
	// and the .ins file that loads kernel, initrd and addrsize.
	isoAddrsize   = "images/initrd.addrsize"
	isoGenericIns = "generic.ins"
)

// PXEFiles are the network-boot files, written under boot-artifacts/ by
// the store when persisted (asset.Streamed), each with a .sha256: the base
// ISO's kernel (gunzipped on aarch64, as upstream: firmware there boots an
// uncompressed Image), its initrd with the agent Ignition archive appended
// as a separate newc cpio (the original bytes untouched), its root file
// system, and, with bootArtifactsBaseURL, an iPXE script that boots them
// from there. Every file is streamed from the base once; nothing is
// extracted.
type PXEFiles struct {
	// Base is the base ISO's path.
	Base string `json:"base"`
	// Kernel, Initrd and Rootfs are the files' paths in the asset
	// directory; IPXE is the script's, "" without bootArtifactsBaseURL.
	Kernel string `json:"kernel"`
	Initrd string `json:"initrd"`
	Rootfs string `json:"rootfs"`
	IPXE   string `json:"ipxe,omitempty"`
	// Addrsize, GenericIns and Parm are s390x's, written when the base
	// ISO has initrd.addrsize and generic.ins: the initrd's load address
	// with the new initrd's size, the .ins file an LPAR loads, naming the
	// files beside it (ginsFiles), and the parm file it loads as the
	// kernel's command line (the PXE kernel arguments).
	Addrsize   string `json:"addrsize,omitempty"`
	GenericIns string `json:"genericIns,omitempty"`
	Parm       string `json:"parm,omitempty"`
	// Kargs are the kernel arguments to boot them with: the live ISO's
	// defaults without coreos.liveiso=, then the agent's (the iPXE script
	// adds coreos.live.rootfs_url=).
	Kargs string `json:"kargs"`
	// BaseURL is bootArtifactsBaseURL; RootfsURL the root file system's
	// URL under it.
	BaseURL   string `json:"baseURL,omitempty"`
	RootfsURL string `json:"rootfsURL,omitempty"`

	arch string
	// name is a boot artifact's path for a kind (assetdir.BootArtifact,
	// or the node image's assetdir.NodeBootArtifact).
	name func(cpu, kind string) string
	// urlFrom is the file bootArtifactsBaseURL comes from.
	urlFrom string
	archive []byte
	// ins is the .ins file's text (GenericIns).
	ins     []byte
	report  Reporter
	records fsutil.HashRecords
	results []*isoeditor.WriteResult
}

// Name implements asset.Asset.
func (*PXEFiles) Name() string { return "Agent Installer PXE Files" }

// Doing implements asset.Described.
func (*PXEFiles) Doing() string { return "build the PXE files" }

// Dependencies implements asset.Asset: the same parents as AgentISO.
func (*PXEFiles) Dependencies() []asset.Asset {
	return []asset.Asset{&AgentIgnition{}, &KernelArgs{}, &Architecture{}, &ImageOptions{}, &BaseISO{}, &ISOType{}}
}

// Volatile implements asset.Volatile: the files are written on every run.
func (*PXEFiles) Volatile() {}

// Generate implements asset.Asset: it checks the base ISO has the live
// files and builds the initrd's Ignition archive and the kernel arguments.
func (a *PXEFiles) Generate(_ context.Context, p asset.Parents) error {
	return a.fill(pxeInput{arch: asset.Get[*Architecture](p).Arch, base: asset.Get[*BaseISO](p).Path, opts: asset.Get[*ImageOptions](p),
		kargs: asset.Get[*KernelArgs](p).Args, ignition: asset.Get[*AgentIgnition](p).Config, baseURL: asset.Get[*ISOType](p).BootArtifactsBaseURL,
		name: assetdir.BootArtifact, ipxe: assetdir.IPXEScript, urlFrom: assetdir.AgentConfig,
		archHint: installArchHint})
}

// pxeInput is what the PXE files are made of.
type pxeInput struct {
	arch, base string
	opts       *ImageOptions
	// kargs are the agent's kernel arguments, after the live ISO's.
	kargs    string
	ignition []byte
	// baseURL is bootArtifactsBaseURL ("": no iPXE script).
	baseURL string
	// name and ipxe name the files in the asset directory.
	name func(cpu, kind string) string
	ipxe func(cpu string) string
	// urlFrom is the file bootArtifactsBaseURL comes from, for messages.
	urlFrom string
	// archHint says where the architecture came from, for a base ISO of
	// another one; archFrom, for the node image, where node-image read it
	// (baseArchError).
	archHint, archFrom string
}

// fill checks the base ISO has the live files and sets the files' paths,
// the initrd's Ignition archive and the kernel arguments.
func (a *PXEFiles) fill(in pxeInput) error {
	a.arch, a.Base, a.name, a.urlFrom = in.arch, in.base, in.name, in.urlFrom
	a.report = in.opts.Report
	a.records = baseiso.HashRecords(in.opts.CacheDir)
	a.Kernel = a.name(a.arch, assetdir.PXEKernel)
	a.Initrd = a.name(a.arch, assetdir.PXEInitrd)
	a.Rootfs = a.name(a.arch, assetdir.PXERootfs)
	iso, f, err := isoeditor.OpenFile(a.Base)
	if err != nil {
		return fmt.Errorf("base ISO: %w", err)
	}
	defer f.Close()
	if err := iso.CheckArch(a.arch); err != nil {
		return baseArchError(a.Base, err, in.archHint, in.archFrom)
	}
	for _, p := range []string{isoKernel, isoInitrd, isoeditor.RootfsPath} {
		if _, _, err := iso.FileExtent(p); err != nil {
			return fmt.Errorf("base ISO %s: %w: a live ISO's PXE files are missing (a minimal ISO has no root file system: use the full live ISO)", a.Base, err)
		}
	}
	live, err := iso.LiveKargs()
	if err != nil {
		return fmt.Errorf("base ISO %s: %w", a.Base, err)
	}
	a.Kargs = strings.Join(append([]string{live}, strings.Fields(in.kargs)...), " ")
	if a.archive, err = isoeditor.IgnitionArchive(in.ignition); err != nil {
		return err
	}
	if a.arch == arch.S390X {
		if _, size, err := iso.FileExtent(isoAddrsize); err == nil && size >= 8 {
			a.Addrsize = a.name(a.arch, assetdir.PXEAddrsize)
		}
	}
	if u := in.baseURL; u != "" {
		a.BaseURL = u
		a.IPXE = in.ipxe(a.arch)
		a.RootfsURL = u + "/" + path.Base(a.Rootfs)
		if _, err := a.script(); err != nil {
			return err
		}
	}
	if a.arch == arch.S390X {
		if _, _, err := iso.FileExtent(isoGenericIns); err == nil {
			a.GenericIns = a.name(a.arch, assetdir.PXEGenericIns)
			a.Parm = a.name(a.arch, assetdir.PXEParm)
			b, err := a.readBase(isoGenericIns)
			if err != nil {
				return err
			}
			if a.ins, err = a.genericIns(b); err != nil {
				return fmt.Errorf("base ISO %s: %s: %w", a.Base, isoGenericIns, err)
			}
		}
	}
	return nil
}

// genericIns rewrites the base ISO's generic.ins (lines "<file> <load
// address>", "*" comments) for the PXE files: the HMC loads each file
// relative to the .ins, so each names its file beside it in
// boot-artifacts/ (the kernel, the agent initrd, the new initrd.addrsize,
// the parm file); the addresses are kept. RHCOS before 2025 named
// images/kernel.img and images/initrd.img, since then
// images/pxeboot/vmlinuz and images/pxeboot/initrd.img; both have
// images/genericdvd.prm and images/initrd.addrsize. A file of another
// kind is refused: agentiso would not write it.
func (a *PXEFiles) genericIns(b []byte) ([]byte, error) {
	lines := strings.SplitAfter(string(b), "\n")
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "*") {
			continue
		}
		var to string
		switch name := path.Base(f[0]); {
		case name == "kernel.img" || name == "vmlinuz":
			to = a.Kernel
		case name == "initrd.img":
			to = a.Initrd
		case name == "initrd.addrsize" && a.Addrsize != "":
			to = a.Addrsize
		case strings.HasSuffix(name, ".prm"):
			to = a.Parm
		default:
			return nil, fmt.Errorf("line %d names %q: agentiso writes the kernel, the initrd, initrd.addrsize (when the ISO has images/initrd.addrsize) and a .prm for an LPAR; use the PXE files and kernel arguments without it", i+1, f[0])
		}
		lines[i] = strings.Replace(l, f[0], path.Base(to), 1)
	}
	return []byte(strings.Join(lines, "")), nil
}

// parm is the parm file's text: the kernel arguments the iPXE script
// boots with (coreos.live.rootfs_url= with bootArtifactsBaseURL only).
func (a *PXEFiles) parm() []byte {
	k := a.Kargs
	if a.RootfsURL != "" {
		k += " coreos.live.rootfs_url=" + a.RootfsURL
	}
	return []byte(k + "\n")
}

// script is the iPXE script's text.
func (a *PXEFiles) script() ([]byte, error) {
	s, err := isoeditor.IPXEScript(a.BaseURL+"/"+path.Base(a.Kernel), a.BaseURL+"/"+path.Base(a.Initrd), a.RootfsURL, strings.Fields(a.Kargs))
	if err != nil {
		return nil, fmt.Errorf("%s: bootArtifactsBaseURL: %w", a.urlFrom, err)
	}
	return []byte(s), nil
}

// Streams implements asset.Streamed.
func (a *PXEFiles) Streams() []asset.Stream {
	out := []asset.Stream{
		{Path: a.Kernel, Stage: a.stageKernel},
		{Path: a.Initrd, Stage: a.stageInitrd},
		{Path: a.Rootfs, Stage: a.keep(func(ctx context.Context, dst string) (*isoeditor.Staged, error) {
			return stageFromBase(ctx, a.report, a.records, a.Base, dst, isoeditor.RootfsPath, assetdir.Mode(a.Rootfs))
		})},
	}
	if a.Addrsize != "" {
		out = append(out, asset.Stream{Path: a.Addrsize, Stage: a.keep(a.stageAddrsize)})
	}
	if a.GenericIns != "" {
		out = append(out, asset.Stream{Path: a.GenericIns, Stage: a.keep(func(ctx context.Context, dst string) (*isoeditor.Staged, error) {
			return stageReader(ctx, a.report, dst, bytes.NewReader(a.ins), int64(len(a.ins)), assetdir.Mode(a.GenericIns))
		})}, asset.Stream{Path: a.Parm, Stage: a.keep(func(ctx context.Context, dst string) (*isoeditor.Staged, error) {
			p := a.parm()
			return stageReader(ctx, a.report, dst, bytes.NewReader(p), int64(len(p)), assetdir.Mode(a.Parm))
		})})
	}
	if a.IPXE != "" {
		out = append(out, asset.Stream{Path: a.IPXE, Stage: a.keep(func(ctx context.Context, dst string) (*isoeditor.Staged, error) {
			s, err := a.script()
			if err != nil {
				return nil, err
			}
			return stageReader(ctx, a.report, dst, bytes.NewReader(s), int64(len(s)), assetdir.Mode(a.IPXE))
		})})
	}
	return out
}

// keep records what a stage wrote, for Results.
func (a *PXEFiles) keep(fn func(ctx context.Context, dst string) (*isoeditor.Staged, error)) func(ctx context.Context, dst string) (asset.Staged, error) {
	return func(ctx context.Context, dst string) (asset.Staged, error) {
		st, err := fn(ctx, dst)
		if err != nil {
			return nil, err
		}
		a.results = append(a.results, st.Result)
		return st, nil
	}
}

// stageKernel writes the kernel, gunzipped on aarch64.
func (a *PXEFiles) stageKernel(ctx context.Context, dst string) (asset.Staged, error) {
	return a.keep(func(ctx context.Context, dst string) (*isoeditor.Staged, error) {
		f, off, size, err := openBaseFile(a.Base, isoKernel)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		br := bufio.NewReader(io.NewSectionReader(f, off, size))
		var src io.Reader = br
		if magic, _ := br.Peek(2); a.arch == arch.AArch64 && bytes.Equal(magic, []byte{0x1f, 0x8b}) {
			zr, err := gzip.NewReader(br)
			if err != nil {
				return nil, fmt.Errorf("base ISO %s: %s: %w", a.Base, isoKernel, err)
			}
			src, size = zr, -1
		}
		return stageReader(ctx, a.report, dst, src, size, assetdir.Mode(a.Kernel))
	})(ctx, dst)
}

// stageInitrd writes the live initrd followed by the Ignition archive.
func (a *PXEFiles) stageInitrd(ctx context.Context, dst string) (asset.Staged, error) {
	return a.keep(func(ctx context.Context, dst string) (*isoeditor.Staged, error) {
		r, n, closeBase, err := a.initrd()
		if err != nil {
			return nil, err
		}
		defer closeBase()
		return stageReader(ctx, a.report, dst, r, n, assetdir.Mode(a.Initrd))
	})(ctx, dst)
}

// initrd is the PXE initrd's stream and size; closeBase closes the base.
func (a *PXEFiles) initrd() (r io.Reader, n int64, closeBase func(), err error) {
	f, off, size, err := openBaseFile(a.Base, isoInitrd)
	if err != nil {
		return nil, 0, nil, err
	}
	r, n = isoeditor.PXEInitrd(io.NewSectionReader(f, off, size), size, a.archive)
	return r, n, func() { f.Close() }, nil
}

// readBase reads a small file of the base ISO.
func (a *PXEFiles) readBase(p string) ([]byte, error) {
	f, off, size, err := openBaseFile(a.Base, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > 64<<10 {
		return nil, fmt.Errorf("base ISO %s: %s is %d bytes; at most 64 KiB expected", a.Base, p, size)
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("base ISO %s: %s: %w", a.Base, p, err)
	}
	return b, nil
}

// stageAddrsize writes s390x's initrd.addrsize: the live one's load
// address, then the PXE initrd's size (big-endian u64), as upstream.
func (a *PXEFiles) stageAddrsize(ctx context.Context, dst string) (*isoeditor.Staged, error) {
	b, err := a.readBase(isoAddrsize)
	if err != nil {
		return nil, err
	}
	_, n, closeBase, err := a.initrd()
	if err != nil {
		return nil, err
	}
	closeBase()
	out := binary.BigEndian.AppendUint64(append([]byte{}, b[:8]...), uint64(n))
	return stageReader(ctx, a.report, dst, bytes.NewReader(out), int64(len(out)), assetdir.Mode(a.Addrsize))
}

// Results describes the files as the last Persist wrote them, in the
// order of Streams (nil before).
func (a *PXEFiles) Results() []*isoeditor.WriteResult { return a.results }
