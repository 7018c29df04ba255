//go:build !unix || aix || solaris || illumos

package baseiso

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// tryLock (used where flock is unavailable) creates the lock file at path
// exclusively; ok is false when the file already exists. The file is removed
// on release; a lock file left by a crashed run must be removed by hand (the
// wait timeout error names it).
// There is no shared lock: every run takes it exclusively.
func tryLock(path string, _ bool) (l *heldLock, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("create lock file %s: %w", path, err)
	}
	return &heldLock{release: func() {
		_ = f.Close()
		_ = os.Remove(path)
	}}, true, nil
}
