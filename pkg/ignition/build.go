// Package ignition assembles the agent ISO's Ignition config from resolved
// inputs.
package ignition

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"path"
	"sort"
	"strings"
	"text/template"

	"github.com/coreos/ignition/v2/config/v3_2/types"

	"github.com/seed-a052040e/agentiso/data"
	"github.com/seed-a052040e/agentiso/pkg/arch"
	"github.com/seed-a052040e/agentiso/pkg/releasepolicy"
)

// Paths and names the live ISO's units and containers depend on.
const (
	ManifestsDir      = "/etc/assisted/manifests"
	ExtraManifestsDir = "/etc/assisted/extra-manifests"
	HostConfigDir     = "/etc/assisted/hostconfig"
	HostnamesDir      = "/etc/assisted/hostnames"
	NetworkDir        = "/etc/assisted/network"
	RendezvousEnvPath = "/etc/assisted/rendezvous-host.env"
	TLSDir            = "/opt/agent/tls"
	PreNetworkScript  = "/usr/local/bin/pre-network-manager-config.sh"
	PreNetworkUnit    = "pre-network-manager-config.service"
	RegistriesPath    = "/etc/containers/registries.conf"
	CABundlePath      = "/etc/pki/ca-trust/source/anchors/domain.crt"
	ChronyPath        = "/etc/chrony.conf"

	// InstallerArgsFile and IgnitionOverrideFile are the per-host files in
	// HostConfigDir/<host>/ that agent-apply-host-overrides.service sends
	// to assisted-service.
	InstallerArgsFile    = "installer-args.json"
	IgnitionOverrideFile = "ignition-config-overrides.json"
	// FencingCredentialsFile holds two-node fencing BMC credentials, in
	// HostConfigDir (by host name) or a host's directory (by MAC).
	FencingCredentialsFile = "fencing-credentials.yaml"

	serviceProtocol = "http"
	servicePort     = "8090"
	imageSvcPort    = "8888"
	uiPort          = "3001"
	defaultCABundle = "-v /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem:/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem:z"
	textDataURL     = "data:text/plain;charset=utf-8;base64,"
	gzipDataURL     = "data:;base64,"
)

// EnabledUnits returns the units enabled in every agent ISO (the upstream
// default list restricted to the units this ISO carries), sorted.
// pre-network-manager-config.service is added when static networking is
// configured.
func EnabledUnits() []string {
	return []string{
		"agent-register-cluster.service",
		"agent-register-infraenv.service",
		"agent-set-host-copy-network-arg.service",
		"agent.service",
		"assisted-service-db.service",
		"assisted-service-pod.service",
		"assisted-service.service",
		"install-status.service",
		"iscsiadm.service",
		"iscsistart.service",
		"node-zero.service",
		"oci-eval-user-data.service",
		"selinux.service",
		"set-hostname.service",
		"start-cluster-installation.service",
	}
}

// EnabledStockUnits returns the units of the RHCOS live system itself that
// every agent ISO enables (as upstream does), sorted. The config carries no
// contents for them.
func EnabledStockUnits() []string {
	return []string{"multipathd.service"}
}

// templateData is what the templates under data/agent see.
type templateData struct {
	ServiceProtocol           string
	ClusterName               string
	PullSecret                string
	ControlPlaneAgents        int
	ArbiterAgents             int
	WorkerAgents              int
	ReleaseImages             string
	ReleaseImage              string
	ReleaseImageMirror        string
	HaveMirrorConfig          bool
	PublicContainerRegistries string
	InfraEnvID                string
	OSImages                  string
	Proxy                     *Proxy
	ImageTypeISO              string
	PublicKeyPEM              string
	UserAuthToken             string
	WatcherAuthToken          string
	AuthType                  string
	Tokens                    bool // the ISO carries the key and tokens (false for 4.16's AUTH_TYPE=none)
	CABundleMount             string
	DisableImagePolicy        bool
	DisabledHostValidations   string
	ConfigImageRoots          string
}

// builder accumulates the config's files and units.
type builder struct {
	threshold int
	files     []types.File
	dirs      []types.Directory
	units     []types.Unit
	seen      map[string]bool
	// raw keeps every file's contents as given (before encoding), for the
	// config image (ConfigImageFiles).
	raw []File
}

