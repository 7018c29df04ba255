package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/baseiso"
	"github.com/seed-a052040e/agentiso/pkg/extiso"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
	"github.com/seed-a052040e/agentiso/pkg/ignition"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

// The image assets: ImageOptions (the command line's) and Architecture
// choose the BaseISO; AgentISO is the base ISO with the agent Ignition
// config and kernel arguments overlaid, written by the store when the
// command persists it. Other outputs built from the same base ISO (the PXE
// files, a minimal ISO) are siblings of AgentISO: assets with the same
// parents that list their own streamed outputs, and targets of their own
// command.

// AgentISO is the agent ISO, agent.<arch>.iso with its .sha256: the base
// ISO with the agent Ignition config embedded and the agent kernel
// arguments appended. Generate checks that the base ISO takes the edit;
// the store writes the ISO when it is persisted (asset.Streamed), by
// streaming the base once with the changed byte ranges overlaid, so memory
// does not grow with the ISO's size.
//
// When ISOType says minimal, the ISO is instead the minimal ISO the base
// describes in its coreos/miniso.dat, streamed from the base (the files
// they share) and the packed data, with the config and kernel arguments in
// its own embed areas and coreos.live.rootfs_url= added; the base's
// root file system is then written beside it
// (boot-artifacts/agent.<arch>-rootfs.img) for bootArtifactsBaseURL to
// serve.
type AgentISO struct {
	// File is the ISO's path in the asset directory.
	File string `json:"file"`
	// Base is the base ISO's path.
	Base string `json:"base"`
	// Minimal is true for the minimal ISO.
	Minimal bool `json:"minimal,omitempty"`
	// RootfsURL is where a minimal ISO's hosts download the root file
	// system (coreos.live.rootfs_url=).
	RootfsURL string `json:"rootfsURL,omitempty"`
	// Rootfs is the root file system written beside a minimal ISO, or ""
	// when its hosts download the release stream's.
	Rootfs string `json:"rootfs,omitempty"`

	arch string
	// archFrom, for the node ISO, says where the new hosts' architecture
	// was read (ClusterInfo.ArchFrom), for a base ISO of another one.
	archFrom     string
	private      bool
	config       []byte
	size         ignition.Size
	kargs        []string
	reset        bool
	report       Reporter
	records      fsutil.HashRecords
	result       *isoeditor.WriteResult
	rootfsResult *isoeditor.WriteResult
	payload      *EmbeddedPayload
}

// installArchHint says where an install's architecture comes from, for a
// base ISO of another one.
const installArchHint = "the cluster's architecture comes from controlPlane.architecture (InfraEnv spec.cpuArchitecture)"

// baseArchError is the base ISO's architecture check failing. For hosts
// added to an installed cluster (from: where node-image read their
// architecture, ClusterInfo.ArchFrom) an ISO of another architecture is
// said so, naming that origin and the fix; an install's names hint.
func baseArchError(base string, err error, hint, from string) error {
	if from == "" {
		return fmt.Errorf("base ISO %s: %w; %s", base, err, hint)
	}
	var am *isoeditor.ArchMismatchError
	if errors.As(err, &am) && am.Got != "" {
		return fmt.Errorf("base ISO %s is for %s, but the new hosts are %s (%s): give --base-iso an RHCOS live ISO for %s, or leave it out for the release's own",
			base, am.Got, am.Want, from, am.Want)
	}
	return fmt.Errorf("base ISO %s: %w; the new hosts' architecture is %s", base, err, from)
}

// Name implements asset.Asset.
func (*AgentISO) Name() string { return "Agent Installer ISO" }

// Doing implements asset.Described.
func (*AgentISO) Doing() string { return "build the agent ISO" }

// Dependencies implements asset.Asset.
func (*AgentISO) Dependencies() []asset.Asset {
	return []asset.Asset{&AgentIgnition{}, &KernelArgs{}, &Architecture{}, &ImageOptions{}, &BaseISO{}, &ISOType{}, &EmbeddedPayload{}}
}

// Volatile implements asset.Volatile: the ISO is written on every run.
func (*AgentISO) Volatile() {}

// Generate implements asset.Asset.
func (a *AgentISO) Generate(_ context.Context, p asset.Parents) error {
	ign := asset.Get[*AgentIgnition](p)
	o := asset.Get[*ImageOptions](p)
	a.arch = asset.Get[*Architecture](p).Arch
	a.File = assetdir.AgentISO(a.arch)
	a.Base = asset.Get[*BaseISO](p).Path
	a.config, a.size = ign.Config, ign.Size
	a.kargs = strings.Fields(asset.Get[*KernelArgs](p).Args)
	a.reset, a.report = o.ResetBaseISO, o.Report
	a.records = baseiso.HashRecords(o.CacheDir)
	if ep := asset.Get[*EmbeddedPayload](p); ep.Enabled {
		a.payload = ep
	}
	if t := asset.Get[*ISOType](p); t.Minimal() {
		if a.payload != nil {
			return fmt.Errorf("--embed-payload builds a full ISO (the payload rides on it), but %s asks for a minimal ISO: drop one of them", t.Why)
		}
		if err := a.chooseRootfs(t, asset.Get[*BaseISO](p)); err != nil {
			return err
		}
	}
	return a.checkBase()
}

