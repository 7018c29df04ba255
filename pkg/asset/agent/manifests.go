package agent

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
	"github.com/seed-a052040e/agentiso/pkg/release"
)

// AgentManifests gathers the six ZTP manifests and checks them against
// each other, the hosts and the release.
type AgentManifests struct {
	Warnings
	PullSecret        *manifests.Secret              `json:"pullSecret"`
	InfraEnv          *manifests.InfraEnv            `json:"infraEnv"`
	NMStateConfigs    []manifests.NMStateConfig      `json:"nmStateConfigs,omitempty"`
	ACI               *manifests.AgentClusterInstall `json:"aci"`
	ClusterDeployment *manifests.ClusterDeployment   `json:"clusterDeployment"`
	ClusterImageSet   *manifests.ClusterImageSet     `json:"clusterImageSet"`
}

// Name implements asset.Asset.
func (*AgentManifests) Name() string { return "Agent Manifests" }

// Doing says what a failure was doing, in the user's terms.
func (*AgentManifests) Doing() string { return "write the cluster manifests" }

// Dependencies implements asset.Asset.
func (*AgentManifests) Dependencies() []asset.Asset {
	// No ReleasePayload (nor ReleaseSupport, which reads it): `create
	// cluster-manifests` reads no registry (issue 21 item 11); what needs
	// the payload is checked by AgentIgnition.
	return []asset.Asset{&InstallConfig{}, &AgentConfig{}, &AgentHosts{}, &ReleaseImage{}, &RendezvousIP{}, &PullSecret{}, &InfraEnv{},
		&NMStateConfigs{}, &AgentClusterInstall{}, &ClusterDeployment{}, &ClusterImageSet{}, &MirrorFrom{}}
}

// Generate implements asset.Asset.
func (a *AgentManifests) Generate(_ context.Context, p asset.Parents) error {
	a.PullSecret = asset.Get[*PullSecret](p).Manifest
	a.InfraEnv = asset.Get[*InfraEnv](p).Manifest
	nm := asset.Get[*NMStateConfigs](p)
	a.NMStateConfigs = nm.Configs
	a.ACI = asset.Get[*AgentClusterInstall](p).Manifest
	a.ClusterDeployment = asset.Get[*ClusterDeployment](p).Manifest
	cis := asset.Get[*ClusterImageSet](p)
	a.ClusterImageSet = cis.Manifest

	var errs manifests.ErrorList
	collect := func(err error) {
		switch e := err.(type) {
		case nil:
		case manifests.ErrorList:
			errs = append(errs, e...)
		default:
			errs = append(errs, &manifests.FieldError{Type: manifests.TypeInvalid, Detail: err.Error()})
		}
	}
	req := asset.Get[*ReleaseImage](p)
	if err := givenVersionSupported(req); err != nil {
		return err
	}
	if err := tagLookedUpNowhere(req, asset.Get[*InstallConfig](p).Config, asset.Get[*MirrorFrom](p).Dir); err != nil {
		return err
	}
	// A user ClusterImageSet may name the release as the user spelled it
	// or pinned by digest; the ISO always carries the pinned one. Which
	// digest a tag pins is known only from the payload: that case is
	// checked by AgentIgnition (checkClusterImageSet).
	if !cisNeedsPayload(a.ClusterImageSet, req.PullSpec) {
		collect(manifests.ValidateClusterImageSet(a.ClusterImageSet, cis.lines, req.PullSpec))
	}
	collect(manifests.ValidateNMStateConfigs(a.NMStateConfigs, nm.lines))
	collect(manifests.CheckNMStateConfigLabels(a.NMStateConfigs, nm.lines, a.InfraEnv, asset.Get[*InfraEnv](p).lines, !nm.user))
	collect(a.crossReferences())
	icA, acA := asset.Get[*InstallConfig](p), asset.Get[*AgentConfig](p)
	lines := map[string]manifests.Lines{assetdir.InstallConfig: icA.lines, assetdir.AgentConfig: acA.lines}
	hosts := asset.Get[*AgentHosts](p).Hosts
	warns, clusterErr := manifests.ValidateCluster(icA.Config, hosts, asset.Get[*RendezvousIP](p).IP, lines)
	collect(clusterErr)
	// The release's version is known here only when given
	// (--release-version); AgentIgnition checks it against the payload.
	if req.Version != "" {
		collect(manifests.ValidateFencingRelease(icA.Config, req.Version, icA.lines))
	}
	a.addAll(warns)
	if len(errs) > 0 {
		return fmt.Errorf("invalid agent configuration: %w", errs)
	}
	return nil
}

