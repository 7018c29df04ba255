package ignition

import (
	"bytes"
	"fmt"
	"io/fs"
	"net"
	"path"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/seed-a052040e/agentiso/pkg/arch"
)

// Input is everything the agent ISO's Ignition config is built from. All
// values are resolved by the caller (decoded, validated, defaulted); Build
// only checks what it needs to write a consistent config.
type Input struct {
	// ClusterName and BaseDomain name the cluster; the console banner shows
	// "<ClusterName>.<BaseDomain>".
	ClusterName string
	BaseDomain  string

	// ReleaseImage is the OpenShift release pull spec
	// (ClusterImageSet.spec.releaseImage). The live ISO pulls it at boot and
	// resolves the agent-installer-* component images from it.
	ReleaseImage string
	// ReleaseVersion is the release's full version, e.g. "4.19.3".
	ReleaseVersion string
	// ReleaseImageMirror is the release pull spec rewritten to its mirror,
	// empty without a mirror (OPENSHIFT_INSTALL_RELEASE_IMAGE_MIRROR).
	ReleaseImageMirror string
	// Arch is the CPU architecture of the release: x86_64, aarch64,
	// ppc64le, s390x or multi (Go names amd64 and arm64 are accepted too).
	Arch string
	// OSImages are the RHCOS images assisted-service advertises
	// (OS_IMAGES in images.env). Empty OpenshiftVersion/CPUArchitecture
	// fields default to ReleaseVersion and Arch.
	OSImages []OSImage

	// RendezvousIP is the IP address of the rendezvous host (node zero).
	RendezvousIP string
	// InfraEnvID is the fixed infra-env UUID assisted-service registers.
	InfraEnvID string
	// ImageType is "full-iso" (the default when empty) or "minimal-iso".
	ImageType string

	// ControlPlaneAgents, ArbiterAgents and WorkerAgents are the host
	// counts the installation waits for before it starts.
	ControlPlaneAgents int
	ArbiterAgents      int
	WorkerAgents       int

	// ZTPManifests are written to /etc/assisted/manifests/<FileName> in
	// order (agent-cluster-install.yaml, cluster-deployment.yaml,
	// cluster-image-set.yaml, infraenv.yaml, pull-secret.yaml and
	// nmstateconfig.yaml when present).
	ZTPManifests []Manifest
	// AgentConfigYAML, when not empty, is copied to
	// /etc/assisted/manifests/agent-config.yaml.
	AgentConfigYAML []byte
	// ExtraManifests are already split into one document per file and
	// named <base>-<n><ext>; written to /etc/assisted/extra-manifests/.
	ExtraManifests []Manifest

	// Hosts are the agent-config (or install-config) hosts, in order.
	Hosts []Host
	// FencingCredentialsYAML, when not empty, is written (0600) to
	// /etc/assisted/hostconfig/fencing-credentials.yaml: the two-node
	// fencing BMC credentials keyed by host name.
	FencingCredentialsYAML []byte
	// NetworkFiles are the per-host NetworkManager keyfiles and
	// mac_interface.ini files, all under /etc/assisted/network/host<N>/.
	// When present, pre-network-manager-config.sh and its unit are enabled.
	NetworkFiles []NetworkFile

	// RegistriesConf is the mirror configuration for
	// /etc/containers/registries.conf; empty means no mirror.
	RegistriesConf []byte
	// CABundle (PEM) is written to
	// /etc/pki/ca-trust/source/anchors/domain.crt when not empty.
	CABundle []byte
	// Payload, when set, serves the release payload the extended ISO
	// carries from every host (docs/airgap.md).
	Payload *Payload

	// PublicContainerRegistries lists registries assisted-service treats as
	// public (no pull secret check); empty means "quay.io".
	PublicContainerRegistries []string

	// NTPSources are extra NTP servers; when present the live system's
	// /etc/chrony.conf is written with them, as upstream writes it
	// (chronyConf).
	NTPSources []string
	// Proxy is the cluster-wide proxy, nil for none.
	Proxy *Proxy
	// MachineNetworks are the machine network CIDRs; with a proxy, the one
	// containing RendezvousIP is appended to NO_PROXY.
	MachineNetworks []string

	// PullSecret is the pull secret JSON (a Docker config.json).
	PullSecret string
	// SSHKey is the public key authorised for the core user; optional.
	SSHKey string
	// PasswordHash is the bcrypt hash of the kubeadmin password; it becomes
	// the core user's password and /opt/agent/tls/kubeadmin-password.hash.
	PasswordHash string

	// Auth holds the ECDSA public key and the JWTs for assisted-service.
	Auth Auth
	// Signers are the TLS signer CAs shipped in /opt/agent/tls:
	// admin-kubeconfig-signer, kube-apiserver-lb-signer,
	// kube-apiserver-localhost-signer, kube-apiserver-service-network-signer.
	Signers []Signer

	// DisabledHostValidations are assisted-service host validation IDs to
	// switch off (DISABLED_HOST_VALIDATIONS), e.g.
	// "belongs-to-majority-group".
	DisabledHostValidations []string
	// DisableImagePolicy sets OPENSHIFT_INSTALL_EXPERIMENTAL_DISABLE_IMAGE_POLICY
	// in the assisted-service container.
	DisableImagePolicy bool

	// Unconfigured builds the generic ISO's config instead of a cluster's
	// (docs/unconfigured.md): no cluster, no credentials, no
	// rendezvous-host.env; the three manifests that name no cluster
	// (cluster-image-set, infraenv, pull-secret, and nmstateconfig when
	// given); /etc/assisted/unconfigured.env and the unit that waits for
	// the config image. RendezvousIP is optional then: when given, a
	// config image must name the same one.
	Unconfigured bool

	// AddNodes, when set, makes the ISO an add-nodes ISO: every host that
	// boots it imports the installed cluster into its own assisted-service
	// and installs only itself (docs/add-nodes.md).
	AddNodes *AddNodes

	// CompressThreshold is the size in bytes above which a file is stored
	// gzip-compressed (when that makes it smaller). 0 means
	// DefaultCompressThreshold; a negative value disables the threshold.
	// Extra manifests, CA bundles and registries.conf are always compressed
	// when that helps.
	CompressThreshold int
}

