package agent

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/credentials"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
	"github.com/seed-a052040e/agentiso/pkg/release"
	"github.com/seed-a052040e/agentiso/pkg/releasepolicy"
)

// The node-image assets (docs/add-nodes.md): NodeImageOptions (the
// command's) and the hosts (NodesConfigFile or the single-host flags) are
// read; ClusterInfo reads the installed cluster over its API; the node
// ISO is then built by the same machinery as the agent ISO (release
// payload, base ISO, Ignition builder in its add-nodes mode), from the
// cluster's own release, pull secret, mirrors, trust bundle and proxy.

// NodeImageOptions are node-image create's choices, provided by the
// command.
type NodeImageOptions struct {
	// Cluster is the installed cluster's API (a kubeapi client built from
	// --kubeconfig): read, and the ISO's tokens kept in its
	// agent-auth-token secret. Not part of the value.
	Cluster nodejoin.Writer `json:"-"`
	// Source names where the cluster's credentials come from, for messages.
	Source string `json:"source,omitempty"`
	// Single is the host of the single-host flags (--mac-address ...);
	// nil means nodes-config.yaml.
	Single *nodejoin.NodesConfig `json:"-"`
	// OutputName is -o/--output-name: the ISO's file name in --dir
	// (default node.<arch>.iso).
	OutputName string `json:"outputName,omitempty"`
	// PXE is --pxe: PXE files (NodePXEFiles) instead of the ISO.
	PXE bool `json:"pxe,omitempty"`
	// TokenLifetime is how long the ISO's assisted-service tokens are
	// valid (upstream: 48 hours); 0 means DefaultNodeTokenLifetime.
	TokenLifetime time.Duration `json:"-"`
	// Now is the clock, for tests; nil means time.Now.
	Now func() time.Time `json:"-"`
}

// DefaultNodeTokenLifetime is how long a node ISO's tokens stay valid, as
// upstream's add-nodes tokens (the exp claim): the ISO must then be built
// again.
const DefaultNodeTokenLifetime = 48 * time.Hour

// Volatile implements asset.Volatile.
func (*NodeImageOptions) Volatile() {}

// Name implements asset.Asset.
func (*NodeImageOptions) Name() string { return "Node Image Options" }

// Dependencies implements asset.Asset.
func (*NodeImageOptions) Dependencies() []asset.Asset { return nil }

// Generate implements asset.Asset: nothing provided.
func (*NodeImageOptions) Generate(context.Context, asset.Parents) error { return nil }

// NodesConfigFile is nodes-config.yaml in the asset directory, when there.
type NodesConfigFile struct {
	Config *nodejoin.NodesConfig `json:"-"`
}

// Name implements asset.Asset.
func (*NodesConfigFile) Name() string { return "Nodes Config" }

// Dependencies implements asset.Asset.
func (*NodesConfigFile) Dependencies() []asset.Asset { return nil }

// Volatile implements asset.Volatile: read on every run.
func (*NodesConfigFile) Volatile() {}

// Generate implements asset.Asset: there is no nodes-config.yaml.
func (*NodesConfigFile) Generate(context.Context, asset.Parents) error { return nil }

// Load implements asset.Loader.
func (a *NodesConfigFile) Load(d asset.Dir) (bool, error) {
	b, ok, err := readOptional(d, nodejoin.NodesConfigFile)
	if !ok || err != nil {
		return false, err
	}
	nc, err := nodejoin.ParseNodesConfig(b)
	if err != nil {
		return false, err
	}
	a.Config = nc
	return true, nil
}

// NodeHosts are the hosts to add: the single-host flags' when given (then
// nodes-config.yaml is not used, as oc adm node-image create), else
// nodes-config.yaml's.
type NodeHosts struct {
	Config *nodejoin.NodesConfig `json:"-"`
}

// Name implements asset.Asset.
func (*NodeHosts) Name() string { return "Nodes To Add" }

// Doing implements asset.Described.
func (*NodeHosts) Doing() string { return "find the hosts to add" }

// Dependencies implements asset.Asset.
func (*NodeHosts) Dependencies() []asset.Asset {
	return []asset.Asset{&NodeImageOptions{}, &NodesConfigFile{}}
}

// Volatile implements asset.Volatile.
func (*NodeHosts) Volatile() {}

