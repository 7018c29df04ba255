//go:build unix && !aix && !solaris && !illumos

package baseiso

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// tryLock opens (creating if needed) the lock file at path and takes a
// non-blocking flock on it: shared (for runs that only read the cached ISO)
// or exclusive (for a run that may remove or replace it). ok is false when
// another process (or another open file description in this process)
// holds a conflicting lock.
func tryLock(path string, shared bool) (l *heldLock, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("open lock file %s: %w", path, err)
	}
	for {
		how := syscall.LOCK_EX
		if shared {
			how = syscall.LOCK_SH
		}
		err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EAGAIN) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	return &heldLock{
		release: func() {
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			_ = f.Close()
		},
		downgrade: func() error { return syscall.Flock(int(f.Fd()), syscall.LOCK_SH) },
	}, true, nil
}
