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

// Doing implements asset.Described.
func (*AgentHosts) Doing() string { return "read the hosts" }

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
	// user is set when the configs come from the user's file, not from
	// agent-config.yaml hosts.
	user bool
}

// Name implements asset.Asset.
func (*NMStateConfigs) Name() string { return "NMState Config" }

// Doing implements asset.Described.
func (*NMStateConfigs) Doing() string { return "get the NMStateConfig manifests" }

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
	a.user = true
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
	// Inferred is true when agent-config.yaml sets no rendezvousIP and
	// the IP was taken from the hosts' static network configuration.
	Inferred bool `json:"inferred,omitempty"`
}

// Line is what the create commands say of it: an inferred IP is said to
// be one, with how to choose another.
func (a *RendezvousIP) Line() string {
	if a.Inferred {
		return "The rendezvous host IP (node0 IP) is " + a.IP + " (agent-config.yaml sets no rendezvousIP: taken from the hosts' static network configuration, a control-plane host's first; set rendezvousIP to choose another)"
	}
	return "The rendezvous host IP (node0 IP) is " + a.IP
}

// Name implements asset.Asset.
func (*RendezvousIP) Name() string { return "Rendezvous IP" }

// Doing implements asset.Described.
func (*RendezvousIP) Doing() string { return "choose the rendezvous IP" }

// Dependencies implements asset.Asset.
func (*RendezvousIP) Dependencies() []asset.Asset {
	return []asset.Asset{&AgentConfig{}, &AgentHosts{}, &NMStateConfigs{}, &Workflow{}}
}

