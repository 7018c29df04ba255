package agent

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/pkg/arch"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/baseiso"
	"github.com/seed-a052040e/agentiso/pkg/ignition"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
	"github.com/seed-a052040e/agentiso/pkg/nmstate"
	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
	"github.com/seed-a052040e/agentiso/pkg/release"
)

// nodeZeroIP is the add-nodes ISO's rendezvous IP: every new host is its
// own node zero and installs alone (upstream: the addnodes case of the
// installer's agent ignition).
const nodeZeroIP = "127.0.0.1"

// NodeIgnition is the node ISO's Ignition config: the agent ISO's, in the
// add-nodes mode, from the installed cluster and the hosts to add.
type NodeIgnition struct {
	Warnings
	Config []byte        `json:"-"`
	Size   ignition.Size `json:"-"`
	Arch   string        `json:"-"`
	FIPS   bool          `json:"-"`
}

// Name implements asset.Asset.
func (*NodeIgnition) Name() string { return "Node Image Ignition" }

// Dependencies implements asset.Asset.
func (*NodeIgnition) Dependencies() []asset.Asset {
	return []asset.Asset{&ClusterInfo{}, &NodeHosts{}, &NodeRelease{}, &NodeAuthConfig{}, &InfraEnvID{}}
}

// Volatile implements asset.Volatile: built from the cluster as it is now.
func (*NodeIgnition) Volatile() {}