// Manifest is one file with its base name.
type Manifest struct {
	FileName string
	Contents []byte
}

// Host is one host's configuration.
type Host struct {
	// Hostname is optional. It names the hostconfig directory (else
	// "host-<index>") and is written to /etc/assisted/hostnames/<first MAC>.
	Hostname string
	// Role is master, arbiter, worker or empty (auto-assign).
	Role string
	// MACs are the host's interface MAC addresses; the first one is
	// interfaces[0]. A host without any may carry nothing but a Hostname
	// (then no mac_addresses or hostnames file is written for it): every
	// other setting is found by MAC.
	MACs []string
	// RootDeviceHintsYAML is the host's rootDeviceHints as YAML; optional.
	RootDeviceHintsYAML []byte
	// InstallerArgs are extra coreos-installer arguments, as the
	// bmac.agent-install.openshift.io/installer-args annotation carries them.
	InstallerArgs []string
	// IgnitionConfigOverride is a JSON Ignition config merged into the
	// installed host's config, as the
	// bmac.agent-install.openshift.io/ignition-config-overrides annotation
	// carries it.
	IgnitionConfigOverride string
	// FencingCredentialsYAML, when not empty, is written (0600) to the
	// host's directory as fencing-credentials.yaml: its fencing BMC
	// credential keyed by MAC address.
	FencingCredentialsYAML []byte
}

// NetworkFile is one file of a host's static network configuration.
type NetworkFile struct {
	Path     string
	Mode     fs.FileMode // 0 means 0600
	Contents []byte
}

// Proxy is the cluster-wide HTTP proxy.
type Proxy struct {
	HTTPProxy  string
	HTTPSProxy string
	NoProxy    string
}

// OSImage is one RHCOS image entry of OS_IMAGES.
type OSImage struct {
	OpenshiftVersion string `json:"openshift_version"`
	CPUArchitecture  string `json:"cpu_architecture"`
	URL              string `json:"url"`
	Version          string `json:"version"`
}