// Generate implements asset.Asset. The generic ISO's flow takes only
// agent-config's rendezvousIP, and none is fine there.
func (a *RendezvousIP) Generate(_ context.Context, p asset.Parents) error {
	configured := ""
	if ac := asset.Get[*AgentConfig](p).Config; ac != nil {
		configured = ac.RendezvousIP
	}
	if asset.Get[*Workflow](p).Unconfigured {
		a.IP = normalIP(configured)
		return nil
	}
	ip, err := manifests.ChooseRendezvousIP(configured, asset.Get[*AgentHosts](p).Hosts, asset.Get[*NMStateConfigs](p).Configs)
	if err != nil {
		return err
	}
	a.IP, a.Inferred = ip, configured == ""
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

// ztpKind is what sets one ZTP manifest asset apart from the others: a
// type whose spec describes it.
type ztpKind[T any] interface {
	spec() ztpSpec[T]
}

// ztpSpec describes one ZTP manifest asset.
type ztpSpec[T any] struct {
	// name is the asset's name, kind the manifest's kind in errors.
	name, kind string
	// file is the manifest's path in the asset directory.
	file string
	// stateKey is the manifest's key in the asset's state data.
	stateKey string
	parents  []asset.Asset
	generate func(asset.Parents) (*T, error)
	// check normalises and validates a user's copy on its own, returning
	// warnings; nil when AgentManifests checks it (against the others).
	check func(*T, manifests.Lines) ([]string, error)
}

func specOf[T any, K ztpKind[T]]() ztpSpec[T] {
	var k K
	return k.spec()
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
func (*ZTPManifest[T, K]) Name() string { return specOf[T, K]().name }

// Doing implements asset.Described: a ZTP manifest is read from its file
// in cluster-manifests/, or generated for it.
func (*ZTPManifest[T, K]) Doing() string { return "get " + specOf[T, K]().file }

// Dependencies implements asset.Asset.
func (*ZTPManifest[T, K]) Dependencies() []asset.Asset { return specOf[T, K]().parents }

// Generate implements asset.Asset.
func (a *ZTPManifest[T, K]) Generate(_ context.Context, p asset.Parents) error {
	m, err := specOf[T, K]().generate(p)
	if err != nil {
		return err
	}
	a.Manifest = m
	return nil
}

// Load implements asset.Loader.
func (a *ZTPManifest[T, K]) Load(d asset.Dir) (bool, error) {
	sp := specOf[T, K]()
	b, ok, err := readOptional(d, sp.file)
	if !ok || err != nil {
		return false, err
	}
	var m T
	dec, err := manifests.DecodeStrict(sp.file, b, &m)
	if err != nil {
		return false, err
	}
	if sp.check != nil {
		warns, err := sp.check(&m, dec.Lines)
		if err != nil {
			return false, fmt.Errorf("invalid %s configuration: %w", sp.kind, err)
		}
		a.Warn = append(a.Warn, warns...)
	}
	a.addAll(dec.Warnings)
	a.Manifest, a.lines = &m, dec.Lines
	return true, nil
}

// Files implements asset.Writable.
func (a *ZTPManifest[T, K]) Files() ([]asset.File, error) {
	if a.Manifest == nil {
		return nil, nil
	}
	file := specOf[T, K]().file
	b, err := marshalYAML(a.Manifest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return []asset.File{{Path: file, Data: b, Mode: assetdir.Mode(file)}}, nil
}

// MarshalJSON encodes the asset for the state file as
// {"warnings": [...], "<stateKey>": {...}}, the shape it had when each
// manifest had its own type, so a state written then reads the same.
func (a *ZTPManifest[T, K]) MarshalJSON() ([]byte, error) {
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
		fmt.Fprintf(&b, "%q:", specOf[T, K]().stateKey)
		b.Write(m)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON decodes the asset from the state file.
func (a *ZTPManifest[T, K]) UnmarshalJSON(data []byte) error {
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
	if m, ok := fields[specOf[T, K]().stateKey]; ok {
		if err := json.Unmarshal(m, &a.Manifest); err != nil {
			return err
		}
	}
	return nil
}

// fromInstallConfig is the generator of a manifest made from
// install-config.yaml alone.
func fromInstallConfig[T any](file string, gen func(*manifests.InstallConfig) *T) func(asset.Parents) (*T, error) {
	return func(p asset.Parents) (*T, error) {
		ic, err := needInstallConfig(p, file)
		if err != nil {
			return nil, err
		}
		return gen(ic), nil
	}
}

func needInstallConfig(p asset.Parents, file string) (*manifests.InstallConfig, error) {
	ic := asset.Get[*InstallConfig](p).Config
	if ic == nil {
		return nil, fmt.Errorf("%w: %s: add install-config.yaml (and agent-config.yaml), or supply this file", asset.ErrMissingInput, file)
	}
	return ic, nil
}

type pullSecretKind struct{}

func (pullSecretKind) spec() ztpSpec[manifests.Secret] {
	return ztpSpec[manifests.Secret]{
		name: "Agent PullSecret", kind: "PullSecret", file: assetdir.PullSecret, stateKey: "secret",
		parents:  []asset.Asset{&InstallConfig{}},
		generate: fromInstallConfig(assetdir.PullSecret, manifests.GeneratePullSecret),
		check: func(s *manifests.Secret, lines manifests.Lines) ([]string, error) {
			manifests.NormalizeSecret(s)
			return nil, manifests.ValidateSecret(s, lines)
		},
	}
}

type infraEnvKind struct{}

func (infraEnvKind) spec() ztpSpec[manifests.InfraEnv] {
	return ztpSpec[manifests.InfraEnv]{
		name: "InfraEnv Config", kind: "InfraEnv", file: assetdir.InfraEnv, stateKey: "infraEnv",
		parents: []asset.Asset{&InstallConfig{}, &AgentConfig{}, &RendezvousIP{}},
		generate: func(p asset.Parents) (*manifests.InfraEnv, error) {
			ic, err := needInstallConfig(p, assetdir.InfraEnv)
			if err != nil {
				return nil, err
			}
			return manifests.GenerateInfraEnv(ic, asset.Get[*AgentConfig](p).Config, asset.Get[*RendezvousIP](p).IP), nil
		},
		check: func(ie *manifests.InfraEnv, lines manifests.Lines) ([]string, error) {
			manifests.NormalizeInfraEnv(ie)
			return nil, manifests.ValidateInfraEnv(ie, lines)
		},
	}
}

type aciKind struct{}

func (aciKind) spec() ztpSpec[manifests.AgentClusterInstall] {
	return ztpSpec[manifests.AgentClusterInstall]{
		name: "AgentClusterInstall Config", kind: "AgentClusterInstall", file: assetdir.AgentClusterInstall, stateKey: "aci",
		// It refers to the ClusterImageSet by name (the generated one or
		// the user's), so it needs no release payload.
		parents: []asset.Asset{&InstallConfig{}, &AgentHosts{}, &ClusterImageSet{}, &RendezvousIP{}},
		generate: func(p asset.Parents) (*manifests.AgentClusterInstall, error) {
			ic, err := needInstallConfig(p, assetdir.AgentClusterInstall)
			if err != nil {
				return nil, err
			}
			cis := asset.Get[*ClusterImageSet](p).Manifest
			return manifests.GenerateAgentClusterInstall(ic, asset.Get[*AgentHosts](p).Hosts,
				cis.Metadata.Name, asset.Get[*RendezvousIP](p).IP)
		},
		check: func(aci *manifests.AgentClusterInstall, lines manifests.Lines) ([]string, error) {
			warns := manifests.NormalizeACI(aci)
			return warns, manifests.ValidateACI(aci, lines)
		},
	}
}

type clusterDeploymentKind struct{}

func (clusterDeploymentKind) spec() ztpSpec[manifests.ClusterDeployment] {
	return ztpSpec[manifests.ClusterDeployment]{
		name: "ClusterDeployment Config", kind: "ClusterDeployment", file: assetdir.ClusterDeployment, stateKey: "cd",
		parents:  []asset.Asset{&InstallConfig{}},
		generate: fromInstallConfig(assetdir.ClusterDeployment, manifests.GenerateClusterDeployment),
		check: func(cd *manifests.ClusterDeployment, lines manifests.Lines) ([]string, error) {
			return nil, manifests.ValidateClusterDeployment(cd, lines)
		},
	}
}

type clusterImageSetKind struct{}

// spec: the generator needs no install-config, only its namespace when
// there is one, and no release payload: like upstream's
// (openshift/installer pkg/asset/agent/manifests/clusterimageset.go) it
// writes the release as given, so that `create cluster-manifests` works
// without a registry. A user's copy is checked by AgentManifests and, when
// that needs the payload, by AgentIgnition.
func (clusterImageSetKind) spec() ztpSpec[manifests.ClusterImageSet] {
	return ztpSpec[manifests.ClusterImageSet]{
		name: "ClusterImageSet Config", kind: "ClusterImageSet", file: assetdir.ClusterImageSet, stateKey: "cis",
		parents: []asset.Asset{&InstallConfig{}, &ReleaseImage{}},
		generate: func(p asset.Parents) (*manifests.ClusterImageSet, error) {
			ns := ""
			if ic := asset.Get[*InstallConfig](p).Config; ic != nil {
				ns = ic.Metadata.Namespace
			}
			r := asset.Get[*ReleaseImage](p)
			return manifests.GenerateClusterImageSet(ns, r.PullSpec, manifests.ClusterImageSetNameFor(r.PullSpec, r.Version)), nil
		},
	}
}