// Generate implements asset.Asset.
func (a *NodeIgnition) Generate(_ context.Context, p asset.Parents) error {
	cia := asset.Get[*ClusterInfo](p)
	ci := cia.Info
	nc := asset.Get[*NodeHosts](p).Config
	rel := asset.Get[*NodeRelease](p)
	auth := asset.Get[*NodeAuthConfig](p)
	ic := cia.installConfig()

	hosts := make([]manifests.Host, len(nc.Hosts))
	for i, h := range nc.Hosts {
		if h.Role == "" {
			h.Role = "worker"
		}
		hosts[i] = manifests.Host{AgentHost: h, File: nodesConfigFile, Path: fmt.Sprintf("hosts[%d]", i)}
	}
	streamJSON, from := nodeStream(ci, &rel.ReleasePayload)
	st, err := baseiso.ParseStream(streamJSON)
	if err != nil {
		return fmt.Errorf("RHCOS stream metadata of %s: %w", from, err)
	}
	art, err := baseiso.LiveISO(st, ci.Arch)
	if err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	if w := nodeStreamDiffers(ci, &rel.ReleasePayload); w != "" {
		a.Warn = append(a.Warn, w)
	}
	pub, err := auth.PublicKeyPEM()
	if err != nil {
		return err
	}
	in := ignition.Input{
		ClusterName: ci.ClusterName, BaseDomain: ci.BaseDomain,
		ReleaseImage: rel.Pinned, ReleaseVersion: rel.Version, Arch: rel.Arch,
		OSImages:     []ignition.OSImage{{CPUArchitecture: art.Arch, URL: art.URL, Version: art.Release, OpenshiftVersion: rel.Version}},
		RendezvousIP: nodeZeroIP, InfraEnvID: asset.Get[*InfraEnvID](p).ID, ImageType: fullISO,
		// Every host counts as a worker, whatever its role, as upstream's
		// node-joiner counts them (the addnodes case of
		// pkg/asset/agent/image/ignition.go): the counts feed only the
		// install's start-cluster-installation, which add-nodes does not
		// run. A host's role goes to its host configuration (below).
		WorkerAgents:    len(hosts),
		RegistriesConf:  []byte(manifests.GenerateRegistriesConf(ic.MirrorSources())),
		CABundle:        []byte(ci.TrustBundle),
		PullSecret:      ci.PullSecret,
		SSHKey:          ci.SSHKey,
		MachineNetworks: ci.MachineNetworks,
		Auth: ignition.Auth{PublicKeyPEM: string(pub), AgentToken: auth.AgentAuthToken,
			UserToken: auth.UserAuthToken, WatcherToken: auth.WatcherAuthToken},
		AddNodes: &ignition.AddNodes{ClusterID: ci.ClusterID, ClusterName: ci.ClusterName, APIDNSName: ci.APIDNSName,
			UserManagedNetworking: ci.UserManagedNetworking(), IgnitionEndpointURL: ci.IgnitionEndpoint,
			IgnitionEndpointCA: ci.IgnitionCA, Chrony: ci.Chrony, AuthTokenExpiry: auth.AuthTokenExpiry},
	}
	if ci.Proxy != nil {
		in.Proxy = &ignition.Proxy{HTTPProxy: ci.Proxy.HTTPProxy, HTTPSProxy: ci.Proxy.HTTPSProxy, NoProxy: ci.Proxy.NoProxy}
	}
	if in.ZTPManifests, err = nodeZTPManifests(ic, hosts); err != nil {
		return err
	}
	for i, h := range hosts {
		ih := ignition.Host{Hostname: h.Hostname, Role: h.Role, InstallerArgs: h.InstallerArgs, IgnitionConfigOverride: h.IgnitionConfigOverride}
		var ifaces []nmstate.HostInterface
		for _, itf := range h.Interfaces {
			ih.MACs = append(ih.MACs, manifests.NormalizeMAC(itf.MACAddress))
			ifaces = append(ifaces, nmstate.HostInterface{Name: itf.Name, MACAddress: itf.MACAddress})
		}
		if h.RootDeviceHints != nil {
			b, err := yaml.Marshal(h.RootDeviceHints)
			if err != nil {
				return fmt.Errorf("%s: hosts[%d]: rootDeviceHints: %w", nodesConfigFile, i, err)
			}
			ih.RootDeviceHintsYAML = b
		}
		in.Hosts = append(in.Hosts, ih)
		if h.HasNetworkConfig() {
			y, err := yaml.JSONToYAML(h.NetworkConfig)
			if err != nil {
				return fmt.Errorf("%s: hosts[%d].networkConfig: %w", nodesConfigFile, i, err)
			}
			files, err := nmstate.HostFiles(i, y, ifaces)
			if err != nil {
				return fmt.Errorf("%s: hosts[%d].networkConfig: %w", nodesConfigFile, i, err)
			}
			for _, f := range files {
				in.NetworkFiles = append(in.NetworkFiles, ignition.NetworkFile{Path: f.Path, Mode: 0o600, Contents: f.Contents})
			}
		}
	}
	cfg, size, err := ignition.Build(in)
	if err != nil {
		return fmt.Errorf("build ignition: %w", err)
	}
	b, err := ignition.MarshalIndent(cfg)
	if err != nil {
		return err
	}
	a.Config, a.Size, a.Arch, a.FIPS = b, size, ci.Arch, ci.FIPS
	return nil
}

const nodesConfigFile = nodejoin.NodesConfigFile

// nodeZTPManifests are the manifests agent-installer-client
// registerInfraEnv reads in the add-nodes workflow: the InfraEnv, its pull
// secret and the hosts' NMStateConfigs.
func nodeZTPManifests(ic *manifests.InstallConfig, hosts []manifests.Host) ([]ignition.Manifest, error) {
	return manifestFiles(map[string]any{
		assetdir.InfraEnv:   manifests.GenerateInfraEnv(ic, nil, nodeZeroIP),
		assetdir.PullSecret: manifests.GeneratePullSecret(ic),
	}, manifests.GenerateNMStateConfigs(ic, hosts))
}

// nodeStream is the CoreOS stream that names the node ISO's RHCOS, in
// OS_IMAGES and as its base ISO, and what it is (for messages): the
// cluster's own (configmap coreos-bootimages), as upstream's node-joiner
// takes it (openshift/installer pkg/asset/agent/joiner/clusterinfo.go
// retrieveOsImage, commit c1436495; pkg/asset/agent/image/ignition.go, the
// addnodes case, commit ecc6a712), else, on a cluster without that
// configmap, the release payload's.
func nodeStream(ci *nodejoin.ClusterInfo, rel *ReleasePayload) ([]byte, string) {
	if len(ci.BootStream) > 0 {
		return ci.BootStream, "the cluster's RHCOS stream (configmap openshift-machine-config-operator/coreos-bootimages)"
	}
	return rel.StreamJSON(), "the RHCOS stream of release " + rel.PullSpec
}

