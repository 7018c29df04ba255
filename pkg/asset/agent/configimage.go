package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/configimage"
	"github.com/seed-a052040e/agentiso/pkg/ignition"
)

// ConfigImage is the config image, agentconfig.noarch.iso (0600): the
// files of the cluster's full Ignition config that belong to the cluster
// (ignition.ConfigImageFiles), for a host booted from the generic ISO
// (docs/unconfigured.md). It has the parents of AgentIgnition, and
// AgentIgnition itself, so its inputs are validated exactly as for `create
// image`.
type ConfigImage struct {
	Warnings
	// Members is how many files the image carries.
	Members int `json:"members"`
	// Info is what the host checks the image against.
	Info configimage.Info `json:"info"`

	iso []byte
}

// Name implements asset.Asset.
func (*ConfigImage) Name() string { return "Agent Config ISO" }

// Doing implements asset.Described.
func (*ConfigImage) Doing() string { return "build the config image" }

// Dependencies implements asset.Asset.
func (*ConfigImage) Dependencies() []asset.Asset {
	return append([]asset.Asset{&AgentIgnition{}}, (&AgentIgnition{}).Dependencies()...)
}

// Volatile implements asset.Volatile: built on every run (it is small),
// from the credentials kept in the state.
func (*ConfigImage) Volatile() {}

// Generate implements asset.Asset.
func (a *ConfigImage) Generate(_ context.Context, p asset.Parents) error {
	in, err := ignitionInput(p)
	if err != nil {
		return err
	}
	files, err := ignition.ConfigImageFiles(in)
	if err != nil {
		return fmt.Errorf("build the cluster's ignition: %w", err)
	}
	cpu, err := ignition.ReleaseCPU(in.Arch)
	if err != nil {
		return err
	}
	a.Info = configimage.Info{ReleaseImage: in.ReleaseImage, ReleaseVersion: in.ReleaseVersion, Arch: cpu,
		Cluster: in.ClusterName + "." + in.BaseDomain, RendezvousIP: normalIP(in.RendezvousIP), CreatedBy: "agentiso"}
	members := make([]configimage.Member, len(files))
	for i, f := range files {
		members[i] = configimage.Member{Path: f.Path, Mode: int64(f.Mode), Data: f.Contents}
	}
	archive, err := configimage.Archive(members, a.Info)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := configimage.WriteISO(&buf, archive); err != nil {
		return err
	}
	a.iso, a.Members = buf.Bytes(), len(members)
	// What stays with the generic ISO: a different value here has no
	// effect on the host.
	if strings.Contains(asset.Get[*RegistriesConf](p).Conf, "[[registry.mirror]]") {
		a.Warn = append(a.Warn, "the config image does not carry the mirror configuration (imageDigestSources, "+assetdir.RegistriesConf+"): the generic ISO's is used; build the generic ISO with the same mirrors")
	}
	if len(in.CABundle) > 0 {
		a.Warn = append(a.Warn, "the config image does not carry additionalTrustBundle: the generic ISO's trust bundle is used; build the generic ISO with the same "+assetdir.CABundle)
	}
	if len(in.NTPSources) > 0 {
		a.Warn = append(a.Warn, "the config image does not carry additionalNTPSources: the generic ISO's are used (its InfraEnv spec.additionalNTPSources)")
	}
	return nil
}

// Files implements asset.Writable: the image (0600) and its .sha256 in
// sha256sum's format, as every ISO agentiso writes has (agentiso serve
// serves a file only when it matches it), each written to a temporary
// name and renamed by the store.
func (a *ConfigImage) Files() ([]asset.File, error) {
	if a.iso == nil {
		return nil, fmt.Errorf("the config image was not built in this run")
	}
	sum := sha256.Sum256(a.iso)
	line := hex.EncodeToString(sum[:]) + "  " + path.Base(assetdir.ConfigImage) + "\n"
	return []asset.File{
		{Path: assetdir.ConfigImage, Data: a.iso, Mode: assetdir.Mode(assetdir.ConfigImage)},
		{Path: assetdir.ConfigImage + ".sha256", Data: []byte(line), Mode: assetdir.Public},
	}, nil
}

// Size is the image's size in bytes.
func (a *ConfigImage) Size() int { return len(a.iso) }
