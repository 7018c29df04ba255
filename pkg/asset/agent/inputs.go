// Package agent holds the assets of the agent install flow, from the user's
// inputs to the agent ISO, and each command's targets (targets.go).
package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/ignition"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
	"github.com/seed-a052040e/agentiso/pkg/releasepolicy"
)

// Warnings is embedded by assets that collect non-fatal findings.
type Warnings struct {
	Warn []string `json:"warnings,omitempty"`
}

// AssetWarnings returns the findings to show the user.
func (w *Warnings) AssetWarnings() []string { return w.Warn }

func (w *Warnings) addAll(ws []manifests.Warning) {
	for _, x := range ws {
		w.Warn = append(w.Warn, x.String())
	}
}

func readOptional(d asset.Dir, name string) ([]byte, bool, error) {
	b, err := d.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", name, err)
	}
	return b, true, nil
}

// InstallConfig is install-config.yaml, validated and defaulted. It is
// optional: ZTP manifests can stand in for it.
type InstallConfig struct {
	Warnings
	Config *manifests.InstallConfig `json:"config,omitempty"`
	// lines locates fields for cross-file checks made later in the run.
	lines manifests.Lines
}

// Name implements asset.Asset.
func (*InstallConfig) Name() string { return "Install Config" }

// Doing implements asset.Described.
func (*InstallConfig) Doing() string { return "read install-config.yaml" }

// Dependencies implements asset.Asset.
func (*InstallConfig) Dependencies() []asset.Asset { return nil }

// Generate leaves the config absent: it only ever comes from the user.
func (*InstallConfig) Generate(context.Context, asset.Parents) error { return nil }

// Load implements asset.Loader.
func (a *InstallConfig) Load(d asset.Dir) (bool, error) {
	b, ok, err := readOptional(d, assetdir.InstallConfig)
	if !ok || err != nil {
		return false, err
	}
	var ic manifests.InstallConfig
	dec, err := manifests.DecodeStrict(assetdir.InstallConfig, b, &ic)
	if err != nil {
		return false, err
	}
	ic.SetDefaults()
	if err := manifests.ValidateInstallConfig(&ic, dec.Lines); err != nil {
		return false, fmt.Errorf("invalid install-config configuration: %w", err)
	}
	a.addAll(dec.Warnings)
	a.warnIgnored(&ic)
	if len(ic.ImageContentSources) > 0 {
		a.Warn = append(a.Warn, assetdir.InstallConfig+": imageContentSources is deprecated; use imageDigestSources")
	}
	a.Config = &ic
	a.lines = dec.Lines
	return true, nil
}

func (a *InstallConfig) warnIgnored(ic *manifests.InstallConfig) {
	ign := func(path string) {
		a.Warn = append(a.Warn, fmt.Sprintf("%s: %s is ignored by the agent-based installer", assetdir.InstallConfig, path))
	}
	if bm := ic.Platform.BareMetal; bm != nil {
		for _, f := range []struct {
			set  bool
			path string
		}{{bm.LibvirtURI != "", "libvirtURI"}, {bm.BootstrapProvisioningIP != "", "bootstrapProvisioningIP"},
			{bm.ExternalBridge != "", "externalBridge"}, {bm.ProvisioningBridge != "", "provisioningBridge"},
			{len(bm.DefaultMachinePlatform) > 0, "defaultMachinePlatform"}, {bm.BootstrapOSImage != "", "bootstrapOSImage"},
			{bm.ClusterOSImage != "", "clusterOSImage"}, {bm.BootstrapExternalStaticIP != "", "bootstrapExternalStaticIP"},
			{bm.BootstrapExternalStaticGW != "", "bootstrapExternalStaticGateway"}} {
			if f.set {
				ign("platform.baremetal." + f.path)
			}
		}
	}
	if vs := ic.Platform.VSphere; vs != nil {
		if vs.ClusterOSImage != "" {
			ign("platform.vsphere.clusterOSImage")
		}
		if vs.DiskType != "" {
			ign("platform.vsphere.diskType")
		}
		if len(vs.DefaultMachine) > 0 {
			ign("platform.vsphere.defaultMachinePlatform")
		}
	}
	if ic.ControlPlane.Hyperthreading == "Disabled" {
		ign("controlPlane.hyperthreading: Disabled")
	}
	if len(ic.ControlPlane.Platform) > 0 {
		ign("controlPlane.platform")
	}
	for i, c := range ic.Compute {
		if c.Hyperthreading == "Disabled" {
			ign(fmt.Sprintf("compute[%d].hyperthreading: Disabled", i))
		}
		if len(c.Platform) > 0 {
			ign(fmt.Sprintf("compute[%d].platform", i))
		}
	}
	if ic.Publish != "" && ic.Publish != "External" {
		ign("publish: " + ic.Publish)
	}
	if ic.CredentialsMode != "" {
		ign("credentialsMode")
	}
	if len(ic.BootstrapInPlace) > 0 {
		ign("bootstrapInPlace")
	}
}

