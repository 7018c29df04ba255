package agent

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/internal/redact"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/baseiso"
	"github.com/seed-a052040e/agentiso/pkg/credentials"
	"github.com/seed-a052040e/agentiso/pkg/extiso"
	"github.com/seed-a052040e/agentiso/pkg/ignition"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
	"github.com/seed-a052040e/agentiso/pkg/nmstate"
	"github.com/seed-a052040e/agentiso/pkg/ocmirror"
)

// HostNetworkFiles are the per-host NetworkManager keyfiles and
// mac_interface.ini, generated in pure Go from each NMStateConfig.
type HostNetworkFiles struct {
	Files []ignition.NetworkFile `json:"files,omitempty"`
}

// Name implements asset.Asset.
func (*HostNetworkFiles) Name() string { return "Host Network Config" }

// Doing implements asset.Described.
func (*HostNetworkFiles) Doing() string {
	return "build the hosts' network configuration (NetworkManager keyfiles)"
}

// Dependencies implements asset.Asset.
func (*HostNetworkFiles) Dependencies() []asset.Asset { return []asset.Asset{&AgentManifests{}} }

// Generate implements asset.Asset.
func (a *HostNetworkFiles) Generate(_ context.Context, p asset.Parents) error {
	files, err := networkFiles(asset.Get[*AgentManifests](p).NMStateConfigs)
	a.Files = files
	return err
}

// networkFiles renders the NMStateConfigs' keyfiles, host by host.
func networkFiles(configs []manifests.NMStateConfig) ([]ignition.NetworkFile, error) {
	var out []ignition.NetworkFile
	for i, n := range configs {
		y, err := yaml.JSONToYAML(n.Spec.Config)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d (%s): spec.config: %w", assetdir.NMStateConfig, i+1, n.Metadata.Name, err)
		}
		ifaces := make([]nmstate.HostInterface, len(n.Spec.Interfaces))
		for j, itf := range n.Spec.Interfaces {
			ifaces[j] = nmstate.HostInterface{Name: itf.Name, MACAddress: itf.MACAddress}
		}
		files, err := nmstate.HostFiles(i, y, ifaces)
		if err != nil {
			return nil, fmt.Errorf("static network config of %s (host %d): %w", n.Metadata.Name, i, err)
		}
		for _, f := range files {
			out = append(out, ignition.NetworkFile{Path: f.Path, Mode: 0o600, Contents: f.Contents})
		}
	}
	return out, nil
}

// KernelArgs are appended to the live ISO's kernel command line.
type KernelArgs struct {
	Args string `json:"args"`
}

// Name implements asset.Asset.
func (*KernelArgs) Name() string { return "Agent Kernel Arguments" }

// Doing implements asset.Described.
func (*KernelArgs) Doing() string { return "build the kernel arguments" }

// Dependencies implements asset.Asset.
func (*KernelArgs) Dependencies() []asset.Asset {
	return []asset.Asset{&InstallConfig{}, &AgentManifests{}}
}

// Generate implements asset.Asset: " console=ttyS0" for external oci and
// " fips=1" with FIPS, as upstream.
func (a *KernelArgs) Generate(_ context.Context, p asset.Parents) error {
	m := asset.Get[*AgentManifests](p)
	if ex := m.ACI.Spec.External; ex != nil && ex.PlatformName == "oci" {
		a.Args += " console=ttyS0"
	}
	fips := false
	if ic := asset.Get[*InstallConfig](p).Config; ic != nil {
		fips = ic.FIPS
	}
	if strings.Contains(m.ACI.Metadata.Annotations["agent-install.openshift.io/install-config-overrides"], `"fips":true`) {
		fips = true
	}
	if fips {
		a.Args += " fips=1"
	}
	return nil
}

// AgentIgnition is the Ignition config embedded in the ISO.
type AgentIgnition struct {
	Config []byte        `json:"config"`
	Size   ignition.Size `json:"size"`
}

