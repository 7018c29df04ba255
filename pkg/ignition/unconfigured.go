package ignition

import (
	"fmt"
	"io/fs"
	"net"
	"sort"
	"strings"
)

// The generic ISO and the config image (docs/unconfigured.md): the generic
// ISO's config (Input.Unconfigured) carries every program of the agent ISO
// and nothing of any cluster; the config image carries the files of one
// cluster's full config that InConfigImage selects, and the host installs
// them when the image is attached.

// Paths and names of the generic ISO.
const (
	// UnconfiguredEnvPath holds what a config image must match:
	// RELEASE_IMAGE, RELEASE_VERSION, CPU_ARCH and, when known,
	// RENDEZVOUS_IP.
	UnconfiguredEnvPath = "/etc/assisted/unconfigured.env"
	// ConfigCheckUnit finds, checks and installs the config image.
	ConfigCheckUnit = "agent-check-config-image.service"
	// ConfigImageInfoPath and ConfigImageSumsPath are the two members of
	// the config image that agentiso adds to the cluster's files.
	ConfigImageInfoPath = "/etc/assisted/config-image/info.env"
	ConfigImageSumsPath = "/etc/assisted/config-image/sha256sums"
)

// configImageDirs and configImageFiles select the files of a full config
// that belong to one cluster: the config image carries them, the generic
// ISO does not. Everything else (scripts, units, the release's files,
// mirrors, the trust bundle, NTP) is the same for every cluster of a
// release and stays on the generic ISO. Upstream's list is
// GetConfigImageFiles in openshift/installer
// pkg/asset/agent/image/unconfigured_ignition.go.
var (
	configImageDirs = []string{
		ManifestsDir + "/",
		ExtraManifestsDir + "/",
		HostConfigDir + "/",
		HostnamesDir + "/",
		NetworkDir + "/",
		TLSDir + "/",
		"/usr/local/share/assisted-service/",
		"/usr/local/share/start-cluster/",
		"/etc/assisted/config-image/",
	}
	configImageFiles = []string{
		RendezvousEnvPath,
		"/etc/assisted/agent-installer.env",
		"/etc/issue",
		"/etc/systemd/system.conf.d/10-default-env.conf",
		"/root/.docker/config.json",
	}
)

// InConfigImage reports whether the file at p belongs to one cluster, and
// so travels on the config image instead of the generic ISO.
func InConfigImage(p string) bool {
	for _, f := range configImageFiles {
		if p == f {
			return true
		}
	}
	for _, d := range configImageDirs {
		if strings.HasPrefix(p, d) && len(p) > len(d) {
			return true
		}
	}
	return false
}

// ConfigImageRoots lists the directories and files a config image may
// hold (for the host's check and the docs), sorted.
func ConfigImageRoots() []string {
	out := append(append([]string{}, configImageDirs...), configImageFiles...)
	sort.Strings(out)
	return out
}

// ConfigImageFiles builds the full config of in (which must not be
// Unconfigured) and returns the files the config image carries, sorted
// by path, with their plain contents and modes.
func ConfigImageFiles(in Input) ([]File, error) {
	if in.Unconfigured {
		return nil, fmt.Errorf("ConfigImageFiles: the input is the generic ISO's (Unconfigured); a config image is made from a cluster's full input")
	}
	b, _, _, err := build(&in)
	if err != nil {
		return nil, err
	}
	var out []File
	for _, f := range b.raw {
		if InConfigImage(f.Path) {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// unconfiguredEnv renders UnconfiguredEnvPath.
func unconfiguredEnv(in *Input) []byte {
	cpu, _ := releaseArch(in.Arch)
	var b strings.Builder
	fmt.Fprintf(&b, "RELEASE_IMAGE=%s\n", in.ReleaseImage)
	fmt.Fprintf(&b, "RELEASE_VERSION=%s\n", in.ReleaseVersion)
	fmt.Fprintf(&b, "CPU_ARCH=%s\n", cpu)
	if in.RendezvousIP != "" {
		fmt.Fprintf(&b, "RENDEZVOUS_IP=%s\n", net.ParseIP(in.RendezvousIP).String())
	}
	return []byte(b.String())
}

// addUnconfigured adds what only the generic ISO carries: what a config
// image must match, and the loader with its unit (data/agent/unconfigured).
func (b *builder) addUnconfigured(src fs.FS, in *Input, td *templateData) error {
	if err := b.addFile(UnconfiguredEnvPath, 0o600, unconfiguredEnv(in), false, false); err != nil {
		return err
	}
	if err := b.addTree(src, "unconfigured/files", td); err != nil {
		return err
	}
	return b.addUnits(src, "unconfigured/systemd/units", td, map[string]bool{ConfigCheckUnit: true})
}

// validateUnconfigured checks that the generic ISO's input names no
// cluster: what would belong to one comes with the config image.
func (in *Input) validateUnconfigured(p *problems) {
	if in.RendezvousIP != "" && net.ParseIP(in.RendezvousIP) == nil {
		p.add("RendezvousIP: %q is not an IP address", in.RendezvousIP)
	}
	if in.PullSecret == "" {
		p.add("PullSecret: required")
	}
	if in.ImageType != "" && in.ImageType != "full-iso" {
		p.add("ImageType: %q: the generic ISO is always the full ISO", in.ImageType)
	}
	have := map[string]bool{}
	for _, m := range in.ZTPManifests {
		have[m.FileName] = true
	}
	for _, name := range []string{"cluster-image-set.yaml", "infraenv.yaml", "pull-secret.yaml"} {
		if !have[name] {
			p.add("ZTPManifests: %s is missing", name)
		}
	}
	for _, name := range []string{"agent-cluster-install.yaml", "cluster-deployment.yaml", "agent-config.yaml"} {
		if have[name] {
			p.add("ZTPManifests: %s names a cluster; it belongs in the config image", name)
		}
	}
	// The generic ISO's static networking is NetworkFiles alone, as
	// upstream's (openshift/installer
	// pkg/asset/agent/image/unconfigured_ignition.go).
	if have["nmstateconfig.yaml"] {
		p.add("ZTPManifests: nmstateconfig.yaml is registered with the cluster's InfraEnv; it belongs in the config image (the generic ISO's static networking is NetworkFiles)")
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"ClusterName", in.ClusterName != ""}, {"BaseDomain", in.BaseDomain != ""}, {"InfraEnvID", in.InfraEnvID != ""},
		{"AgentConfigYAML", hasContent(in.AgentConfigYAML)}, {"ExtraManifests", len(in.ExtraManifests) > 0},
		{"Hosts", len(in.Hosts) > 0}, {"FencingCredentialsYAML", hasContent(in.FencingCredentialsYAML)},
		{"PasswordHash", in.PasswordHash != ""}, {"Auth", in.Auth != Auth{}}, {"Signers", len(in.Signers) > 0},
		{"ControlPlaneAgents/ArbiterAgents/WorkerAgents", in.ControlPlaneAgents+in.ArbiterAgents+in.WorkerAgents != 0},
		{"Proxy", in.Proxy != nil}, {"DisabledHostValidations", len(in.DisabledHostValidations) > 0},
	} {
		if f.set {
			p.add("%s: must be empty for the generic ISO (Unconfigured): it comes with the config image", f.name)
		}
	}
}

// ReleaseCPU is the CPU architecture a release's config names
// (CPU_ARCH): x86_64, aarch64, ppc64le, s390x or multi; Go names are
// accepted.
func ReleaseCPU(a string) (string, error) { return releaseArch(a) }
