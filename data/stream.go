package data

import _ "embed"

// rhcosStream is the pinned RHEL CoreOS stream metadata (rhcos-4.16,
// release 416.94.202405291527-0), trimmed to the metal artifacts (live ISO
// and PXE files) of x86_64, aarch64, ppc64le and s390x. It names the live ISO
// that agent images are built from and its sha256. It is an earlier build of
// the rhcos-4.16 stream than the one the pinned 4.16.3 installer names, whose
// checksums could not be verified (docs/release.md, "Without a registry").
//
//go:embed coreos/rhcos-stream.json
var rhcosStream string

// RHCOSStream returns a fresh copy of the pinned RHCOS stream metadata JSON
// embedded in the binary.
func RHCOSStream() []byte {
	return []byte(rhcosStream)
}
