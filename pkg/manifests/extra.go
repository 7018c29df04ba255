package manifests

import (
	"bytes"
	"errors"
	"io"

	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// SplitManifests splits a multi-document YAML file into its documents,
// each re-marshalled; every document must be a Kubernetes object with
// apiVersion, kind and metadata.name.
func SplitManifests(file string, data []byte) ([][]byte, error) {
	if err := checkYAMLSize(file, data); err != nil {
		return nil, err
	}
	dec := yaml3.NewDecoder(bytes.NewReader(data))
	var out [][]byte
	for i := 0; ; i++ {
		var doc yaml3.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, yamlSyntaxError(file, data, err)
		}
		if err := checkYAMLDepth(file, &doc); err != nil {
			return nil, err
		}
		if len(doc.Content) == 0 || doc.Content[0].Tag == "!!null" {
			continue
		}
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		raw, err := yaml3.Marshal(&doc)
		if err != nil {
			return nil, &FileError{File: file, Line: doc.Line, Msg: err.Error()}
		}
		if err := yaml.Unmarshal(raw, &obj); err != nil {
			return nil, &FileError{File: file, Line: doc.Line, Msg: "document is not a Kubernetes object: " + err.Error()}
		}
		if obj.APIVersion == "" || obj.Kind == "" || obj.Metadata.Name == "" {
			line := doc.Line
			if len(doc.Content) > 0 {
				line = doc.Content[0].Line
			}
			return nil, &FileError{File: file, Line: line, Msg: "every document needs apiVersion, kind and metadata.name"}
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, &FileError{File: file, Line: doc.Line, Msg: err.Error()}
		}
		norm, err := yaml.JSONToYAML(js)
		if err != nil {
			return nil, &FileError{File: file, Line: doc.Line, Msg: err.Error()}
		}
		out = append(out, norm)
	}
	return out, nil
}