// checkBase opens the base ISO to check what edit will do with it (its
// architecture, an earlier customisation) before anything is written, and
// says so when a customised base is reset.
func (a *AgentISO) checkBase() error {
	_, f, custom, err := a.edit()
	if err != nil {
		return err
	}
	f.Close()
	if len(custom) > 0 {
		a.report.log().Info("Resetting the customised base ISO: its embedded Ignition config and appended kernel arguments are dropped", "base", a.Base)
	}
	return nil
}

// edit opens the base ISO and overlays the agent's config and kernel
// arguments; custom lists what an already customised base carried. The
// caller closes f.
func (a *AgentISO) edit() (img *isoeditor.Image, f *os.File, custom []string, err error) {
	iso, f, err := isoeditor.OpenFile(a.Base)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("base ISO: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	if err := iso.CheckArch(a.arch); err != nil {
		return nil, nil, nil, baseArchError(a.Base, err, installArchHint, a.archFrom)
	}
	if a.Minimal {
		img, err = a.editMinimal(iso)
		if err != nil {
			return nil, nil, nil, err
		}
		return img, f, nil, nil
	}
	// An ISO that already carries a config and kernel arguments (an agent
	// ISO built earlier) would get the agent arguments twice.
	custom, err = iso.Customized()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("base ISO %s: %w", a.Base, err)
	}
	if len(custom) > 0 && !a.reset {
		return nil, nil, nil, fmt.Errorf("base ISO %s is already customised (%s): it looks like an agent ISO built earlier. "+
			"Use the plain RHCOS live ISO, or pass --reset-base-iso to drop its customisation first", a.Base, strings.Join(custom, "; "))
	}
	img, err = iso.Edit(isoeditor.Edit{Ignition: a.config, AppendKargs: a.kargs, ResetKargs: a.reset})
	if err != nil {
		var tooLarge *isoeditor.IgnitionTooLargeError
		if errors.As(err, &tooLarge) {
			return nil, nil, nil, ignitionTooLarge(tooLarge, a.size)
		}
		return nil, nil, nil, fmt.Errorf("base ISO %s: %w", a.Base, err)
	}
	return img, f, custom, nil
}

// chooseRootfs decides where a minimal ISO's hosts get the live root file
// system: from bootArtifactsBaseURL, which serves the copy written into
// boot-artifacts/, else (as upstream) from the release's CoreOS stream when
// the base ISO is the stream's own; any other base ISO has a root file
// system only this run can provide, so the URL is required.
func (a *AgentISO) chooseRootfs(t *ISOType, base *BaseISO) error {
	a.Minimal = true
	switch {
	case t.BootArtifactsBaseURL != "":
		a.Rootfs = assetdir.BootArtifact(a.arch, assetdir.PXERootfs)
		a.RootfsURL = t.BootArtifactsBaseURL + "/" + path.Base(a.Rootfs)
	case base.StreamRootfsURL != "":
		a.RootfsURL = base.StreamRootfsURL
	default:
		return t.baseURLRequired(fmt.Sprintf("%s asks for a minimal ISO, whose hosts download the live root file system at boot, "+
			"and the base ISO %s is not the release's stream ISO, so its root file system is written to %s and must be served from a URL; "+
			"set bootArtifactsBaseURL to the http(s) URL that directory will be served from (e.g. http://10.0.0.1:8080/boot)",
			t.Why, a.Base, assetdir.BootArtifactsDir+"/"))
	}
	a.report.log().Info("Minimal ISO will be created", "because", t.Why, "rootfs", a.RootfsURL)
	return nil
}

// editMinimal opens the minimal ISO the base describes and edits it.
func (a *AgentISO) editMinimal(iso *isoeditor.ISO) (*isoeditor.Image, error) {
	m, err := iso.Minimal()
	if errors.Is(err, isoeditor.ErrNoMinisoData) {
		return nil, fmt.Errorf("base ISO %s: %w: agentiso builds the minimal ISO from the base ISO's %s, as coreos-installer iso extract minimal-iso does; "+
			"use an RHCOS live ISO that carries it (the release's own does), or build the full ISO", a.Base, err, isoeditor.MinisoPath)
	}
	if err != nil {
		return nil, fmt.Errorf("base ISO %s: %w", a.Base, err)
	}
	if a.Rootfs != "" {
		if _, _, err := iso.FileExtent(isoeditor.RootfsPath); err != nil {
			return nil, fmt.Errorf("base ISO %s: %w: nothing to write to %s", a.Base, err, a.Rootfs)
		}
	}
	img, err := m.Edit(isoeditor.Edit{Ignition: a.config, AppendKargs: a.kargs}, a.RootfsURL)
	if err != nil {
		var tooLarge *isoeditor.IgnitionTooLargeError
		if errors.As(err, &tooLarge) {
			return nil, ignitionTooLarge(tooLarge, a.size)
		}
		return nil, fmt.Errorf("minimal ISO from base ISO %s: %w", a.Base, err)
	}
	return img, nil
}

