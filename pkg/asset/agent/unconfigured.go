package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path"
	"sort"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/baseiso"
	"github.com/seed-a052040e/agentiso/pkg/ignition"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
)

// The generic ISO (docs/unconfigured.md): built from the ZTP manifests
// that name no cluster; the cluster's configuration comes later on the
// config image (configimage.go).

// ErrInteractiveUnsupported refuses upstream's interactive flavour of the
// generic ISO (openshift/installer `agent create unconfigured-ignition
// --interactive`): its flow needs programs of the release payload this ISO
// does not run.
var ErrInteractiveUnsupported = errors.New("the interactive flow (agent TUI and web UI on the rendezvous host, WORKFLOW_TYPE=install-interactive-disconnected) is not supported: " +
	"it runs programs of the release payload that agentiso's ISO does not start, so its markers alone would give an ISO that waits forever; " +
	"build the generic ISO without --interactive and configure the hosts with 'agentiso create config-image' (docs/unconfigured.md)")

// Workflow is the flow a command builds for: the install flow (the
// default), or the generic ISO's (Unconfigured), where no rendezvous IP
// has to be known. The command provides it (asset.Store.Provide), as
// upstream's AgentWorkflow asset.
type Workflow struct {
	Unconfigured bool `json:"unconfigured,omitempty"`
}

// Name implements asset.Asset.
func (*Workflow) Name() string { return "Agent Workflow" }

// Doing implements asset.Described.
func (*Workflow) Doing() string { return "choose the install flow" }

// Dependencies implements asset.Asset.
func (*Workflow) Dependencies() []asset.Asset { return nil }

// Generate implements asset.Asset: the install flow.
func (*Workflow) Generate(context.Context, asset.Parents) error { return nil }

// Volatile implements asset.Volatile: one command's choice.
func (*Workflow) Volatile() {}

// manifestsAgentConfig is where an agent-config.yaml is misplaced.
const manifestsAgentConfig = assetdir.ClusterManifestsDir + "/" + assetdir.AgentConfig

// UnconfiguredInputs checks the asset directory for the generic ISO
// before anything is generated from it: no install-config, the InfraEnv
// and the pull secret present, and an agent-config that holds nothing but
// rendezvousIP (upstream refuses the same fields:
// openshift/installer pkg/asset/agent/image/unconfigured_ignition.go).
type UnconfiguredInputs struct {
	Warnings
	installConfig bool
	// manifestsAgentConfig: cluster-manifests/agent-config.yaml, which
	// nothing reads (one upstream OVE case generates NMStateConfigs from
	// the hosts there; refused so that no static networking is lost).
	manifestsAgentConfig bool
	missing              []string
}

// Name implements asset.Asset.
func (*UnconfiguredInputs) Name() string { return "Unconfigured Inputs" }

// Doing implements asset.Described.
func (*UnconfiguredInputs) Doing() string { return "build the generic ISO's Ignition config" }

// Dependencies implements asset.Asset.
func (*UnconfiguredInputs) Dependencies() []asset.Asset {
	return []asset.Asset{&Workflow{}, &AgentConfig{}}
}

// Volatile implements asset.Volatile: the directory is looked at on every
// run.
func (*UnconfiguredInputs) Volatile() {}

// Load implements asset.Loader: it notes what the directory holds and
// never supplies the asset (Generate decides).
func (a *UnconfiguredInputs) Load(d asset.Dir) (bool, error) {
	exists := func(name string) (bool, error) {
		_, err := d.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return err == nil, err
	}
	var err error
	if a.installConfig, err = exists(assetdir.InstallConfig); err != nil {
		return false, err
	}
	if a.manifestsAgentConfig, err = exists(manifestsAgentConfig); err != nil {
		return false, err
	}
	for _, f := range []string{assetdir.InfraEnv, assetdir.PullSecret} {
		ok, err := exists(f)
		if err != nil {
			return false, err
		}
		if !ok {
			a.missing = append(a.missing, f)
		}
	}
	for _, f := range []string{assetdir.AgentClusterInstall, assetdir.ClusterDeployment} {
		if ok, _ := exists(f); ok {
			a.Warn = append(a.Warn, f+" is not read by the generic ISO: it names a cluster, whose configuration comes with the config image ('agentiso create config-image')")
		}
	}
	return false, nil
}

