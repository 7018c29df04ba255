package agent

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/baseiso"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
	"github.com/seed-a052040e/agentiso/pkg/release"
)

// Reporter is how the image assets show what they do: the command supplies
// it with ImageOptions; the assets never print. The zero value shows
// nothing.
type Reporter struct {
	// Log takes notes and warnings; nil discards them.
	Log *slog.Logger
	// Progress and TTY take the base ISO download's progress; nil shows
	// none.
	Progress io.Writer
	TTY      bool
	// WriteProgress starts showing the progress of writing the named
	// output: update is called as bytes are written, finish once at the
	// end. nil shows none.
	WriteProgress func(name string) (update func(done, total int64), finish func(ok bool))
	// DetailProgress is WriteProgress with a detail after the bytes (the
	// extended ISO's images and time left); nil shows the bytes through
	// WriteProgress.
	DetailProgress func(name string) (update func(done, total int64, detail string), finish func(ok bool))
}

// detailProgress starts showing the progress of writing the named output
// with a detail; update is never nil.
func (r Reporter) detailProgress(name string) (update func(done, total int64, detail string), finish func(ok bool)) {
	if r.DetailProgress != nil {
		return r.DetailProgress(name)
	}
	up, fin := r.writeProgress(name)
	if up == nil {
		return func(int64, int64, string) {}, fin
	}
	return func(done, total int64, _ string) { up(done, total) }, fin
}

// writeProgress starts showing the progress of writing the named output.
func (r Reporter) writeProgress(name string) (update func(done, total int64), finish func(ok bool)) {
	if r.WriteProgress == nil {
		return nil, func(bool) {}
	}
	return r.WriteProgress(name)
}

func (r Reporter) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// ImageOptions are the command line's choices for the image. The command
// provides them (asset.Store.Provide); when nothing is provided every
// choice is its default.
type ImageOptions struct {
	// BaseISO is --base-iso: a local path or an http(s) URL.
	BaseISO string `json:"baseISO,omitempty"`
	// BaseISOSHA256 is --base-iso-sha256.
	BaseISOSHA256 string `json:"baseISOSHA256,omitempty"`
	// OSImageMirror is --os-image-mirror.
	OSImageMirror string `json:"osImageMirror,omitempty"`
	// CacheDir is --cache-dir: the base ISO cache ("" for
	// baseiso.DefaultCacheDir).
	CacheDir string `json:"cacheDir,omitempty"`
	// Offline is --offline: no download, no registry.
	Offline bool `json:"offline,omitempty"`
	// Strict is --strict: a base ISO with another RHCOS than the release's
	// is an error, not a warning.
	Strict bool `json:"strict,omitempty"`
	// ResetBaseISO is --reset-base-iso: the embedded Ignition config and
	// appended kernel arguments of an already customised base ISO are
	// dropped first.
	ResetBaseISO bool `json:"resetBaseISO,omitempty"`
	// EmbedPayload is --embed-payload: the ISO carries the release
	// payload and every host serves it (docs/airgap.md); EmbedImages are
	// more images to carry (--embed-image, by digest).
	EmbedPayload bool     `json:"embedPayload,omitempty"`
	EmbedImages  []string `json:"embedImages,omitempty"`
	// Report shows progress and notes; it is not part of the value.
	Report Reporter `json:"-"`
	// HoldBaseISO, when set, receives the release of the lock that keeps
	// the cached base ISO from being swapped by another run after it was
	// verified (baseiso.Options.KeepLock); the caller releases it once the
	// outputs are written. Not part of the value.
	HoldBaseISO func(release func()) `json:"-"`
}

// Volatile implements asset.Volatile: the options of one run, not kept.
func (*ImageOptions) Volatile() {}

// Name implements asset.Asset.
func (*ImageOptions) Name() string { return "Image Options" }

// Doing implements asset.Described.
func (*ImageOptions) Doing() string { return "take the image options" }

// Dependencies implements asset.Asset.
func (*ImageOptions) Dependencies() []asset.Asset { return nil }

// Generate implements asset.Asset: nothing given, every default.
func (*ImageOptions) Generate(context.Context, asset.Parents) error { return nil }

// BaseISO is the RHCOS live ISO the agent ISO is built from, found as
// baseiso.Resolve does: --base-iso, the cache, the release's RHCOS stream
// (its URL or --os-image-mirror), or the payload's machine-os-images image
// in the (mirror) registry. An ISO given with --base-iso is checked against
// the RHCOS the release expects.
type BaseISO struct {
	Path   string         `json:"path"`
	Source baseiso.Source `json:"source"`
	// StreamRootfsURL is where the release's CoreOS stream serves the live
	// root file system of this ISO, when the ISO is the stream's own (found
	// in the cache or downloaded and checked by its sha256); else empty.
	StreamRootfsURL string `json:"streamRootfsURL,omitempty"`
}

// Name implements asset.Asset.
func (*BaseISO) Name() string { return "Base ISO Image" }

// Doing implements asset.Described.
func (*BaseISO) Doing() string { return "get the base ISO" }

// Dependencies implements asset.Asset. InstallConfig, PullSecret and
// CABundle give the registry client its mirrors, proxy and credentials
// (see ReleaseClient).
func (*BaseISO) Dependencies() []asset.Asset {
	return []asset.Asset{&ReleasePayload{}, &Architecture{}, &ImageOptions{}, &InstallConfig{}, &PullSecret{}, &CABundle{}, &OCMirror{}}
}

