package upstream

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// LockEntry is one line of upstream.lock: the commit of a branch the lab
// builds, as the bundle holds it (Tree) and as upstream has it (Upstream).
type LockEntry struct {
	Repo, Branch, Tree, Upstream string
}

var commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// ParseLock reads a lock file: "repo branch tree-commit upstream-commit"
// lines, blank lines and # comments. name is used in errors (name:line).
func ParseLock(r io.Reader, name string) ([]LockEntry, error) {
	var out []LockEntry
	seen := map[[2]string]int{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			return nil, fmt.Errorf("%s:%d: want 4 fields (repo branch tree-commit upstream-commit), got %d", name, n, len(f))
		}
		for _, c := range f[2:] {
			if !commitRE.MatchString(c) {
				return nil, fmt.Errorf("%s:%d: %q is not a 40-hex-digit commit", name, n, c)
			}
		}
		k := [2]string{f[0], f[1]}
		if prev, ok := seen[k]; ok {
			return nil, fmt.Errorf("%s:%d: %s %s already pinned on line %d", name, n, f[0], f[1], prev)
		}
		seen[k] = n
		out = append(out, LockEntry{Repo: f[0], Branch: f[1], Tree: f[2], Upstream: f[3]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// ReadLock parses the lock file at path.
func ReadLock(path string) ([]LockEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseLock(f, path)
}

// Find returns the entry of repo and branch.
func Find(entries []LockEntry, repo, branch string) (LockEntry, error) {
	var have []string
	for _, e := range entries {
		if e.Repo == repo && e.Branch == branch {
			return e, nil
		}
		if e.Repo == repo {
			have = append(have, e.Branch)
		}
	}
	return LockEntry{}, fmt.Errorf("no %s %s in the lock file (have: %s)", repo, branch, strings.Join(have, " "))
}