// Generate implements asset.Asset.
func (a *NodeHosts) Generate(_ context.Context, p asset.Parents) error {
	if s := asset.Get[*NodeImageOptions](p).Single; s != nil {
		a.Config = s
		return nil
	}
	if f := asset.Get[*NodesConfigFile](p).Config; f != nil {
		a.Config = f
		return nil
	}
	return fmt.Errorf("no hosts to add: write %s in the directory (hosts as in agent-config.yaml), or give one host with --mac-address", nodejoin.NodesConfigFile)
}

// ClusterInfo is what the installed cluster says of itself, read over
// its API (nodejoin.Inspect), after the refusals: a platform that is not
// on-prem, a new host whose name, MAC or IP belongs to a node, a role the
// cluster's release does not take for a day-2 host (nodejoin.CheckRoles).
type ClusterInfo struct {
	Warnings
	Info *nodejoin.ClusterInfo `json:"-"`
	// ArchFrom says where Info.Arch came from, as upstream's node-joiner
	// takes it (openshift/installer pkg/asset/agent/joiner/clusterinfo.go
	// retrieveArchitecture, commit c1436495): cpuArchitecture, else the
	// first control-plane node's status.nodeInfo.architecture.
	ArchFrom string `json:"-"`
}

// Name implements asset.Asset.
func (*ClusterInfo) Name() string { return "Installed Cluster" }

// Doing implements asset.Described.
func (*ClusterInfo) Doing() string { return "read the installed cluster" }

// Dependencies implements asset.Asset.
func (*ClusterInfo) Dependencies() []asset.Asset {
	return []asset.Asset{&NodeImageOptions{}, &NodeHosts{}}
}

// Volatile implements asset.Volatile: the cluster is read on every run.
func (*ClusterInfo) Volatile() {}

// Generate implements asset.Asset.
func (a *ClusterInfo) Generate(ctx context.Context, p asset.Parents) error {
	o := asset.Get[*NodeImageOptions](p)
	if o.Cluster == nil {
		return errors.New("no cluster to read: pass --kubeconfig (or set $KUBECONFIG) with the installed cluster's credentials")
	}
	nc := asset.Get[*NodeHosts](p).Config
	ci, err := nodejoin.Inspect(ctx, o.Cluster, nodejoin.InspectOptions{Arch: nc.CPUArchitecture, SSHKey: nc.SSHKey})
	if err != nil {
		return err
	}
	if err := nodejoin.CheckHosts(ci, nc.NewHosts()); err != nil {
		return fmt.Errorf("%s: these hosts cannot be added:\n%w", nodejoin.NodesConfigFile, err)
	}
	notes, err := nodejoin.CheckRoles(nc, ci)
	if err != nil {
		return err
	}
	a.Warn = append(a.Warn, notes...)
	a.Warn = append(a.Warn, ci.Notes...)
	a.Info = ci
	a.ArchFrom = "the architecture of the cluster's control-plane nodes, status.nodeInfo.architecture; set cpuArchitecture in nodes-config.yaml for others"
	if nc.CPUArchitecture != "" {
		a.ArchFrom = "cpuArchitecture in nodes-config.yaml, or --cpu-architecture"
	}
	return nil
}

// installConfig is the cluster as an install-config, so that the
// install's generators (ZTP manifests, registries.conf, the registry
// client) serve the node ISO too.
func (a *ClusterInfo) installConfig() *manifests.InstallConfig {
	ci := a.Info
	ic := &manifests.InstallConfig{APIVersion: "v1", Metadata: manifests.ObjectMeta{Name: ci.ClusterName, Namespace: "cluster0"},
		BaseDomain: ci.BaseDomain, PullSecret: ci.PullSecret, SSHKey: ci.SSHKey, FIPS: ci.FIPS,
		AdditionalTrustBundle: ci.TrustBundle, ControlPlane: &manifests.MachinePool{Name: "master", Architecture: ci.Arch},
		Networking: &manifests.Networking{}}
	if ci.Proxy != nil {
		ic.Proxy = &manifests.Proxy{HTTPProxy: ci.Proxy.HTTPProxy, HTTPSProxy: ci.Proxy.HTTPSProxy, NoProxy: ci.Proxy.NoProxy}
	}
	for _, m := range append(append([]nodejoin.Mirror{}, ci.DigestMirrors...), ci.LegacyMirrors...) {
		ic.ImageDigestSources = append(ic.ImageDigestSources, manifests.ImageDigestSource{Source: m.Source, Mirrors: m.Mirrors})
	}
	for _, n := range ci.MachineNetworks {
		ic.Networking.MachineNetwork = append(ic.Networking.MachineNetwork, manifests.MachineNetwork{CIDR: n})
	}
	return ic
}

