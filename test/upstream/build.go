package upstream

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Build runs hack/build-upstream.sh BRANCH in the clone at root (building,
// or finding in the cache, the branch's binaries), with its progress lines
// going to progress, and returns the directory it printed last.
func Build(ctx context.Context, root, branch string, timeout time.Duration, progress io.Writer) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "build-upstream.sh"), branch)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = progress
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("hack/build-upstream.sh %s: %w", branch, err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	dir := strings.TrimSpace(lines[len(lines)-1])
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("hack/build-upstream.sh %s: last line %q is not a directory", branch, dir)
	}
	return dir, nil
}

// BuildInfo is the BUILDINFO file of a build directory (key=value lines;
// failed= may repeat).
type BuildInfo map[string][]string

// ReadBuildInfo reads dir/BUILDINFO.
func ReadBuildInfo(dir string) (BuildInfo, error) {
	b, err := os.ReadFile(filepath.Join(dir, "BUILDINFO"))
	if err != nil {
		return nil, err
	}
	bi := BuildInfo{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			return nil, fmt.Errorf("%s/BUILDINFO:%d: not key=value", dir, n)
		}
		bi[k] = append(bi[k], v)
	}
	return bi, sc.Err()
}

// Get returns the last value of key, or "".
func (bi BuildInfo) Get(key string) string {
	v := bi[key]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}