// Name implements asset.Asset.
func (*AgentIgnition) Name() string { return "Agent Installer Ignition" }

// Doing implements asset.Described.
func (*AgentIgnition) Doing() string { return "build the Ignition config" }

// Dependencies implements asset.Asset.
func (*AgentIgnition) Dependencies() []asset.Asset {
	return []asset.Asset{&InstallConfig{}, &AgentConfig{}, &AgentHosts{}, &AgentManifests{}, &ExtraManifests{}, &RendezvousIP{},
		&ReleasePayload{}, &RegistriesConf{}, &CABundle{}, &AuthConfig{}, &SignerCAs{}, &KubeadminPassword{},
		&InfraEnvID{}, &HostNetworkFiles{}, &OSImage{}, &ISOType{}, &ClusterImageSet{}, &ReleaseSupport{}, &PullSecretAuth{}, &EmbeddedPayload{}, &OCMirror{}}
}

// Generate implements asset.Asset.
func (a *AgentIgnition) Generate(_ context.Context, p asset.Parents) error {
	in, err := ignitionInput(p)
	if err != nil {
		return err
	}
	cfg, size, err := ignition.Build(in)
	if err != nil {
		return fmt.Errorf("build ignition: %w", err)
	}
	// The ISO embeds exactly the bytes of agent.ign (indented), so what a
	// user inspects is byte-for-byte what the host receives.
	b, err := ignition.MarshalIndent(cfg)
	if err != nil {
		return err
	}
	a.Config, a.Size = b, size
	return nil
}

// Files implements asset.Writable: agent.ign, indented, 0600 (it holds
// the pull secret and tokens).
func (a *AgentIgnition) Files() ([]asset.File, error) {
	return []asset.File{{Path: assetdir.AgentIgnition, Data: a.Config, Mode: assetdir.Mode(assetdir.AgentIgnition)}}, nil
}