func (a *ClusterInfo) releaseClient() (*release.Client, error) {
	o := ReleaseClientOptions(a.installConfig(), a.Info.PullSecret, a.Info.TrustBundle, a.Info.Arch)
	o.ArchFrom = a.ArchFrom
	return release.New(o)
}

// NodeRelease is the cluster's release (ClusterVersion), read from its
// payload through the cluster's mirrors with the cluster's pull secret,
// and checked against the release policy.
type NodeRelease struct {
	ReleasePayload
	Support releasepolicy.Support `json:"-"`
}

// Name implements asset.Asset.
func (*NodeRelease) Name() string { return "Cluster Release Payload" }

// Doing implements asset.Described.
func (*NodeRelease) Doing() string { return "read the cluster's release payload" }

// Dependencies implements asset.Asset.
func (*NodeRelease) Dependencies() []asset.Asset { return []asset.Asset{&ClusterInfo{}} }

// Volatile implements asset.Volatile.
func (*NodeRelease) Volatile() {}

// Generate implements asset.Asset.
func (a *NodeRelease) Generate(ctx context.Context, p asset.Parents) error {
	ci := asset.Get[*ClusterInfo](p)
	c, err := ci.releaseClient()
	if err != nil {
		return fmt.Errorf("release image %s: %w", ci.Info.ReleaseImage, err)
	}
	if err := a.resolve(ctx, c, &ReleaseImage{PullSpec: ci.Info.ReleaseImage, Origin: "the cluster's ClusterVersion"}); err != nil {
		return err
	}
	if a.Version != ci.Info.Version {
		return fmt.Errorf("the cluster's release image %s is OpenShift %s, but its ClusterVersion says %s", ci.Info.ReleaseImage, a.Version, ci.Info.Version)
	}
	s, err := releasepolicy.For(a.Version)
	if err != nil {
		return fmt.Errorf("the cluster runs %s: %w", a.Version, err)
	}
	a.Support = s
	if w := s.Warning(); w != "" {
		a.Warn = append(a.Warn, w)
	}
	return nil
}

// NodeAuthConfig are the node ISO's assisted-service key and tokens; they
// expire (the exp claim), as upstream's add-nodes tokens, and are kept in
// the cluster's openshift-config/agent-auth-token secret as upstream's
// node-joiner keeps them (nodejoin.StoreAuthTokens), where `oc adm
// node-image monitor` reads them: the secret's tokens when they have more
// than 24 hours left, else new ones. The secret is written once the
// cluster was read and the hosts and release checked.
type NodeAuthConfig struct {
	Warnings
	credentials.AuthConfig
}

// Name implements asset.Asset.
func (*NodeAuthConfig) Name() string { return "Node Image Auth Config" }

// Doing implements asset.Described.
func (*NodeAuthConfig) Doing() string { return "keep the node ISO's tokens in the cluster" }

// Dependencies implements asset.Asset.
func (*NodeAuthConfig) Dependencies() []asset.Asset {
	return []asset.Asset{&NodeImageOptions{}, &ClusterInfo{}, &NodeRelease{}}
}

// Volatile implements asset.Volatile: new tokens for every ISO.
func (*NodeAuthConfig) Volatile() {}

