package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
)

// RegistriesConf is mirror/registries.conf: where hosts pull images from.
type RegistriesConf struct {
	Warnings
	Conf string `json:"conf"`
	// Mirrored is true when some mirror covers the release image.
	Mirrored bool `json:"mirrored"`
}

// Name implements asset.Asset.
func (*RegistriesConf) Name() string { return "Mirror Registries Config" }

// Doing implements asset.Described.
func (*RegistriesConf) Doing() string {
	return "get the mirror configuration " + assetdir.RegistriesConf
}

// Dependencies implements asset.Asset.
func (*RegistriesConf) Dependencies() []asset.Asset {
	return []asset.Asset{&InstallConfig{}, &ReleaseImage{}, &OCMirror{}}
}

// Generate implements asset.Asset.
func (a *RegistriesConf) Generate(_ context.Context, p asset.Parents) error {
	ic := asset.Get[*InstallConfig](p).Config
	var sources []manifests.ImageDigestSource
	if ic != nil {
		sources = ic.MirrorSources()
	}
	if m := asset.Get[*OCMirror](p); m.Resources != nil {
		// oc-mirror's mirror sets, as if install-config.yaml named them
		sources = append(append([]manifests.ImageDigestSource(nil), sources...), m.Resources.DigestSources...)
	}
	a.Conf = manifests.GenerateRegistriesConf(sources)
	rel := asset.Get[*ReleaseImage](p).PullSpec
	a.Mirrored = manifests.MirrorCovers(sources, rel)
	if len(sources) > 0 && !a.Mirrored {
		a.Warn = append(a.Warn, fmt.Sprintf("%s: imageDigestSources should have at least one source matching the release image %s; hosts will try to pull it from the internet", assetdir.InstallConfig, rel))
	}
	return nil
}

// Load implements asset.Loader.
func (a *RegistriesConf) Load(d asset.Dir) (bool, error) {
	b, ok, err := readOptional(d, assetdir.RegistriesConf)
	if !ok || err != nil {
		return false, err
	}
	a.Conf = string(b)
	locs := manifests.RegistriesConfLocations(a.Conf)
	a.Mirrored = len(locs) > 0
	if len(locs) == 0 && strings.Contains(a.Conf, "[[registry]]") {
		a.Warn = append(a.Warn, "Location key not found in "+assetdir.RegistriesConf)
	}
	return true, nil
}

// Files implements asset.Writable.
func (a *RegistriesConf) Files() ([]asset.File, error) {
	return []asset.File{{Path: assetdir.RegistriesConf, Data: []byte(a.Conf), Mode: assetdir.Mode(assetdir.RegistriesConf)}}, nil
}

// CABundle is mirror/ca-bundle.crt: the mirror registry's CA (empty when
// there is none).
type CABundle struct {
	PEM string `json:"pem"`
}

// Name implements asset.Asset.
func (*CABundle) Name() string { return "Mirror Registries Certificate File" }

// Doing implements asset.Described.
func (*CABundle) Doing() string { return "get the mirror registries' CA bundle " + assetdir.CABundle }

// Dependencies implements asset.Asset.
func (*CABundle) Dependencies() []asset.Asset { return []asset.Asset{&InstallConfig{}} }

// Generate implements asset.Asset.
func (a *CABundle) Generate(_ context.Context, p asset.Parents) error {
	if ic := asset.Get[*InstallConfig](p).Config; ic != nil {
		a.PEM = ic.AdditionalTrustBundle
	}
	return nil
}

// Load implements asset.Loader.
func (a *CABundle) Load(d asset.Dir) (bool, error) {
	b, ok, err := readOptional(d, assetdir.CABundle)
	if !ok || err != nil {
		return false, err
	}
	if len(b) > 0 {
		if err := manifests.ValidateCABundle(b); err != nil {
			return false, fmt.Errorf("%s: %w", assetdir.CABundle, err)
		}
	}
	a.PEM = string(b)
	return true, nil
}

// Files implements asset.Writable.
func (a *CABundle) Files() ([]asset.File, error) {
	return []asset.File{{Path: assetdir.CABundle, Data: []byte(a.PEM), Mode: assetdir.Mode(assetdir.CABundle)}}, nil
}