// AgentConfig is agent-config.yaml, validated. Optional.
type AgentConfig struct {
	Warnings
	Config *manifests.AgentConfig `json:"config,omitempty"`
	// Raw is the file as the user wrote it; it travels into the ISO.
	Raw []byte `json:"raw,omitempty"`
	// lines locates fields for cross-file checks made later in the run.
	lines manifests.Lines
}

// Name implements asset.Asset.
func (*AgentConfig) Name() string { return "Agent Config" }

// Doing implements asset.Described.
func (*AgentConfig) Doing() string { return "read agent-config.yaml" }

// Dependencies implements asset.Asset.
func (*AgentConfig) Dependencies() []asset.Asset { return nil }

// Generate leaves the config absent: it only ever comes from the user.
func (*AgentConfig) Generate(context.Context, asset.Parents) error { return nil }

// Load implements asset.Loader.
func (a *AgentConfig) Load(d asset.Dir) (bool, error) {
	b, ok, err := readOptional(d, assetdir.AgentConfig)
	if !ok || err != nil {
		return false, err
	}
	var ac manifests.AgentConfig
	dec, err := manifests.DecodeStrict(assetdir.AgentConfig, b, &ac)
	if err != nil {
		return false, err
	}
	if err := manifests.ValidateAgentConfig(&ac, dec.Lines); err != nil {
		return false, fmt.Errorf("invalid agent-config configuration: %w", err)
	}
	ac.BootArtifactsBaseURL = strings.TrimSuffix(ac.BootArtifactsBaseURL, "/")
	a.addAll(dec.Warnings)
	a.addAll(manifests.AgentConfigWarnings(&ac, dec.Lines))
	a.Config = &ac
	a.Raw = b
	a.lines = dec.Lines
	return true, nil
}

// ReleaseImage is the OpenShift release the user asked for: --release-image
// (or its environment variable or config-file key, with --release-version
// and --offline), else the spec.releaseImage of the user's
// cluster-manifests/cluster-image-set.yaml. agentiso pins no default
// release (docs/release.md, "Why there is no default release"): with
// neither, Generate fails naming every way to give one. What the payload
// says about itself is ReleasePayload.
type ReleaseImage struct {
	// PullSpec is the reference as the user wrote it.
	PullSpec string `json:"pullSpec"`
	// Version is --release-version (may be empty).
	Version string `json:"version,omitempty"`
	// Offline forbids registry look-ups (--offline).
	Offline bool `json:"offline,omitempty"`
	// Origin is where the release was given: "--release-image",
	// "$AGENTISO_RELEASE_IMAGE", "<config file>:<line>" or
	// "cluster-manifests/cluster-image-set.yaml:<line>". It names the
	// choice in messages and is no part of the release's fingerprint.
	Origin string `json:"-"`
}

// Name implements asset.Asset.
func (*ReleaseImage) Name() string { return "Release Image" }

// Doing says what a failure was doing, in the user's terms.
func (*ReleaseImage) Doing() string { return "determine the OpenShift release" }

// Dependencies implements asset.Asset. When the command line provides the
// release, neither parent is read.
func (*ReleaseImage) Dependencies() []asset.Asset {
	return []asset.Asset{&ReleaseOptions{}, &ClusterImageSetRelease{}}
}

// Volatile implements asset.Volatile: decided again on every run from the
// command line and the ClusterImageSet, never from an older state.
func (*ReleaseImage) Volatile() {}