// nodeStreamDiffers says, when the cluster's stream and its release
// payload's name different RHCOS releases for the new hosts'
// architecture, which one the node ISO takes ("" when they agree, or one
// is unknown). Upstream's node-joiner warns of the same difference
// (pkg/asset/agent/image/baseiso.go checkReleasePayloadBaseISOVersion,
// commit 41ac01a1).
func nodeStreamDiffers(ci *nodejoin.ClusterInfo, rel *ReleasePayload) string {
	if len(ci.BootStream) == 0 || len(rel.Stream) == 0 {
		return ""
	}
	st, err := baseiso.ParseStream(rel.Stream)
	if err != nil {
		return ""
	}
	art, err := baseiso.LiveISO(st, ci.Arch)
	if err != nil || art.Release == ci.BootRelease {
		return ""
	}
	return fmt.Sprintf("the cluster's RHCOS stream (configmap openshift-machine-config-operator/coreos-bootimages) names RHCOS %s for %s, its release payload's stream %s: the node ISO boots and names the cluster's, as upstream's node-joiner names it",
		ci.BootRelease, ci.Arch, art.Release)
}

// NodeBaseISO is the RHCOS live ISO the new hosts boot: the one the
// cluster's stream names (nodeStream), found as the agent ISO's base
// (ImageOptions: --base-iso, the cache, a download checked by the
// stream's sha256, the payload's machine-os-images when it holds that same
// ISO).
type NodeBaseISO struct {
	BaseISO
}

// Name implements asset.Asset.
func (*NodeBaseISO) Name() string { return "Node Image Base ISO" }

// Dependencies implements asset.Asset.
func (*NodeBaseISO) Dependencies() []asset.Asset {
	return []asset.Asset{&NodeRelease{}, &ClusterInfo{}, &ImageOptions{}}
}

// Generate implements asset.Asset.
func (a *NodeBaseISO) Generate(ctx context.Context, p asset.Parents) error {
	ci := asset.Get[*ClusterInfo](p)
	rel := asset.Get[*NodeRelease](p).ReleasePayload
	if st, _ := nodeStream(ci.Info, &rel); !bytes.Equal(st, rel.Stream) {
		// The cluster's stream names the ISO. The payload's
		// machine-os-images holds the payload's: it serves only when that
		// is the same file.
		if !sameLiveISO(st, rel.Stream, ci.Info.Arch) {
			rel.MachineOSImages = ""
		}
		rel.Stream = st
	}
	return a.resolve(ctx, &rel, ci.Info.Arch, asset.Get[*ImageOptions](p),
		func() (*release.Client, error) { return ci.releaseClient() })
}

// sameLiveISO reports whether two CoreOS streams name the same live ISO
// (by sha256) for cpu.
func sameLiveISO(a, b []byte, cpu string) bool {
	iso := func(raw []byte) string {
		st, err := baseiso.ParseStream(raw)
		if err != nil {
			return ""
		}
		art, err := baseiso.LiveISO(st, cpu)
		if err != nil {
			return ""
		}
		return art.SHA256
	}
	x := iso(a)
	return x != "" && x == iso(b)
}

// NodeISO is node.<arch>.iso (or -o's name): the base ISO with the node
// Ignition config embedded, streamed as the agent ISO is.
type NodeISO struct {
	AgentISO
}

// Name implements asset.Asset.
func (*NodeISO) Name() string { return "Node Image ISO" }

// Doing implements asset.Described.
func (*NodeISO) Doing() string { return "build the node ISO" }

// Dependencies implements asset.Asset.
func (*NodeISO) Dependencies() []asset.Asset {
	return []asset.Asset{&NodeIgnition{}, &NodeBaseISO{}, &ImageOptions{}, &NodeImageOptions{}, &NodeHosts{}, &ClusterInfo{}}
}