// tagLookedUpNowhere refuses, in every command, a release by tag that no
// command could ever look up: its repository is mirrored by digest only
// (every install-config mirror is) and its source may not be contacted
// (sourcePolicy NeverContactSource). create image would fail on it only
// after the manifests were written; --mirror-from (whose oc-mirror
// output answers tags) and --offline (which refuses tags itself) are
// left to their own checks.
func tagLookedUpNowhere(req *ReleaseImage, ic *manifests.InstallConfig, mirrorFrom string) error {
	if ic == nil || req.Offline || mirrorFrom != "" || isDigest(req.PullSpec) {
		return nil
	}
	why := release.LookupRefused(mirrorsOf(ic.MirrorSources()), req.PullSpec)
	if why == "" {
		return nil
	}
	given := ""
	if req.Origin != "" {
		given = " (given by " + req.Origin + ")"
	}
	return fmt.Errorf("release image %s%s is a tag that nothing may look up (%s): %s mirrors by digest only, and the hosts pull by digest; give the release by digest (repository@sha256:..., the Pull From: line of its release.txt)",
		req.PullSpec, given, why, assetdir.InstallConfig)
}

// cisNeedsPayload reports whether a ClusterImageSet's release can be told
// equal to the release given (pullSpec) only by reading the payload: it
// names a digest that a tag may pin, or the given digest in another
// repository (its source, read through a mirror). Any other difference is
// a different release.
func cisNeedsPayload(cis *manifests.ClusterImageSet, pullSpec string) bool {
	if cis == nil || cis.Spec.ReleaseImage == "" || cis.Spec.ReleaseImage == pullSpec || !isDigest(cis.Spec.ReleaseImage) {
		return false
	}
	if !isDigest(pullSpec) {
		return true
	}
	digestOf := func(s string) string { return s[strings.LastIndex(s, "@")+1:] }
	return digestOf(cis.Spec.ReleaseImage) == digestOf(pullSpec)
}

// checkClusterImageSet is the check of a user ClusterImageSet against the
// release read from the payload: it names the release as given or as
// pinned by digest.
func checkClusterImageSet(cis *ClusterImageSet, rel *ReleasePayload) error {
	if cis.Manifest == nil || cis.Manifest.Spec.ReleaseImage == rel.PullSpec {
		return nil
	}
	return manifests.ValidateClusterImageSet(cis.Manifest, cis.lines, rel.Pinned)
}