// Auth is the assisted-service authentication material.
type Auth struct {
	// PublicKeyPEM is the ECDSA P-256 public key as PEM text
	// ("-----BEGIN EC PUBLIC KEY-----"); Build base64-encodes it for
	// EC_PUBLIC_KEY_PEM.
	PublicKeyPEM string
	// AgentToken (agentAuth), UserToken (userAuth) and WatcherToken
	// (watcherAuth) are the ES256 JWTs.
	AgentToken   string
	UserToken    string
	WatcherToken string
}

// Signer is one TLS signer CA written to /opt/agent/tls/<Name>.{crt,key}.
type Signer struct {
	Name    string
	CertPEM []byte
	KeyPEM  []byte
}

// RequiredZTPManifests returns the manifests the on-host client reads from
// /etc/assisted/manifests; nmstateconfig.yaml is optional.
func RequiredZTPManifests() []string {
	return []string{
		"agent-cluster-install.yaml",
		"cluster-deployment.yaml",
		"cluster-image-set.yaml",
		"infraenv.yaml",
		"pull-secret.yaml",
	}
}

// DefaultCompressThreshold is the file size above which file contents are
// gzip-compressed when Input.CompressThreshold is 0.
const DefaultCompressThreshold = 2048

// unsafeEnvChars may not appear in values written to env files: those are
// read by systemd, by podman --env-file and by bash (source).
const unsafeEnvChars = " \t\"'`$\\;&|<>(){}"

var (
	jwtRE            = regexp.MustCompile(`^[A-Za-z0-9_-]*(\.[A-Za-z0-9_=-]*)*$`)
	uuidRE           = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	versionRE        = regexp.MustCompile(`^[0-9A-Za-z.+_-]+$`)
	dnsNameRE        = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?\.?$`)
	registryHostRE   = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$`)
	signerNameRE     = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	validationIDRE   = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	macRE            = regexp.MustCompile(`^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{2}:){19}[0-9A-Fa-f]{2}$`)
	hostDirNameRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	networkHostDirRE = regexp.MustCompile(`^/etc/assisted/network/host[0-9]+/[^/]+$`)
)

// validate checks the fields Build relies on: that what it needs is there,
// and that every value it writes into a path, an env file, a unit line or
// a script fits that place (so none can carry shell or systemd syntax).
// What the values mean is the caller's to check (pkg/manifests validates
// the user's inputs: host roles, the pull secret's JSON, machine network
// CIDRs, Ignition overrides); Build does not check it again. Messages name
// the Input field and what to do.
func (in *Input) validate() error {
	var p problems
	in.validateRelease(&p)
	if in.Unconfigured {
		in.validateUnconfigured(&p)
	} else {
		in.validateCluster(&p)
		in.validateAuth(&p)
	}
	in.validateManifests(&p)
	in.validateHosts(&p)
	in.validateServices(&p)
	in.validatePayload(&p)
	if in.AddNodes != nil {
		for _, m := range in.AddNodes.validate() {
			p.add("%s", m)
		}
	}
	if len(p) > 0 {
		return fmt.Errorf("invalid ignition input:\n  %s", strings.Join(p, "\n  "))
	}
	return nil
}

