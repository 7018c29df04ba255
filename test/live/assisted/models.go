package assisted

import (
	"time"

	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// The models below are the parts of assisted-service's v2 swagger models
// that the live mode reads and writes (JSON names as in the swagger). The
// stand-in clients of test/live/standin use the same types.

// VIP is an api_vips / ingress_vips entry.
type VIP struct {
	IP        string `json:"ip"`
	ClusterID string `json:"cluster_id,omitempty"`
}

// Network is a machine_networks / service_networks entry.
type Network struct {
	CIDR      string `json:"cidr"`
	ClusterID string `json:"cluster_id,omitempty"`
}

// ClusterNetwork is a cluster_networks entry.
type ClusterNetwork struct {
	CIDR       string `json:"cidr"`
	HostPrefix int64  `json:"host_prefix"`
	ClusterID  string `json:"cluster_id,omitempty"`
}

// Platform is the cluster platform.
type Platform struct {
	Type string `json:"type"`
}

// Proxy is the infra-env proxy.
type Proxy struct {
	HTTPProxy  string `json:"http_proxy,omitempty"`
	HTTPSProxy string `json:"https_proxy,omitempty"`
	NoProxy    string `json:"no_proxy,omitempty"`
}

// ClusterCreateParams is cluster-create-params (POST /v2/clusters).
type ClusterCreateParams struct {
	Name                  string           `json:"name"`
	OpenshiftVersion      string           `json:"openshift_version"`
	OCPReleaseImage       string           `json:"ocp_release_image,omitempty"`
	BaseDNSDomain         string           `json:"base_dns_domain,omitempty"`
	CPUArchitecture       string           `json:"cpu_architecture,omitempty"`
	HighAvailabilityMode  string           `json:"high_availability_mode,omitempty"`
	ControlPlaneCount     int64            `json:"control_plane_count,omitempty"`
	PullSecret            string           `json:"pull_secret"`
	SSHPublicKey          string           `json:"ssh_public_key,omitempty"`
	APIVIPs               []VIP            `json:"api_vips,omitempty"`
	IngressVIPs           []VIP            `json:"ingress_vips,omitempty"`
	MachineNetworks       []Network        `json:"machine_networks,omitempty"`
	ClusterNetworks       []ClusterNetwork `json:"cluster_networks,omitempty"`
	ServiceNetworks       []Network        `json:"service_networks,omitempty"`
	NetworkType           string           `json:"network_type,omitempty"`
	UserManagedNetworking *bool            `json:"user_managed_networking,omitempty"`
	Platform              *Platform        `json:"platform,omitempty"`
	HTTPProxy             string           `json:"http_proxy,omitempty"`
	HTTPSProxy            string           `json:"https_proxy,omitempty"`
	NoProxy               string           `json:"no_proxy,omitempty"`
	SchedulableMasters    *bool            `json:"schedulable_masters,omitempty"`
}

// LiveCluster is the cluster model the live mode serves.
type LiveCluster struct {
	rendezvous.Cluster
	Hosts                  []LiveHost       `json:"hosts,omitempty"`
	OpenshiftVersion       string           `json:"openshift_version,omitempty"`
	OCPReleaseImage        string           `json:"ocp_release_image,omitempty"`
	CPUArchitecture        string           `json:"cpu_architecture,omitempty"`
	HighAvailabilityMode   string           `json:"high_availability_mode,omitempty"`
	ControlPlaneCount      int64            `json:"control_plane_count,omitempty"`
	APIVIPs                []VIP            `json:"api_vips,omitempty"`
	IngressVIPs            []VIP            `json:"ingress_vips,omitempty"`
	MachineNetworks        []Network        `json:"machine_networks,omitempty"`
	ClusterNetworks        []ClusterNetwork `json:"cluster_networks,omitempty"`
	ServiceNetworks        []Network        `json:"service_networks,omitempty"`
	NetworkType            string           `json:"network_type,omitempty"`
	UserManagedNetworking  *bool            `json:"user_managed_networking,omitempty"`
	Platform               *Platform        `json:"platform,omitempty"`
	SSHPublicKey           string           `json:"ssh_public_key,omitempty"`
	HTTPProxy              string           `json:"http_proxy,omitempty"`
	HTTPSProxy             string           `json:"https_proxy,omitempty"`
	NoProxy                string           `json:"no_proxy,omitempty"`
	PullSecretSet          bool             `json:"pull_secret_set"`
	InstallConfigOverrides string           `json:"install_config_overrides,omitempty"`
	CreatedAt              time.Time        `json:"created_at"`
	UpdatedAt              time.Time        `json:"updated_at"`
	InstallStartedAt       *time.Time       `json:"install_started_at,omitempty"`
}

// MacInterfaceMapEntry maps a MAC address to the NIC name used in network_yaml.
type MacInterfaceMapEntry struct {
	MacAddress     string `json:"mac_address"`
	LogicalNicName string `json:"logical_nic_name"`
}

// HostStaticNetworkConfig is one static_network_config entry.
type HostStaticNetworkConfig struct {
	MacInterfaceMap []MacInterfaceMapEntry `json:"mac_interface_map"`
	NetworkYAML     string                 `json:"network_yaml"`
}

// InfraEnvCreateParams is infra-env-create-params (POST /v2/infra-envs).
type InfraEnvCreateParams struct {
	Name                   string                    `json:"name"`
	ClusterID              string                    `json:"cluster_id,omitempty"`
	PullSecret             string                    `json:"pull_secret"`
	SSHAuthorizedKey       string                    `json:"ssh_authorized_key,omitempty"`
	ImageType              string                    `json:"image_type,omitempty"`
	OpenshiftVersion       string                    `json:"openshift_version,omitempty"`
	CPUArchitecture        string                    `json:"cpu_architecture,omitempty"`
	StaticNetworkConfig    []HostStaticNetworkConfig `json:"static_network_config,omitempty"`
	AdditionalNTPSources   string                    `json:"additional_ntp_sources,omitempty"`
	Proxy                  *Proxy                    `json:"proxy,omitempty"`
	AdditionalTrustBundle  string                    `json:"additional_trust_bundle,omitempty"`
	IgnitionConfigOverride string                    `json:"ignition_config_override,omitempty"`
}

// LiveInfraEnv is the infra-env model the live mode serves.
type LiveInfraEnv struct {
	rendezvous.InfraEnv
	OpenshiftVersion     string `json:"openshift_version,omitempty"`
	CPUArchitecture      string `json:"cpu_architecture,omitempty"`
	SSHAuthorizedKey     string `json:"ssh_authorized_key,omitempty"`
	PullSecretSet        bool   `json:"pull_secret_set"`
	StaticNetworkConfig  string `json:"static_network_config,omitempty"`
	AdditionalNTPSources string `json:"additional_ntp_sources,omitempty"`
	Proxy                *Proxy `json:"proxy,omitempty"`
}

// HostCreateParams is host-create-params (POST /v2/infra-envs/{id}/hosts).
type HostCreateParams struct {
	HostID                string `json:"host_id"`
	DiscoveryAgentVersion string `json:"discovery_agent_version,omitempty"`
}

// StepRunnerCommand is next_step_runner_command of a registration answer.
type StepRunnerCommand struct {
	Command      string   `json:"command"`
	Args         []string `json:"args"`
	RetrySeconds int64    `json:"retry_seconds"`
}

// HostRegistrationResponse is the answer to a host registration.
type HostRegistrationResponse struct {
	LiveHost
	NextStepRunnerCommand *StepRunnerCommand `json:"next_step_runner_command,omitempty"`
}

// LiveHost is the host model the live mode serves.
type LiveHost struct {
	rendezvous.Host
	Inventory               string     `json:"inventory,omitempty"`
	InstallationDiskID      string     `json:"installation_disk_id,omitempty"`
	InstallationDiskPath    string     `json:"installation_disk_path,omitempty"`
	DiscoveryAgentVersion   string     `json:"discovery_agent_version,omitempty"`
	InstallerArgs           string     `json:"installer_args,omitempty"`
	IgnitionConfigOverrides string     `json:"ignition_config_overrides,omitempty"`
	CreatedAt               time.Time  `json:"created_at"`
	UpdatedAt               time.Time  `json:"updated_at"`
	CheckedInAt             *time.Time `json:"checked_in_at,omitempty"`
}

// DiskSelected is a disks_selected_config entry.
type DiskSelected struct {
	ID   string `json:"id"`
	Role string `json:"role"`
}

// HostUpdateParams is host-update-params (PATCH .../hosts/{host_id}).
type HostUpdateParams struct {
	HostRole            string         `json:"host_role,omitempty"`
	HostName            string         `json:"host_name,omitempty"`
	DisksSelectedConfig []DiskSelected `json:"disks_selected_config,omitempty"`
}

// AgentStep is one instruction to the agent.
type AgentStep struct {
	StepType string   `json:"step_type"`
	StepID   string   `json:"step_id"`
	Args     []string `json:"args"`
}

// Steps is the answer to GET .../instructions.
type Steps struct {
	NextInstructionSeconds int64       `json:"next_instruction_seconds"`
	PostStepAction         string      `json:"post_step_action,omitempty"`
	Instructions           []AgentStep `json:"instructions"`
}

// StepReply is what the agent posts back.
type StepReply struct {
	StepType string `json:"step_type"`
	StepID   string `json:"step_id"`
	ExitCode int64  `json:"exit_code"`
	Output   string `json:"output"`
	Error    string `json:"error,omitempty"`
}

// Step types the live mode hands out.
const (
	StepInventory = "inventory"
	// StepInstall asks the agent to run the installer image: Args[0] is
	// the image, the rest are the installer's arguments.
	StepInstall = "install"
)

// HostProgressParams is the body of PUT .../hosts/{host_id}/progress.
type HostProgressParams struct {
	CurrentStage string `json:"current_stage"`
	ProgressInfo string `json:"progress_info,omitempty"`
}

// Inventory is the inventory step output (assisted-installer-agent's
// inventory model, subset).
type Inventory struct {
	Hostname     string       `json:"hostname"`
	CPU          CPU          `json:"cpu"`
	Memory       Memory       `json:"memory"`
	Disks        []Disk       `json:"disks"`
	Interfaces   []Interface  `json:"interfaces"`
	SystemVendor SystemVendor `json:"system_vendor"`
	Boot         Boot         `json:"boot"`
	Timestamp    int64        `json:"timestamp"`
}

// CPU is inventory.cpu.
type CPU struct {
	Count        int64  `json:"count"`
	Architecture string `json:"architecture"`
	ModelName    string `json:"model_name,omitempty"`
}

// Memory is inventory.memory.
type Memory struct {
	PhysicalBytes int64 `json:"physical_bytes"`
	UsableBytes   int64 `json:"usable_bytes"`
}

// Disk is an inventory disk.
type Disk struct {
	ID                      string          `json:"id"`
	Name                    string          `json:"name"`
	Path                    string          `json:"path"`
	ByID                    string          `json:"by_id,omitempty"`
	ByPath                  string          `json:"by_path,omitempty"`
	DriveType               string          `json:"drive_type"`
	SizeBytes               int64           `json:"size_bytes"`
	Serial                  string          `json:"serial,omitempty"`
	Model                   string          `json:"model,omitempty"`
	Vendor                  string          `json:"vendor,omitempty"`
	Wwn                     string          `json:"wwn,omitempty"`
	Hctl                    string          `json:"hctl,omitempty"`
	Removable               bool            `json:"removable,omitempty"`
	InstallationEligibility DiskEligibility `json:"installation_eligibility"`
}

// DiskEligibility says whether a disk can be the installation disk.
type DiskEligibility struct {
	Eligible           bool     `json:"eligible"`
	NotEligibleReasons []string `json:"not_eligible_reasons"`
}

// Interface is an inventory interface.
type Interface struct {
	Name          string   `json:"name"`
	MacAddress    string   `json:"mac_address"`
	IPV4Addresses []string `json:"ipv4_addresses"`
	IPV6Addresses []string `json:"ipv6_addresses"`
	Flags         []string `json:"flags"`
	MTU           int64    `json:"mtu"`
	HasCarrier    bool     `json:"has_carrier"`
	Type          string   `json:"type,omitempty"`
}

// SystemVendor is inventory.system_vendor.
type SystemVendor struct {
	Manufacturer string `json:"manufacturer,omitempty"`
	ProductName  string `json:"product_name,omitempty"`
	SerialNumber string `json:"serial_number,omitempty"`
	Virtual      bool   `json:"virtual"`
}

// Boot is inventory.boot.
type Boot struct {
	CurrentBootMode string `json:"current_boot_mode"`
}

// Manifest is a cluster manifest (POST /v2/clusters/{id}/manifests).
type Manifest struct {
	FileName string `json:"file_name"`
	Folder   string `json:"folder"`
	Content  string `json:"content,omitempty"`
}

// InstallerArgsParams is the body of PATCH .../installer-args.
type InstallerArgsParams struct {
	Args []string `json:"args"`
}

// IgnitionParams is the body of PATCH .../ignition.
type IgnitionParams struct {
	Config string `json:"config"`
}

// ReleaseImage is one entry of assisted-service's RELEASE_IMAGES.
type ReleaseImage struct {
	OpenshiftVersion string   `json:"openshift_version"`
	CPUArchitecture  string   `json:"cpu_architecture"`
	CPUArchitectures []string `json:"cpu_architectures,omitempty"`
	URL              string   `json:"url"`
	Version          string   `json:"version"`
}