// ignitionInput gathers the Ignition input.
func ignitionInput(p asset.Parents) (ignition.Input, error) {
	m := asset.Get[*AgentManifests](p)
	rel := asset.Get[*ReleasePayload](p)
	// The checks that need the payload, which AgentManifests (and so
	// `create cluster-manifests`) does without.
	icA := asset.Get[*InstallConfig](p)
	if err := checkClusterImageSet(asset.Get[*ClusterImageSet](p), rel); err != nil {
		return ignition.Input{}, fmt.Errorf("invalid agent configuration: %w", err)
	}
	auth := asset.Get[*AuthConfig](p)
	signers := asset.Get[*SignerCAs](p)
	pubPEM, err := auth.PublicKeyPEM()
	if err != nil {
		return ignition.Input{}, err
	}
	in := ignition.Input{
		ClusterName:        m.ClusterDeployment.Spec.ClusterName,
		BaseDomain:         m.ClusterDeployment.Spec.BaseDomain,
		ReleaseImage:       rel.Pinned,
		ReleaseVersion:     rel.Version,
		Arch:               rel.Arch,
		OSImages:           []ignition.OSImage{asset.Get[*OSImage](p).Image},
		RendezvousIP:       asset.Get[*RendezvousIP](p).IP,
		InfraEnvID:         asset.Get[*InfraEnvID](p).ID,
		ImageType:          asset.Get[*ISOType](p).Type,
		ControlPlaneAgents: m.ACI.Spec.ProvisionRequirements.ControlPlaneAgents,
		ArbiterAgents:      m.ACI.Spec.ProvisionRequirements.ArbiterAgents,
		WorkerAgents:       m.ACI.Spec.ProvisionRequirements.WorkerAgents,
		NetworkFiles:       asset.Get[*HostNetworkFiles](p).Files,
		RegistriesConf:     []byte(asset.Get[*RegistriesConf](p).Conf),
		CABundle:           []byte(asset.Get[*CABundle](p).PEM),
		NTPSources:         m.InfraEnv.Spec.AdditionalNTPSources,
		PullSecret:         m.PullSecret.PullSecretJSON(),
		SSHKey:             m.InfraEnv.Spec.SSHAuthorizedKey,
		PasswordHash:       asset.Get[*KubeadminPassword](p).Hash,
		Auth: ignition.Auth{PublicKeyPEM: string(pubPEM), AgentToken: auth.AgentAuthToken,
			UserToken: auth.UserAuthToken, WatcherToken: auth.WatcherAuthToken},
		Signers: []ignition.Signer{
			{Name: credentials.AdminKubeconfigSignerName, CertPEM: []byte(signers.AdminKubeconfig.CertPEM), KeyPEM: []byte(signers.AdminKubeconfig.KeyPEM)},
			{Name: credentials.KubeAPIServerLBSignerName, CertPEM: []byte(signers.KubeAPIServerLB.CertPEM), KeyPEM: []byte(signers.KubeAPIServerLB.KeyPEM)},
			{Name: credentials.KubeAPIServerLocalhostSignerName, CertPEM: []byte(signers.KubeAPIServerLocalhost.CertPEM), KeyPEM: []byte(signers.KubeAPIServerLocalhost.KeyPEM)},
			{Name: credentials.KubeAPIServerServiceNetworkSignerName, CertPEM: []byte(signers.KubeAPIServerServiceNetwork.CertPEM), KeyPEM: []byte(signers.KubeAPIServerServiceNetwork.KeyPEM)},
		},
	}
	if px := m.InfraEnv.Spec.Proxy; px != nil {
		in.Proxy = &ignition.Proxy{HTTPProxy: px.HTTPProxy, HTTPSProxy: px.HTTPSProxy, NoProxy: px.NoProxy}
	}
	for _, mn := range m.ACI.Spec.Networking.MachineNetwork {
		in.MachineNetworks = append(in.MachineNetworks, mn.CIDR)
	}
	ztp, err := ztpFiles(m, rel.Pinned)
	if err != nil {
		return ignition.Input{}, err
	}
	in.ZTPManifests = ztp
	ac := asset.Get[*AgentConfig](p)
	in.AgentConfigYAML = ac.Raw
	if ac.Config != nil {
		in.DisabledHostValidations = ac.Config.DisabledHostValidations
	}
	for _, f := range asset.Get[*ExtraManifests](p).Files {
		in.ExtraManifests = append(in.ExtraManifests, ignition.Manifest{FileName: f.Name, Contents: f.Data})
	}
	ep := asset.Get[*EmbeddedPayload](p)
	if ocm := asset.Get[*OCMirror](p); ocm.Resources != nil && !ep.Enabled {
		if err := applyOCMirror(&in, ocm.Resources, asset.Get[*RegistriesConf](p).Conf); err != nil {
			return ignition.Input{}, err
		}
	}
	if ep.Enabled {
		// The hosts pull from their own registry only: its mirrors replace
		// the install-config's (docs/airgap.md).
		in.Payload = ep.Payload()
		in.RegistriesConf = []byte(manifests.GenerateRegistriesConf(ep.Sources))
		in.PublicContainerRegistries = []string{"quay.io", extiso.LocalRegistry}
		for _, m := range ep.Manifests {
			for _, e := range in.ExtraManifests {
				if e.FileName == m.FileName {
					return ignition.Input{}, fmt.Errorf("%s: an extra manifest of that name is already given; --embed-payload writes its own", m.FileName)
				}
			}
			in.ExtraManifests = append(in.ExtraManifests, m)
		}
	}
	hosts := asset.Get[*AgentHosts](p).Hosts
	// Laid out as the release's client reads them, or refused (naming
	// the release) when it cannot apply them.
	sharedFencing, hostFencing, err := manifests.FencingFiles(icA.Config, hosts, icA.lines, rel.Version)
	if err != nil {
		return ignition.Input{}, fmt.Errorf("invalid agent configuration: %w", err)
	}
	in.FencingCredentialsYAML = sharedFencing
	for i, h := range hosts {
		ih := ignition.Host{Hostname: h.Hostname, Role: h.Role, InstallerArgs: h.InstallerArgs, IgnitionConfigOverride: h.IgnitionConfigOverride,
			FencingCredentialsYAML: hostFencing[i]}
		for _, itf := range h.Interfaces {
			ih.MACs = append(ih.MACs, manifests.NormalizeMAC(itf.MACAddress))
		}
		if h.RootDeviceHints != nil {
			b, err := yaml.Marshal(h.RootDeviceHints)
			if err != nil {
				return ignition.Input{}, fmt.Errorf("host %d: encode rootDeviceHints: %w", i, err)
			}
			ih.RootDeviceHintsYAML = b
		}
		in.Hosts = append(in.Hosts, ih)
	}
	return in, nil
}

