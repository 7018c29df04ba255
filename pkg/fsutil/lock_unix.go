//go:build unix && !aix && !solaris && !illumos

package fsutil

import (
	"errors"
	"os"
	"syscall"
)

const canLock = true

// lockFile takes an exclusive flock on f (it cannot be held elsewhere:
// f was just created).
func lockFile(f *os.File) error {
	held, err := tryLockFile(f)
	if err == nil && held {
		return errors.New("already locked")
	}
	return err
}

// tryLockFile takes an exclusive, non-blocking flock on f. held is true
// when another open file description (a live process) has it.
func tryLockFile(f *os.File) (held bool, err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EAGAIN) {
		return true, nil
	}
	return false, err
}

// openNonBlock keeps open(2) from blocking on a FIFO with no writer.
const openNonBlock = syscall.O_NONBLOCK