// ignitionTooLarge explains an oversize config: its biggest parts, each
// with the input it comes from, and what to shrink, taken from the
// config's own breakdown by input.
func ignitionTooLarge(e *isoeditor.IgnitionTooLargeError, size ignition.Size) error {
	var b strings.Builder
	fmt.Fprintf(&b, "the compressed Ignition config is %d bytes but the ISO's embed area (%s) holds only %d bytes.\nLargest parts of the config (encoded bytes):",
		e.Size, e.File, e.Limit)
	for _, p := range size.Top {
		in, _ := ignition.InputOf(p.Path)
		fmt.Fprintf(&b, "\n  %8d  %s: %s", p.Bytes, p.Path, in)
	}
	if e.Limit < ignition.EmbedAreaSize {
		fmt.Fprintf(&b, "\nThis ISO's Ignition embed area (%d bytes) is smaller than a standard RHCOS live ISO's (%d bytes): use an unmodified RHCOS live ISO.",
			e.Limit, ignition.EmbedAreaSize)
	}
	total := 0
	for _, g := range size.ByInput {
		total += g.Bytes
	}
	var shrink []string
	for _, g := range size.ByInput {
		// An input under 2% of the config cannot be what overflows it.
		if !g.User || g.Bytes*50 < total || len(shrink) == 3 {
			continue
		}
		if g.Parts > 1 {
			shrink = append(shrink, fmt.Sprintf("%s (%d bytes in %d files)", g.Input, g.Bytes, g.Parts))
		} else {
			shrink = append(shrink, fmt.Sprintf("%s (%d bytes)", g.Input, g.Bytes))
		}
	}
	switch {
	case len(shrink) > 0:
		fmt.Fprintf(&b, "\nShrink what you provide, largest first: %s; then run again.", strings.Join(shrink, ", "))
	case e.Limit >= ignition.EmbedAreaSize:
		b.WriteString("\nNone of your inputs is a large part of the config; please report this as an agentiso bug.")
	}
	return errors.New(b.String())
}

// Streams implements asset.Streamed: the ISO (its checksum goes with it),
// and a minimal ISO's root file system.
func (a *AgentISO) Streams() []asset.Stream {
	out := []asset.Stream{{Path: a.File, Stage: a.stage}}
	if a.Rootfs != "" {
		out = append(out, asset.Stream{Path: a.Rootfs, Stage: a.stageRootfs})
	}
	return out
}

// stageRootfs writes the base ISO's root file system next to dst.
func (a *AgentISO) stageRootfs(ctx context.Context, dst string) (asset.Staged, error) {
	st, err := stageFromBase(ctx, a.report, a.records, a.Base, dst, isoeditor.RootfsPath, assetdir.Mode(a.Rootfs))
	if err != nil {
		return nil, err
	}
	a.rootfsResult = st.Result
	return st, nil
}

// stageFromBase writes the file at isoPath in the base ISO, unchanged,
// next to dst (creating its directory), with its checksum; the kernel
// copies the bytes where it can. Its sha256 is taken from records when
// the same bytes of the same base file were hashed before.
func stageFromBase(ctx context.Context, r Reporter, records fsutil.HashRecords, base, dst, isoPath string, mode os.FileMode) (*isoeditor.Staged, error) {
	f, off, size, err := openBaseFile(base, isoPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return stageWith(r, dst, func(update func(done, total int64)) (*isoeditor.Staged, error) {
		return isoeditor.WriteFileRangeStaged(ctx, dst, f, off, size, isoeditor.WriteOptions{Perm: mode, Progress: update, HashRecords: records})
	})
}

// openBaseFile opens the base ISO and finds the file at isoPath in it; the
// caller closes f.
func openBaseFile(base, isoPath string) (f *os.File, off, size int64, err error) {
	iso, f, err := isoeditor.OpenFile(base)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("base ISO: %w", err)
	}
	if off, size, err = iso.FileExtent(isoPath); err != nil {
		f.Close()
		return nil, 0, 0, fmt.Errorf("base ISO %s: %w", base, err)
	}
	return f, off, size, nil
}