// Generate implements asset.Asset.
func (a *NodeAuthConfig) Generate(ctx context.Context, p asset.Parents) error {
	o := asset.Get[*NodeImageOptions](p)
	now, life := time.Now, o.TokenLifetime
	if o.Now != nil {
		now = o.Now
	}
	if life <= 0 {
		life = DefaultNodeTokenLifetime
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	t := now()
	exp := t.Add(life).UTC().Truncate(time.Second)
	ac, err := credentials.NewAuthConfig(rand.Reader, key, exp)
	if err != nil {
		return err
	}
	if o.Cluster == nil {
		return errors.New("no cluster to keep the ISO's tokens in: pass --kubeconfig (or set $KUBECONFIG) with the installed cluster's credentials")
	}
	use, reused, err := nodejoin.StoreAuthTokens(ctx, o.Cluster, nodejoin.AuthTokens{PublicKey: ac.PublicKey, Agent: ac.AgentAuthToken,
		User: ac.UserAuthToken, Watcher: ac.WatcherAuthToken, Expiry: exp}, t)
	if err != nil {
		return err
	}
	if !reused {
		a.AuthConfig = *ac
		return nil
	}
	a.AuthConfig = credentials.AuthConfig{PublicKey: use.PublicKey, AgentAuthToken: use.Agent, UserAuthToken: use.User,
		WatcherAuthToken: use.Watcher, AuthTokenExpiry: use.Expiry.UTC().Format(time.RFC3339)}
	a.Warn = append(a.Warn, fmt.Sprintf("the tokens of secret %s/%s are used, as oc adm node-image create reuses them while they have more than 24 hours left: this ISO's tokens expire at %s, in %s",
		nodejoin.AuthTokenSecret.Namespace, nodejoin.AuthTokenSecret.Name, a.AuthTokenExpiry, use.Expiry.Sub(t).Round(time.Minute)))
	return nil
}

// NodeWatcherToken is .agentiso/node-watcher-token (0600): the watcher
// token of the node ISO written with it, which node-image monitor reads the
// hosts' own assisted-service with, first; then the tokens of the earlier
// node ISOs of the same directory that have not expired, so that hosts
// booted from one of those are still followed (issue 37 item 7). Each
// expires with its ISO's tokens.
type NodeWatcherToken struct {
	Token string   `json:"-"`
	Kept  []string `json:"-"`
}

// maxKeptWatcherTokens bounds the earlier ISOs' tokens kept.
const maxKeptWatcherTokens = 16

// Name implements asset.Asset.
func (*NodeWatcherToken) Name() string { return "Node Image Watcher Token" }

// Dependencies implements asset.Asset.
func (*NodeWatcherToken) Dependencies() []asset.Asset {
	return []asset.Asset{&NodeAuthConfig{}, &PreviousNodeWatcherTokens{}, &NodeImageOptions{}}
}

// Volatile implements asset.Volatile: the token of this run's ISO.
func (*NodeWatcherToken) Volatile() {}

// Generate implements asset.Asset.
func (a *NodeWatcherToken) Generate(_ context.Context, p asset.Parents) error {
	a.Token = asset.Get[*NodeAuthConfig](p).WatcherAuthToken
	if a.Token == "" {
		return errors.New("the node ISO's auth config holds no watcher token")
	}
	now := time.Now
	if o := asset.Get[*NodeImageOptions](p); o.Now != nil {
		now = o.Now
	}
	a.Kept = nodejoin.KeptWatcherTokens(asset.Get[*PreviousNodeWatcherTokens](p).File, a.Token, now(), maxKeptWatcherTokens)
	return nil
}

// Files implements asset.Writable.
func (a *NodeWatcherToken) Files() ([]asset.File, error) {
	data := a.Token + "\n"
	for _, t := range a.Kept {
		data += t + "\n"
	}
	return []asset.File{{Path: assetdir.NodeWatcherToken, Data: []byte(data), Mode: assetdir.Mode(assetdir.NodeWatcherToken)}}, nil
}

// PreviousNodeWatcherTokens is the watcher token file of --dir as it was
// before this run (node-image create provides it; empty when there was
// none).
type PreviousNodeWatcherTokens struct {
	File []byte `json:"-"`
}

// Name implements asset.Asset.
func (*PreviousNodeWatcherTokens) Name() string { return "Previous Node Image Watcher Tokens" }

// Dependencies implements asset.Asset.
func (*PreviousNodeWatcherTokens) Dependencies() []asset.Asset { return nil }

// Volatile implements asset.Volatile: read at each run.
func (*PreviousNodeWatcherTokens) Volatile() {}

// Generate implements asset.Asset: none given, none kept.
func (*PreviousNodeWatcherTokens) Generate(context.Context, asset.Parents) error { return nil }
