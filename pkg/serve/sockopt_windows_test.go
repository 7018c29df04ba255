package serve

import "syscall"

// setReceiveBuffer sets a socket's SO_RCVBUF (the tests' Dialer.Control):
// a socket is a Handle on Windows, an int elsewhere.
func setReceiveBuffer(fd uintptr, n int) error {
	return syscall.SetsockoptInt(syscall.Handle(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
}
