package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
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
	b, ok, err := readOptional(d, assetdir.NMStateConfig)
	if !ok || err != nil {
		return false, err
	}
	outs, infos, err := manifests.DecodeStrictAll(assetdir.NMStateConfig, b, func() any { return &manifests.NMStateConfig{} })
	if err != nil {
		return false, fmt.Errorf("could not decode YAML for %s: %w", assetdir.NMStateConfig, err)
	}
	for i, o := range outs {
		a.Configs = append(a.Configs, *o.(*manifests.NMStateConfig))
		a.lines = append(a.lines, infos[i].Lines)
		a.addAll(infos[i].Warnings)
	}
	return true, nil
}

// Files implements asset.Writable.
func (a *NMStateConfigs) Files() ([]asset.File, error) {
	if len(a.Configs) == 0 {
		return nil, nil
	}
	b, err := marshalNMStateConfigs(a.Configs)
	if err != nil {
		return nil, err
	}
	return []asset.File{{Path: assetdir.NMStateConfig, Data: b, Mode: assetdir.Mode(assetdir.NMStateConfig)}}, nil
}

// marshalNMStateConfigs renders the NMStateConfigs as one multi-document
// YAML file.
func marshalNMStateConfigs(configs []manifests.NMStateConfig) ([]byte, error) {
	var buf bytes.Buffer
	for i := range configs {
		b, err := marshalYAML(&configs[i])
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", assetdir.NMStateConfig, i+1, err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
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
func (a *RendezvousIP) Files() ([]asset.File, error) {
	return []asset.File{{Path: assetdir.RendezvousIP, Data: []byte(a.IP), Mode: assetdir.Mode(assetdir.RendezvousIP)}}, nil
}

// marshalYAML renders a manifest the way every generated file looks.
func marshalYAML(v any) ([]byte, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode YAML: %w", err)
	}
	return b, nil
}

// ZTPManifest is one single-document ZTP manifest in cluster-manifests/
// (PullSecret, InfraEnv, AgentClusterInstall, ClusterDeployment,
// ClusterImageSet): generated from install-config.yaml and
// agent-config.yaml or, when the user supplies the file, decoded strictly
// and checked on its own. AgentManifests checks the manifests against each
// other. K says which manifest it is.
type ZTPManifest[T any, K ztpKind[T]] struct {
	Warnings
	Manifest *T
	// lines is kept from Load so later cross-checks can point at a field.
	lines manifests.Lines
}

// ztpKind is what sets one ZTP manifest asset apart from the others.
type ztpKind[T any] interface {
	// name is the asset's name.
	name() string
	// file is the manifest's path in the asset directory.
	file() string
	// stateKey is the manifest's key in the asset's state data.
	stateKey() string
	dependencies() []asset.Asset
	generate(p asset.Parents) (*T, error)
	// check normalises and validates a user's copy on its own, returning
	// warnings; nil when nothing is checked before AgentManifests.
	check(m *T, lines manifests.Lines) ([]string, error)
}

// The ZTP manifests' assets.
type (
	// PullSecret is cluster-manifests/pull-secret.yaml (0600).
	PullSecret = ZTPManifest[manifests.Secret, pullSecretKind]
	// InfraEnv is cluster-manifests/infraenv.yaml. It can carry proxy
	// credentials (spec.proxy), so it is written 0600.
	InfraEnv = ZTPManifest[manifests.InfraEnv, infraEnvKind]
	// AgentClusterInstall is cluster-manifests/agent-cluster-install.yaml.
	// It can carry proxy credentials and, in the install-config-overrides
	// annotation, BMC, vCenter and Prism passwords (as upstream), so it is
	// written 0600.
	AgentClusterInstall = ZTPManifest[manifests.AgentClusterInstall, aciKind]
	// ClusterDeployment is cluster-manifests/cluster-deployment.yaml.
	ClusterDeployment = ZTPManifest[manifests.ClusterDeployment, clusterDeploymentKind]
	// ClusterImageSet is cluster-manifests/cluster-image-set.yaml: the
	// release pinned by digest, named openshift-<version of the payload>.
	// A user's copy is checked against the release by AgentManifests.
	ClusterImageSet = ZTPManifest[manifests.ClusterImageSet, clusterImageSetKind]
)

// Name implements asset.Asset.
func (*ZTPManifest[T, K]) Name() string { var k K; return k.name() }

// Dependencies implements asset.Asset.
func (*ZTPManifest[T, K]) Dependencies() []asset.Asset { var k K; return k.dependencies() }

// Generate implements asset.Asset.
func (a *ZTPManifest[T, K]) Generate(_ context.Context, p asset.Parents) error {
	var k K
	m, err := k.generate(p)
	if err != nil {
		return err
	}
	a.Manifest = m
	return nil
}

// Load implements asset.Loader.
func (a *ZTPManifest[T, K]) Load(d asset.Dir) (bool, error) {
	var k K
	b, ok, err := readOptional(d, k.file())
	if !ok || err != nil {
		return false, err
	}
	var m T
	dec, err := manifests.DecodeStrict(k.file(), b, &m)
	if err != nil {
		return false, err
	}
	warns, err := k.check(&m, dec.Lines)
	if err != nil {
		return false, err
	}
	a.Warn = append(a.Warn, warns...)
	a.addAll(dec.Warnings)
	a.Manifest, a.lines = &m, dec.Lines
	return true, nil
}

// Files implements asset.Writable.
func (a *ZTPManifest[T, K]) Files() ([]asset.File, error) {
	if a.Manifest == nil {
		return nil, nil
	}
	var k K
	b, err := marshalYAML(a.Manifest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.file(), err)
	}
	return []asset.File{{Path: k.file(), Data: b, Mode: assetdir.Mode(k.file())}}, nil
}

