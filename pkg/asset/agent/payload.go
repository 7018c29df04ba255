package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/arch"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/extiso"
	"github.com/seed-a052040e/agentiso/pkg/ignition"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
	"github.com/seed-a052040e/agentiso/pkg/ocmirror"
	"github.com/seed-a052040e/agentiso/pkg/regstore"
)

// EmbeddedPayload is the release payload an extended ISO carries (create
// image --embed-payload, docs/airgap.md): planned from the release's
// manifests, read through the install-config mirrors, and what the hosts
// need to serve it (their registry image, its certificate, the mirrors
// that name it). Not Enabled without the flag.
type EmbeddedPayload struct {
	Enabled bool `json:"enabled"`
	// Images and Bytes measure the payload.
	Images int   `json:"images,omitempty"`
	Bytes  int64 `json:"bytes,omitempty"`
	// RegistryImage is the payload's docker-registry, by digest.
	RegistryImage string `json:"registryImage,omitempty"`
	// Sources map the payload's source repositories to the hosts'
	// registry.
	Sources []manifests.ImageDigestSource `json:"sources,omitempty"`
	// Manifests are the cluster manifests the payload adds (the
	// InternalReleaseImage and the ImageDigestMirrorSet).
	Manifests []ignition.Manifest `json:"-"`
	certPEM   []byte
	keyPEM    []byte
	plan      *regstore.Plan
}

// Name implements asset.Asset.
func (*EmbeddedPayload) Name() string { return "Embedded Release Payload" }

// Doing implements asset.Described.
func (*EmbeddedPayload) Doing() string { return "plan the release payload the ISO carries" }

// Dependencies implements asset.Asset.
func (*EmbeddedPayload) Dependencies() []asset.Asset {
	return []asset.Asset{&ReleasePayload{}, &ImageOptions{}, &InstallConfig{}, &PullSecret{}, &CABundle{}, &Architecture{}, &OCMirror{}}
}

// Volatile implements asset.Volatile: planned on every run.
func (*EmbeddedPayload) Volatile() {}

// Generate implements asset.Asset.
func (a *EmbeddedPayload) Generate(ctx context.Context, p asset.Parents) error {
	o := asset.Get[*ImageOptions](p)
	if !o.EmbedPayload {
		if len(o.EmbedImages) > 0 {
			return errors.New("--embed-image needs --embed-payload: the images ride on the extended ISO")
		}
		return nil
	}
	if o.Offline {
		return errors.New("--embed-payload reads the release payload from its registry (or a mirror): it cannot be used with --offline")
	}
	if ic := asset.Get[*InstallConfig](p).Config; ic != nil && !ic.FeatureGateOn(extiso.FeatureGate) {
		return fmt.Errorf("--embed-payload: install-config.yaml does not enable the %s feature gate: the release's installer makes the node-local registry's certificate and credentials only behind it (enabled by featureSet TechPreviewNoUpgrade or DevPreviewNoUpgrade); add featureSet: TechPreviewNoUpgrade to install-config.yaml (a cluster with it cannot be upgraded)", extiso.FeatureGate)
	}
	rel := asset.Get[*ReleasePayload](p)
	c, err := ReleaseClient(p)
	if err != nil {
		return err
	}
	full, err := c.Resolve(ctx, rel.Pinned)
	if err != nil {
		return fmt.Errorf("--embed-payload: %w", err)
	}
	plan, err := extiso.PlanRelease(ctx, c, full, o.EmbedImages)
	if err != nil {
		return fmt.Errorf("--embed-payload: %w", err)
	}
	srcs, err := extiso.Sources(full, o.EmbedImages)
	if err != nil {
		return fmt.Errorf("--embed-payload: %w", err)
	}
	ocm := asset.Get[*OCMirror](p)
	if ocm.store != nil {
		more, err := embedStore(ctx, o, ocm, plan, full.Arch)
		if err != nil {
			return fmt.Errorf("--embed-payload: %w", err)
		}
		srcs = mergeSources(srcs, more)
	}
	var names []string
	if ic := asset.Get[*InstallConfig](p).Config; ic != nil {
		names = append(names, "api-int."+ic.ClusterName()+"."+ic.BaseDomain)
	}
	a.certPEM, a.keyPEM, err = extiso.RegistryCert(names, time.Now())
	if err != nil {
		return fmt.Errorf("--embed-payload: the registry certificate: %w", err)
	}
	a.Enabled, a.plan, a.Sources = true, plan, srcs
	a.Images, a.Bytes = plan.Images(), plan.Bytes()
	a.RegistryImage = full.Components[extiso.RegistryComponent]
	a.Manifests = []ignition.Manifest{
		{FileName: "internalreleaseimage.yaml", Contents: extiso.InternalReleaseImageManifest(full.Version, full.Arch)},
		{FileName: "idms-agent-embedded-payload.yaml", Contents: extiso.ImageDigestMirrorSetManifest(srcs)},
	}
	if ocm.Resources != nil {
		// They name the registry oc-mirror pushed to; the hosts pull from
		// their own (its mirror sets are in srcs, from embedStore).
		more, unserved, err := ocm.Resources.EmbeddedManifests(plan, extiso.LocalRegistry)
		if err != nil {
			return fmt.Errorf("--mirror-from: %w", err)
		}
		for _, m := range more {
			a.Manifests = append(a.Manifests, ignition.Manifest{FileName: m.FileName, Contents: m.Contents})
		}
		o.Report.log().Info("The cluster resources of "+ocm.Resources.Dir+" will name the embedded registry", "manifests", len(more), "served-at", extiso.LocalRegistry)
		if len(unserved) > 0 {
			names := make([]string, 0, len(unserved))
			for _, u := range unserved {
				names = append(names, u.String())
			}
			o.Report.log().Warn("--mirror-from: these cluster resources name images the ISO does not embed: left out (mirror the images with the oc-mirror run that made "+ocm.Resources.Dir+", or give them by digest with --embed-image)", "resources", names)
		}
	}
	from := "the registry"
	if ocm.Store != "" {
		from = ocm.Store
	}
	o.Report.log().Info("The release payload will be embedded in the ISO", "images", a.Images, "bytes", a.Bytes, "from", from, "served-at", extiso.LocalRegistry)
	return nil
}

