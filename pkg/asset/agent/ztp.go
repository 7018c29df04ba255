package agent

import (
	"bytes"
	"context"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
)

// AgentHosts is the list of machines, from agent-config or install-config.
type AgentHosts struct {
	Warnings
	Hosts []manifests.Host `json:"hosts,omitempty"`
}

// Name implements asset.Asset.
func (*AgentHosts) Name() string { return "Agent Hosts" }

// Dependencies implements asset.Asset.
func (*AgentHosts) Dependencies() []asset.Asset {
	return []asset.Asset{&InstallConfig{}, &AgentConfig{}}
}

// Generate implements asset.Asset.
func (a *AgentHosts) Generate(_ context.Context, p asset.Parents) error {
	ic := asset.Get[*InstallConfig](p).Config
	ac := asset.Get[*AgentConfig](p).Config
	hosts, warns := manifests.ResolveHosts(ic, ac)
	a.addAll(warns)
	a.Hosts = hosts
	return nil
}

// marshalYAML renders a manifest the way every generated file looks.
func marshalYAML(v any) ([]byte, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode YAML: %w", err)
	}
	return b, nil
}

// loadOne decodes a single-document manifest file if present.
func loadOne(d asset.Dir, file string, out any) (bool, manifests.Lines, []manifests.Warning, error) {
	b, ok, err := readOptional(d, file)
	if !ok || err != nil {
		return false, nil, nil, err
	}
	dec, err := manifests.DecodeStrict(file, b, out)
	if err != nil {
		return false, nil, nil, err
	}
	return true, dec.Lines, dec.Warnings, nil
}

func needInstallConfig(p asset.Parents, file string) (*manifests.InstallConfig, error) {
	ic := asset.Get[*InstallConfig](p).Config
	if ic == nil {
		return nil, fmt.Errorf("%w: %s: add install-config.yaml (and agent-config.yaml), or supply this file", asset.ErrMissingInput, file)
	}
	return ic, nil
}

// PullSecret is cluster-manifests/pull-secret.yaml.
type PullSecret struct {
	Warnings
	Secret *manifests.Secret `json:"secret,omitempty"`
}

// Name implements asset.Asset.
func (*PullSecret) Name() string { return "Agent PullSecret" }

// Dependencies implements asset.Asset.
func (*PullSecret) Dependencies() []asset.Asset { return []asset.Asset{&InstallConfig{}} }

// Generate implements asset.Asset.
func (a *PullSecret) Generate(_ context.Context, p asset.Parents) error {
	ic, err := needInstallConfig(p, manifests.PullSecretFile)
	if err != nil {
		return err
	}
	a.Secret = manifests.GeneratePullSecret(ic)
	return nil
}

// Load implements asset.Loader.
func (a *PullSecret) Load(d asset.Dir) (bool, error) {
	var s manifests.Secret
	ok, lines, warns, err := loadOne(d, manifests.PullSecretFile, &s)
	if !ok || err != nil {
		return false, err
	}
	manifests.NormalizeSecret(&s)
	if err := manifests.ValidateSecret(&s, lines); err != nil {
		return false, fmt.Errorf("invalid PullSecret configuration: %w", err)
	}
	a.addAll(warns)
	a.Secret = &s
	return true, nil
}

// Files implements asset.Writable; the file holds a secret, so 0600.
func (a *PullSecret) Files() []asset.File {
	b, err := marshalYAML(a.Secret)
	if err != nil || a.Secret == nil {
		return nil
	}
	return []asset.File{{Path: manifests.PullSecretFile, Data: b, Mode: 0o600}}
}

// NMStateConfigs is cluster-manifests/nmstateconfig.yaml (one document per
// host with static networking; absent when no host has any).
type NMStateConfigs struct {
	Warnings
	Configs []manifests.NMStateConfig `json:"configs,omitempty"`
	lines   []manifests.Lines
}

// Name implements asset.Asset.
func (*NMStateConfigs) Name() string { return "NMState Config" }

// Dependencies implements asset.Asset.
func (*NMStateConfigs) Dependencies() []asset.Asset {
	return []asset.Asset{&InstallConfig{}, &AgentHosts{}}
}

// Generate implements asset.Asset.
func (a *NMStateConfigs) Generate(_ context.Context, p asset.Parents) error {
	ic := asset.Get[*InstallConfig](p).Config
	if ic == nil {
		return nil // optional without install-config
	}
	a.Configs = manifests.GenerateNMStateConfigs(ic, asset.Get[*AgentHosts](p).Hosts)
	return nil
}