// stageReader writes size bytes of src next to dst (creating its
// directory, removing dead runs' temporary files), with its checksum and
// progress.
func stageReader(ctx context.Context, r Reporter, dst string, src io.Reader, size int64, mode os.FileMode) (*isoeditor.Staged, error) {
	return stageWith(r, dst, func(update func(done, total int64)) (*isoeditor.Staged, error) {
		return isoeditor.WriteReaderStaged(ctx, dst, src, size, isoeditor.WriteOptions{Perm: mode, Progress: update})
	})
}

// stageWith prepares dst's directory, removes dead runs' temporary files
// and runs write with progress shown.
func stageWith(r Reporter, dst string, write func(update func(done, total int64)) (*isoeditor.Staged, error)) (*isoeditor.Staged, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Dir(dst), err)
	}
	removeStaleTemps(r, dst)
	update, finish := r.writeProgress(filepath.Base(dst))
	st, err := write(update)
	finish(err == nil)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", dst, err)
	}
	return st, nil
}

// removeStaleTemps removes the temporary files a killed run left for dst
// (never a live run's: they are locked).
func removeStaleTemps(r Reporter, dst string) {
	removed, err := fsutil.RemoveStaleTemps(filepath.Dir(dst), filepath.Base(dst))
	for _, p := range removed {
		r.log().Info("removed the temporary file of an earlier run that did not finish", "file", p)
	}
	if err != nil {
		r.log().Warn(err.Error())
	}
}

// stage writes the ISO and its checksum in full under temporary names next
// to dst, leaving dst as it is until the store commits them.
func (a *AgentISO) stage(ctx context.Context, dst string) (asset.Staged, error) {
	// A run killed while writing (SIGKILL, power loss) leaves its temporary
	// ISO behind: remove those of dead runs, never a live run's (locked).
	removeStaleTemps(a.report, dst)
	img, f, _, err := a.edit()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if a.payload != nil {
		return a.stageExtended(ctx, dst, img, f)
	}
	update, finish := a.report.writeProgress(filepath.Base(dst))
	st, err := isoeditor.WriteStaged(ctx, dst, img, isoeditor.WriteOptions{Perm: a.perm(), Progress: update, HashRecords: a.records})
	finish(err == nil)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", dst, err)
	}
	a.result = st.Result
	return st, nil
}

// perm is the ISO's mode: it holds the pull secret and the tokens, so
// 0600 whatever its name (a node ISO may be named with -o).
func (a *AgentISO) perm() os.FileMode {
	if a.private {
		return assetdir.Private
	}
	return assetdir.Mode(a.File)
}

// Result describes the ISO as the last Persist wrote it (nil before).
func (a *AgentISO) Result() *isoeditor.WriteResult { return a.result }

// RootfsResult describes the root file system written beside a minimal
// ISO by the last Persist (nil before, and for a full ISO).
func (a *AgentISO) RootfsResult() *isoeditor.WriteResult { return a.rootfsResult }

// PayloadDetail is what the extended ISO's progress line shows after the
// payload's bytes: images and blobs written of all, and the time left at
// the rate so far once it is known.
func PayloadDetail(p extiso.Progress) string {
	s := fmt.Sprintf("images %d/%d, blobs %d/%d", p.Images, p.ImagesOf, p.Blobs, p.Of)
	if left := p.Left(); left >= time.Second && p.Bytes < p.Total {
		s += ", about " + left.Round(time.Second).String() + " left"
	}
	return s
}

// stageExtended writes the extended ISO (docs/airgap.md): the agent ISO,
// then the payload's data image streamed from the registry in the same
// pass, each blob once and checked; progress counts the payload's bytes.
func (a *AgentISO) stageExtended(ctx context.Context, dst string, img *isoeditor.Image, f *os.File) (asset.Staged, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	iso, err := isoeditor.Open(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("base ISO %s: %w", a.Base, err)
	}
	update, finish := a.report.detailProgress(filepath.Base(dst))
	x, err := extiso.Extend(iso, img, a.payload.plan, time.Now(), func(p extiso.Progress) {
		update(p.Bytes, p.Total, PayloadDetail(p))
	})
	if err != nil {
		finish(false)
		return nil, fmt.Errorf("base ISO %s: %w", a.Base, err)
	}
	if !x.ISO.PathTables {
		a.report.log().Warn("The base ISO's path tables have no room for /" + extiso.Dir + ": readers of the directory records (Linux, xorriso) see it, a reader of the path tables alone (Windows) does not")
	}
	staged, err := x.WriteStaged(ctx, dst, isoeditor.WriteOptions{Perm: a.perm()})
	finish(err == nil)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", dst, err)
	}
	a.result = staged.Result
	a.report.log().Info("The release payload is in the ISO", "images", a.payload.Images, "bytes", a.payload.Bytes, "iso-bytes", staged.Result.Size)
	return staged, nil
}
