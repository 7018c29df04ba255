// Package nmstate is agentiso's pure-Go stand-in for the cgo binding of
// libnmstate (github.com/nmstate/nmstate/rust/src/go/nmstate), used ONLY as a
// `go build -overlay` replacement when hack/build-upstream.sh builds the real
// assisted-service for the live lab: Debian does not package libnmstate, so
// the binding cannot link. It is written from the binding's exported API (the
// same names and signatures on release-4.16 ... master), not from its code,
// and keeps to Go 1.16, the language version the vendored module builds at.
//
// What it changes (docs/e2e.md, "The nmstate overlay"):
//   - GenerateConfiguration does not run nmstate. It checks that the state is a
//     JSON object whose optional "interfaces" is a list of objects with a
//     non-empty string "name", and answers one minimal NetworkManager keyfile
//     per interface ([connection] id, interface-name, type). So the service's
//     static-network validation accepts any well-formed state with named
//     interfaces: nmstate's own schema and semantic checks are NOT exercised.
//     The keyfiles are placeholders; in the agent flow the ISO carries the
//     network config agentiso wrote, not the service's.
//   - RetrieveNetState, ApplyNetState, CommitCheckpoint and RollbackCheckpoint
//     touch no host network: they return an error saying so.
package nmstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Nmstate mirrors the binding's handle; the options are recorded and unused.
type Nmstate struct {
	timeout    uint
	logsWriter io.Writer
	flags      byte
}

const (
	kernelOnly = 2 << iota
	noVerify
	includeStatusData
	includeSecrets
	noCommit
	memoryOnly
	runningConfigOnly
)

// errNoLibnmstate is returned by every call that would need the host network.
var errNoLibnmstate = errors.New("libnmstate is not linked in this build (agentiso live-lab nmstate overlay): " +
	"only GenerateConfiguration is available, and it does not run nmstate")

// New returns a handle with the given options applied.
func New(options ...func(*Nmstate)) *Nmstate {
	nms := &Nmstate{}
	for _, option := range options {
		option(nms)
	}
	return nms
}

// WithTimeout records the apply timeout.
func WithTimeout(timeout time.Duration) func(*Nmstate) {
	return func(n *Nmstate) { n.timeout = uint(timeout.Seconds()) }
}

// WithLogsWritter records where logs go (the binding's spelling).
func WithLogsWritter(w io.Writer) func(*Nmstate) {
	return func(n *Nmstate) { n.logsWriter = w }
}

// WithKernelOnly sets the kernel-only flag.
func WithKernelOnly() func(*Nmstate) { return func(n *Nmstate) { n.flags |= kernelOnly } }

// WithNoVerify sets the no-verify flag.
func WithNoVerify() func(*Nmstate) { return func(n *Nmstate) { n.flags |= noVerify } }

// WithIncludeStatusData sets the include-status-data flag.
func WithIncludeStatusData() func(*Nmstate) { return func(n *Nmstate) { n.flags |= includeStatusData } }

// WithIncludeSecrets sets the include-secrets flag.
func WithIncludeSecrets() func(*Nmstate) { return func(n *Nmstate) { n.flags |= includeSecrets } }

// WithNoCommit sets the no-commit flag.
func WithNoCommit() func(*Nmstate) { return func(n *Nmstate) { n.flags |= noCommit } }

// WithMemoryOnly sets the memory-only flag.
func WithMemoryOnly() func(*Nmstate) { return func(n *Nmstate) { n.flags |= memoryOnly } }

// WithRunningConfigOnly sets the running-config-only flag.
func WithRunningConfigOnly() func(*Nmstate) { return func(n *Nmstate) { n.flags |= runningConfigOnly } }

// RetrieveNetState is not available without libnmstate.
func (n *Nmstate) RetrieveNetState() (string, error) { return "", errNoLibnmstate }

// ApplyNetState is not available without libnmstate.
func (n *Nmstate) ApplyNetState(string) (string, error) { return "", errNoLibnmstate }

// CommitCheckpoint is not available without libnmstate.
func (n *Nmstate) CommitCheckpoint(string) (string, error) { return "", errNoLibnmstate }

// RollbackCheckpoint is not available without libnmstate.
func (n *Nmstate) RollbackCheckpoint(string) (string, error) { return "", errNoLibnmstate }

// GenerateConfiguration answers {"NetworkManager": [[file, keyfile], ...]},
// one minimal keyfile per named interface of the JSON state. See the package
// comment for what this does not check.
func (n *Nmstate) GenerateConfiguration(state string) (string, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(state), &doc); err != nil {
		return "", fmt.Errorf("nmstate overlay: state is not a JSON object: %w", err)
	}
	var ifaces []map[string]interface{}
	if raw, ok := doc["interfaces"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &ifaces); err != nil {
			return "", fmt.Errorf("nmstate overlay: interfaces is not a list of objects: %w", err)
		}
	}
	files := make([][2]string, 0, len(ifaces))
	for i, iface := range ifaces {
		name, _ := iface["name"].(string)
		if strings.TrimSpace(name) == "" || strings.ContainsAny(name, "/\n") {
			return "", fmt.Errorf("nmstate overlay: interfaces[%d]: name missing or not a plain interface name", i)
		}
		typ, _ := iface["type"].(string)
		if typ == "" {
			typ = "ethernet"
		}
		typ = strings.NewReplacer("\n", "", "\r", "").Replace(typ)
		keyfile := fmt.Sprintf("[connection]\nid=%s\ninterface-name=%s\ntype=%s\n", name, name, typ)
		files = append(files, [2]string{name + ".nmconnection", keyfile})
	}
	if n.logsWriter != nil {
		if _, err := fmt.Fprintf(n.logsWriter, "agentiso nmstate overlay: %d interface(s), nmstate not run\n", len(files)); err != nil {
			return "", fmt.Errorf("nmstate overlay: writing logs: %w", err)
		}
	}
	out, err := json.Marshal(map[string]interface{}{"NetworkManager": files})
	if err != nil {
		return "", fmt.Errorf("nmstate overlay: %w", err)
	}
	return string(out), nil
}
