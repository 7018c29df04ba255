package nmstate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/fsutil"

	"sigs.k8s.io/yaml"
)

// GCYAML renders keyfiles the way nmstatectl gc prints them: a YAML
// document with one key, NetworkManager, holding a list of
// [file name, file content] pairs in the given order.
func GCYAML(files []Keyfile) ([]byte, error) {
	pairs := make([][]string, 0, len(files))
	for _, f := range files {
		pairs = append(pairs, []string{f.Name, string(f.Content)})
	}
	b, err := yaml.Marshal(map[string][][]string{"NetworkManager": pairs})
	if err != nil {
		return nil, fmt.Errorf("rendering gc YAML: %w", err)
	}
	return b, nil
}

// WriteKeyfiles writes each keyfile into dir (created if missing) with mode
// 0600, atomically: a temporary file in dir is written, synced and renamed.
func WriteKeyfiles(dir string, files []Keyfile) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating output directory: %w", err)
	}
	for _, f := range files {
		if f.Name == "" || f.Name != filepath.Base(f.Name) || strings.HasPrefix(f.Name, ".") {
			return fmt.Errorf("refusing to write keyfile with unsafe name %q", f.Name)
		}
		if err := writeAtomic(filepath.Join(dir, f.Name), f.Content); err != nil {
			return err
		}
	}
	return nil
}

func writeAtomic(path string, data []byte) error {
	if err := fsutil.WriteFileAtomic(path, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Errors splits an error returned by this package into its individual
// problems (one per field), for callers that prefix each with a file or host.
func Errors(err error) []error {
	if err == nil {
		return nil
	}
	var out []error
	var walk func(e error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		out = append(out, e)
	}
	walk(err)
	if len(out) == 0 {
		return []error{errors.New(err.Error())}
	}
	return out
}
