package mirror

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// StandinPackage is the import path of the stand-in binary.
const StandinPackage = "github.com/seed-a052040e/agentiso/test/live/standin"

// BuildStandin builds the static stand-in binary for linux/arch into dir
// and returns its path. It runs the go command of the current toolchain;
// the working directory must be inside this module.
func BuildStandin(ctx context.Context, dir, arch string) (string, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("mirror: the go command is needed to build the stand-in binary: %w", err)
	}
	out := filepath.Join(dir, "standin")
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-ldflags=-s -w", "-o", out, StandinPackage)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("mirror: build the stand-in binary (%s): %w\n%s", StandinPackage, err, b)
	}
	return out, nil
}

// standinLayer is the layer shared by every image: the stand-in binary.
func standinLayer(bin string) (v1.Layer, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("mirror: stand-in binary: %w", err)
	}
	return layer([]entry{{Path: StandinPath, Mode: 0o755, Data: data}})
}

func tempDir() (string, error) {
	d, err := os.MkdirTemp("", "agentiso-standin-")
	if err != nil {
		return "", fmt.Errorf("mirror: %w", err)
	}
	return d, nil
}

func removeAll(dir string) { _ = os.RemoveAll(dir) }
