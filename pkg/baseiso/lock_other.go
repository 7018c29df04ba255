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
func tryLock(path string) (release func(), ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("create lock file %s: %w", path, err)
	}
	return func() {
		_ = f.Close()
		_ = os.Remove(path)
	}, true, nil
}
