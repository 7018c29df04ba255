// Package e2e boots agent ISOs under QEMU and checks what the kernel received.
//
// The helpers in this package (ISO embed-area editing, a newc cpio writer,
// the QEMU runner and the serial-console report parser) build without tags
// and are unit tested by `go test ./test/e2e/`. The boot tests themselves
// carry the build tag `e2e` and run with `make e2e` (see docs/e2e.md).
package e2e