// problems collects validation messages.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// validateRelease checks the release and the RHCOS images: values of
// RELEASE_IMAGES and OS_IMAGES in an env file.
func (in *Input) validateRelease(p *problems) {
	if in.ReleaseImage == "" {
		p.add("ReleaseImage: required (the release pull spec)")
	} else if err := ValidateImageReference(in.ReleaseImage); err != nil {
		p.add("ReleaseImage: %q is not an image reference: %v", in.ReleaseImage, err)
	}
	if in.ReleaseImageMirror != "" {
		if err := ValidateImageReference(in.ReleaseImageMirror); err != nil {
			p.add("ReleaseImageMirror: %q is not an image reference: %v", in.ReleaseImageMirror, err)
		}
	}
	if in.ReleaseVersion == "" {
		p.add("ReleaseVersion: required (e.g. 4.19.3)")
	} else {
		if _, err := majorMinor(in.ReleaseVersion); err != nil {
			p.add("ReleaseVersion: %v", err)
		}
		if !versionRE.MatchString(in.ReleaseVersion) {
			p.add("ReleaseVersion: %q may hold only letters, digits and . + _ -", in.ReleaseVersion)
		}
	}
	if _, err := releaseArch(in.Arch); err != nil {
		p.add("Arch: %v", err)
	}
	if len(in.OSImages) == 0 {
		p.add("OSImages: at least one RHCOS image is required (assisted-service's OS_IMAGES)")
	}
	for i, o := range in.OSImages {
		if o.URL == "" {
			p.add("OSImages[%d].URL: required", i)
		}
		for _, f := range []struct{ name, v string }{{"URL", o.URL}, {"Version", o.Version}, {"OpenshiftVersion", o.OpenshiftVersion}, {"CPUArchitecture", o.CPUArchitecture}} {
			if strings.ContainsAny(f.v, unsafeEnvChars) || hasControl(f.v) {
				p.add("OSImages[%d].%s: %q must not contain whitespace, quotes or any of $`\\;&|<>", i, f.name, f.v)
			}
		}
	}
}

// validateCluster checks what names the cluster and its installation.
func (in *Input) validateCluster(p *problems) {
	if in.ClusterName == "" {
		p.add("ClusterName: required")
	}
	for _, s := range []struct{ name, v string }{{"ClusterName", in.ClusterName}, {"BaseDomain", in.BaseDomain}} {
		if s.v != "" && !dnsNameRE.MatchString(s.v) {
			p.add("%s: %q must be a DNS name (letters, digits, dots and dashes)", s.name, s.v)
		}
	}
	if ip := net.ParseIP(in.RendezvousIP); ip == nil {
		p.add("RendezvousIP: %q is not an IP address", in.RendezvousIP)
	}
	if in.InfraEnvID == "" {
		p.add("InfraEnvID: required (a UUID)")
	} else if !uuidRE.MatchString(in.InfraEnvID) {
		p.add("InfraEnvID: %q is not a UUID", in.InfraEnvID)
	}
	switch in.ImageType {
	case "", "full-iso", "minimal-iso":
	default:
		p.add("ImageType: %q must be full-iso or minimal-iso", in.ImageType)
	}
	if in.ControlPlaneAgents < 0 || in.ArbiterAgents < 0 || in.WorkerAgents < 0 {
		p.add("ControlPlaneAgents/ArbiterAgents/WorkerAgents: must not be negative")
	}
	if in.PullSecret == "" {
		p.add("PullSecret: required")
	}
}

// validateAuth checks the assisted-service key, tokens and signer CAs.
func (in *Input) validateAuth(p *problems) {
	if in.Auth.PublicKeyPEM != "" && !strings.HasPrefix(strings.TrimSpace(in.Auth.PublicKeyPEM), "-----BEGIN ") {
		p.add("Auth.PublicKeyPEM: must be PEM text (-----BEGIN EC PUBLIC KEY-----), not base64")
	}
	for _, s := range []struct{ name, v string }{
		{"Auth.AgentToken", in.Auth.AgentToken},
		{"Auth.UserToken", in.Auth.UserToken},
		{"Auth.WatcherToken", in.Auth.WatcherToken},
	} {
		if !jwtRE.MatchString(s.v) {
			p.add("%s: must be a JWT (base64url words joined by dots)", s.name)
		}
	}
	for i, s := range in.Signers {
		if !signerNameRE.MatchString(s.Name) {
			p.add("Signers[%d].Name: %q must be lower-case letters, digits and dashes", i, s.Name)
		}
		if len(s.CertPEM) == 0 || len(s.KeyPEM) == 0 {
			p.add("Signers[%d]: CertPEM and KeyPEM are both required", i)
		}
	}
}