// File is one file of the config with its plain contents.
type File struct {
	Path     string
	Mode     int
	Contents []byte
}

// Build assembles the agent ISO's Ignition config (spec 3.2.0) from in and
// reports its size. The config is deterministic for a given Input. With
// in.Unconfigured it is the generic ISO's config (docs/unconfigured.md).
func Build(in Input) (types.Config, Size, error) {
	_, cfg, size, err := build(&in)
	return cfg, size, err
}

func build(in *Input) (*builder, types.Config, Size, error) {
	if err := in.validate(); err != nil {
		return nil, types.Config{}, Size{}, err
	}
	td, err := newTemplateData(in)
	if err != nil {
		return nil, types.Config{}, Size{}, err
	}
	threshold := in.CompressThreshold
	if threshold == 0 {
		threshold = DefaultCompressThreshold
	}
	b := &builder{threshold: threshold, seen: map[string]bool{}}

	src := data.Agent()
	if err := b.addTree(src, "files", td); err != nil {
		return nil, types.Config{}, Size{}, err
	}
	if err := b.addUnits(src, "systemd/units", td, enabledFor(in)); err != nil {
		return nil, types.Config{}, Size{}, err
	}
	if in.AddNodes != nil {
		if err := b.addTree(src, "addnodes/files", td); err != nil {
			return nil, types.Config{}, Size{}, err
		}
		enabled := map[string]bool{}
		for _, u := range AddNodesUnits() {
			enabled[u] = true
		}
		if err := b.addUnits(src, "addnodes/systemd/units", td, enabled); err != nil {
			return nil, types.Config{}, Size{}, err
		}
	}
	for _, name := range EnabledStockUnits() {
		t := true
		b.units = append(b.units, types.Unit{Name: name, Enabled: &t})
	}
	if err := b.addGenerated(in, td.Tokens); err != nil {
		return nil, types.Config{}, Size{}, err
	}
	if in.Payload != nil {
		if err := b.addPayload(in.Payload); err != nil {
			return nil, types.Config{}, Size{}, err
		}
	}
	// The generic ISO always carries the static network script: its
	// config image may bring keyfiles.
	if len(in.NetworkFiles) > 0 || in.Unconfigured {
		if err := b.addTree(src, "network/files", td); err != nil {
			return nil, types.Config{}, Size{}, err
		}
	}
	if in.Unconfigured {
		if err := b.addUnconfigured(src, in, td); err != nil {
			return nil, types.Config{}, Size{}, err
		}
	}

	sort.Slice(b.files, func(i, j int) bool { return b.files[i].Path < b.files[j].Path })
	sort.Slice(b.dirs, func(i, j int) bool { return b.dirs[i].Path < b.dirs[j].Path })
	sort.Slice(b.units, func(i, j int) bool { return b.units[i].Name < b.units[j].Name })

	cfg := types.Config{
		Ignition: types.Ignition{Version: types.MaxVersion.String()},
		Passwd:   types.Passwd{Users: []types.PasswdUser{coreUser(in)}},
		Storage:  types.Storage{Files: b.files, Directories: b.dirs},
		Systemd:  types.Systemd{Units: b.units},
	}
	size, err := Measure(cfg)
	if err != nil {
		return nil, types.Config{}, Size{}, err
	}
	return b, cfg, size, nil
}

// AddNodesUnits are the units an add-nodes ISO carries and enables besides
// the common ones; it does not enable the install's
// agent-register-cluster and start-cluster-installation (upstream: the
// addnodes case of the installer's agent ignition, which enables
// agent-add-node.service and agent-auth-token-status.service;
// agent-import-cluster runs in place of agent-register-cluster).
func AddNodesUnits() []string {
	return []string{"agent-add-node.service", "agent-auth-token-status.service", "agent-import-cluster.service"}
}

func enabledFor(in *Input) map[string]bool {
	m := map[string]bool{}
	for _, u := range EnabledUnits() {
		m[u] = true
	}
	if in.AddNodes != nil {
		delete(m, "agent-register-cluster.service")
		delete(m, "start-cluster-installation.service")
	}
	if len(in.NetworkFiles) > 0 {
		m[PreNetworkUnit] = true
	}
	return m
}

