package testminiso

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

// MakeOptions are `agentiso-dev make-test-iso`'s: the image, and how it is
// then edited as an agent ISO is.
type MakeOptions struct {
	testiso.Options
	// Miniso adds a coreos/miniso.dat (WriteFile) to the image.
	Miniso bool
	// Ignition and Kargs, when given, are embedded and appended through
	// pkg/isoeditor, so that tests can inspect a populated ISO.
	Ignition []byte
	Kargs    []string
}

// Make writes the synthetic live ISO of o to path: testiso's image (with
// a miniso.dat when asked), edited with o's Ignition config and kernel
// arguments when there are any; the edit goes through a temporary base
// beside path, removed after.
func Make(ctx context.Context, path string, o MakeOptions) error {
	write := func(path string) error {
		if o.Miniso {
			_, err := WriteFile(path, o.Options)
			return err
		}
		_, err := testiso.WriteFile(path, o.Options)
		return err
	}
	if o.Ignition == nil && len(o.Kargs) == 0 {
		return write(path)
	}
	base := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".base")
	defer os.Remove(base)
	if err := write(base); err != nil {
		return err
	}
	iso, f, err := isoeditor.OpenFile(base)
	if err != nil {
		return err
	}
	defer f.Close()
	img, err := iso.Edit(isoeditor.Edit{Ignition: o.Ignition, AppendKargs: o.Kargs})
	if err != nil {
		return err
	}
	_, err = isoeditor.WriteFile(ctx, path, img, isoeditor.WriteOptions{})
	return err
}

// Flags are agentiso-dev make-test-iso's command line: MakeOptions with the sizes
// as written ("64MiB", ParseSize) and the Ignition config as a file.
type Flags struct {
	MakeOptions
	Size, EmbedArea, IgnitionFile string
}

// MakeFromFlags is Make for agentiso-dev make-test-iso: f's sizes parsed and its
// Ignition file read first, each error naming its flag.
func MakeFromFlags(ctx context.Context, path string, f Flags) error {
	var err error
	if f.Options.Size, err = testiso.ParseSize(f.Size); err != nil {
		return fmt.Errorf("--size: %w", err)
	}
	if f.EmbedAreaSize, err = testiso.ParseSize(f.EmbedArea); err != nil {
		return fmt.Errorf("--embed-area: %w", err)
	}
	if f.IgnitionFile != "" {
		if f.Ignition, err = os.ReadFile(f.IgnitionFile); err != nil {
			return fmt.Errorf("--ignition: %w", err)
		}
	}
	return Make(ctx, path, f.MakeOptions)
}
