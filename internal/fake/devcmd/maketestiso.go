package devcmd

import (
	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso/testminiso"
)

// newMakeTestISOCmd is a developer aid: it writes a synthetic live ISO
// with the RHCOS layout (see internal/fake/testiso) so script tests and demos do
// not need a real 1 GiB RHCOS ISO.
func newMakeTestISOCmd() *cobra.Command {
	var out string
	o := testminiso.Flags{}
	cmd := &cobra.Command{
		Use:   "make-test-iso --output-file FILE",
		Short: "Write a synthetic RHCOS-layout live ISO (developer aid)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return testminiso.MakeFromFlags(cmd.Context(), out, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output-file", "o", "", "file to write the ISO to (required)")
	// -o is a format everywhere else; here it was the file before
	// --output-file, and still works, deprecated, for scripts written then.
	_ = f.MarkShorthandDeprecated("output-file", "use --output-file")
	f.StringVar(&o.Size, "size", "16MiB", "image size: bytes or a number with KiB, MiB or GiB")
	f.StringVar(&o.EmbedArea, "embed-area", "256KiB", "size of the Ignition embed area")
	f.StringVar(&o.Arch, "arch", "x86_64", "architecture: x86_64, aarch64, ppc64le or s390x")
	f.StringVar(&o.VolumeID, "volume-id", "", "volume ID (default rhcos-9.6.20251021-0)")
	f.BoolVar(&o.OmitIgnInfo, "no-igninfo", false, "leave out coreos/igninfo.json")
	f.BoolVar(&o.OmitIgnitionImg, "no-ignition-img", false, "leave out images/ignition.img")
	f.BoolVar(&o.OmitKargsJSON, "no-kargs-json", false, "leave out coreos/kargs.json")
	f.BoolVar(&o.Dense, "dense", false, "write real filler bytes instead of a sparse hole")
	f.BoolVar(&o.Miniso, "miniso", false, "carry a coreos/miniso.dat that rebuilds the image's minimal ISO (as RHCOS's does)")
	f.StringVar(&o.IgnitionFile, "ignition", "", "embed this Ignition config file")
	f.StringArrayVar(&o.Kargs, "karg", nil, "append this kernel argument (repeatable)")
	_ = cmd.MarkFlagRequired("output-file")
	return cmd
}
