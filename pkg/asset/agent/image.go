package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
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
type AgentISO struct {
	// File is the ISO's path in the asset directory.
	File string `json:"file"`
	// Base is the base ISO's path.
	Base string `json:"base"`

	arch   string
	config []byte
	size   ignition.Size
	kargs  []string
	reset  bool
	report Reporter
	result *isoeditor.WriteResult
}

// Name implements asset.Asset.
func (*AgentISO) Name() string { return "Agent Installer ISO" }

// Dependencies implements asset.Asset.
func (*AgentISO) Dependencies() []asset.Asset {
	return []asset.Asset{&AgentIgnition{}, &KernelArgs{}, &Architecture{}, &ImageOptions{}, &BaseISO{}}
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
		return nil, nil, nil, fmt.Errorf("base ISO %s: %w; the cluster's architecture comes from controlPlane.architecture (InfraEnv spec.cpuArchitecture)", a.Base, err)
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

// ignitionTooLarge explains an oversize config with its biggest parts.
func ignitionTooLarge(e *isoeditor.IgnitionTooLargeError, size ignition.Size) error {
	var b strings.Builder
	fmt.Fprintf(&b, "the compressed Ignition config is %d bytes but the ISO's embed area (%s) holds only %d bytes.\nLargest parts of the config (encoded bytes):",
		e.Size, e.File, e.Limit)
	for _, p := range size.Top {
		fmt.Fprintf(&b, "\n  %8d  %s", p.Bytes, p.Path)
	}
	b.WriteString("\nShrink or remove the largest extra manifests (openshift/*.yaml) or CA bundles, and run again.")
	return errors.New(b.String())
}

// Streams implements asset.Streamed: the ISO (its checksum goes with it).
func (a *AgentISO) Streams() []asset.Stream {
	return []asset.Stream{{Path: a.File, Stage: a.stage}}
}

// stage writes the ISO and its checksum in full under temporary names next
// to dst, leaving dst as it is until the store commits them.
func (a *AgentISO) stage(ctx context.Context, dst string) (asset.Staged, error) {
	// A run killed while writing (SIGKILL, power loss) leaves its temporary
	// ISO behind: remove those of dead runs, never a live run's (locked).
	removed, err := fsutil.RemoveStaleTemps(filepath.Dir(dst), filepath.Base(dst))
	for _, p := range removed {
		a.report.log().Info("removed the temporary file of an earlier run that did not finish", "file", p)
	}
	if err != nil {
		a.report.log().Warn(err.Error())
	}
	img, f, _, err := a.edit()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var update func(done, total int64)
	finish := func(bool) {}
	if a.report.WriteProgress != nil {
		update, finish = a.report.WriteProgress(filepath.Base(dst))
	}
	st, err := isoeditor.WriteStaged(ctx, dst, img, isoeditor.WriteOptions{Perm: assetdir.Mode(a.File), Progress: update})
	finish(err == nil)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", dst, err)
	}
	a.result = st.Result
	return st, nil
}

// Result describes the ISO as the last Persist wrote it (nil before).
func (a *AgentISO) Result() *isoeditor.WriteResult { return a.result }