// Generate implements asset.Asset: the refusals.
func (a *UnconfiguredInputs) Generate(_ context.Context, p asset.Parents) error {
	if !asset.Get[*Workflow](p).Unconfigured {
		return errors.New("the generic ISO's config is built only in the unconfigured workflow (create unconfigured-ignition, create unconfigured-image)")
	}
	var errs manifests.ErrorList
	if a.installConfig {
		errs = append(errs, &manifests.FieldError{File: assetdir.InstallConfig, Type: manifests.TypeForbidden, Detail: "the generic ISO names no cluster, and install-config.yaml describes one: " +
			"build its configuration with 'agentiso create config-image' in another directory, and keep here only " +
			assetdir.InfraEnv + ", " + assetdir.PullSecret + ", " + assetdir.ClusterImageSet + " (or --release-image) and, for static networking, " + assetdir.NMStateConfig})
	}
	if a.manifestsAgentConfig {
		errs = append(errs, &manifests.FieldError{File: manifestsAgentConfig, Type: manifests.TypeForbidden, Detail: "not read: " + assetdir.AgentConfig +
			" belongs at the top of the directory, where the generic ISO's may hold only rendezvousIP; give static networking as " +
			assetdir.NMStateConfig + " (one NMStateConfig per host), and the hosts' other settings with the config image"})
	}
	for _, f := range a.missing {
		errs = append(errs, &manifests.FieldError{File: f, Type: manifests.TypeRequired, Detail: "the file is missing: the generic ISO is built from " + assetdir.InfraEnv + " and " + assetdir.PullSecret +
			" (write them by hand, or take them from 'agentiso create cluster-manifests' of any cluster)"})
	}
	ac := asset.Get[*AgentConfig](p)
	if c := ac.Config; c != nil {
		forbid := func(field, why string) {
			errs = append(errs, &manifests.FieldError{File: assetdir.AgentConfig, Line: ac.lines.Line(field), Path: field, Type: manifests.TypeForbidden,
				Detail: "agent-config.yaml of the generic ISO may hold only rendezvousIP; " + why})
		}
		if len(c.Hosts) > 0 {
			forbid("hosts", "static networking comes from "+assetdir.NMStateConfig+", and host settings with the config image")
		}
		if len(c.AdditionalNTPSources) > 0 {
			forbid("additionalNTPSources", "put them in "+assetdir.InfraEnv+" spec.additionalNTPSources")
		}
		if c.BootArtifactsBaseURL != "" {
			forbid("bootArtifactsBaseURL", "the generic ISO is always the full ISO, with no boot artifacts to serve")
		}
		if c.MinimalISO {
			forbid("minimalISO", "the generic ISO is always the full ISO")
		}
		if len(c.DisabledHostValidations) > 0 {
			forbid("disabledHostValidations", "they come with the config image")
		}
	}
	return errs.OrNil()
}

// UnconfiguredIgnition is the generic ISO's Ignition config,
// unconfigured-agent.ign.
type UnconfiguredIgnition struct {
	Warnings
	Config []byte        `json:"config"`
	Size   ignition.Size `json:"size"`
}

// Name implements asset.Asset.
func (*UnconfiguredIgnition) Name() string { return "Agent Installer Unconfigured Ignition" }

// Doing implements asset.Described.
func (*UnconfiguredIgnition) Doing() string { return "build the generic ISO's Ignition config" }

// Dependencies implements asset.Asset. UnconfiguredInputs comes first: it
// refuses a directory the others would misread.
func (*UnconfiguredIgnition) Dependencies() []asset.Asset {
	return []asset.Asset{&UnconfiguredInputs{}, &AgentConfig{}, &PullSecret{}, &InfraEnv{}, &NMStateConfigs{}, &ClusterImageSet{},
		&ReleaseImage{}, &ReleasePayload{}, &ReleaseSupport{}, &OSImage{}, &RegistriesConf{}, &CABundle{}}
}