// Load implements asset.Loader.
func (a *NMStateConfigs) Load(d asset.Dir) (bool, error) {
	b, ok, err := readOptional(d, manifests.NMStateConfigFile)
	if !ok || err != nil {
		return false, err
	}
	outs, infos, err := manifests.DecodeStrictAll(manifests.NMStateConfigFile, b, func() any { return &manifests.NMStateConfig{} })
	if err != nil {
		return false, fmt.Errorf("could not decode YAML for %s: %w", manifests.NMStateConfigFile, err)
	}
	for i, o := range outs {
		a.Configs = append(a.Configs, *o.(*manifests.NMStateConfig))
		a.lines = append(a.lines, infos[i].Lines)
		a.addAll(infos[i].Warnings)
	}
	return true, nil
}

// Files implements asset.Writable.
func (a *NMStateConfigs) Files() []asset.File {
	if len(a.Configs) == 0 {
		return nil
	}
	var buf bytes.Buffer
	for i := range a.Configs {
		b, err := marshalYAML(&a.Configs[i])
		if err != nil {
			return nil
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return []asset.File{{Path: manifests.NMStateConfigFile, Data: buf.Bytes(), Mode: 0o644}}
}

// RendezvousIP is the address of node zero, the host that runs the
// temporary assisted-service.
type RendezvousIP struct {
	IP string `json:"ip"`
}

// Name implements asset.Asset.
func (*RendezvousIP) Name() string { return "Rendezvous IP" }

// Dependencies implements asset.Asset.
func (*RendezvousIP) Dependencies() []asset.Asset {
	return []asset.Asset{&AgentConfig{}, &AgentHosts{}, &NMStateConfigs{}}
}

// Generate implements asset.Asset.
func (a *RendezvousIP) Generate(_ context.Context, p asset.Parents) error {
	configured := ""
	if ac := asset.Get[*AgentConfig](p).Config; ac != nil {
		configured = ac.RendezvousIP
	}
	ip, err := manifests.ChooseRendezvousIP(configured, asset.Get[*AgentHosts](p).Hosts, asset.Get[*NMStateConfigs](p).Configs)
	if err != nil {
		return err
	}
	a.IP = ip
	return nil
}

// Files implements asset.Writable: the rendezvousIP file next to the ISO.
func (a *RendezvousIP) Files() []asset.File {
	return []asset.File{{Path: RendezvousIPFile, Data: []byte(a.IP), Mode: 0o644}}
}

// InfraEnv is cluster-manifests/infraenv.yaml.
type InfraEnv struct {
	Warnings
	InfraEnv *manifests.InfraEnv `json:"infraEnv,omitempty"`
}

// Name implements asset.Asset.
func (*InfraEnv) Name() string { return "InfraEnv Config" }

// Dependencies implements asset.Asset.
func (*InfraEnv) Dependencies() []asset.Asset {
	return []asset.Asset{&InstallConfig{}, &AgentConfig{}, &RendezvousIP{}}
}

// Generate implements asset.Asset.
func (a *InfraEnv) Generate(_ context.Context, p asset.Parents) error {
	ic, err := needInstallConfig(p, manifests.InfraEnvFile)
	if err != nil {
		return err
	}
	a.InfraEnv = manifests.GenerateInfraEnv(ic, asset.Get[*AgentConfig](p).Config, asset.Get[*RendezvousIP](p).IP)
	return nil
}

// Load implements asset.Loader.
func (a *InfraEnv) Load(d asset.Dir) (bool, error) {
	var ie manifests.InfraEnv
	ok, lines, warns, err := loadOne(d, manifests.InfraEnvFile, &ie)
	if !ok || err != nil {
		return false, err
	}
	manifests.NormalizeInfraEnv(&ie)
	if err := manifests.ValidateInfraEnv(&ie, lines); err != nil {
		return false, fmt.Errorf("invalid InfraEnv configuration: %w", err)
	}
	a.addAll(warns)
	a.InfraEnv = &ie
	return true, nil
}

// Files implements asset.Writable. The InfraEnv can carry proxy
// credentials (spec.proxy), so it is private (0600).
func (a *InfraEnv) Files() []asset.File {
	b, err := marshalYAML(a.InfraEnv)
	if err != nil || a.InfraEnv == nil {
		return nil
	}
	return []asset.File{{Path: manifests.InfraEnvFile, Data: b, Mode: 0o600}}
}

// AgentClusterInstall is cluster-manifests/agent-cluster-install.yaml.
type AgentClusterInstall struct {
	Warnings
	ACI *manifests.AgentClusterInstall `json:"aci,omitempty"`
}

// Name implements asset.Asset.
func (*AgentClusterInstall) Name() string { return "AgentClusterInstall Config" }

// Dependencies implements asset.Asset.
func (*AgentClusterInstall) Dependencies() []asset.Asset {
	return []asset.Asset{&InstallConfig{}, &AgentHosts{}, &ReleasePayload{}, &RendezvousIP{}}
}

// Generate implements asset.Asset.
func (a *AgentClusterInstall) Generate(_ context.Context, p asset.Parents) error {
	ic, err := needInstallConfig(p, manifests.AgentClusterInstallF)
	if err != nil {
		return err
	}
	aci, err := manifests.GenerateAgentClusterInstall(ic, asset.Get[*AgentHosts](p).Hosts,
		asset.Get[*ReleasePayload](p).Version, asset.Get[*RendezvousIP](p).IP)
	if err != nil {
		return err
	}
	a.ACI = aci
	return nil
}

// Load implements asset.Loader.
func (a *AgentClusterInstall) Load(d asset.Dir) (bool, error) {
	var aci manifests.AgentClusterInstall
	ok, lines, warns, err := loadOne(d, manifests.AgentClusterInstallF, &aci)
	if !ok || err != nil {
		return false, err
	}
	a.Warn = append(a.Warn, manifests.NormalizeACI(&aci)...)
	if err := manifests.ValidateACI(&aci, lines); err != nil {
		return false, fmt.Errorf("invalid AgentClusterInstall configuration: %w", err)
	}
	a.addAll(warns)
	a.ACI = &aci
	return true, nil
}

// Files implements asset.Writable. The ACI can carry proxy credentials
// and, in the install-config-overrides annotation, BMC, vCenter and Prism
// passwords (as upstream), so it is private (0600).
func (a *AgentClusterInstall) Files() []asset.File {
	b, err := marshalYAML(a.ACI)
	if err != nil || a.ACI == nil {
		return nil
	}
	return []asset.File{{Path: manifests.AgentClusterInstallF, Data: b, Mode: 0o600}}
}

// ClusterDeployment is cluster-manifests/cluster-deployment.yaml.
type ClusterDeployment struct {
	Warnings
	CD *manifests.ClusterDeployment `json:"cd,omitempty"`
}

// Name implements asset.Asset.
func (*ClusterDeployment) Name() string { return "ClusterDeployment Config" }

// Dependencies implements asset.Asset.
func (*ClusterDeployment) Dependencies() []asset.Asset { return []asset.Asset{&InstallConfig{}} }

// Generate implements asset.Asset.
func (a *ClusterDeployment) Generate(_ context.Context, p asset.Parents) error {
	ic, err := needInstallConfig(p, manifests.ClusterDeploymentFile)
	if err != nil {
		return err
	}
	a.CD = manifests.GenerateClusterDeployment(ic)
	return nil
}

// Load implements asset.Loader.
func (a *ClusterDeployment) Load(d asset.Dir) (bool, error) {
	var cd manifests.ClusterDeployment
	ok, lines, warns, err := loadOne(d, manifests.ClusterDeploymentFile, &cd)
	if !ok || err != nil {
		return false, err
	}
	if err := manifests.ValidateClusterDeployment(&cd, lines); err != nil {
		return false, fmt.Errorf("invalid ClusterDeployment configuration: %w", err)
	}
	a.addAll(warns)
	a.CD = &cd
	return true, nil
}

// Files implements asset.Writable.
func (a *ClusterDeployment) Files() []asset.File {
	b, err := marshalYAML(a.CD)
	if err != nil || a.CD == nil {
		return nil
	}
	return []asset.File{{Path: manifests.ClusterDeploymentFile, Data: b, Mode: 0o644}}
}

// ClusterImageSet is cluster-manifests/cluster-image-set.yaml.
type ClusterImageSet struct {
	Warnings
	CIS *manifests.ClusterImageSet `json:"cis,omitempty"`
	// lines is kept from Load so the cross-check with the release can
	// point at the field.
	lines manifests.Lines
}

// Name implements asset.Asset.
func (*ClusterImageSet) Name() string { return "ClusterImageSet Config" }

// Dependencies implements asset.Asset.
func (*ClusterImageSet) Dependencies() []asset.Asset {
	return []asset.Asset{&InstallConfig{}, &ReleasePayload{}}
}

// Generate implements asset.Asset: the release pinned by digest, named
// openshift-<version of the payload>.
func (a *ClusterImageSet) Generate(_ context.Context, p asset.Parents) error {
	ns := ""
	if ic := asset.Get[*InstallConfig](p).Config; ic != nil {
		ns = ic.Metadata.Namespace
	}
	r := asset.Get[*ReleasePayload](p)
	a.CIS = manifests.GenerateClusterImageSet(ns, r.Pinned, r.Version)
	return nil
}

// Load implements asset.Loader.
func (a *ClusterImageSet) Load(d asset.Dir) (bool, error) {
	var cis manifests.ClusterImageSet
	ok, lines, warns, err := loadOne(d, manifests.ClusterImageSetFile, &cis)
	if !ok || err != nil {
		return false, err
	}
	a.addAll(warns)
	a.CIS = &cis
	a.lines = lines
	return true, nil
}

// Files implements asset.Writable.
func (a *ClusterImageSet) Files() []asset.File {
	b, err := marshalYAML(a.CIS)
	if err != nil || a.CIS == nil {
		return nil
	}
	return []asset.File{{Path: manifests.ClusterImageSetFile, Data: b, Mode: 0o644}}
}