// Generate implements asset.Asset.
func (a *NodeISO) Generate(_ context.Context, p asset.Parents) error {
	ign := asset.Get[*NodeIgnition](p)
	o := asset.Get[*ImageOptions](p)
	if asset.Get[*NodeHosts](p).Config.BootArtifactsBaseURL != "" {
		return fmt.Errorf("%s: bootArtifactsBaseURL is where the PXE files are served from, for their iPXE script: give --pxe for PXE files, or remove it for an ISO", nodesConfigFile)
	}
	a.arch, a.private = ign.Arch, true
	a.archFrom = asset.Get[*ClusterInfo](p).ArchFrom
	name := asset.Get[*NodeImageOptions](p).OutputName
	if name != "" && (name != path.Base(name) || strings.ContainsAny(name, `/\`) || name == "." || name == ".." || strings.HasPrefix(name, ".")) {
		return fmt.Errorf("--output-name %q: give a plain file name; the ISO is written in --dir", name)
	}
	a.File = NodeISOName(name, ign.Arch)
	a.Base = asset.Get[*NodeBaseISO](p).Path
	a.config, a.size = ign.Config, ign.Size
	a.kargs = nil
	if ign.FIPS {
		a.kargs = []string{"fips=1"}
	}
	a.reset, a.report = o.ResetBaseISO, o.Report
	a.records = baseiso.HashRecords(o.CacheDir)
	return a.checkBase()
}

// NodeISOName is the node ISO's file name: name when given, else
// node.<arch>.iso (as oc adm node-image create).
func NodeISOName(name, cpu string) string {
	if name != "" {
		return name
	}
	if a, err := arch.Normalize(cpu); err == nil {
		cpu = a
	}
	return assetdir.NodeISO(cpu)
}

// NodePXEFiles are node-image create --pxe's files: the node image's
// kernel, initrd (with the node Ignition config appended) and root file
// system under boot-artifacts/ as node.<arch>-vmlinuz, -initrd.img,
// -rootfs.img (upstream's node-joiner names), and with
// bootArtifactsBaseURL in nodes-config.yaml an iPXE script,
// node.<arch>.ipxe. Built as create pxe-files builds an install's.
type NodePXEFiles struct {
	PXEFiles
}

// Name implements asset.Asset.
func (*NodePXEFiles) Name() string { return "Node Image PXE Files" }

// Doing implements asset.Described.
func (*NodePXEFiles) Doing() string { return "build the node image's PXE files" }

// Dependencies implements asset.Asset.
func (*NodePXEFiles) Dependencies() []asset.Asset {
	return []asset.Asset{&NodeIgnition{}, &NodeBaseISO{}, &ImageOptions{}, &NodeHosts{}, &ClusterInfo{}}
}

// Generate implements asset.Asset.
func (a *NodePXEFiles) Generate(_ context.Context, p asset.Parents) error {
	ign := asset.Get[*NodeIgnition](p)
	kargs := ""
	if ign.FIPS {
		kargs = "fips=1"
	}
	return a.fill(pxeInput{arch: ign.Arch, base: asset.Get[*NodeBaseISO](p).Path, opts: asset.Get[*ImageOptions](p), kargs: kargs,
		ignition: ign.Config, baseURL: asset.Get[*NodeHosts](p).Config.BootArtifactsBaseURL,
		name: assetdir.NodeBootArtifact, ipxe: assetdir.NodeIPXEScript, urlFrom: nodesConfigFile,
		archFrom: asset.Get[*ClusterInfo](p).ArchFrom})
}

// NodeImageTargets are what node-image create writes: the node ISO (or,
// with pxe, its PXE files) and its watcher token (for node-image
// monitor), together or not at all.
func NodeImageTargets(pxe bool) []asset.Asset {
	if pxe {
		return []asset.Asset{&NodePXEFiles{}, &NodeWatcherToken{}}
	}
	return []asset.Asset{&NodeISO{}, &NodeWatcherToken{}}
}
