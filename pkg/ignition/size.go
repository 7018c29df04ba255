package ignition

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/isoeditor"

	"github.com/coreos/ignition/v2/config/v3_2/types"
)

// EmbedAreaSize is the size of the Ignition embed area (/images/ignition.img,
// which holds the gzip-compressed cpio archive with config.ign) of a
// standard RHCOS live ISO. The limit a config must fit is the base ISO's own
// area, which isoeditor reads from the ISO when it writes the config; this
// constant is what sizes are reported against before an ISO is known
// (Size.String, create ignition) and tells a smaller-than-standard area
// apart in the too-large error.
const EmbedAreaSize = 256 * 1024

// topContributors is how many paths Size.Top lists.
const topContributors = 10

// Size describes how big a config is once serialised and embedded.
type Size struct {
	// JSONBytes is the length of MarshalIndent's output: indented JSON,
	// the bytes of agent.ign and of config.ign in the ISO.
	JSONBytes int
	// CompressedBytes is the length of the gzip-compressed newc cpio
	// archive holding config.ign, as embedded in the ISO.
	CompressedBytes int
	// Top lists the largest contributors, largest first: files by the
	// length of their encoded source(s), units by their contents.
	Top []PathSize
	// ByInput adds up every file and unit by the input it comes from
	// (InputOf), largest first.
	ByInput []InputSize `json:",omitempty"`
}

// InputSize is how much of a config one input accounts for.
type InputSize struct {
	Input string // one of the Input* labels
	Bytes int    // encoded bytes, as in PathSize
	Parts int    // files and units
	User  bool   // the user provides it (false: agentiso's own files)
}

// Labels of the inputs a config's files come from (InputOf).
const (
	InputExtraManifests   = "extra manifests (openshift/)"
	InputAgentConfig      = "agent-config.yaml (embedded whole)"
	InputNetworkConfig    = "hosts' networkConfig (agent-config.yaml, or cluster-manifests/nmstateconfig.yaml)"
	InputClusterManifests = "cluster manifests (cluster-manifests/, or generated from install-config.yaml and agent-config.yaml)"
	InputHostSettings     = "per-host settings (agent-config.yaml hosts[]: ignition overrides, installer args, root device hints)"
	InputTrustBundle      = "additionalTrustBundle (install-config.yaml)"
	InputMirrors          = "mirror configuration (imageDigestSources, or mirror/registries.conf)"
	InputPullSecret       = "pull secret (pullSecret)"
	InputOwn              = "agentiso's own files and units"
)

// InputOf names the input a file (or unit, under /etc/systemd/system) of
// the agent config comes from; user is false for agentiso's own files,
// which the user cannot shrink.
func InputOf(p string) (input string, user bool) {
	under := func(dir string) bool { return strings.HasPrefix(p, dir+"/") }
	switch {
	case under(ExtraManifestsDir):
		return InputExtraManifests, true
	case p == ManifestsDir+"/agent-config.yaml":
		return InputAgentConfig, true
	case p == ManifestsDir+"/nmstateconfig.yaml", under(NetworkDir):
		return InputNetworkConfig, true
	case under(ManifestsDir):
		return InputClusterManifests, true
	case under(HostConfigDir), under(HostnamesDir):
		return InputHostSettings, true
	case p == CABundlePath:
		return InputTrustBundle, true
	case p == RegistriesPath:
		return InputMirrors, true
	case p == "/root/.docker/config.json":
		return InputPullSecret, true
	}
	return InputOwn, false
}

// PathSize is the encoded size of one file or unit in the config.
type PathSize struct {
	Path  string
	Bytes int
}

// String summarises the size for logs, as a share of a standard RHCOS live
// ISO's embed area (EmbedAreaSize).
func (s Size) String() string {
	return fmt.Sprintf("ignition %d bytes, %d bytes compressed (%.1f%% of the %d byte embed area)",
		s.JSONBytes, s.CompressedBytes, 100*float64(s.CompressedBytes)/EmbedAreaSize, EmbedAreaSize)
}

// MarshalIndent returns the config as indented JSON: the form written to
// agent.ign and embedded in the ISO, so what a user inspects is byte for
// byte what the host receives.
func MarshalIndent(cfg types.Config) ([]byte, error) {
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding ignition config: %w", err)
	}
	return append(out, '\n'), nil
}

// Measure computes the size report of cfg as it is embedded: indented JSON
// (the bytes of agent.ign) in the ISO's gzip cpio archive.
func Measure(cfg types.Config) (Size, error) {
	raw, err := MarshalIndent(cfg)
	if err != nil {
		return Size{}, err
	}
	archive, err := isoeditor.IgnitionArchive(raw)
	if err != nil {
		return Size{}, err
	}
	var top []PathSize
	for _, f := range cfg.Storage.Files {
		n := 0
		if f.Contents.Source != nil {
			n += len(*f.Contents.Source)
		}
		for _, a := range f.Append {
			if a.Source != nil {
				n += len(*a.Source)
			}
		}
		top = append(top, PathSize{Path: f.Path, Bytes: n})
	}
	for _, u := range cfg.Systemd.Units {
		n := 0
		if u.Contents != nil {
			n += len(*u.Contents)
		}
		for _, d := range u.Dropins {
			if d.Contents != nil {
				n += len(*d.Contents)
			}
		}
		top = append(top, PathSize{Path: "/etc/systemd/system/" + u.Name, Bytes: n})
	}
	byInput := map[string]*InputSize{}
	for _, t := range top {
		in, user := InputOf(t.Path)
		g := byInput[in]
		if g == nil {
			g = &InputSize{Input: in, User: user}
			byInput[in] = g
		}
		g.Bytes += t.Bytes
		g.Parts++
	}
	groups := make([]InputSize, 0, len(byInput))
	for _, g := range byInput {
		groups = append(groups, *g)
	}
	sort.Slice(groups, func(i, j int) bool {
		if groups[i].Bytes != groups[j].Bytes {
			return groups[i].Bytes > groups[j].Bytes
		}
		return groups[i].Input < groups[j].Input
	})
	sort.SliceStable(top, func(i, j int) bool {
		if top[i].Bytes != top[j].Bytes {
			return top[i].Bytes > top[j].Bytes
		}
		return top[i].Path < top[j].Path
	})
	if len(top) > topContributors {
		top = top[:topContributors]
	}
	return Size{JSONBytes: len(raw), CompressedBytes: len(archive), Top: top, ByInput: groups}, nil
}

// gzipSmaller compresses b and reports whether that saves space once the
// result is base64-encoded.
func gzipSmaller(b []byte) ([]byte, bool) {
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return nil, false
	}
	if _, err := zw.Write(b); err != nil {
		return nil, false
	}
	if err := zw.Close(); err != nil {
		return nil, false
	}
	if len(gzipDataURL)+base64Len(out.Len())+len(`,"compression":"gzip"`) >= len(textDataURL)+base64Len(len(b)) {
		return nil, false
	}
	return out.Bytes(), true
}

func base64Len(n int) int { return (n + 2) / 3 * 4 }
