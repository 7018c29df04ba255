// Package agent holds the assets of the agent install flow, from the user's
// inputs to the agent ISO, and each command's targets (targets.go).
package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/seed-a052040e/agentiso/data"
	"github.com/seed-a052040e/agentiso/pkg/arch"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/ignition"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
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
	a.Config = &ac
	a.Raw = b
	a.lines = dec.Lines
	return true, nil
}

// ReleaseImage is the OpenShift release the user asked for: the pinned
// default of this build, or --release-image (with --release-version and
// --offline). What the payload says about itself is ReleasePayload.
type ReleaseImage struct {
	// PullSpec is the reference as the user wrote it (or the default's).
	PullSpec string `json:"pullSpec"`
	// Version is --release-version, or the pinned default's version.
	Version string `json:"version,omitempty"`
	// Arch is the pinned default's architecture; empty for a user release.
	Arch string `json:"arch,omitempty"`
	// Default is true for the release pinned in this build.
	Default bool `json:"default,omitempty"`
	// Offline forbids registry look-ups (--offline).
	Offline bool `json:"offline,omitempty"`
}

// Name implements asset.Asset.
func (*ReleaseImage) Name() string { return "Release Image" }

// Dependencies implements asset.Asset.
func (*ReleaseImage) Dependencies() []asset.Asset { return nil }

// Generate uses the default embedded in the binary.
func (r *ReleaseImage) Generate(context.Context, asset.Parents) error {
	d, err := DefaultRelease()
	if err != nil {
		return err
	}
	*r = *d
	return nil
}

// DefaultRelease is the release pinned in this build
// (data/release/default-release.txt: "<version> <arch> <pull spec>").
func DefaultRelease() (*ReleaseImage, error) {
	return parsePinnedRelease(data.ReleaseImage)
}

var exactVersion = regexp.MustCompile(`^\d+\.\d+\.\d+$`)

// parsePinnedRelease reads the pinned default's line. The pull spec must be
// a digest reference: hosts pull the release through the install-config
// mirrors, which are digest-only and never serve a tag.
func parsePinnedRelease(line string) (*ReleaseImage, error) {
	f := strings.Fields(line)
	if len(f) != 3 {
		return nil, fmt.Errorf("embedded release image %q is malformed (want \"<version> <arch> <pull spec>\")", line)
	}
	version, a, spec := f[0], f[1], f[2]
	if !exactVersion.MatchString(version) {
		return nil, fmt.Errorf("embedded release image: version %q is not an exact x.y.z version", version)
	}
	if !slices.Contains(arch.Supported(), a) {
		return nil, fmt.Errorf("embedded release image: architecture %q is not one of %s", a, strings.Join(arch.Supported(), ", "))
	}
	ref, err := name.ParseReference(spec, name.StrictValidation)
	if err != nil {
		return nil, fmt.Errorf("embedded release image %q is not an image reference: %w", spec, err)
	}
	if _, ok := ref.(name.Digest); !ok {
		return nil, fmt.Errorf("embedded release image %q must be a digest reference (repository@sha256:...), not a tag: digest-only mirrors never serve a tag", spec)
	}
	return &ReleaseImage{Version: version, Arch: a, PullSpec: spec, Default: true}, nil
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