// Generate takes the release from the user's ClusterImageSet, or fails.
func (r *ReleaseImage) Generate(_ context.Context, p asset.Parents) error {
	o := asset.Get[*ReleaseOptions](p)
	cis := asset.Get[*ClusterImageSetRelease](p)
	if cis.PullSpec == "" {
		return ErrNoRelease
	}
	rel, err := NewReleaseImage(cis.PullSpec)
	if err != nil {
		return fmt.Errorf("%s: spec.releaseImage: %w", cis.Origin, err)
	}
	rel.Version, rel.Offline, rel.Origin = o.Version, o.Offline, cis.Origin
	*r = *rel
	return nil
}

// ErrNoRelease is the error of a build that needs the release and was given
// none.
var ErrNoRelease = errors.New("no OpenShift release given, and agentiso pins no default release: " +
	"pass --release-image with the release's pull spec by digest (or set $AGENTISO_RELEASE_IMAGE, or release-image: in the config file, " +
	"or give a ClusterImageSet in " + assetdir.ClusterImageSet + "); the digest is the \"Pull From:\" line of the release's release.txt " +
	"(mirror.openshift.com/pub/openshift-v4/<arch>/clients/ocp/<version>/release.txt) or the \"release image\" line of " +
	"`openshift-install version` of that release's installer; agentiso supports OpenShift " + releasepolicy.Supported())

// ReleaseOptions are --release-version and --offline when the release
// itself comes from the ClusterImageSet (no --release-image).
type ReleaseOptions struct {
	Version string `json:"version,omitempty"`
	Offline bool   `json:"offline,omitempty"`
}

// Name implements asset.Asset.
func (*ReleaseOptions) Name() string { return "Release Options" }

// Doing implements asset.Described.
func (*ReleaseOptions) Doing() string { return "take the release options" }

// Dependencies implements asset.Asset.
func (*ReleaseOptions) Dependencies() []asset.Asset { return nil }

// Volatile implements asset.Volatile: one run's options.
func (*ReleaseOptions) Volatile() {}

// Generate implements asset.Asset: no options given.
func (*ReleaseOptions) Generate(context.Context, asset.Parents) error { return nil }

// ClusterImageSetRelease is the release the user's
// cluster-manifests/cluster-image-set.yaml names (empty without one).
type ClusterImageSetRelease struct {
	PullSpec string `json:"pullSpec,omitempty"`
	// Origin is "cluster-manifests/cluster-image-set.yaml:<line>".
	Origin string `json:"origin,omitempty"`
}

// Name implements asset.Asset.
func (*ClusterImageSetRelease) Name() string { return "ClusterImageSet Release" }

// Doing implements asset.Described.
func (*ClusterImageSetRelease) Doing() string {
	return "read the release of " + assetdir.ClusterImageSet
}

// Dependencies implements asset.Asset.
func (*ClusterImageSetRelease) Dependencies() []asset.Asset { return nil }

// Volatile implements asset.Volatile: the file is read on every run.
func (*ClusterImageSetRelease) Volatile() {}

// Generate implements asset.Asset: there is no ClusterImageSet.
func (*ClusterImageSetRelease) Generate(context.Context, asset.Parents) error { return nil }

// Load implements asset.Loader: the ClusterImageSet's spec.releaseImage.
// The manifest itself is checked by the ClusterImageSet asset.
func (a *ClusterImageSetRelease) Load(d asset.Dir) (bool, error) {
	b, ok, err := readOptional(d, assetdir.ClusterImageSet)
	if !ok || err != nil {
		return false, err
	}
	var m manifests.ClusterImageSet
	dec, err := manifests.DecodeStrict(assetdir.ClusterImageSet, b, &m)
	if err != nil {
		return false, err
	}
	a.PullSpec, a.Origin = m.Spec.ReleaseImage, assetdir.ClusterImageSet
	if l := dec.Lines["spec.releaseImage"]; l > 0 {
		a.Origin = fmt.Sprintf("%s:%d", assetdir.ClusterImageSet, l)
	}
	return true, nil
}

// NewReleaseImage returns a release override as the user gave it. The
// version is never guessed from the tag: it is read from the payload, or
// taken from version (--release-version), which may be empty.
func NewReleaseImage(pullSpec string) (*ReleaseImage, error) {
	if err := ignition.ValidateImageReference(pullSpec); err != nil {
		return nil, fmt.Errorf("release image %q is not an image pull spec (e.g. quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64): %w", pullSpec, err)
	}
	return &ReleaseImage{PullSpec: pullSpec}, nil
}
