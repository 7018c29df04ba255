// Package live is the live end-to-end lab (make e2e-live, docs/e2e.md).
//
// It boots agent ISOs built by agentiso from the live fixture
// (hack/build-live-fixture.sh: a Debian userspace with systemd, podman and
// NetworkManager behind a stand-in RHCOS live-ISO layout whose initramfs runs
// the real Ignition) in QEMU guests on a bridge inside a network namespace of
// the test's own, and asserts on what the guests report on their serial
// consoles (LIVE-REPORT blocks printed by the fixture's live-report.service)
// and on what the test machine sees.
//
// The helpers here (console report parser, namespace, bridge, taps,
// dnsmasq, QEMU) build without tags; the lab itself is live_test.go, built
// with the e2elive tag.
package live
