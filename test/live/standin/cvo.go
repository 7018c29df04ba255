package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/seed-a052040e/agentiso/test/live/standin/release"
)

// ReleaseManifestsDir is where the release image carries its manifests.
const ReleaseManifestsDir = "/release-manifests"

// runCVO answers "image NAME" from dir/image-references and prints the
// pull spec without a newline, as the real cluster-version-operator does.
func runCVO(args []string, dir string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "image" {
		return errors.New("the stand-in cluster-version-operator only answers: image SHORT-NAME")
	}
	if len(args) != 2 {
		return errors.New("missing command line argument short-name")
	}
	data, err := os.ReadFile(filepath.Join(dir, release.ImageReferencesFile))
	if err != nil {
		return fmt.Errorf("read the release payload: %w", err)
	}
	s, err := release.ParseImageStream(data)
	if err != nil {
		return err
	}
	img, err := s.ImageFor(args[1])
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, img)
	return err
}