func coreUser(in *Input) types.PasswdUser {
	u := types.PasswdUser{Name: "core"}
	if key := strings.TrimSpace(in.SSHKey); key != "" {
		u.SSHAuthorizedKeys = []types.SSHAuthorizedKey{types.SSHAuthorizedKey(key)}
	}
	if in.PasswordHash != "" {
		h := in.PasswordHash
		u.PasswordHash = &h
	}
	return u
}

func newTemplateData(in *Input) (*templateData, error) {
	cpu, _ := releaseArch(in.Arch)
	releaseImages, err := releaseImagesJSON(in.ReleaseImage, in.ReleaseVersion, cpu)
	if err != nil {
		return nil, err
	}
	osImages := make([]OSImage, len(in.OSImages))
	for i, o := range in.OSImages {
		if o.OpenshiftVersion == "" {
			o.OpenshiftVersion = in.ReleaseVersion
		}
		if o.CPUArchitecture == "" {
			o.CPUArchitecture = cpu
		}
		osImages[i] = o
	}
	osJSON, err := json.Marshal(osImages)
	if err != nil {
		return nil, fmt.Errorf("encoding OS_IMAGES: %w", err)
	}
	// validate already checked registries.conf.
	regs, _ := parseRegistries(in.RegistriesConf)
	haveMirror := haveMirrors(regs)
	registries := strings.Join(publicRegistries(in, regs), ",")
	releaseMirror := releaseImageMirror(in, regs)
	imageType := in.ImageType
	if imageType == "" {
		imageType = "full-iso"
	}
	// The user's bundle replaces the containers' trust store only for a
	// mirror (as upstream); otherwise it reaches them through the host
	// store, which also keeps the public CAs. With an embedded payload the
	// mirror is the hosts' own registry, whose certificate is a host
	// anchor beside the user's bundle (addPayload; extracted before the
	// units start): the containers get the host store, which has both.
	caMount := defaultCABundle
	if haveMirror && hasContent(in.CABundle) && in.Payload == nil {
		caMount = "-v " + CABundlePath + ":/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem:z"
	}
	clusterName := in.ClusterName
	if in.BaseDomain != "" {
		clusterName += "." + strings.TrimSuffix(in.BaseDomain, ".")
	}
	// The release's authentication (pkg/releasepolicy): 4.16 wrote
	// AUTH_TYPE=none and no key nor token; 4.18 and later
	// agent-installer-local with the public key and the tokens.
	pol, err := releasepolicy.For(in.ReleaseVersion)
	if err != nil {
		return nil, err
	}
	td := &templateData{
		ServiceProtocol:           serviceProtocol,
		ClusterName:               clusterName,
		PullSecret:                in.PullSecret,
		ControlPlaneAgents:        in.ControlPlaneAgents,
		ArbiterAgents:             in.ArbiterAgents,
		WorkerAgents:              in.WorkerAgents,
		ReleaseImages:             releaseImages,
		ReleaseImage:              in.ReleaseImage,
		ReleaseImageMirror:        releaseMirror,
		HaveMirrorConfig:          haveMirror,
		PublicContainerRegistries: registries,
		InfraEnvID:                in.InfraEnvID,
		OSImages:                  string(osJSON),
		Proxy:                     proxyWithRendezvousNetwork(in),
		ImageTypeISO:              imageType,
		AuthType:                  string(pol.Auth),
		Tokens:                    pol.Auth.Tokens(),
		CABundleMount:             caMount,
		DisableImagePolicy:        in.DisableImagePolicy,
		DisabledHostValidations:   strings.Join(in.DisabledHostValidations, ","),
		ConfigImageRoots:          strings.Join(ConfigImageRoots(), " "),
	}
	if td.Tokens {
		td.UserAuthToken, td.WatcherAuthToken = in.Auth.UserToken, in.Auth.WatcherToken
	}
	if td.Tokens && in.Auth.PublicKeyPEM != "" {
		td.PublicKeyPEM = base64.StdEncoding.EncodeToString([]byte(in.Auth.PublicKeyPEM))
	}
	return td, nil
}