// crossReferences checks that the manifests name each other consistently.
func (a *AgentManifests) crossReferences() error {
	var l manifests.ErrorList
	add := func(file, path string, v any, detail string, args ...any) {
		l = append(l, &manifests.FieldError{File: file, Path: path, Type: manifests.TypeInvalid, Value: v, Detail: fmt.Sprintf(detail, args...)})
	}
	if r := a.InfraEnv.Spec.PullSecretRef; r != nil && r.Name != a.PullSecret.Metadata.Name {
		add(assetdir.InfraEnv, "spec.pullSecretRef.name", r.Name, "no pull secret of that name; %s is named %q", assetdir.PullSecret, a.PullSecret.Metadata.Name)
	}
	if a.ACI.Spec.ClusterDeploymentRef.Name != a.ClusterDeployment.Metadata.Name {
		add(assetdir.AgentClusterInstall, "spec.clusterDeploymentRef.name", a.ACI.Spec.ClusterDeploymentRef.Name, "no ClusterDeployment of that name; %s is named %q", assetdir.ClusterDeployment, a.ClusterDeployment.Metadata.Name)
	}
	if r := a.ACI.Spec.ImageSetRef; r != nil && r.Name != a.ClusterImageSet.Metadata.Name {
		add(assetdir.AgentClusterInstall, "spec.imageSetRef.name", r.Name, "no ClusterImageSet of that name; %s is named %q", assetdir.ClusterImageSet, a.ClusterImageSet.Metadata.Name)
	}
	if r := a.ClusterDeployment.Spec.ClusterInstallRef; r != nil && r.Name != a.ACI.Metadata.Name {
		add(assetdir.ClusterDeployment, "spec.clusterInstallRef.name", r.Name, "no AgentClusterInstall of that name; %s is named %q", assetdir.AgentClusterInstall, a.ACI.Metadata.Name)
	}
	if r := a.InfraEnv.Spec.ClusterRef; r != nil && r.Name != a.ClusterDeployment.Metadata.Name {
		add(assetdir.InfraEnv, "spec.clusterRef.name", r.Name, "no ClusterDeployment of that name; %s is named %q", assetdir.ClusterDeployment, a.ClusterDeployment.Metadata.Name)
	}
	return l.OrNil()
}

// ExtraManifests are openshift/*.yaml|yml: applied to the new cluster.
// Each YAML document becomes its own file "<base>-<n><ext>".
type ExtraManifests struct {
	Files []NamedFile `json:"files,omitempty"`
	// Ignored lists files in openshift/ that are not read (their names do
	// not end in .yaml or .yml), for a warning.
	Ignored []string `json:"-"`
}

// AssetWarnings implements asset.Warner.
func (a *ExtraManifests) AssetWarnings() []string {
	var out []string
	for _, n := range a.Ignored {
		out = append(out, n+" is ignored: only openshift/*.yaml and openshift/*.yml are read as extra manifests (as openshift-install agent does); rename it if it should be applied")
	}
	return out
}

// NamedFile is a file name with its content.
type NamedFile struct {
	Name string `json:"name"`
	Data []byte `json:"data"`
}

// Name implements asset.Asset.
func (*ExtraManifests) Name() string { return "Extra Manifests" }

// Doing implements asset.Described.
func (*ExtraManifests) Doing() string {
	return "read the extra manifests in " + assetdir.ExtraManifestsDir + "/"
}

// Dependencies implements asset.Asset.
func (*ExtraManifests) Dependencies() []asset.Asset { return nil }

// Generate leaves the list empty: extra manifests only come from the user.
func (*ExtraManifests) Generate(context.Context, asset.Parents) error { return nil }

// Load implements asset.Loader.
func (a *ExtraManifests) Load(d asset.Dir) (bool, error) {
	var names []string
	for _, pat := range []string{assetdir.ExtraManifestsDir + "/*.yaml", assetdir.ExtraManifestsDir + "/*.yml"} {
		m, err := d.Glob(pat)
		if err != nil {
			return false, err
		}
		names = append(names, m...)
	}
	all, err := d.Glob(assetdir.ExtraManifestsDir + "/*")
	if err != nil {
		return false, err
	}
	for _, n := range all {
		if ext := path.Ext(n); ext != ".yaml" && ext != ".yml" && !strings.HasPrefix(path.Base(n), ".") {
			a.Ignored = append(a.Ignored, n)
		}
	}
	for _, n := range names {
		b, err := d.ReadFile(n)
		if err != nil {
			return false, fmt.Errorf("read %s: %w", n, err)
		}
		docs, err := manifests.SplitManifests(n, b)
		if err != nil {
			return false, err
		}
		ext := path.Ext(n)
		base := strings.TrimSuffix(path.Base(n), ext)
		for i, doc := range docs {
			a.Files = append(a.Files, NamedFile{Name: fmt.Sprintf("%s-%d%s", base, i, ext), Data: doc})
		}
	}
	return len(a.Files) > 0 || len(a.Ignored) > 0, nil
}