// MarshalJSON encodes the asset for the state file as
// {"warnings": [...], "<stateKey>": {...}}, the shape it had when each
// manifest had its own type, so a state written then reads the same.
func (a *ZTPManifest[T, K]) MarshalJSON() ([]byte, error) {
	var k K
	var b bytes.Buffer
	b.WriteByte('{')
	if len(a.Warn) > 0 {
		w, err := json.Marshal(a.Warn)
		if err != nil {
			return nil, err
		}
		b.WriteString(`"warnings":`)
		b.Write(w)
	}
	if a.Manifest != nil {
		m, err := json.Marshal(a.Manifest)
		if err != nil {
			return nil, err
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:", k.stateKey())
		b.Write(m)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON decodes the asset from the state file.
func (a *ZTPManifest[T, K]) UnmarshalJSON(data []byte) error {
	var k K
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	*a = ZTPManifest[T, K]{}
	if w, ok := fields["warnings"]; ok {
		if err := json.Unmarshal(w, &a.Warn); err != nil {
			return err
		}
	}
	if m, ok := fields[k.stateKey()]; ok {
		if err := json.Unmarshal(m, &a.Manifest); err != nil {
			return err
		}
	}
	return nil
}

func needInstallConfig(p asset.Parents, file string) (*manifests.InstallConfig, error) {
	ic := asset.Get[*InstallConfig](p).Config
	if ic == nil {
		return nil, fmt.Errorf("%w: %s: add install-config.yaml (and agent-config.yaml), or supply this file", asset.ErrMissingInput, file)
	}
	return ic, nil
}

type pullSecretKind struct{}

func (pullSecretKind) name() string     { return "Agent PullSecret" }
func (pullSecretKind) file() string     { return assetdir.PullSecret }
func (pullSecretKind) stateKey() string { return "secret" }
func (pullSecretKind) dependencies() []asset.Asset {
	return []asset.Asset{&InstallConfig{}}
}
func (pullSecretKind) generate(p asset.Parents) (*manifests.Secret, error) {
	ic, err := needInstallConfig(p, assetdir.PullSecret)
	if err != nil {
		return nil, err
	}
	return manifests.GeneratePullSecret(ic), nil
}
func (pullSecretKind) check(s *manifests.Secret, lines manifests.Lines) ([]string, error) {
	manifests.NormalizeSecret(s)
	if err := manifests.ValidateSecret(s, lines); err != nil {
		return nil, fmt.Errorf("invalid PullSecret configuration: %w", err)
	}
	return nil, nil
}

type infraEnvKind struct{}

func (infraEnvKind) name() string     { return "InfraEnv Config" }
func (infraEnvKind) file() string     { return assetdir.InfraEnv }
func (infraEnvKind) stateKey() string { return "infraEnv" }
func (infraEnvKind) dependencies() []asset.Asset {
	return []asset.Asset{&InstallConfig{}, &AgentConfig{}, &RendezvousIP{}}
}
func (infraEnvKind) generate(p asset.Parents) (*manifests.InfraEnv, error) {
	ic, err := needInstallConfig(p, assetdir.InfraEnv)
	if err != nil {
		return nil, err
	}
	return manifests.GenerateInfraEnv(ic, asset.Get[*AgentConfig](p).Config, asset.Get[*RendezvousIP](p).IP), nil
}
func (infraEnvKind) check(ie *manifests.InfraEnv, lines manifests.Lines) ([]string, error) {
	manifests.NormalizeInfraEnv(ie)
	if err := manifests.ValidateInfraEnv(ie, lines); err != nil {
		return nil, fmt.Errorf("invalid InfraEnv configuration: %w", err)
	}
	return nil, nil
}

type aciKind struct{}

func (aciKind) name() string     { return "AgentClusterInstall Config" }
func (aciKind) file() string     { return assetdir.AgentClusterInstall }
func (aciKind) stateKey() string { return "aci" }
func (aciKind) dependencies() []asset.Asset {
	return []asset.Asset{&InstallConfig{}, &AgentHosts{}, &ReleasePayload{}, &RendezvousIP{}}
}
func (aciKind) generate(p asset.Parents) (*manifests.AgentClusterInstall, error) {
	ic, err := needInstallConfig(p, assetdir.AgentClusterInstall)
	if err != nil {
		return nil, err
	}
	return manifests.GenerateAgentClusterInstall(ic, asset.Get[*AgentHosts](p).Hosts,
		asset.Get[*ReleasePayload](p).Version, asset.Get[*RendezvousIP](p).IP)
}
func (aciKind) check(aci *manifests.AgentClusterInstall, lines manifests.Lines) ([]string, error) {
	warns := manifests.NormalizeACI(aci)
	if err := manifests.ValidateACI(aci, lines); err != nil {
		return nil, fmt.Errorf("invalid AgentClusterInstall configuration: %w", err)
	}
	return warns, nil
}

type clusterDeploymentKind struct{}

func (clusterDeploymentKind) name() string     { return "ClusterDeployment Config" }
func (clusterDeploymentKind) file() string     { return assetdir.ClusterDeployment }
func (clusterDeploymentKind) stateKey() string { return "cd" }
func (clusterDeploymentKind) dependencies() []asset.Asset {
	return []asset.Asset{&InstallConfig{}}
}
func (clusterDeploymentKind) generate(p asset.Parents) (*manifests.ClusterDeployment, error) {
	ic, err := needInstallConfig(p, assetdir.ClusterDeployment)
	if err != nil {
		return nil, err
	}
	return manifests.GenerateClusterDeployment(ic), nil
}
func (clusterDeploymentKind) check(cd *manifests.ClusterDeployment, lines manifests.Lines) ([]string, error) {
	if err := manifests.ValidateClusterDeployment(cd, lines); err != nil {
		return nil, fmt.Errorf("invalid ClusterDeployment configuration: %w", err)
	}
	return nil, nil
}

type clusterImageSetKind struct{}

func (clusterImageSetKind) name() string     { return "ClusterImageSet Config" }
func (clusterImageSetKind) file() string     { return assetdir.ClusterImageSet }
func (clusterImageSetKind) stateKey() string { return "cis" }
func (clusterImageSetKind) dependencies() []asset.Asset {
	return []asset.Asset{&InstallConfig{}, &ReleasePayload{}}
}

// generate needs no install-config: only its namespace, when there is one.
func (clusterImageSetKind) generate(p asset.Parents) (*manifests.ClusterImageSet, error) {
	ns := ""
	if ic := asset.Get[*InstallConfig](p).Config; ic != nil {
		ns = ic.Metadata.Namespace
	}
	r := asset.Get[*ReleasePayload](p)
	return manifests.GenerateClusterImageSet(ns, r.Pinned, r.Version), nil
}

// check leaves a user's copy to AgentManifests, which checks it against
// the release.
func (clusterImageSetKind) check(*manifests.ClusterImageSet, manifests.Lines) ([]string, error) {
	return nil, nil
}
