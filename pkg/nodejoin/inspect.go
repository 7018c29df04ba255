// Package nodejoin reads what adding nodes to an installed cluster needs
// from that cluster's API (the same objects as upstream's node-joiner,
// docs/add-nodes.md), refuses clusters and hosts it cannot add, keeps the
// node ISO's tokens in the cluster's agent-auth-token secret as upstream
// does, and follows the new hosts' certificate signing requests until they
// are nodes.
package nodejoin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/pkg/arch"
	"github.com/seed-a052040e/agentiso/pkg/kubeapi"
)

// API is the part of the cluster's API that the inspection uses.
type API interface {
	Get(ctx context.Context, r kubeapi.Resource, out any) error
}

// The objects read, as RBAC names them.
var (
	rClusterVersion = kubeapi.Resource{Group: "config.openshift.io", Version: "v1", Resource: "clusterversions", Name: "version"}
	rProxy          = kubeapi.Resource{Group: "config.openshift.io", Version: "v1", Resource: "proxies", Name: "cluster"}
	rInfrastructure = kubeapi.Resource{Group: "config.openshift.io", Version: "v1", Resource: "infrastructures", Name: "cluster"}
	rPullSecret     = kubeapi.Resource{Version: "v1", Resource: "secrets", Namespace: "openshift-config", Name: "pull-secret"}
	rUserCABundle   = kubeapi.Resource{Version: "v1", Resource: "configmaps", Namespace: "openshift-config", Name: "user-ca-bundle"}
	rClusterConfig  = kubeapi.Resource{Version: "v1", Resource: "configmaps", Namespace: "kube-system", Name: "cluster-config-v1"}
	rBootImages     = kubeapi.Resource{Version: "v1", Resource: "configmaps", Namespace: "openshift-machine-config-operator", Name: "coreos-bootimages"}
	rWorkerUserData = kubeapi.Resource{Version: "v1", Resource: "secrets", Namespace: "openshift-machine-api", Name: "worker-user-data-managed"}
	rNodes          = kubeapi.Resource{Version: "v1", Resource: "nodes"}
	rDigestMirrors  = kubeapi.Resource{Group: "config.openshift.io", Version: "v1", Resource: "imagedigestmirrorsets"}
	rLegacyMirrors  = kubeapi.Resource{Group: "config.openshift.io", Version: "v1", Resource: "imagecontentpolicies"}
	rICSP           = kubeapi.Resource{Group: "operator.openshift.io", Version: "v1alpha1", Resource: "imagecontentsourcepolicies"}
	rMachineConfig  = kubeapi.Resource{Group: "machineconfiguration.openshift.io", Version: "v1", Resource: "machineconfigs"}
	rBareMetalHosts = kubeapi.Resource{Group: "metal3.io", Version: "v1alpha1", Resource: "baremetalhosts", Namespace: "openshift-machine-api"}
)

func named(r kubeapi.Resource, name string) kubeapi.Resource { r.Name = name; return r }

// Mirror is one source and its mirrors.
type Mirror struct {
	Source  string   `json:"source"`
	Mirrors []string `json:"mirrors"`
}

// Proxy is the cluster-wide proxy.
type Proxy struct {
	HTTPProxy  string `json:"httpProxy,omitempty"`
	HTTPSProxy string `json:"httpsProxy,omitempty"`
	NoProxy    string `json:"noProxy,omitempty"`
}

// ExistingNode is what the conflict checks know of a node (or of a
// bare-metal host that is not a node yet).
type ExistingNode struct {
	Name string
	IPs  []string
	MACs []string
	// Kind is "node" or "bare-metal host".
	Kind string
	// Roles are a node's node-role.kubernetes.io/<role> labels.
	Roles []string
}