// Generate implements asset.Asset.
func (a *UnconfiguredIgnition) Generate(_ context.Context, p asset.Parents) error {
	ie := asset.Get[*InfraEnv](p)
	nm := asset.Get[*NMStateConfigs](p)
	cis := asset.Get[*ClusterImageSet](p)
	rel := asset.Get[*ReleasePayload](p)
	var errs manifests.ErrorList
	collect := func(err error) {
		var l manifests.ErrorList
		switch {
		case err == nil:
		case errors.As(err, &l):
			errs = append(errs, l...)
		default:
			errs = append(errs, &manifests.FieldError{Type: manifests.TypeInvalid, Detail: err.Error()})
		}
	}
	if err := givenVersionSupported(asset.Get[*ReleaseImage](p)); err != nil {
		return err
	}
	collect(checkClusterImageSet(cis, rel))
	collect(manifests.ValidateNMStateConfigs(nm.Configs, nm.lines))
	if len(errs) > 0 {
		return fmt.Errorf("invalid agent configuration: %w", errs)
	}
	// The NMStateConfigs give the generic ISO its keyfiles only: the
	// manifest agent-installer-client registers with the InfraEnv is the
	// config image's, so their labels need not match any selector here
	// (upstream checks only that each has one: openshift/installer
	// pkg/asset/agent/manifests/nmstateconfigfile.go).
	if px := ie.Manifest.Spec.Proxy; px != nil && (px.HTTPProxy != "" || px.HTTPSProxy != "") {
		a.Warn = append(a.Warn, assetdir.InfraEnv+": spec.proxy is not used by the generic ISO: the proxy comes with the config image (install-config.yaml proxy), before anything is pulled")
	}
	netFiles, err := networkFiles(nm.Configs)
	if err != nil {
		return err
	}
	ps := asset.Get[*PullSecret](p).Manifest
	in := ignition.Input{
		Unconfigured:   true,
		ReleaseImage:   rel.Pinned,
		ReleaseVersion: rel.Version,
		Arch:           rel.Arch,
		OSImages:       []ignition.OSImage{asset.Get[*OSImage](p).Image},
		NetworkFiles:   netFiles,
		RegistriesConf: []byte(asset.Get[*RegistriesConf](p).Conf),
		CABundle:       []byte(asset.Get[*CABundle](p).PEM),
		NTPSources:     ie.Manifest.Spec.AdditionalNTPSources,
		PullSecret:     ps.PullSecretJSON(),
		SSHKey:         ie.Manifest.Spec.SSHAuthorizedKey,
	}
	if ac := asset.Get[*AgentConfig](p).Config; ac != nil {
		in.RendezvousIP = normalIP(ac.RendezvousIP)
	}
	objs := map[string]any{assetdir.PullSecret: ps, assetdir.InfraEnv: ie.Manifest, assetdir.ClusterImageSet: pinnedCIS(cis.Manifest, rel.Pinned)}
	for file, o := range objs {
		b, err := marshalYAML(o)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		in.ZTPManifests = append(in.ZTPManifests, ignition.Manifest{FileName: path.Base(file), Contents: b})
	}
	// Not nmstateconfig.yaml: as upstream's generic ISO
	// (pkg/asset/agent/image/unconfigured_ignition.go writes only these
	// three manifests), it comes with the config image.
	sort.Slice(in.ZTPManifests, func(i, j int) bool { return in.ZTPManifests[i].FileName < in.ZTPManifests[j].FileName })
	cfg, size, err := ignition.Build(in)
	if err != nil {
		return fmt.Errorf("build the generic ISO's ignition: %w", err)
	}
	b, err := ignition.MarshalIndent(cfg)
	if err != nil {
		return err
	}
	a.Config, a.Size = b, size
	return nil
}

// pinnedCIS is the ClusterImageSet naming the release by digest.
func pinnedCIS(cis *manifests.ClusterImageSet, pinned string) *manifests.ClusterImageSet {
	if cis == nil || cis.Spec.ReleaseImage == pinned {
		return cis
	}
	c := *cis
	c.Spec.ReleaseImage = pinned
	return &c
}

// Files implements asset.Writable: unconfigured-agent.ign, indented, 0600
// (it holds the pull secret; upstream writes it 0644).
func (a *UnconfiguredIgnition) Files() ([]asset.File, error) {
	return []asset.File{{Path: assetdir.UnconfiguredIgnition, Data: a.Config, Mode: assetdir.Mode(assetdir.UnconfiguredIgnition)}}, nil
}

// UnconfiguredISO is the generic ISO, agent-unconfigured.<arch>.iso with
// its .sha256: the base ISO with the generic ISO's config embedded, written
// as AgentISO is (it is AgentISO with another config and no kernel
// arguments).
type UnconfiguredISO struct {
	AgentISO
}

// Name implements asset.Asset.
func (*UnconfiguredISO) Name() string { return "Agent Installer Unconfigured ISO" }

// Doing implements asset.Described.
func (*UnconfiguredISO) Doing() string { return "build the generic ISO" }

// Dependencies implements asset.Asset.
func (*UnconfiguredISO) Dependencies() []asset.Asset {
	return []asset.Asset{&UnconfiguredIgnition{}, &Architecture{}, &ImageOptions{}, &BaseISO{}}
}

// Generate implements asset.Asset.
func (a *UnconfiguredISO) Generate(_ context.Context, p asset.Parents) error {
	ign := asset.Get[*UnconfiguredIgnition](p)
	o := asset.Get[*ImageOptions](p)
	a.arch = asset.Get[*Architecture](p).Arch
	a.File = assetdir.UnconfiguredISO(a.arch)
	a.Base = asset.Get[*BaseISO](p).Path
	a.config, a.size = ign.Config, ign.Size
	a.reset, a.report = o.ResetBaseISO, o.Report
	a.records = baseiso.HashRecords(o.CacheDir)
	return a.checkBase()
}

// normalIP is ip as a host prints it ("" stays "").
func normalIP(ip string) string {
	if p := net.ParseIP(strings.TrimSpace(ip)); p != nil {
		return p.String()
	}
	return ip
}