// releaseImagesJSON renders RELEASE_IMAGES for assisted-service.
func releaseImagesJSON(pullSpec, version, cpu string) (string, error) {
	mm, err := majorMinor(version)
	if err != nil {
		return "", err
	}
	archs := []string{cpu}
	if cpu == arch.Multi {
		// Every supported architecture, in upstream's order.
		archs = []string{arch.AArch64, arch.X86_64, arch.PPC64LE, arch.S390X}
	}
	type releaseImage struct {
		OpenshiftVersion string   `json:"openshift_version"`
		CPUArchitecture  string   `json:"cpu_architecture"`
		CPUArchitectures []string `json:"cpu_architectures"`
		URL              string   `json:"url"`
		Version          string   `json:"version"`
	}
	out, err := json.Marshal([]releaseImage{{
		OpenshiftVersion: mm,
		CPUArchitecture:  cpu,
		CPUArchitectures: archs,
		URL:              pullSpec,
		Version:          version,
	}})
	if err != nil {
		return "", fmt.Errorf("encoding RELEASE_IMAGES: %w", err)
	}
	return string(out), nil
}

// proxyWithRendezvousNetwork returns the proxy with the machine network that
// holds the rendezvous IP appended to NO_PROXY, so hosts reach
// assisted-service directly. It returns nil when no proxy is set.
func proxyWithRendezvousNetwork(in *Input) *Proxy {
	if in.Proxy == nil || (in.Proxy.HTTPProxy == "" && in.Proxy.HTTPSProxy == "") {
		return nil
	}
	p := *in.Proxy
	ip := net.ParseIP(in.RendezvousIP)
	for _, c := range in.MachineNetworks {
		_, n, err := net.ParseCIDR(c)
		if err != nil || !n.Contains(ip) {
			continue
		}
		present := false
		for _, e := range strings.Split(p.NoProxy, ",") {
			if strings.TrimSpace(e) == c {
				present = true
			}
		}
		if !present {
			if p.NoProxy == "" {
				p.NoProxy = c
			} else {
				p.NoProxy += "," + c
			}
		}
		break
	}
	return &p
}

// rendezvousEnv renders /etc/assisted/rendezvous-host.env.
func rendezvousEnv(in *Input, tokens bool) []byte {
	hostPort := func(port string) string {
		return serviceProtocol + "://" + net.JoinHostPort(in.RendezvousIP, port) + "/"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "NODE_ZERO_IP=%s\n", net.ParseIP(in.RendezvousIP).String())
	fmt.Fprintf(&b, "SERVICE_BASE_URL=%s\n", hostPort(servicePort))
	fmt.Fprintf(&b, "IMAGE_SERVICE_BASE_URL=%s\n", hostPort(imageSvcPort))
	if tokens {
		// 4.16's installer wrote neither (AUTH_TYPE=none).
		fmt.Fprintf(&b, "PULL_SECRET_TOKEN=%s\n", in.Auth.AgentToken)
		fmt.Fprintf(&b, "USER_AUTH_TOKEN=%s\n", in.Auth.UserToken)
	}
	if in.AddNodes != nil {
		b.WriteString("WORKFLOW_TYPE=addnodes\n")
	} else {
		b.WriteString("WORKFLOW_TYPE=install\n")
	}
	fmt.Fprintf(&b, "AIUI_APP_API_URL=%s\n", hostPort(servicePort))
	fmt.Fprintf(&b, "AIUI_URL=%s\n", hostPort(uiPort))
	return []byte(b.String())
}

// chronyConf is the live system's /etc/chrony.conf when there are extra
// NTP sources, as upstream writes it (openshift/installer
// pkg/asset/agent/image/ignition.go addNTPSources; its testscript
// agent/image/assets/with_additional_ntp_sources): one server line per
// source, then makestep, rtcsync and logdir, replacing RHCOS's file.
func chronyConf(sources []string) []byte {
	var b strings.Builder
	for _, s := range sources {
		fmt.Fprintf(&b, "server %s iburst\n", s)
	}
	b.WriteString("makestep 1.0 3\nrtcsync\nlogdir /var/log/chrony\n")
	return []byte(b.String())
}

