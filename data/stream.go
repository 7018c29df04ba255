package data

import _ "embed"

// rhcosStream is RHEL CoreOS stream metadata (rhcos-4.16, release
// 416.94.202405291527-0), trimmed to the metal artifacts (live ISO and PXE
// files) of x86_64, aarch64, ppc64le and s390x. Its one use is OS_IMAGES
// when a release's own stream is unknown (--offline): it never names the
// base ISO (docs/base-iso.md, "Which ISO").
//
//go:embed coreos/rhcos-stream.json
var rhcosStream string

// RHCOSStream returns a fresh copy of the RHCOS stream metadata JSON
// embedded in the binary.
func RHCOSStream() []byte {
	return []byte(rhcosStream)
}