// ClusterInfo is what the new hosts' ISO is built from. Secrets are in
// PullSecret only; it is never printed.
type ClusterInfo struct {
	ClusterID    string
	ClusterName  string
	BaseDomain   string
	APIDNSName   string
	Version      string
	ReleaseImage string
	// Platform is the Infrastructure's platform type ("BareMetal").
	Platform string
	// Arch is the RPM spelling of the cluster's architecture (x86_64).
	Arch       string
	PullSecret string
	Proxy      *Proxy
	// TrustBundle is the user-ca-bundle PEM, "" when none.
	TrustBundle   string
	DigestMirrors []Mirror
	// LegacyMirrors are the ImageContentPolicy and ImageContentSourcePolicy
	// entries (imageContentSources), without those whose source an
	// ImageDigestMirrorSet entry has.
	LegacyMirrors []Mirror
	SSHKey        string
	FIPS          bool
	// Chrony is the workers' /etc/chrony.conf, nil when the cluster has none.
	Chrony []byte
	// BootStream is the cluster's CoreOS stream JSON (configmap
	// openshift-machine-config-operator/coreos-bootimages, data.stream),
	// nil when the cluster has no such configmap. As upstream's node-joiner
	// (openshift/installer pkg/asset/agent/joiner/clusterinfo.go
	// retrieveOsImage, commit c1436495) it names the RHCOS of OS_IMAGES
	// and of the base ISO; BootRelease, BootISO and BootISOSHA256 are its
	// metal release and live ISO for Arch.
	BootStream    []byte
	BootRelease   string
	BootISO       string
	BootISOSHA256 string
	// IgnitionEndpoint and IgnitionCA (PEM) are the secure machine-config
	// server, "" when the cluster has none.
	IgnitionEndpoint string
	IgnitionCA       string
	MachineNetworks  []string
	Existing         []ExistingNode
	// Notes are things the user should know (a fallback taken, a check
	// left partial).
	Notes []string
}

// UserManagedNetworking is true for the platforms the import configures
// with user-managed networking (upstream ImportClusterConfig).
func (ci *ClusterInfo) UserManagedNetworking() bool {
	return ci.Platform == "None" || ci.Platform == "External"
}

// SupportedPlatforms are the Infrastructure platform types the agent
// installer can add nodes to (upstream agent.ValidateSupportedPlatforms).
var SupportedPlatforms = []string{"BareMetal", "None", "VSphere", "Nutanix", "External"}

// InspectOptions are the user's overrides.
type InspectOptions struct {
	// Arch, when not empty, is the new hosts' architecture (cpuArchitecture).
	Arch string
	// SSHKey, when not empty, replaces the cluster's worker key.
	SSHKey string
}

// Inspect reads the cluster. An error names what was being read; a
// forbidden read without fallback names the missing permission.
func Inspect(ctx context.Context, api API, o InspectOptions) (*ClusterInfo, error) {
	in := &inspector{api: api, ci: &ClusterInfo{}, o: o}
	for _, f := range []func(context.Context) error{
		in.clusterVersion, in.infrastructure, in.proxy, in.pullSecret, in.trustBundle, in.nodes,
		in.digestMirrors, in.legacyMirrors, in.bootImage, in.ignitionEndpoint, in.sshKey, in.fips, in.chrony,
		in.machineNetworks, in.bareMetalHosts,
	} {
		if err := f(ctx); err != nil {
			return nil, err
		}
	}
	return in.ci, nil
}

type inspector struct {
	api API
	ci  *ClusterInfo
	o   InspectOptions
	ic  *installConfig
	// icErr is the reason the install-config could not be read.
	icErr error
}

// get reads r; why says what it is for, in errors.
func (in *inspector) get(ctx context.Context, r kubeapi.Resource, why string, out any) error {
	if err := in.api.Get(ctx, r, out); err != nil {
		var se *kubeapi.StatusError
		if errors.As(err, &se) && se.Code == 403 {
			return fmt.Errorf("cannot read %s (%s): %s", r, why, se.Permission())
		}
		return fmt.Errorf("cannot read %s (%s): %w", r, why, err)
	}
	return nil
}

