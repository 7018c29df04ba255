//go:build linux || darwin

package baseiso

import "syscall"

// freeSpace returns the bytes an unprivileged user may still write in dir.
func freeSpace(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
