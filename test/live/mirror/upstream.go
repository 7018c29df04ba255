package mirror

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Upstream names the real components for the lab's images: the cache
// directory of hack/build-upstream.sh and the Debian root file system of
// hack/build-live-image-base.sh.
type Upstream struct {
	// Dir holds assisted-service, agent-installer-client, agent/ (the agent
	// binary, agent/agent), start_db.sh and BUILDINFO.
	Dir string
	// ServiceBase and AgentBase are the Debian root file systems of the two
	// images (hack/build-live-image-base.sh service|agent).
	ServiceBase, AgentBase string
}

// UpstreamLayers are the layers of the real images, built once and shared
// by every Start (zstd OCI layers; each keeps its compressed bytes after
// the first push).
type UpstreamLayers struct {
	ServiceBase, Service, AgentBase, Agent v1.Layer
	// BuildInfo is BUILDINFO of Upstream.Dir (branch, commits).
	BuildInfo map[string]string
}

// Paths in the real images, from upstream's Dockerfiles
// (assisted-service Dockerfile.assisted-service.ocp, assisted-installer-agent
// Dockerfile.assisted_installer_agent; the same on release-4.16 to 4.23).
const (
	ServicePath = "/assisted-service"
	ClientPath  = "/usr/local/bin/agent-installer-client"
	// ClientLink is the client's second name in the service image.
	ClientLink  = "/agent-based-installer-register-cluster-and-infraenv"
	StartDBPath = "/start_db.sh"
	AgentPath   = "/usr/bin/agent"
	// OCPath is where the service image has oc (openshift-clients); here the
	// lab's stand-in.
	OCPath = "/usr/bin/oc"
)

// RHELTrustBundle is the system trust store of the RHEL images, where the
// agent units mount the host's (or the mirror's) CA bundle.
const RHELTrustBundle = "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"

// rhelTrust makes Debian's system bundle, the one programs on the Debian
// base read (Go reads the first of its known bundle paths that exists,
// Debian's first), the RHEL one, as RHEL links its own
// /etc/ssl/certs/ca-bundle.crt: what the units mount there is then the
// containers' trust store, as in the real images.
var rhelTrust = entry{Path: "/etc/ssl/certs/ca-certificates.crt", Link: RHELTrustBundle}

// agentLinks are the step programs the agent image links to /usr/bin/agent.
var agentLinks = []string{"free_addresses", "inventory", "logs_sender", "next_step_runner", "disk_speed_check"}

// NewUpstreamLayers reads the real binaries and the base and builds the layers.
func NewUpstreamLayers(u Upstream) (*UpstreamLayers, error) {
	read := func(rel string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(u.Dir, rel))
		if err != nil {
			return nil, fmt.Errorf("mirror: upstream build %s: %w (hack/build-upstream.sh builds it)", u.Dir, err)
		}
		return b, nil
	}
	files := map[string][]byte{}
	for _, rel := range []string{"assisted-service", "agent-installer-client", "agent/agent", "start_db.sh", "BUILDINFO"} {
		b, err := read(rel)
		if err != nil {
			return nil, err
		}
		files[rel] = b
	}
	bases := map[string]v1.Layer{}
	for profile, p := range map[string]string{"service": u.ServiceBase, "agent": u.AgentBase} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("mirror: the %s image's Debian base: %w (hack/build-live-image-base.sh %s builds it)", profile, err, profile)
		}
		l, err := tarball.LayerFromFile(p, append(zstdOpts, tarball.WithCompressedCaching)...)
		if err != nil {
			return nil, fmt.Errorf("mirror: %s: %w", p, err)
		}
		bases[profile] = l
	}
	svc, err := zstdLayer([]entry{
		{Path: ServicePath, Mode: 0o755, Data: files["assisted-service"]},
		{Path: ClientPath, Mode: 0o755, Data: files["agent-installer-client"]},
		{Path: ClientLink, Link: ClientPath},
		{Path: StartDBPath, Mode: 0o755, Data: files["start_db.sh"]},
		{Path: "/commit-reference.txt", Mode: 0o644, Data: files["BUILDINFO"]},
		// the service's work directory (WORK_DIR, the Dockerfile's mkdir /data)
		{Path: "/data", Mode: 0o775, Dir: true},
		rhelTrust,
	})
	if err != nil {
		return nil, err
	}
	ag := []entry{{Path: AgentPath, Mode: 0o755, Data: files["agent/agent"]}, rhelTrust}
	for _, l := range agentLinks {
		ag = append(ag, entry{Path: "/usr/bin/" + l, Link: AgentPath})
	}
	// upstream's scripts/installer, which its image copies to /usr/local/bin
	scripts, _ := filepath.Glob(filepath.Join(u.Dir, "agent", "installer", "*"))
	for _, p := range scripts {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("mirror: %w", err)
		}
		ag = append(ag, entry{Path: "/usr/local/bin/" + filepath.Base(p), Mode: 0o755, Data: b})
	}
	agent, err := zstdLayer(ag)
	if err != nil {
		return nil, err
	}
	info := parseBuildInfo(string(files["BUILDINFO"]))
	if info["status"] != "complete" {
		return nil, fmt.Errorf("mirror: %s/BUILDINFO says status=%q, not complete: %s", u.Dir, info["status"], info["failed"])
	}
	return &UpstreamLayers{ServiceBase: bases["service"], Service: svc, AgentBase: bases["agent"], Agent: agent, BuildInfo: info}, nil
}

// parseBuildInfo reads BUILDINFO's key=value lines (the last of a key wins).
func parseBuildInfo(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			out[k] = v
		}
	}
	return out
}

// Describe is the line each scenario prints: upstream assisted-service
// BRANCH@COMMIT (the upstream commit the bundle's snapshot was taken from).
func (u *UpstreamLayers) Describe() string {
	return fmt.Sprintf("upstream assisted-service %s@%s", u.BuildInfo["branch"], u.BuildInfo["assisted-service.upstream"])
}

// upstreamSpecs replaces the placeholder service and agent images by the real
// ones: the Debian base, the real binaries, and the stand-in's own layer
// only for oc (the service image) .
func upstreamSpecs(specs []spec, up *UpstreamLayers) []spec {
	var out []spec
	for _, s := range specs {
		switch s.Component {
		case "agent-installer-api-server":
			s = spec{
				Component:  s.Component,
				Cmd:        []string{ServicePath},
				WorkingDir: "/",
				Env:        []string{"GODEBUG=madvdontneed=1", "GOGC=50"},
				Links:      []string{OCPath},
				Under:      []v1.Layer{up.ServiceBase, up.Service},
			}
		case "agent-installer-node-agent":
			s = spec{Component: s.Component, Under: []v1.Layer{up.AgentBase, up.Agent}}
		}
		out = append(out, s)
	}
	return out
}

// upstreamOnlySpecs are the components the real assisted-service looks up in
// the payload (release-4.20 internal/host/hostcommands/
// container_image_availability_cmd.go: the MCO image and the ocp must-gather
// image, which the agent pulls for the container-images-available
// validation). The lab only mirrors them.
func upstreamOnlySpecs() []spec {
	return []spec{
		{Component: "machine-config-operator", Entrypoint: []string{"/usr/bin/component"}, Links: []string{"/usr/bin/component"}},
		{Component: "must-gather", Entrypoint: []string{"/usr/bin/component"}, Links: []string{"/usr/bin/component"}},
	}
}