// validateManifests checks the ZTP and extra manifests' file names.
func (in *Input) validateManifests(p *problems) {
	ztp := map[string]bool{}
	for i, m := range in.ZTPManifests {
		if !isBaseName(m.FileName) {
			p.add("ZTPManifests[%d].FileName: %q must be a plain file name", i, m.FileName)
		}
		ztp[m.FileName] = true
	}
	required := RequiredZTPManifests()
	if in.AddNodes != nil {
		// importCluster replaces registerCluster: registerInfraEnv alone
		// reads the manifests (assisted-service
		// cmd/agentbasedinstaller/client/main.go, registerInfraEnv).
		required = []string{"infraenv.yaml", "pull-secret.yaml"}
	}
	for _, name := range required {
		if !ztp[name] && !in.Unconfigured {
			p.add("ZTPManifests: %s is missing (agent-installer-client registerCluster/registerInfraEnv read it)", name)
		}
	}
	for i, m := range in.ExtraManifests {
		if !isBaseName(m.FileName) {
			p.add("ExtraManifests[%d].FileName: %q must be a plain file name", i, m.FileName)
		}
	}
}

// validateHosts checks what names each host's files: the hostconfig
// directory, the MACs (a file name under /etc/assisted/hostnames), the
// installer arguments (a JSON file) and the network files' paths.
func (in *Input) validateHosts(p *problems) {
	seenDir := map[string]int{}
	for i, h := range in.Hosts {
		dir := h.configDirName(i)
		if !hostDirNameRE.MatchString(dir) {
			p.add("Hosts[%d].Hostname: %q cannot be used as a directory name", i, h.Hostname)
		}
		if j, dup := seenDir[dir]; dup {
			p.add("Hosts[%d].Hostname: %q is also used by Hosts[%d]", i, dir, j)
		}
		seenDir[dir] = i
		for k, mac := range h.MACs {
			if !macRE.MatchString(mac) {
				p.add("Hosts[%d].MACs[%d]: %q is not a MAC address", i, k, mac)
			}
		}
		for k, a := range h.InstallerArgs {
			if a == "" || !utf8.ValidString(a) {
				p.add("Hosts[%d].InstallerArgs[%d]: must be a non-empty UTF-8 string", i, k)
			}
		}
	}
	for i, f := range in.NetworkFiles {
		if !networkHostDirRE.MatchString(f.Path) || path.Clean(f.Path) != f.Path {
			p.add("NetworkFiles[%d].Path: %q must be /etc/assisted/network/host<N>/<file>", i, f.Path)
		}
		if f.Mode&^fs.ModePerm != 0 {
			p.add("NetworkFiles[%d].Mode: %v must be permission bits only", i, f.Mode)
		}
	}
}

// validateServices checks the values written into the services' env
// files and configuration: registries, host validations, NTP and proxy.
func (in *Input) validateServices(p *problems) {
	for i, r := range in.PublicContainerRegistries {
		if !registryHostRE.MatchString(r) {
			p.add("PublicContainerRegistries[%d]: %q must be a registry host[:port]", i, r)
		}
	}
	if _, err := parseRegistries(in.RegistriesConf); err != nil {
		p.add("RegistriesConf: %v", err)
	}
	for i, v := range in.DisabledHostValidations {
		if !validationIDRE.MatchString(v) {
			p.add("DisabledHostValidations[%d]: %q is not a validation ID (like belongs-to-majority-group)", i, v)
		}
	}
	for i, s := range in.NTPSources {
		if s == "" || strings.ContainsAny(s, " \t\n\r") {
			p.add("NTPSources[%d]: %q must be a host name or IP address", i, s)
		}
	}
	if in.Proxy != nil {
		for _, s := range []struct{ name, v string }{
			{"Proxy.HTTPProxy", in.Proxy.HTTPProxy},
			{"Proxy.HTTPSProxy", in.Proxy.HTTPSProxy},
			{"Proxy.NoProxy", in.Proxy.NoProxy},
		} {
			if strings.ContainsAny(s.v, "\"\n\r \t") || hasControl(s.v) {
				p.add("%s: must not contain quotes, whitespace or control characters", s.name)
			}
		}
	}
}