// Payload is the hosts' side of it for the Ignition config, nil when not
// Enabled.
func (a *EmbeddedPayload) Payload() *ignition.Payload {
	if !a.Enabled {
		return nil
	}
	return &ignition.Payload{RegistryImage: a.RegistryImage, CertPEM: a.certPEM, KeyPEM: a.keyPEM}
}

// embedStore plans every image of the --mirror-from store beside the
// release (the store is what the user's ImageSetConfiguration mirrored:
// operators' catalogs, bundles and images, additional images), each blob
// once, every digest checked, under oc-mirror's repositories and tags. The
// mirror sets naming them come from the cluster resources' mirror sets
// (their mirrors end in oc-mirror's paths); images no mirror set names
// are served under their paths only, with a warning.
func embedStore(ctx context.Context, o *ImageOptions, ocm *OCMirror, plan *regstore.Plan, rpmArch string) ([]manifests.ImageDigestSource, error) {
	goarch, ok := arch.Go(rpmArch)
	if !ok {
		return nil, fmt.Errorf("architecture %q", rpmArch)
	}
	release := map[string]bool{extiso.ReleaseRepository: true, extiso.ComponentRepository: true, extiso.BundleRepository: true}
	added, skipped, err := ocm.store.Add(ctx, plan, goarch, func(repo string) bool { return release[repo] })
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var repos []string
	for _, im := range added {
		if !seen[im.Repo] {
			seen[im.Repo] = true
			repos = append(repos, im.Repo)
		}
	}
	var ds []manifests.ImageDigestSource
	if ocm.Resources != nil {
		ds = ocm.Resources.DigestSources
	}
	srcs, unnamed := ocmirror.EmbeddedSources(ds, repos, extiso.LocalRegistry)
	if len(added) > 0 {
		o.Report.log().Info("The images of "+ocm.Store+" will be embedded in the ISO beside the release", "images", len(added), "repositories", len(repos), "mirror-sets", len(srcs))
	}
	if len(unnamed) > 0 {
		o.Report.log().Warn("--mirror-from: no mirror set names these embedded repositories (a disk-to-mirror workspace's cluster-resources would): they are served at "+extiso.LocalRegistry+" under these paths, but nothing redirects pulls of their sources there", "repositories", unnamed)
	}
	if len(skipped) > 0 {
		names := make([]string, 0, len(skipped))
		for _, im := range skipped {
			names = append(names, im.String())
		}
		o.Report.log().Warn("--mirror-from: these manifest lists hold no image of the cluster's architecture the store has: not embedded", "arch", rpmArch, "images", names)
	}
	return srcs, nil
}

// mergeSources adds more to srcs, a source already there keeping its
// mirror.
func mergeSources(srcs, more []manifests.ImageDigestSource) []manifests.ImageDigestSource {
	have := map[string]bool{}
	for _, s := range srcs {
		have[s.Source] = true
	}
	for _, s := range more {
		if !have[s.Source] {
			have[s.Source] = true
			srcs = append(srcs, s)
		}
	}
	return srcs
}
