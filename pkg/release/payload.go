package release

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"

	"github.com/coreos/stream-metadata-go/stream"
	"sigs.k8s.io/yaml"
)

// Paths inside a release payload image, and inside machine-os-images.
const (
	ImageReferencesPath = "release-manifests/image-references"
	MetadataPath        = "release-manifests/release-metadata"
	BootImagesPath      = "release-manifests/0000_50_installer_coreos-bootimages.yaml"

	// MachineOSImagesComponent is the payload component holding the live
	// ISOs (/coreos/coreos-<arch>.iso) for disconnected installs.
	MachineOSImagesComponent = "machine-os-images"
	// MachineOSStreamPath is the CoreOS stream inside machine-os-images.
	MachineOSStreamPath = "coreos/coreos-stream.json"
)

// MultiArchMetadataKey marks a multi-architecture payload in the release
// metadata (value "multi").
const MultiArchMetadataKey = "release.openshift.io/architecture"

// Size limits for payload files read into memory.
const (
	maxImageReferences = 16 << 20
	maxMetadata        = 1 << 20
	maxBootImages      = 16 << 20
)

var versionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]*)?$`)

// Metadata is release-manifests/release-metadata (cincinnati-metadata-v0).
type Metadata struct {
	Kind     string            `json:"kind"`
	Version  string            `json:"version"`
	Previous []string          `json:"previous,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// ParseMetadata decodes and checks release-metadata.
func ParseMetadata(b []byte) (*Metadata, error) {
	var m Metadata
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", MetadataPath, err)
	}
	if m.Kind != "cincinnati-metadata-v0" {
		return nil, fmt.Errorf("%s: kind is %q, want cincinnati-metadata-v0", MetadataPath, m.Kind)
	}
	if !versionRE.MatchString(m.Version) {
		return nil, fmt.Errorf("%s: version %q is not a semantic version", MetadataPath, m.Version)
	}
	return &m, nil
}

// ImageReferences is release-manifests/image-references: an ImageStream
// named after the version whose tags are the payload's components.
type ImageReferences struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Tags []struct {
			Name string `json:"name"`
			From struct {
				Kind string `json:"kind"`
				Name string `json:"name"`
			} `json:"from"`
		} `json:"tags"`
	} `json:"spec"`
}

// ParseImageReferences decodes image-references into component name ->
// pull spec.
func ParseImageReferences(b []byte) (version string, components map[string]string, err error) {
	var is ImageReferences
	if err := json.Unmarshal(b, &is); err != nil {
		return "", nil, fmt.Errorf("%s: %w", ImageReferencesPath, err)
	}
	if is.Kind != "ImageStream" {
		return "", nil, fmt.Errorf("%s: kind is %q, want ImageStream", ImageReferencesPath, is.Kind)
	}
	components = map[string]string{}
	for i, t := range is.Spec.Tags {
		if t.Name == "" || t.From.Name == "" {
			return "", nil, fmt.Errorf("%s: spec.tags[%d]: name and from.name are required", ImageReferencesPath, i)
		}
		if t.From.Kind != "" && t.From.Kind != "DockerImage" {
			return "", nil, fmt.Errorf("%s: spec.tags[%d] (%s): from.kind is %q, want DockerImage", ImageReferencesPath, i, t.Name, t.From.Kind)
		}
		if _, dup := components[t.Name]; dup {
			return "", nil, fmt.Errorf("%s: spec.tags[%d]: duplicate tag %q", ImageReferencesPath, i, t.Name)
		}
		components[t.Name] = t.From.Name
	}
	return is.Metadata.Name, components, nil
}

// ParseBootImages decodes the coreos-bootimages ConfigMap and its CoreOS
// stream (data.stream).
func ParseBootImages(b []byte) (*stream.Stream, []byte, error) {
	var cm struct {
		Kind string            `json:"kind"`
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(b, &cm); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", BootImagesPath, err)
	}
	if cm.Kind != "ConfigMap" {
		return nil, nil, fmt.Errorf("%s: kind is %q, want ConfigMap", BootImagesPath, cm.Kind)
	}
	raw := []byte(cm.Data["stream"])
	st, err := ParseStream(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: data.stream: %w", BootImagesPath, err)
	}
	return st, raw, nil
}

// ParseStream decodes CoreOS stream metadata JSON.
func ParseStream(raw []byte) (*stream.Stream, error) {
	var st stream.Stream
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, err
	}
	if st.Stream == "" || len(st.Architectures) == 0 {
		return nil, fmt.Errorf("not CoreOS stream metadata (no stream name or architectures)")
	}
	return &st, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
