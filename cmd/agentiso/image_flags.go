package main

import (
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/seed-a052040e/agentiso/internal/console"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/baseiso"
)

// addCacheDirFlag declares --cache-dir, the base ISO cache.
func addCacheDirFlag(f *pflag.FlagSet, dir *string) {
	f.StringVar(dir, "cache-dir", "", "directory of the base ISO cache (default $XDG_CACHE_HOME/agentiso/image_cache: ~/.cache/agentiso/image_cache, ~/Library/Caches/agentiso/image_cache on macOS)")
}

// addFlags defines the flags create image and create pxe-files share.
func (o *imageOptions) addFlags(f *pflag.FlagSet) {
	addReleaseFlags(f, &o.release, false)
	f.StringVar(&o.baseISO, "base-iso", "", "RHCOS live ISO to build from: a local path or an http(s) URL (env "+baseiso.EnvBaseISO+")")
	f.StringVar(&o.baseISOSHA, "base-iso-sha256", "", "expected sha256 of --base-iso (verified when given)")
	f.StringVar(&o.mirror, "os-image-mirror", "", "base URL of a local web server serving the release's RHCOS live ISO by its file name")
	addCacheDirFlag(f, &o.cacheDir)
	f.BoolVar(&o.regenerate, regenerateCredentialsFlag, false, "generate new keys, tokens, CAs and password, replacing those in auth/ and the state (hosts must then boot the new ISO)")
	f.BoolVar(&o.release.Offline, "offline", false, "never download the base ISO nor contact a registry: the release must be given by digest with --release-version, and the base ISO with --base-iso")
	f.BoolVar(&o.strict, "strict", false, "fail (instead of warning) when the base ISO's RHCOS version differs from the release's RHCOS stream")
	f.StringVar(&o.release.MirrorFrom, "mirror-from", "", "an oc-mirror v2 output directory: its images (archives mirror_000001.tar, ... or docker/registry/v2) are read instead of a registry's, its working-dir/cluster-resources (mirror sets, catalogs, signatures) applied to the install (docs/airgap.md)")
	f.BoolVar(&o.resetBase, "reset-base-iso", false, "accept a --base-iso that was already customised (e.g. an agent ISO): drop its embedded Ignition config and appended kernel arguments first")
}

// assetOptions hands the flags, and where progress goes, to the image
// assets. Progress is info-level output: below --log-level info there is
// none.
func (o *imageOptions) assetOptions(g *globals) *agent.ImageOptions {
	opts := &agent.ImageOptions{
		BaseISO: o.baseISO, BaseISOSHA256: o.baseISOSHA, OSImageMirror: o.mirror, CacheDir: o.cacheDir, Offline: o.release.Offline,
		Strict: o.strict, ResetBaseISO: o.resetBase, EmbedPayload: o.embedPayload, EmbedImages: o.embedImages,
		Report: agent.Reporter{Log: g.log},
	}
	// Progress goes to the terminal only, at its level (the debug log in
	// --dir, which g.log also feeds, takes no progress lines).
	if lv, err := console.ParseLevel(g.logLevel); err != nil || lv > slog.LevelInfo {
		return opts
	}
	t := console.Inspect(g.errOut)
	opts.Report.Progress, opts.Report.TTY = console.NewLevelWriter(g.errOut, slog.LevelInfo, t.Colour), t.TTY
	opts.Report.WriteProgress = func(name string) (func(done, total int64), func(ok bool)) {
		p := console.NewWriteProgress(g.errOut, t, name)
		return p.Update, p.Done
	}
	opts.Report.DetailProgress = func(name string) (func(done, total int64, detail string), func(ok bool)) {
		p := console.NewWriteProgress(g.errOut, t, name)
		return p.UpdateDetail, p.Done
	}
	return opts
}
