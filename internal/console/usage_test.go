package console

import (
	"errors"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
)

func TestUsageHint(t *testing.T) {
	root := &cobra.Command{Use: "tool"}
	create := &cobra.Command{Use: "create"}
	image := &cobra.Command{Use: "image", Run: func(*cobra.Command, []string) {}}
	create.AddCommand(image)
	root.AddCommand(create)

	assert.Equal(t, "\nDid you mean \"tool create image\"?\nCommands: image\nRun 'tool create --help' for details and examples.",
		UsageHint(create, errors.New(`unknown command "imag" for "tool create"`)))
	assert.Equal(t, "\nUsage: tool create image\nRun 'tool create image --help' for details and examples.",
		UsageHint(image, errors.New("unknown flag: --bogus")))
	assert.Empty(t, UsageHint(image, errors.New("read d/rendezvousIP: no such file")))
	assert.Empty(t, UsageHint(nil, errors.New("accepts 1 arg(s), received 0")))
}
