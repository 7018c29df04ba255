// Package release holds the two files of a release payload that the live
// lab's stand-in release image carries under /release-manifests:
// image-references, an image.openshift.io/v1 ImageStream whose tags name
// each component image, and release-metadata, the Cincinnati metadata
// document with the version. Both are JSON, as in a real payload.
package release

import (
	"encoding/json"
	"errors"
	"fmt"
)

// File names inside /release-manifests.
const (
	ImageReferencesFile = "image-references"
	MetadataFile        = "release-metadata"
)

// ImageStream is the image-references document.
type ImageStream struct {
	Kind       string         `json:"kind"`
	APIVersion string         `json:"apiVersion"`
	Metadata   StreamMetadata `json:"metadata"`
	Spec       StreamSpec     `json:"spec"`
}

// StreamMetadata names the stream after the release version.
type StreamMetadata struct {
	Name              string            `json:"name"`
	CreationTimestamp *string           `json:"creationTimestamp"`
	Annotations       map[string]string `json:"annotations,omitempty"`
}

// StreamSpec lists the component tags.
type StreamSpec struct {
	LookupPolicy struct {
		Local bool `json:"local"`
	} `json:"lookupPolicy"`
	Tags []Tag `json:"tags"`
}

// Tag is one component: its short name and pull spec.
type Tag struct {
	Name        string            `json:"name"`
	Annotations map[string]string `json:"annotations,omitempty"`
	From        From              `json:"from"`
}

// From is the DockerImage reference of a tag.
type From struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// Metadata is the release-metadata document.
type Metadata struct {
	Kind     string            `json:"kind"`
	Version  string            `json:"version"`
	Previous []string          `json:"previous"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// NewImageStream returns the image-references stream for version with the
// given component pull specs, in the order given.
func NewImageStream(version string, components []Tag) ImageStream {
	s := ImageStream{Kind: "ImageStream", APIVersion: "image.openshift.io/v1",
		Metadata: StreamMetadata{Name: version, Annotations: map[string]string{"release.openshift.io/from-image-stream": "ocp/" + version}}}
	s.Spec.Tags = append([]Tag{}, components...)
	for i := range s.Spec.Tags {
		s.Spec.Tags[i].From.Kind = "DockerImage"
	}
	return s
}

// NewMetadata returns the release-metadata of version.
func NewMetadata(version string) Metadata {
	return Metadata{Kind: "cincinnati-metadata-v0", Version: version, Previous: []string{}}
}

// ErrUnknownComponent is returned by ImageFor for a name the payload lacks.
var ErrUnknownComponent = errors.New("no such component in the release payload")

// ParseImageStream decodes image-references and checks its kind.
func ParseImageStream(data []byte) (*ImageStream, error) {
	var s ImageStream
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", ImageReferencesFile, err)
	}
	if s.Kind != "ImageStream" {
		return nil, fmt.Errorf("%s: kind is %q, want ImageStream", ImageReferencesFile, s.Kind)
	}
	return &s, nil
}

// ImageFor returns the pull spec of component name.
func (s *ImageStream) ImageFor(name string) (string, error) {
	for _, t := range s.Spec.Tags {
		if t.Name == name {
			if t.From.Name == "" {
				return "", fmt.Errorf("component %q has no pull spec", name)
			}
			return t.From.Name, nil
		}
	}
	return "", fmt.Errorf("component %q: %w", name, ErrUnknownComponent)
}
