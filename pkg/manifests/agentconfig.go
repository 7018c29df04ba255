package manifests

import "encoding/json"

// AgentConfig is agent-config.yaml (apiVersion v1alpha1 or v1beta1).
type AgentConfig struct {
	APIVersion           string      `json:"apiVersion"`
	Kind                 string      `json:"kind,omitempty"`
	Metadata             ObjectMeta  `json:"metadata,omitempty"`
	RendezvousIP         string      `json:"rendezvousIP,omitempty"`
	BootArtifactsBaseURL string      `json:"bootArtifactsBaseURL,omitempty"`
	AdditionalNTPSources []string    `json:"additionalNTPSources,omitempty"`
	MinimalISO           bool        `json:"minimalISO,omitempty"`
	Hosts                []AgentHost `json:"hosts,omitempty"`
	// DisabledHostValidations names assisted-service host validations to
	// turn off, e.g. for remote worker nodes ("belongs-to-majority-group",
	// "belongs-to-machine-cidr"). An agentiso extension.
	DisabledHostValidations []string `json:"disabledHostValidations,omitempty"`
}

// AgentHost is one hosts[] entry of agent-config.yaml.
type AgentHost struct {
	Hostname        string           `json:"hostname,omitempty"`
	Role            string           `json:"role,omitempty"`
	RootDeviceHints *RootDeviceHints `json:"rootDeviceHints,omitempty"`
	Interfaces      []HostInterface  `json:"interfaces,omitempty"`
	NetworkConfig   json.RawMessage  `json:"networkConfig,omitempty"`
	// InstallerArgs are extra coreos-installer arguments for this host,
	// as a JSON list of strings (agentiso extension, like the hub's
	// bmac.agent-install.openshift.io/installer-args annotation).
	InstallerArgs []string `json:"installerArgs,omitempty"`
	// IgnitionConfigOverride is an Ignition JSON merged into this host's
	// installed config (agentiso extension, like the hub annotation
	// bmac.agent-install.openshift.io/ignition-config-overrides).
	IgnitionConfigOverride string `json:"ignitionConfigOverride,omitempty"`
}

// HostInterface ties an interface name to its MAC address.
type HostInterface struct {
	Name       string `json:"name"`
	MACAddress string `json:"macAddress"`
}

// RootDeviceHints selects the installation disk (metal3 hints).
type RootDeviceHints struct {
	DeviceName         string `json:"deviceName,omitempty"`
	HCTL               string `json:"hctl,omitempty"`
	Model              string `json:"model,omitempty"`
	Vendor             string `json:"vendor,omitempty"`
	SerialNumber       string `json:"serialNumber,omitempty"`
	MinSizeGigabytes   int    `json:"minSizeGigabytes,omitempty"`
	WWN                string `json:"wwn,omitempty"`
	WWNWithExtension   string `json:"wwnWithExtension,omitempty"`
	WWNVendorExtension string `json:"wwnVendorExtension,omitempty"`
	Rotational         *bool  `json:"rotational,omitempty"`
}
