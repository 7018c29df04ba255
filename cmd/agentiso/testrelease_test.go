package main

// agentiso pins no default release: the in-process tests name one, by
// digest with its version and --offline, so no registry is needed.
const (
	testReleaseImage   = "quay.io/openshift-release-dev/ocp-release@sha256:4200000000000000000000000000000000000000000000000000000000000000"
	testReleaseVersion = "4.20.0"
)

// withTestRelease appends the release flags of the test release to args.
func withTestRelease(args ...string) []string {
	return append(args, "--offline", "--release-image", testReleaseImage, "--release-version", testReleaseVersion)
}

// testReleaseFlags are the same as parsed flags.
func testReleaseFlags() releaseFlags {
	return releaseFlags{Image: testReleaseImage, Version: testReleaseVersion, Offline: true}
}
