// Package manifests is the agent installer's input model: the types of
// install-config.yaml, agent-config.yaml and the ZTP manifests, their strict
// decoding, defaults and validation, and the ZTP manifests generated from
// them.
//
// Decoding errors name the file, line and field, with a did-you-mean for
// unknown fields.
//
// Files: one per input (installconfig*.go, agentconfig*.go, ztp*.go: types,
// then *_defaults.go and *_validate.go), networkconfig.go for a host's
// NMState, hosts.go for the hosts and the checks across files, proxy_validate.go
// for proxy settings, fencing.go, mirror.go, overrides.go (the
// install-config-overrides annotation), generate.go (the ZTP manifests),
// decode.go, errors.go and limits.go.
package manifests