// configDirName is the directory under /etc/assisted/hostconfig.
func (h Host) configDirName(index int) string {
	if h.Hostname != "" {
		return h.Hostname
	}
	return fmt.Sprintf("host-%d", index)
}

func isBaseName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\\\x00")
}

// releaseArch is the assisted-service spelling of the release's
// architecture: arch.Multi or a supported architecture. The input must
// name it: an empty one is an error here, not arch.Default.
func releaseArch(a string) (string, error) {
	if a == "" {
		return "", fmt.Errorf("required (x86_64, aarch64, ppc64le, s390x or multi)")
	}
	if a == arch.Multi {
		return a, nil
	}
	if r, ok := arch.RPM(a); ok {
		return r, nil
	}
	return "", fmt.Errorf("%q is not one of x86_64, aarch64, ppc64le, s390x, multi", a)
}

// majorMinor returns "X.Y" of a version "X.Y[.Z...]".
func majorMinor(version string) (string, error) {
	v := strings.TrimPrefix(version, "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 || !isDigits(parts[0]) || !isDigits(leadingDigits(parts[1])) {
		return "", fmt.Errorf("%q is not a version like 4.19.3", version)
	}
	return parts[0] + "." + leadingDigits(parts[1]), nil
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

func isDigits(s string) bool {
	return s != "" && leadingDigits(s) == s
}

// hasControl reports whether s has an ASCII control character or DEL.
func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0
}

// hasContent reports whether b has content once whitespace is removed.
func hasContent(b []byte) bool { return len(bytes.TrimSpace(b)) > 0 }

// AddNodes is what an add-nodes ISO knows of the installed cluster
// (upstream: the addnodes case of the installer's agent ignition).
type AddNodes struct {
	// ClusterID, ClusterName and APIDNSName identify the cluster for
	// agent-installer-client importCluster (/etc/assisted/add-nodes.env).
	ClusterID   string
	ClusterName string
	APIDNSName  string
	// UserManagedNetworking is set for platforms None and External
	// (import-cluster-config.json).
	UserManagedNetworking bool
	// IgnitionEndpointURL and IgnitionEndpointCA (PEM) are the cluster's
	// secure machine-config server, written to worker-ignition-endpoint.json
	// when the URL is not empty.
	IgnitionEndpointURL string
	IgnitionEndpointCA  string
	// Chrony, when not empty, replaces the live system's /etc/chrony.conf
	// (the cluster's workers' NTP settings).
	Chrony []byte
	// AuthTokenExpiry is when the ISO's assisted-service tokens expire
	// (RFC 3339), AUTH_TOKEN_EXPIRY in add-nodes.env as upstream writes it
	// (openshift/installer pkg/asset/agent/image/ignition.go
	// getAddNodesEnv, commit 00f6ab7e), read by agent-auth-token-status.sh,
	// which warns on the console once they have expired. Empty: the
	// tokens do not expire and the line is left out.
	AuthTokenExpiry string
}

func (a *AddNodes) validate() []string {
	var p []string
	if !uuidRE.MatchString(a.ClusterID) {
		p = append(p, fmt.Sprintf("AddNodes.ClusterID %q is not a UUID", a.ClusterID))
	}
	for _, f := range []struct{ n, v string }{{"ClusterName", a.ClusterName}, {"APIDNSName", a.APIDNSName}} {
		if !dnsNameRE.MatchString(f.v) {
			p = append(p, fmt.Sprintf("AddNodes.%s %q is not a DNS name", f.n, f.v))
		}
	}
	if strings.ContainsAny(a.IgnitionEndpointURL, unsafeEnvChars) || hasControl(a.IgnitionEndpointURL) {
		p = append(p, "AddNodes.IgnitionEndpointURL holds characters a URL cannot")
	}
	if a.AuthTokenExpiry != "" {
		if _, err := time.Parse(time.RFC3339, a.AuthTokenExpiry); err != nil {
			p = append(p, fmt.Sprintf("AddNodes.AuthTokenExpiry %q is not an RFC 3339 time", a.AuthTokenExpiry))
		}
	}
	return p
}