type meta struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func (in *inspector) clusterVersion(ctx context.Context) error {
	var cv struct {
		Spec struct {
			ClusterID string `json:"clusterID"`
		} `json:"spec"`
		Status struct {
			History []struct {
				Version string `json:"version"`
				Image   string `json:"image"`
			} `json:"history"`
		} `json:"status"`
	}
	if err := in.get(ctx, rClusterVersion, "the cluster's ID and release", &cv); err != nil {
		return err
	}
	if len(cv.Status.History) == 0 || cv.Status.History[0].Image == "" {
		return fmt.Errorf("clusterversion version has no status.history: the cluster has not finished installing")
	}
	in.ci.ClusterID = cv.Spec.ClusterID
	in.ci.ReleaseImage, in.ci.Version = cv.Status.History[0].Image, cv.Status.History[0].Version
	if in.ci.ClusterID == "" {
		return fmt.Errorf("clusterversion version has no spec.clusterID")
	}
	return nil
}

// apiName takes the cluster name and base domain from api.<name>.<domain>.
var apiName = regexp.MustCompile(`^api\.([^.]+)\.(.+)$`)

func (in *inspector) infrastructure(ctx context.Context) error {
	var inf struct {
		Spec struct {
			PlatformSpec struct {
				Type string `json:"type"`
			} `json:"platformSpec"`
		} `json:"spec"`
		Status struct {
			APIServerURL string `json:"apiServerURL"`
			Platform     string `json:"platform"`
		} `json:"status"`
	}
	if err := in.get(ctx, rInfrastructure, "the platform and the API name", &inf); err != nil {
		return err
	}
	p := inf.Spec.PlatformSpec.Type
	if p == "" {
		p = inf.Status.Platform
	}
	in.ci.Platform = p
	supported := false
	for _, s := range SupportedPlatforms {
		supported = supported || s == p
	}
	if !supported {
		return &PlatformError{Platform: p}
	}
	u, err := url.Parse(inf.Status.APIServerURL)
	if err != nil || u.Hostname() == "" {
		return fmt.Errorf("infrastructure cluster: status.apiServerURL %q is not a URL", inf.Status.APIServerURL)
	}
	in.ci.APIDNSName = u.Hostname()
	m := apiName.FindStringSubmatch(in.ci.APIDNSName)
	if m == nil {
		return fmt.Errorf("infrastructure cluster: cannot take the cluster name from the API name %q (expected api.<cluster>.<base domain>)", in.ci.APIDNSName)
	}
	in.ci.ClusterName, in.ci.BaseDomain = m[1], m[2]
	return nil
}

// PlatformError refuses a cluster whose platform the agent installer
// cannot add nodes to.
type PlatformError struct{ Platform string }

func (e *PlatformError) Error() string {
	return fmt.Sprintf("the cluster's platform is %q: nodes can be added from an agent ISO only to an on-prem cluster (platform %s); add nodes to a %s cluster with its machine sets",
		e.Platform, strings.Join(SupportedPlatforms, ", "), e.Platform)
}

func (in *inspector) proxy(ctx context.Context) error {
	var p struct {
		Spec Proxy `json:"spec"`
	}
	if err := in.get(ctx, rProxy, "the cluster-wide proxy", &p); err != nil {
		return err
	}
	if p.Spec != (Proxy{}) {
		var note string
		p.Spec.NoProxy, note = uniqueNoProxy(p.Spec.NoProxy)
		if note != "" {
			in.ci.Notes = append(in.ci.Notes, note)
		}
		in.ci.Proxy = &p.Spec
	}
	return nil
}

func (in *inspector) pullSecret(ctx context.Context) error {
	var s struct {
		Data map[string][]byte `json:"data"`
	}
	if err := in.get(ctx, rPullSecret, "the pull secret", &s); err != nil {
		return err
	}
	ps := s.Data[".dockerconfigjson"]
	if len(ps) == 0 {
		return fmt.Errorf("secret openshift-config/pull-secret has no .dockerconfigjson")
	}
	in.ci.PullSecret = string(ps)
	return nil
}

func (in *inspector) trustBundle(ctx context.Context) error {
	var cm struct {
		Data map[string]string `json:"data"`
	}
	err := in.get(ctx, rUserCABundle, "the additional trust bundle", &cm)
	if kubeapi.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var note string
	in.ci.TrustBundle, note = uniqueCertificates(cm.Data["ca-bundle.crt"])
	if note != "" {
		in.ci.Notes = append(in.ci.Notes, note)
	}
	return nil
}

