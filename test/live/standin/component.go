package main

import (
	"errors"
	"fmt"
	"io"
)

// runComponent is the entrypoint of images the lab only mirrors and pulls.
func runComponent(args []string, getenv func(string) string, stdout io.Writer) error {
	name := getenv("STANDIN_COMPONENT")
	if name == "" {
		return errors.New("STANDIN_COMPONENT is not set in the image")
	}
	fmt.Fprintf(stdout, "stand-in for release component %s (args %q): nothing to do in the lab\n", name, args)
	return nil
}
