package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/seed-a052040e/agentiso/pkg/release"
)

// ReleaseManifestsDir is where the release image carries its manifests.
const ReleaseManifestsDir = "/release-manifests"

// errUnknownComponent is returned for a name the payload lacks.
var errUnknownComponent = errors.New("no such component in the release payload")

// runCVO answers "image NAME" from dir/image-references (parsed by
// pkg/release, agentiso's own reader) and prints the pull spec without a
// newline, as the real cluster-version-operator does.
func runCVO(args []string, dir string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "image" {
		return errors.New("the stand-in cluster-version-operator only answers: image SHORT-NAME")
	}
	if len(args) != 2 {
		return errors.New("missing command line argument short-name")
	}
	data, err := os.ReadFile(filepath.Join(dir, filepath.Base(release.ImageReferencesPath)))
	if err != nil {
		return fmt.Errorf("read the release payload: %w", err)
	}
	_, comps, err := release.ParseImageReferences(data)
	if err != nil {
		return err
	}
	img, ok := comps[args[1]]
	if !ok {
		return fmt.Errorf("component %q: %w", args[1], errUnknownComponent)
	}
	_, err = io.WriteString(stdout, img)
	return err
}
