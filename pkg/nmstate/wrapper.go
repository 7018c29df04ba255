package nmstate

import (
	"fmt"

	yaml3 "go.yaml.in/yaml/v3"
)

// WrapperError is returned by CheckNotWrapped for a document that is not
// NMState but a manifest carrying it (it has apiVersion and kind).
type WrapperError struct {
	// Kind names the document ("an agent-config.yaml (kind: AgentConfig)");
	// Where the field that holds its NMState, if any.
	Kind, Where string
}

func (e *WrapperError) Error() string {
	msg := "this is " + e.Kind + ", not NMState YAML"
	if e.Where != "" {
		msg += "; its NMState is in " + e.Where + ": save one to a file and validate that"
	}
	return msg
}

// CheckNotWrapped returns a *WrapperError when data is a Kubernetes-style
// document (apiVersion and kind at the top) rather than NMState, which has
// neither: an agent-config.yaml or an NMStateConfig given where a host's
// NMState belongs. Anything else, even unparsable, is left to Generate.
func CheckNotWrapped(data []byte) error {
	var top struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
	}
	if err := yaml3.Unmarshal(data, &top); err != nil || top.APIVersion == "" || top.Kind == "" {
		return nil
	}
	e := &WrapperError{Kind: fmt.Sprintf("a %s manifest (apiVersion and kind)", top.Kind)}
	switch top.Kind {
	case "AgentConfig":
		e.Kind, e.Where = "an agent-config.yaml (kind: AgentConfig)", "hosts[].networkConfig (agentiso create cluster-manifests checks every host's)"
	case "NMStateConfig":
		e.Kind, e.Where = "an NMStateConfig manifest", "spec.config"
	case "InstallConfig":
		e.Kind = "an install-config.yaml"
	}
	return e
}
