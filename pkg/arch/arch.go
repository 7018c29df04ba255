// Package arch is agentiso's one CPU-architecture vocabulary: RPM spellings (x86_64, aarch64, ppc64le, s390x) everywhere, Go spellings (amd64, arm64) accepted on input, and x86_64 when none is given.
package arch

import "fmt"

// Architectures in RPM spelling, as RHCOS, assisted-service and the ISO
// file names use them.
const (
	X86_64  = "x86_64"
	AArch64 = "aarch64"
	PPC64LE = "ppc64le"
	S390X   = "s390x"
	// Multi names a multi-architecture release payload; it is not a CPU
	// architecture and Normalize refuses it.
	Multi = "multi"
)

// Default is the architecture of a cluster that names none (upstream's
// controlPlane.architecture default, amd64).
const Default = X86_64

// names is the one list: RPM spelling and Go (OCI platform,
// install-config) spelling of every supported architecture.
var names = [...]struct{ rpm, goarch string }{
	{X86_64, "amd64"},
	{AArch64, "arm64"},
	{PPC64LE, "ppc64le"},
	{S390X, "s390x"},
}

// Supported lists the supported architectures in RPM spelling.
func Supported() []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n.rpm
	}
	return out
}

// SupportedGo lists the supported architectures in Go spelling, as
// install-config.yaml's machine pools name them.
func SupportedGo() []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n.goarch
	}
	return out
}

// RPM returns the RPM spelling of a supported architecture given in
// either spelling. ok is false for anything else, the empty string
// included: use it for values read from outside data (image platforms),
// where an absent architecture is not the default.
func RPM(a string) (rpm string, ok bool) {
	for _, n := range names {
		if a == n.rpm || a == n.goarch {
			return n.rpm, true
		}
	}
	return "", false
}

// Go returns the Go spelling of a supported architecture given in either
// spelling; ok is false for anything else, the empty string included.
func Go(a string) (goarch string, ok bool) {
	for _, n := range names {
		if a == n.rpm || a == n.goarch {
			return n.goarch, true
		}
	}
	return "", false
}

// Normalize returns the RPM spelling of an architecture setting: the empty
// string (not set) is Default, either spelling of a supported architecture
// is accepted, anything else is an error naming the allowed values.
func Normalize(a string) (string, error) {
	if a == "" {
		return Default, nil
	}
	if r, ok := RPM(a); ok {
		return r, nil
	}
	return "", fmt.Errorf("unsupported CPU architecture %q: use one of x86_64 (amd64), aarch64 (arm64), ppc64le, s390x", a)
}