func (in *inspector) nodes(ctx context.Context) error {
	var l struct {
		Items []struct {
			Metadata meta `json:"metadata"`
			Status   struct {
				Addresses []struct {
					Type    string `json:"type"`
					Address string `json:"address"`
				} `json:"addresses"`
				NodeInfo struct {
					Architecture string `json:"architecture"`
				} `json:"nodeInfo"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := in.get(ctx, rNodes, "the architecture and the existing nodes", &l); err != nil {
		return err
	}
	for _, n := range l.Items {
		e := ExistingNode{Name: n.Metadata.Name, Kind: "node"}
		for l := range n.Metadata.Labels {
			if r, ok := strings.CutPrefix(l, "node-role.kubernetes.io/"); ok && r != "" {
				e.Roles = append(e.Roles, r)
			}
		}
		slices.Sort(e.Roles)
		for _, a := range n.Status.Addresses {
			if a.Type == "InternalIP" || a.Type == "ExternalIP" {
				e.IPs = append(e.IPs, a.Address)
			}
		}
		if mac := ovnMAC(n.Metadata.Annotations["k8s.ovn.org/l3-gateway-config"]); mac != "" {
			e.MACs = append(e.MACs, mac)
		}
		in.ci.Existing = append(in.ci.Existing, e)
		if _, cp := n.Metadata.Labels["node-role.kubernetes.io/master"]; cp && in.ci.Arch == "" {
			a, err := arch.Normalize(n.Status.NodeInfo.Architecture)
			if err != nil {
				return fmt.Errorf("node %s: status.nodeInfo.architecture: %w", n.Metadata.Name, err)
			}
			in.ci.Arch = a
		}
	}
	if in.o.Arch != "" {
		a, err := arch.Normalize(in.o.Arch)
		if err != nil {
			return fmt.Errorf("cpuArchitecture: %w", err)
		}
		in.ci.Arch = a
	}
	if in.ci.Arch == "" {
		return fmt.Errorf("cannot tell the cluster's architecture: no node is labelled node-role.kubernetes.io/master; set cpuArchitecture in nodes-config.yaml")
	}
	return nil
}

// ovnMAC reads the MAC of OVN-Kubernetes' gateway interface annotation.
func ovnMAC(annotation string) string {
	if annotation == "" {
		return ""
	}
	var gw map[string]struct {
		MAC string `json:"mac-address"`
	}
	if json.Unmarshal([]byte(annotation), &gw) != nil {
		return ""
	}
	return strings.ToLower(gw["default"].MAC)
}

func decodeDataURL(src string) ([]byte, error) {
	i := strings.Index(src, ",")
	if !strings.HasPrefix(src, "data:") || i < 0 {
		return nil, fmt.Errorf("not a data URL")
	}
	if strings.HasSuffix(src[:i], ";base64") {
		return base64.StdEncoding.DecodeString(src[i+1:])
	}
	s, err := url.PathUnescape(src[i+1:])
	return []byte(s), err
}

// installConfig is the subset of cluster-config-v1's install-config read.
type installConfig struct {
	BaseDomain string `json:"baseDomain"`
	SSHKey     string `json:"sshKey"`
	FIPS       bool   `json:"fips"`
	Networking struct {
		MachineNetwork []struct {
			CIDR string `json:"cidr"`
		} `json:"machineNetwork"`
	} `json:"networking"`
	ImageDigestSources  []Mirror `json:"imageDigestSources"`
	ImageContentSources []Mirror `json:"imageContentSources"`
}

// installConfig reads cluster-config-v1 once; its absence or a denial is
// remembered, not fatal: it is the fallback.
func (in *inspector) installConfig(ctx context.Context) (*installConfig, error) {
	if in.ic != nil || in.icErr != nil {
		return in.ic, in.icErr
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := in.get(ctx, rClusterConfig, "the install-config", &cm); err != nil {
		in.icErr = err
		return nil, err
	}
	ic := &installConfig{}
	if err := yaml.Unmarshal([]byte(cm.Data["install-config"]), ic); err != nil {
		in.icErr = fmt.Errorf("configmap kube-system/cluster-config-v1: install-config: %w", err)
		return nil, in.icErr
	}
	in.ic = ic
	return ic, nil
}