// Volatile implements asset.Volatile: the file is looked for and checked
// on every run, never taken from the state.
func (*BaseISO) Volatile() {}

// Generate implements asset.Asset.
func (a *BaseISO) Generate(ctx context.Context, p asset.Parents) error {
	return a.resolve(ctx, asset.Get[*ReleasePayload](p), asset.Get[*Architecture](p).Arch, asset.Get[*ImageOptions](p),
		func() (*release.Client, error) { return ReleaseClient(p) })
}

// resolve finds the base ISO of release rel for cpu; client builds the
// registry client for the payload's machine-os-images image.
func (a *BaseISO) resolve(ctx context.Context, rel *ReleasePayload, cpu string, o *ImageOptions, client func() (*release.Client, error)) error {
	opts := baseiso.Options{
		BaseISO: o.BaseISO, BaseISOSHA256: o.BaseISOSHA256, Mirror: o.OSImageMirror, Offline: o.Offline,
		CacheDir: o.CacheDir, Arch: cpu, Progress: o.Report.Progress, IsTTY: o.Report.TTY, Logger: o.Report.Log, Stream: rel.Stream,
		KeepLock: o.HoldBaseISO,
	}
	if err := baseISOKnown(rel, o); err != nil {
		return err
	}
	if rel.MachineOSImages != "" && !o.Offline {
		spec := rel.MachineOSImages
		opts.Registry = &baseiso.RegistrySource{Image: spec, Preferred: rel.ReadFromMirror(),
			Stream: func(ctx context.Context, fn func(io.Reader, int64) error) error {
				c, err := client()
				if err != nil {
					return err
				}
				_, err = c.StreamFile(ctx, spec, "coreos/coreos-"+cpu+".iso", fn)
				return err
			}}
	}
	// The store says what failed ("cannot get the base ISO: ..."; Doing).
	base, err := baseiso.Resolve(ctx, opts)
	if err != nil {
		return err
	}
	if base.Source == baseiso.SourcePath || base.Source == baseiso.SourceURL {
		if err := checkISORelease(o.Report.log(), base.Path, opts, rel, o.Strict); err != nil {
			return err
		}
	}
	a.Path, a.Source = base.Path, base.Source
	switch base.Source {
	case baseiso.SourceCache, baseiso.SourceDownload, baseiso.SourceMirror:
		if st, err := baseiso.ParseStream(rel.Stream); err == nil {
			a.StreamRootfsURL, _ = baseiso.PXERootfsURL(st, cpu)
		}
	}
	return nil
}

// baseISOKnown says when no base ISO can be found without --base-iso: the
// release's RHCOS is unknown (--offline), and never another release's ISO
// is taken instead, so the user names it. It needs no download, so the
// commands check it before they build anything (PersistImageTargets).
func baseISOKnown(rel *ReleasePayload, o *ImageOptions) error {
	if len(rel.Stream) != 0 || o.BaseISO != "" {
		return nil
	}
	return fmt.Errorf("the RHCOS live ISO of release %s is unknown (%s): pass --base-iso PATH|URL with that release's RHCOS live ISO; `agentiso release info %s` where its registry is reachable names the file and its sha256",
		rel.PullSpec, rel.streamUnknownWhy(), rel.PullSpec)
}

// checkISORelease compares the RHCOS release in the ISO's volume ID
// ("rhcos-<release>") with the release's stream. Another build of the same
// stream is fine (hosts boot it, then install the release's own RHCOS);
// another stream is a warning, or an error with --strict. With the stream
// unknown (--offline) there is nothing to compare: the ISO is used as given.
func checkISORelease(log *slog.Logger, path string, opts baseiso.Options, rel *ReleasePayload, strict bool) error {
	iso, f, err := isoeditor.OpenFile(path)
	if err != nil {
		return fmt.Errorf("base ISO: %w", err)
	}
	defer f.Close()
	got, ok := strings.CutPrefix(iso.VolumeID(), "rhcos-")
	if len(opts.Stream) == 0 {
		if ok {
			log.Info(fmt.Sprintf("The RHCOS of release %s is unknown (%s): base ISO %s (RHCOS %s) is used as given", rel.PullSpec, rel.streamUnknownWhy(), path, got))
		}
		return nil
	}
	want, err := baseiso.Describe(opts)
	if err != nil {
		return err
	}
	if !ok || got == want.Release {
		return nil
	}
	if baseiso.SameStream(got, want.Release) {
		log.Info(fmt.Sprintf("Base ISO %s is RHCOS %s, another build of the stream of release %s's RHCOS %s; hosts boot it, then install the release's", path, got, rel.PullSpec, want.Release))
		return nil
	}
	msg := fmt.Sprintf("base ISO %s is RHCOS %s, but release %s expects RHCOS %s (stream %s); hosts boot the ISO's RHCOS and then install the release's", path, got, rel.PullSpec, want.Release, want.Stream)
	if strict {
		return fmt.Errorf("%s (--strict); use the ISO %s (sha256 %s)", msg, want.FileName, want.SHA256)
	}
	log.Warn(msg)
	return nil
}
