package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/testiso"
	"github.com/seed-a052040e/agentiso/internal/testiso/testminiso"
)

type devMakeTestISOOptions struct {
	out, size, area, arch, volumeID string
	noIgnInfo, noIgnitionImg        bool
	noKargsJSON, dense, miniso      bool
	ignition                        string
	kargs                           []string
}

// newDevMakeTestISOCmd is a developer aid: it writes a synthetic live ISO
// with the RHCOS layout (see internal/testiso) so script tests and demos do
// not need a real 1 GiB RHCOS ISO.
func newDevMakeTestISOCmd(g *globals) *cobra.Command {
	o := devMakeTestISOOptions{}
	cmd := &cobra.Command{
		Use:   "make-test-iso --output-file FILE",
		Short: "Write a synthetic RHCOS-layout live ISO (developer aid)",
		Long: `Write a synthetic ISO 9660 image with the layout of an RHCOS live ISO:
volume ID rhcos-..., coreos/igninfo.json, coreos/kargs.json, boot configs
with kernel-argument embed areas, a zeroed images/ignition.img and
images/pxeboot/{vmlinuz,initrd.img,rootfs.img}. rootfs.img is a sparse hole,
so large images cost almost no disk. The image does not boot. With --miniso
it also carries a coreos/miniso.dat packed from its minimal ISO (the same
files without rootfs.img), so minimal agent ISOs can be built from it.

With --ignition and --karg the image is then edited the way an agent ISO is,
through pkg/isoeditor, so tests can inspect a populated ISO.`,
		Example: `  agentiso dev make-test-iso --output-file base.iso --size 64MiB --arch x86_64
  agentiso dev make-test-iso --output-file agent.iso --ignition config.ign --karg console=ttyS0
  agentiso dev make-test-iso --output-file broken.iso --no-igninfo --no-ignition-img
  agentiso dev make-test-iso --output-file base.iso --miniso`,
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return devMakeTestISO(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.out, "output-file", "o", "", "file to write the ISO to (required)")
	// -o is a format everywhere else; here it was the file before
	// --output-file, and still works, deprecated, for scripts written then.
	_ = f.MarkShorthandDeprecated("output-file", "use --output-file")
	f.StringVar(&o.size, "size", "16MiB", "image size: bytes or a number with KiB, MiB or GiB")
	f.StringVar(&o.area, "embed-area", "256KiB", "size of the Ignition embed area")
	f.StringVar(&o.arch, "arch", "x86_64", "architecture: x86_64, aarch64, ppc64le or s390x")
	f.StringVar(&o.volumeID, "volume-id", "", "volume ID (default rhcos-9.6.20251021-0)")
	f.BoolVar(&o.noIgnInfo, "no-igninfo", false, "leave out coreos/igninfo.json")
	f.BoolVar(&o.noIgnitionImg, "no-ignition-img", false, "leave out images/ignition.img")
	f.BoolVar(&o.noKargsJSON, "no-kargs-json", false, "leave out coreos/kargs.json")
	f.BoolVar(&o.dense, "dense", false, "write real filler bytes instead of a sparse hole")
	f.BoolVar(&o.miniso, "miniso", false, "carry a coreos/miniso.dat that rebuilds the image's minimal ISO (as RHCOS's does)")
	f.StringVar(&o.ignition, "ignition", "", "embed this Ignition config file")
	f.StringArrayVar(&o.kargs, "karg", nil, "append this kernel argument (repeatable)")
	_ = cmd.MarkFlagRequired("output-file")
	return cmd
}

func devMakeTestISO(ctx context.Context, o devMakeTestISOOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	mo := testminiso.MakeOptions{Options: testiso.Options{Arch: o.arch, VolumeID: o.volumeID, OmitIgnInfo: o.noIgnInfo,
		OmitIgnitionImg: o.noIgnitionImg, OmitKargsJSON: o.noKargsJSON, Dense: o.dense}, Miniso: o.miniso, Kargs: o.kargs}
	var err error
	if mo.Size, err = testiso.ParseSize(o.size); err != nil {
		return fmt.Errorf("--size: %w", err)
	}
	if mo.EmbedAreaSize, err = testiso.ParseSize(o.area); err != nil {
		return fmt.Errorf("--embed-area: %w", err)
	}
	if o.ignition != "" {
		if mo.Ignition, err = os.ReadFile(o.ignition); err != nil {
			return fmt.Errorf("--ignition: %w", err)
		}
	}
	return testminiso.Make(ctx, o.out, mo)
}
