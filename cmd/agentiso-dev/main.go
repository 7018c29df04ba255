// Command agentiso-dev holds agentiso's developer aids for tests, demos and
// benchmarks (internal/fake/devcmd): fixture ISOs, the rendezvous
// simulator, a day-2 cluster and a Redfish BMC emulator. It is built apart
// from agentiso (make build-dev) so that the shipped binary links no fake.
package main

import (
	"os"

	"github.com/seed-a052040e/agentiso/internal/fake/devcmd"
)

func main() {
	os.Exit(devcmd.Run(os.Args[1:], os.Stdout, os.Stderr))
}
