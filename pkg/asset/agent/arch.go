package agent

import (
	"context"
	"fmt"

	"github.com/seed-a052040e/agentiso/pkg/arch"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
)

// Architecture is the cluster's CPU architecture in RPM spelling: the
// InfraEnv's spec.cpuArchitecture, else arch.Default. The release, the base
// ISO and the ISO's file name follow it. It is read where the InfraEnv's
// comes from, without generating the InfraEnv (whose noProxy needs the
// rendezvous IP, which release info has no need of): the user's
// cluster-manifests/infraenv.yaml, else install-config's
// controlPlane.architecture, which the generated InfraEnv carries.
type Architecture struct {
	Arch string `json:"arch"`
}

// Name implements asset.Asset.
func (*Architecture) Name() string { return "CPU Architecture" }

// Doing implements asset.Described.
func (*Architecture) Doing() string { return "determine the CPU architecture" }

// Dependencies implements asset.Asset.
func (*Architecture) Dependencies() []asset.Asset {
	return []asset.Asset{&UserInfraEnv{}, &InstallConfig{}}
}

// Generate implements asset.Asset.
func (a *Architecture) Generate(_ context.Context, p asset.Parents) error {
	cpu, from := "", ""
	if ie := asset.Get[*UserInfraEnv](p).Manifest; ie != nil {
		cpu, from = ie.Spec.CPUArchitecture, assetdir.InfraEnv+": spec.cpuArchitecture"
	} else if ic := asset.Get[*InstallConfig](p).Config; ic != nil && ic.ControlPlane != nil {
		cpu, from = ic.ControlPlane.Architecture, assetdir.InstallConfig+": controlPlane.architecture"
	}
	r, err := arch.Normalize(cpu)
	if err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	a.Arch = r
	return nil
}

// UserInfraEnv is the user's cluster-manifests/infraenv.yaml, read and
// checked as the InfraEnv asset reads it but without the InfraEnv's
// parents; Manifest is nil when there is none, or when the file is the one
// agentiso wrote, unchanged (asset.Viewer).
type UserInfraEnv struct {
	Manifest *manifests.InfraEnv `json:"-"`
}

// Name implements asset.Asset.
func (*UserInfraEnv) Name() string { return "User InfraEnv" }

// Doing implements asset.Described: the InfraEnv asset's words, whose
// load this is.
func (*UserInfraEnv) Doing() string { return (&InfraEnv{}).Doing() }

// Dependencies implements asset.Asset.
func (*UserInfraEnv) Dependencies() []asset.Asset { return nil }

// Volatile implements asset.Volatile: the file is read on every run.
func (*UserInfraEnv) Volatile() {}

// Views implements asset.Viewer.
func (*UserInfraEnv) Views() asset.Asset { return &InfraEnv{} }

// ViewedPaths implements asset.Viewer.
func (*UserInfraEnv) ViewedPaths() []string { return []string{assetdir.InfraEnv} }

// Generate implements asset.Asset: the user supplied no InfraEnv.
func (*UserInfraEnv) Generate(context.Context, asset.Parents) error { return nil }

// Load implements asset.Loader. Its warnings are the InfraEnv asset's to
// report.
func (a *UserInfraEnv) Load(d asset.Dir) (bool, error) {
	var ie InfraEnv
	found, err := ie.Load(d)
	if found && err == nil {
		a.Manifest = ie.Manifest
	}
	return found, err
}
