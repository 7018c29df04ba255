package data

import _ "embed"

// AgentConfigTemplate is the commented agent-config.yaml written by
// `agentiso create agent-config-template`.
//
//go:embed templates/agent-config-template.yaml
var AgentConfigTemplate string