// addGenerated adds the files computed from the input rather than read from
// data/.
func (b *builder) addGenerated(in *Input, tokens bool) error {
	type gen struct {
		path     string
		mode     int
		contents []byte
		compress bool
	}
	var gens []gen
	addf := func(p string, mode int, c []byte, compress bool) {
		gens = append(gens, gen{p, mode, c, compress})
	}

	// Root-only: it holds the agent and user JWTs, and every reader runs
	// as root.
	// The generic ISO carries it, without tokens, only when the rendezvous
	// IP is known (as upstream); the config image replaces it.
	if !in.Unconfigured || in.RendezvousIP != "" {
		addf(RendezvousEnvPath, 0o600, rendezvousEnv(in, tokens), false)
	}
	for _, m := range in.ZTPManifests {
		addf(path.Join(ManifestsDir, m.FileName), 0o600, m.Contents, false)
	}
	if hasContent(in.AgentConfigYAML) {
		addf(path.Join(ManifestsDir, "agent-config.yaml"), 0o600, in.AgentConfigYAML, false)
	}
	// Extra manifests may carry Secrets; only root (which runs
	// agent-register-cluster's container) reads them.
	b.addDir(ExtraManifestsDir, 0o700)
	for _, m := range in.ExtraManifests {
		addf(path.Join(ExtraManifestsDir, m.FileName), 0o600, m.Contents, true)
	}
	for i, h := range in.Hosts {
		dir := path.Join(HostConfigDir, h.configDirName(i))
		macs := make([]string, len(h.MACs))
		for k, m := range h.MACs {
			macs[k] = strings.ToLower(m)
		}
		if len(macs) > 0 {
			addf(path.Join(dir, "mac_addresses"), 0o644, []byte(strings.Join(macs, "\n")), false)
		}
		if h.Role != "" {
			addf(path.Join(dir, "role"), 0o644, []byte(h.Role), false)
		}
		if hasContent(h.RootDeviceHintsYAML) {
			addf(path.Join(dir, "root-device-hints.yaml"), 0o644, h.RootDeviceHintsYAML, false)
		}
		if len(h.InstallerArgs) > 0 {
			args, err := json.Marshal(h.InstallerArgs)
			if err != nil {
				return fmt.Errorf("Hosts[%d].InstallerArgs: %w", i, err)
			}
			addf(path.Join(dir, InstallerArgsFile), 0o644, args, false)
		}
		if h.IgnitionConfigOverride != "" {
			addf(path.Join(dir, IgnitionOverrideFile), 0o600, []byte(h.IgnitionConfigOverride), false)
		}
		if hasContent(h.FencingCredentialsYAML) {
			addf(path.Join(dir, FencingCredentialsFile), 0o600, h.FencingCredentialsYAML, false)
		}
		if h.Hostname != "" && len(macs) > 0 {
			addf(path.Join(HostnamesDir, macs[0]), 0o600, []byte(h.Hostname), false)
		}
	}
	if hasContent(in.FencingCredentialsYAML) {
		addf(path.Join(HostConfigDir, FencingCredentialsFile), 0o600, in.FencingCredentialsYAML, false)
	}
	for _, f := range in.NetworkFiles {
		mode := int(f.Mode.Perm())
		if mode == 0 {
			mode = 0o600
		}
		addf(f.Path, mode, f.Contents, false)
	}
	// assisted-service.service mounts TLSDir, so it exists even without
	// signers; it holds private keys, so only root may enter it.
	b.addDir(TLSDir, 0o700)
	for _, s := range in.Signers {
		addf(path.Join(TLSDir, s.Name+".crt"), 0o600, s.CertPEM, false)
		addf(path.Join(TLSDir, s.Name+".key"), 0o600, s.KeyPEM, false)
	}
	if in.PasswordHash != "" {
		addf(path.Join(TLSDir, "kubeadmin-password.hash"), 0o600, []byte(in.PasswordHash), false)
	}
	if regs, _ := parseRegistries(in.RegistriesConf); haveMirrors(regs) {
		// Without a mirror RHCOS's own registries.conf stays.
		addf(RegistriesPath, 0o644, in.RegistriesConf, true)
	}
	if hasContent(in.CABundle) {
		addf(CABundlePath, 0o600, in.CABundle, true)
	}
	if a := in.AddNodes; a != nil {
		if err := addNodesFiles(a, addf); err != nil {
			return err
		}
	}
	if len(in.NTPSources) > 0 {
		if err := b.addFile(ChronyPath, 0o644, chronyConf(in.NTPSources), false, false); err != nil {
			return err
		}
	}
	for _, g := range gens {
		if err := b.addFile(g.path, g.mode, g.contents, g.compress, false); err != nil {
			return err
		}
	}
	return nil
}

