package fsutil

import (
	"fmt"
	"os"
	"syscall"
)

// fileIdentity is what tells that the open file f still holds the bytes it
// held when it was hashed: its device and inode (the same file), size,
// modification time (set by every write, but settable by the user) and
// change time (set by the kernel on every write and every time change).
func fileIdentity(f *os.File) (string, bool) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("dev=%d ino=%d size=%d mtime=%d.%09d ctime=%d.%09d",
		st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec), true
}
