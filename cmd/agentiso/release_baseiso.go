package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/arch"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/baseiso"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

// resolveBaseISO finds the base ISO for the release being installed: the
// ISO named by the payload's own CoreOS stream (cache, its URL or
// --os-image-mirror), else the payload's machine-os-images image in the
// (mirror) registry; then checks that an ISO given with --base-iso carries
// the RHCOS the release expects.
func resolveBaseISO(ctx context.Context, g *globals, s *asset.Store, o *imageOptions, cpu string, tty bool) (baseiso.Result, error) {
	rel, err := asset.Fetch[*agent.ReleasePayload](ctx, s)
	if err != nil {
		return baseiso.Result{}, err
	}
	opts := baseiso.Options{
		BaseISO: o.baseISO, BaseISOSHA256: o.baseISOSHA, Mirror: o.mirror, Offline: o.release.offline,
		Arch: cpu, Progress: g.errOut, IsTTY: tty, Logger: g.log, Stream: rel.StreamJSON(),
	}
	if rel.MachineOSImages != "" && !o.release.offline {
		spec, rpmArch := rel.MachineOSImages, cpu
		if a, ok := arch.RPM(cpu); ok {
			rpmArch = a
		}
		opts.Registry = &baseiso.RegistrySource{Image: spec, Preferred: rel.ReadFromMirror(),
			Stream: func(ctx context.Context, fn func(io.Reader, int64) error) error {
				c, err := agent.NewReleaseClient(ctx, s)
				if err != nil {
					return err
				}
				_, err = c.StreamFile(ctx, spec, "coreos/coreos-"+rpmArch+".iso", fn)
				return err
			}}
	}
	base, err := baseiso.Resolve(ctx, opts)
	if err != nil {
		return baseiso.Result{}, fmt.Errorf("failed to get base ISO image: %w", err)
	}
	if base.Source == baseiso.SourcePath || base.Source == baseiso.SourceURL {
		if err := checkISORelease(g, base.Path, opts, rel.PullSpec, o.strict); err != nil {
			return baseiso.Result{}, err
		}
	}
	return base, nil
}

// checkISORelease compares the RHCOS release in the ISO's volume ID
// ("rhcos-<release>") with the release's stream.
func checkISORelease(g *globals, path string, opts baseiso.Options, release string, strict bool) error {
	want, err := baseiso.Describe(opts)
	if err != nil {
		return err
	}
	iso, f, err := isoeditor.OpenFile(path)
	if err != nil {
		return fmt.Errorf("base ISO: %w", err)
	}
	defer f.Close()
	got, ok := strings.CutPrefix(iso.VolumeID(), "rhcos-")
	if !ok || got == want.Release {
		return nil
	}
	msg := fmt.Sprintf("base ISO %s is RHCOS %s, but release %s expects RHCOS %s (stream %s); hosts boot the ISO's RHCOS and then install the release's", path, got, release, want.Release, want.Stream)
	if strict {
		return fmt.Errorf("%s (--strict); use the ISO %s (sha256 %s)", msg, want.FileName, want.SHA256)
	}
	g.log.Warn(msg)
	return nil
}