// ztpFiles renders the manifests as cluster-manifests/ holds them, with
// the ClusterImageSet naming the release by digest (pinned) even when the
// user's copy names it by tag: digest-only mirrors serve only that.
func ztpFiles(m *AgentManifests, pinned string) ([]ignition.Manifest, error) {
	cis := m.ClusterImageSet
	if cis != nil && cis.Spec.ReleaseImage != pinned {
		c := *cis
		c.Spec.ReleaseImage = pinned
		cis = &c
	}
	objs := map[string]any{
		assetdir.PullSecret:          m.PullSecret,
		assetdir.InfraEnv:            m.InfraEnv,
		assetdir.AgentClusterInstall: m.ACI,
		assetdir.ClusterDeployment:   m.ClusterDeployment,
		assetdir.ClusterImageSet:     cis,
	}
	return manifestFiles(objs, m.NMStateConfigs)
}

// manifestFiles renders objs (keyed by their cluster-manifests/ path) and
// the NMStateConfigs (one multi-document file, none when empty) as the
// manifests the ISO carries, sorted by file name.
func manifestFiles(objs map[string]any, nm []manifests.NMStateConfig) ([]ignition.Manifest, error) {
	var out []ignition.Manifest
	for file, o := range objs {
		b, err := marshalYAML(o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out = append(out, ignition.Manifest{FileName: path.Base(file), Contents: b})
	}
	if len(nm) > 0 {
		b, err := marshalNMStateConfigs(nm)
		if err != nil {
			return nil, err
		}
		out = append(out, ignition.Manifest{FileName: path.Base(assetdir.NMStateConfig), Contents: b})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].FileName < out[j].FileName })
	return out, nil
}

// OSImage is the RHCOS live ISO assisted-service advertises (OS_IMAGES),
// named by the release payload's own CoreOS stream for the cluster's
// architecture. When the payload was not read (--offline), the base ISO
// given (--base-iso, a local file) says which RHCOS the hosts boot: its
// volume ID (rhcos-<release>) is the entry's version, a file: URL of its
// path the entry's url (assisted-service requires one and fetches nothing
// from it in the agent's flows; no download URL is made up). Only when
// nothing says which RHCOS it is, the stream embedded in this build names
// it, with a warning.
type OSImage struct {
	Warnings
	Image ignition.OSImage `json:"image"`
}

// Name implements asset.Asset.
func (*OSImage) Name() string { return "OS Image" }

// Doing implements asset.Described.
func (*OSImage) Doing() string { return "determine the RHCOS image the hosts install" }

// Dependencies implements asset.Asset.
func (*OSImage) Dependencies() []asset.Asset {
	return []asset.Asset{&ReleasePayload{}, &Architecture{}, &ImageOptions{}}
}