// addTree adds every file below root in src, mirroring its path under "/".
func (b *builder) addTree(src fs.FS, root string, td *templateData) error {
	return fs.WalkDir(src, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		contents, dest, err := render(src, p, td)
		if err != nil {
			return err
		}
		dest = "/" + strings.TrimPrefix(strings.TrimPrefix(dest, root), "/")
		mode, appendTo := treeFileMode(dest)
		return b.addFile(dest, mode, contents, false, appendTo)
	})
}

// treeFileMode is the mode rule for files from data/agent/files: scripts
// in bin/ (and NetworkManager dispatcher scripts) are executable, motd and
// containers.conf are appended world-readable, registries.conf is
// world-readable and everything else is private. The pre-network script
// keeps the mode upstream gives it.
func treeFileMode(dest string) (mode int, appendTo bool) {
	base := path.Base(dest)
	parent := path.Base(path.Dir(dest))
	switch {
	case dest == PreNetworkScript:
		return 0o755, false
	case parent == "bin" || parent == "dispatcher.d":
		return 0o555, false
	case base == "motd" || base == "containers.conf":
		return 0o644, true
	case base == "registries.conf":
		return 0o644, false
	}
	return 0o600, false
}

// addUnits adds every unit below dir; a directory "X.d" holds drop-ins for
// unit X.
func (b *builder) addUnits(src fs.FS, dir string, td *templateData, enabled map[string]bool) error {
	entries, err := fs.ReadDir(src, dir)
	if err != nil {
		return fmt.Errorf("reading embedded units: %w", err)
	}
	byName := map[string]*types.Unit{}
	unit := func(name string) *types.Unit {
		if u, ok := byName[name]; ok {
			return u
		}
		u := &types.Unit{Name: name}
		byName[name] = u
		return u
	}
	for _, e := range entries {
		p := path.Join(dir, e.Name())
		if e.IsDir() {
			if !strings.HasSuffix(e.Name(), ".d") {
				return fmt.Errorf("embedded unit directory %s: only X.d drop-in directories are allowed", p)
			}
			u := unit(strings.TrimSuffix(e.Name(), ".d"))
			drops, err := fs.ReadDir(src, p)
			if err != nil {
				return fmt.Errorf("reading embedded drop-ins: %w", err)
			}
			for _, d := range drops {
				contents, dest, err := render(src, path.Join(p, d.Name()), td)
				if err != nil {
					return err
				}
				s := string(contents)
				u.Dropins = append(u.Dropins, types.Dropin{Name: path.Base(dest), Contents: &s})
			}
			continue
		}
		contents, dest, err := render(src, p, td)
		if err != nil {
			return err
		}
		s := string(contents)
		unit(path.Base(dest)).Contents = &s
	}
	for name := range enabled {
		if _, ok := byName[name]; !ok {
			return fmt.Errorf("enabled unit %s is not among the embedded units", name)
		}
	}
	for name, u := range byName {
		if enabled[name] {
			t := true
			u.Enabled = &t
		}
		b.units = append(b.units, *u)
	}
	return nil
}

// render reads p from src and, for a ".template" file, executes it with td.
// It returns the contents and the path without the ".template" suffix.
func render(src fs.FS, p string, td *templateData) ([]byte, string, error) {
	raw, err := fs.ReadFile(src, p)
	if err != nil {
		return nil, "", fmt.Errorf("reading embedded %s: %w", p, err)
	}
	if !strings.HasSuffix(p, ".template") {
		return raw, p, nil
	}
	t, err := template.New(path.Base(p)).
		Funcs(template.FuncMap{"replace": strings.ReplaceAll, "systemdQuoted": systemdQuoted, "shellQuoted": shellQuoted}).
		Option("missingkey=error").
		Parse(string(raw))
	if err != nil {
		return nil, "", fmt.Errorf("parsing embedded template %s: %w", p, err)
	}
	var out bytes.Buffer
	if err := t.Execute(&out, td); err != nil {
		return nil, "", fmt.Errorf("rendering embedded template %s: %w", p, err)
	}
	return out.Bytes(), strings.TrimSuffix(p, ".template"), nil
}

