package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/extiso"
	"github.com/seed-a052040e/agentiso/pkg/ignition"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
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
	ocm := asset.Get[*OCMirror](p)
	if ocm.Resources != nil {
		o.Report.log().Warn("--mirror-from: the cluster resources of "+ocm.Resources.Dir+" are not applied with --embed-payload: they name the registry oc-mirror pushed to, and the hosts pull from their own", "mirror-sets", ocm.digestSources(), "manifests", len(ocm.Resources.Manifests))
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
