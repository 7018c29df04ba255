//go:build unix

package serve

import "syscall"

// setReceiveBuffer sets a socket's SO_RCVBUF (the tests' Dialer.Control).
func setReceiveBuffer(fd uintptr, n int) error {
	return syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
}
