// Command agentiso turns a cluster description into a bootable agent ISO
// for installing OpenShift on bare metal with no hub cluster.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
