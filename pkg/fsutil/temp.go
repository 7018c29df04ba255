package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tempInfix separates an output's name from the random suffix of its
// temporary file: ".<name>.tmp-<random>".
const tempInfix = ".tmp-"

// CreateTemp creates the temporary file for the output named name in dir
// (".<name>.tmp-<random>") and, where the platform has flock, holds an
// exclusive lock on it for as long as the file stays open. The lock dies
// with the process, which is how RemoveStaleTemps tells a dead run's
// leftovers from a live run's work in progress: keep the file open until it
// is renamed into place or removed.
func CreateTemp(dir, name string) (*os.File, error) {
	f, err := os.CreateTemp(dir, "."+name+tempInfix+"*")
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return f, nil
}

// RemoveStaleTemps removes the temporary files of outputs named name (or
// name.sha256) in dir that no live process holds: files left by a run that
// was killed (SIGKILL, power loss) before it could clean up. It returns the
// paths removed. Where flock is unavailable it removes nothing, since it
// cannot tell a live run's file from a dead one's.
func RemoveStaleTemps(dir, name string) ([]string, error) {
	if !canLock {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("look for stale temporary files in %s: %w", dir, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || !isTempOf(n, name) {
			continue
		}
		p := filepath.Join(dir, n)
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		held, err := tryLockFile(f)
		if err == nil && !held {
			// Locked by us now: its writer is gone.
			if err = os.Remove(p); err == nil {
				removed = append(removed, p)
			}
		}
		f.Close()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove stale %s: %w", p, err))
		}
	}
	return removed, errors.Join(errs...)
}

// isTempOf reports whether file is ".<name>.tmp-<suffix>" or
// ".<name>.sha256.tmp-<suffix>" with a non-empty suffix.
func isTempOf(file, name string) bool {
	for _, n := range []string{name, name + ".sha256"} {
		prefix := "." + n + tempInfix
		if strings.HasPrefix(file, prefix) && len(file) > len(prefix) && !strings.ContainsAny(file[len(prefix):], "./") {
			return true
		}
	}
	return false
}
