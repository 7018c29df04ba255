package agent

import (
	"context"
	"fmt"

	"github.com/seed-a052040e/agentiso/pkg/arch"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

// Architecture is the cluster's CPU architecture in RPM spelling: the
// InfraEnv's spec.cpuArchitecture (from controlPlane.architecture), else
// arch.Default. The release, the base ISO and the ISO's file name follow it.
type Architecture struct {
	Arch string `json:"arch"`
}

// Name implements asset.Asset.
func (*Architecture) Name() string { return "CPU Architecture" }

// Doing implements asset.Described.
func (*Architecture) Doing() string { return "determine the CPU architecture" }

// Dependencies implements asset.Asset.
func (*Architecture) Dependencies() []asset.Asset { return []asset.Asset{&InfraEnv{}} }

// Generate implements asset.Asset.
func (a *Architecture) Generate(_ context.Context, p asset.Parents) error {
	cpu := ""
	if ie := asset.Get[*InfraEnv](p).Manifest; ie != nil {
		cpu = ie.Spec.CPUArchitecture
	}
	r, err := arch.Normalize(cpu)
	if err != nil {
		return fmt.Errorf("%s: spec.cpuArchitecture: %w", assetdir.InfraEnv, err)
	}
	a.Arch = r
	return nil
}