// Generate implements asset.Asset.
func (a *OSImage) Generate(_ context.Context, p asset.Parents) error {
	arch := asset.Get[*Architecture](p).Arch
	rel := asset.Get[*ReleasePayload](p)
	var why string
	if len(rel.Stream) == 0 {
		var release, url string
		release, url, why = baseISORHCOS(asset.Get[*ImageOptions](p).BaseISO)
		if release != "" {
			a.Image = ignition.OSImage{CPUArchitecture: arch, URL: url, Version: release, OpenshiftVersion: rel.Version}
			return nil
		}
	}
	st, err := baseiso.ParseStream(rel.StreamJSON())
	if err != nil {
		return fmt.Errorf("RHCOS stream metadata of release %s: %w", rel.PullSpec, err)
	}
	art, err := baseiso.LiveISO(st, arch)
	if err != nil {
		return fmt.Errorf("release %s: %w", rel.PullSpec, err)
	}
	if len(rel.Stream) == 0 {
		a.Warn = append(a.Warn, fmt.Sprintf("the RHCOS stream of release %s is unknown (%s) and %s, so OS_IMAGES (the live ISOs assisted-service is told of; none is fetched from it) names the RHCOS embedded in this build, %s of stream %s",
			rel.PullSpec, rel.streamUnknownWhy(), why, art.Release, st.Stream))
	}
	a.Image = ignition.OSImage{CPUArchitecture: art.Arch, URL: art.URL, Version: art.Release, OpenshiftVersion: rel.Version}
	return nil
}

// rhcosRelease is an RHCOS release as a live ISO's volume ID names it
// (rhcos-9.6.20250925-0, rhcos-418.94.202501221327-0).
var rhcosRelease = regexp.MustCompile(`^[0-9]+(\.[0-9]+)+-[0-9]+$`)

// baseISORHCOS reads which RHCOS the base ISO given is, without the
// release's stream: its release (from the volume ID) and a file: URL of
// its path; else why it is not known. An http(s) URL is not read here.
func baseISORHCOS(given string) (release, fileURL, why string) {
	if given == "" {
		return "", "", "no --base-iso names the hosts' RHCOS"
	}
	path, local, err := baseiso.LocalPath(given)
	if err != nil {
		return "", "", err.Error()
	}
	if !local {
		return "", "", fmt.Sprintf("base ISO %s is not read offline", redact.URL(given))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", fmt.Sprintf("base ISO %s: %v", path, err)
	}
	iso, f, err := isoeditor.OpenFile(abs)
	if err != nil {
		return "", "", fmt.Sprintf("base ISO %s cannot be read (%v)", abs, err)
	}
	f.Close()
	v := iso.VolumeID()
	r, ok := strings.CutPrefix(v, "rhcos-")
	if !ok || !rhcosRelease.MatchString(r) {
		return "", "", fmt.Sprintf("base ISO %s does not say which RHCOS it is (its volume ID is %q, not rhcos-<release>)", abs, v)
	}
	return r, (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String(), ""
}

// applyOCMirror adds oc-mirror's cluster resources to the install: its
// mirror sets must be in the hosts' registries.conf (RegistriesConf adds
// them; a mirror/registries.conf the user put in --dir must name them
// too), the other resources become extra manifests.
func applyOCMirror(in *ignition.Input, r *ocmirror.Resources, conf string) error {
	have := map[string]bool{}
	for _, l := range manifests.RegistriesConfLocations(conf) {
		have[l] = true
	}
	for _, s := range r.DigestSources {
		if !have[s.Source] {
			return fmt.Errorf("%s replaces the generated mirror configuration and has no entry for %s, which oc-mirror's %s mirrors (--mirror-from): remove %s so that agentiso writes it, or add the source",
				assetdir.RegistriesConf, s.Source, r.Dir, assetdir.RegistriesConf)
		}
	}
	for _, m := range r.Manifests {
		for _, e := range in.ExtraManifests {
			if e.FileName == m.FileName {
				return fmt.Errorf("%s: an extra manifest of that name is already in %s/; --mirror-from writes its own from %s", m.FileName, assetdir.ExtraManifestsDir, r.Dir)
			}
		}
		in.ExtraManifests = append(in.ExtraManifests, ignition.Manifest{FileName: m.FileName, Contents: m.Contents})
	}
	return nil
}