// systemdQuoted escapes s for a double-quoted systemd configuration value:
// a backslash would escape the next character (a trailing one the closing
// quote) and "%" starts a specifier, so both are doubled. Callers reject
// quotes and control characters.
func systemdQuoted(s string) string {
	return strings.NewReplacer(`\`, `\\`, "%", "%%").Replace(s)
}

func (b *builder) addDir(p string, mode int) {
	t := true
	b.dirs = append(b.dirs, types.Directory{
		Node:               types.Node{Path: p, Overwrite: &t, User: types.NodeUser{Name: strPtr("root")}},
		DirectoryEmbedded1: types.DirectoryEmbedded1{Mode: &mode},
	})
}

// addFile adds one file owned by root. compress forces gzip compression when
// it makes the file smaller; otherwise files above the threshold are
// compressed. Append files are written with overwrite unset, as Ignition
// requires.
func (b *builder) addFile(p string, mode int, contents []byte, compress, appendTo bool) error {
	if b.seen[p] {
		return fmt.Errorf("two files would be written to %s; rename one of them", p)
	}
	b.seen[p] = true
	if !appendTo {
		b.raw = append(b.raw, File{Path: p, Mode: mode, Contents: contents})
	}
	res := b.resource(contents, compress)
	f := types.File{
		Node:          types.Node{Path: p, User: types.NodeUser{Name: strPtr("root")}},
		FileEmbedded1: types.FileEmbedded1{Mode: &mode},
	}
	if appendTo {
		f.Append = []types.Resource{res}
	} else {
		t := true
		f.Overwrite = &t
		f.Contents = res
	}
	b.files = append(b.files, f)
	return nil
}

func (b *builder) resource(contents []byte, compress bool) types.Resource {
	if compress || (b.threshold > 0 && len(contents) > b.threshold) {
		if gz, ok := gzipSmaller(contents); ok {
			return types.Resource{
				Source:      strPtr(gzipDataURL + base64.StdEncoding.EncodeToString(gz)),
				Compression: strPtr("gzip"),
			}
		}
	}
	return types.Resource{Source: strPtr(textDataURL + base64.StdEncoding.EncodeToString(contents))}
}

func strPtr(s string) *string { return &s }

// The add-nodes files. agent-installer-client importCluster reads
// CLUSTER_ID, CLUSTER_NAME and CLUSTER_API_VIP_DNS_NAME from its
// environment and import-cluster-config.json and
// worker-ignition-endpoint.json from its cluster config directory
// (assisted-service release-4.18 ... master,
// cmd/agentbasedinstaller/client/main.go ImportOptions and
// cmd/agentbasedinstaller/import.go).
const (
	AddNodesEnvPath      = "/etc/assisted/add-nodes.env"
	ClusterConfigDir     = "/etc/assisted/clusterconfig"
	importConfigFile     = "import-cluster-config.json"
	ignitionEndpointFile = "worker-ignition-endpoint.json"
)

func addNodesFiles(a *AddNodes, addf func(p string, mode int, c []byte, compress bool)) error {
	env := fmt.Appendf(nil, "CLUSTER_ID=%s\nCLUSTER_NAME=%s\nCLUSTER_API_VIP_DNS_NAME=%s\n", a.ClusterID, a.ClusterName, a.APIDNSName)
	if a.AuthTokenExpiry != "" {
		env = fmt.Appendf(env, "AUTH_TOKEN_EXPIRY=%s\n", a.AuthTokenExpiry)
	}
	addf(AddNodesEnvPath, 0o644, env, false)
	var icc struct {
		Networking struct {
			UserManagedNetworking *bool `json:"userManagedNetworking,omitempty"`
		} `json:"networking"`
	}
	umn := a.UserManagedNetworking
	icc.Networking.UserManagedNetworking = &umn
	b, err := json.Marshal(icc)
	if err != nil {
		return err
	}
	addf(path.Join(ClusterConfigDir, importConfigFile), 0o644, b, false)
	if a.IgnitionEndpointURL != "" {
		ep := map[string]string{"url": a.IgnitionEndpointURL}
		if a.IgnitionEndpointCA != "" {
			ep["ca_certificate"] = base64.StdEncoding.EncodeToString([]byte(a.IgnitionEndpointCA))
		}
		b, err := json.Marshal(ep)
		if err != nil {
			return err
		}
		addf(path.Join(ClusterConfigDir, ignitionEndpointFile), 0o644, b, false)
	}
	if len(a.Chrony) > 0 {
		addf(ChronyPath, 0o644, a.Chrony, false)
	}
	return nil
}
