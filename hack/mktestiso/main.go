// Command mktestiso writes a synthetic RHCOS-layout live ISO for tests, demos and benchmarks.
//
//	go run ./hack/mktestiso -size 64MiB -arch x86_64 -o base.iso
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
)

func main() {
	var (
		o    testiso.Options
		size string
		area string
		out  string
	)
	flag.StringVar(&size, "size", "16MiB", "image size, e.g. 64MiB, 1GiB or a byte count")
	flag.StringVar(&o.Arch, "arch", "x86_64", "architecture: x86_64, aarch64, ppc64le or s390x")
	flag.StringVar(&o.VolumeID, "volume-id", "", "volume ID (default rhcos-9.6.20251021-0)")
	flag.StringVar(&area, "embed-area", "256KiB", "ignition embed area size")
	flag.BoolVar(&o.OmitIgnInfo, "no-igninfo", false, "leave out coreos/igninfo.json")
	flag.BoolVar(&o.OmitIgnitionImg, "no-ignition-img", false, "leave out images/ignition.img")
	flag.BoolVar(&o.OmitKargsJSON, "no-kargs-json", false, "leave out coreos/kargs.json")
	flag.BoolVar(&o.Dense, "dense", false, "write real filler bytes instead of a sparse hole")
	flag.StringVar(&out, "o", "", "output file (required)")
	flag.Parse()
	if err := run(&o, size, area, out); err != nil {
		fmt.Fprintln(os.Stderr, "mktestiso:", err)
		os.Exit(1)
	}
}

func run(o *testiso.Options, size, area, out string) error {
	if out == "" {
		return fmt.Errorf("-o is required")
	}
	var err error
	if o.Size, err = testiso.ParseSize(size); err != nil {
		return fmt.Errorf("-size: %w", err)
	}
	if o.EmbedAreaSize, err = testiso.ParseSize(area); err != nil {
		return fmt.Errorf("-embed-area: %w", err)
	}
	_, err = testiso.WriteFile(out, *o)
	return err
}
