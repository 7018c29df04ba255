package manifests

import "encoding/json"

// TypeMeta is apiVersion + kind.
type TypeMeta struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// ClusterDeployment is hive.openshift.io/v1 ClusterDeployment (subset).
type ClusterDeployment struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta            `json:"metadata"`
	Spec     ClusterDeploymentSpec `json:"spec"`
	Status   json.RawMessage       `json:"status,omitempty"`
}

// ClusterDeploymentSpec is the spec of a ClusterDeployment.
type ClusterDeploymentSpec struct {
	BaseDomain         string             `json:"baseDomain"`
	ClusterName        string             `json:"clusterName"`
	ClusterInstallRef  *ClusterInstallRef `json:"clusterInstallRef,omitempty"`
	ControlPlaneConfig ControlPlaneConfig `json:"controlPlaneConfig"`
	Installed          bool               `json:"installed"`
	Platform           json.RawMessage    `json:"platform"`
	PullSecretRef      *LocalObjectRef    `json:"pullSecretRef,omitempty"`
}

// ClusterInstallRef points a ClusterDeployment at its install object.
type ClusterInstallRef struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ControlPlaneConfig is hive's control plane serving config.
type ControlPlaneConfig struct {
	ServingCertificates json.RawMessage `json:"servingCertificates"`
}

// LocalObjectRef names an object in the same namespace.
type LocalObjectRef struct {
	Name string `json:"name"`
}

// ObjectRef names an object, optionally in another namespace.
type ObjectRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// AgentClusterInstall is extensions.hive.openshift.io/v1beta1 (subset).
type AgentClusterInstall struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta      `json:"metadata"`
	Spec     ACISpec         `json:"spec"`
	Status   json.RawMessage `json:"status,omitempty"`
}

// ACISpec is the spec of an AgentClusterInstall.
type ACISpec struct {
	ImageSetRef            *LocalObjectRef       `json:"imageSetRef,omitempty"`
	ClusterDeploymentRef   LocalObjectRef        `json:"clusterDeploymentRef"`
	ClusterMetadata        json.RawMessage       `json:"clusterMetadata,omitempty"`
	APIVIP                 string                `json:"apiVIP,omitempty"`
	APIVIPs                []string              `json:"apiVIPs,omitempty"`
	IngressVIP             string                `json:"ingressVIP,omitempty"`
	IngressVIPs            []string              `json:"ingressVIPs,omitempty"`
	Networking             ACINetworking         `json:"networking"`
	SSHPublicKey           string                `json:"sshPublicKey,omitempty"`
	ProvisionRequirements  ProvisionRequirements `json:"provisionRequirements"`
	PlatformType           string                `json:"platformType,omitempty"`
	External               *ExternalPlatform     `json:"external,omitempty"`
	Proxy                  *Proxy                `json:"proxy,omitempty"`
	LoadBalancer           *LoadBalancer         `json:"loadBalancer,omitempty"`
	DiskEncryption         *DiskEncryption       `json:"diskEncryption,omitempty"`
	HoldInstallation       bool                  `json:"holdInstallation,omitempty"`
	ManifestsConfigMapRef  *LocalObjectRef       `json:"manifestsConfigMapRef,omitempty"`
	ManifestsConfigMapRefs []LocalObjectRef      `json:"manifestsConfigMapRefs,omitempty"`
	MastersSchedulable     bool                  `json:"mastersSchedulable,omitempty"`
	IgnitionEndpoint       json.RawMessage       `json:"ignitionEndpoint,omitempty"`
}

// ACINetworking is the networking of an AgentClusterInstall.
type ACINetworking struct {
	MachineNetwork        []MachineNetwork `json:"machineNetwork,omitempty"`
	ClusterNetwork        []ClusterNetwork `json:"clusterNetwork,omitempty"`
	ServiceNetwork        []string         `json:"serviceNetwork,omitempty"`
	NetworkType           string           `json:"networkType,omitempty"`
	UserManagedNetworking *bool            `json:"userManagedNetworking,omitempty"`
}

// ProvisionRequirements counts the agents of each role.
type ProvisionRequirements struct {
	ControlPlaneAgents int `json:"controlPlaneAgents"`
	ArbiterAgents      int `json:"arbiterAgents,omitempty"`
	WorkerAgents       int `json:"workerAgents,omitempty"`
}

// DiskEncryption configures disk encryption of installed hosts.
type DiskEncryption struct {
	EnableOn    string `json:"enableOn,omitempty"`
	Mode        string `json:"mode,omitempty"`
	TangServers string `json:"tangServers,omitempty"`
}

// InfraEnv is agent-install.openshift.io/v1beta1 InfraEnv (subset).
type InfraEnv struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta      `json:"metadata"`
	Spec     InfraEnvSpec    `json:"spec"`
	Status   json.RawMessage `json:"status,omitempty"`
}

// InfraEnvSpec is the spec of an InfraEnv.
type InfraEnvSpec struct {
	ClusterRef                 *ObjectRef      `json:"clusterRef,omitempty"`
	CPUArchitecture            string          `json:"cpuArchitecture,omitempty"`
	SSHAuthorizedKey           string          `json:"sshAuthorizedKey,omitempty"`
	PullSecretRef              *LocalObjectRef `json:"pullSecretRef,omitempty"`
	NMStateConfigLabelSelector LabelSelector   `json:"nmStateConfigLabelSelector,omitempty"`
	AdditionalNTPSources       []string        `json:"additionalNTPSources,omitempty"`
	AdditionalTrustBundle      string          `json:"additionalTrustBundle,omitempty"`
	Proxy                      *Proxy          `json:"proxy,omitempty"`
	IPXEScriptType             string          `json:"ipxeScriptType,omitempty"`
	AgentLabels                json.RawMessage `json:"agentLabels,omitempty"`
	IgnitionConfigOverride     string          `json:"ignitionConfigOverride,omitempty"`
	KernelArguments            json.RawMessage `json:"kernelArguments,omitempty"`
	OSImageVersion             string          `json:"osImageVersion,omitempty"`
}

// LabelSelector is a Kubernetes label selector (matchLabels only).
type LabelSelector struct {
	MatchLabels      map[string]string `json:"matchLabels,omitempty"`
	MatchExpressions json.RawMessage   `json:"matchExpressions,omitempty"`
}

// NMStateConfig is agent-install.openshift.io/v1beta1 NMStateConfig.
type NMStateConfig struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta        `json:"metadata"`
	Spec     NMStateConfigSpec `json:"spec"`
}

// NMStateConfigSpec holds one host's NMState and interface table.
type NMStateConfigSpec struct {
	Config     json.RawMessage `json:"config,omitempty"`
	Interfaces []HostInterface `json:"interfaces,omitempty"`
}

// ClusterImageSet is hive.openshift.io/v1 ClusterImageSet.
type ClusterImageSet struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta          `json:"metadata"`
	Spec     ClusterImageSetSpec `json:"spec"`
	Status   json.RawMessage     `json:"status,omitempty"`
}

// ClusterImageSetSpec names the release image.
type ClusterImageSetSpec struct {
	ReleaseImage string `json:"releaseImage"`
}

// Secret is a v1 Secret holding the pull secret.
type Secret struct {
	TypeMeta   `json:",inline"`
	Metadata   ObjectMeta        `json:"metadata"`
	Type       string            `json:"type,omitempty"`
	StringData map[string]string `json:"stringData,omitempty"`
	Data       map[string][]byte `json:"data,omitempty"`
	Immutable  *bool             `json:"immutable,omitempty"`
}
