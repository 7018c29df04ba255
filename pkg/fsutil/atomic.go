// Package fsutil holds the file-system helpers for the files agentiso
// writes and reads: atomic writes that never leave a half-written file,
// temporary outputs a later run can tell are stale, and bounded reads of
// regular input files.
package fsutil

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes data to path through a temporary file in the same
// directory, fsyncs it and renames it into place, creating parent
// directories (0755) as needed. On any error the temporary file is removed
// and path is left as it was.
func WriteFileAtomic(path string, data []byte, mode fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := CreateTemp(dir, filepath.Base(path))
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	// Renamed while still open: the lock on the temporary file keeps other
	// runs' RemoveStaleTemps away from it until it has its final name.
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	if cerr := f.Close(); cerr != nil {
		return fmt.Errorf("close %s: %w", path, cerr)
	}
	return nil
}
