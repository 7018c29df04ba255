// Command standin is the one static binary behind the live lab's (test/live)
// stand-ins for the parts of the release payload whose source the lab does
// not have, or whose real program would install for real: the release
// image's cluster-version-operator, assisted-installer, oc, and the
// components the lab only mirrors. assisted-service, its database,
// agent-installer-client and the agent are the real upstream programs
// (docs/e2e.md). It is built by the test/live/mirror package with
// CGO_ENABLED=0 and placed in each image under the path the agent units
// run; it picks its role from the name it is run as (argv[0]), or from its
// first argument when run as "standin".
//
// Roles and what they replace:
//
//	cluster-version-operator image NAME
//	    prints the pull spec of release component NAME from
//	    /release-manifests/image-references, like the real CVO's image
//	    subcommand (no trailing newline); unknown names fail.
//	    STANDIN_RELEASE_MANIFESTS overrides the directory (tests run the
//	    binary outside the image).
//	assisted-installer --role ROLE --host-id ID --url URL ...
//	    the orchestrator image's entrypoint (INSTALLER_IMAGE), which the
//	    agent runs for the install step: it reports the "Installing" stage
//	    with the agent token and exits. It writes nothing to disk.
//	oc adm release info | oc image info
//	    what assisted-service and agent-installer-client ask oc about the
//	    release (version, architecture, component pull specs), read from the
//	    lab's payload with pkg/release through the --idms-file/--icsp-file
//	    mirrors; `oc adm release extract` is refused (oc.go).
//	component
//	    entrypoint of the images that the lab only mirrors (csr-approver,
//	    utils, installer): prints what it stands for and exits.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches on the program name and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "standin: no program name")
		return 2
	}
	role, rest := filepath.Base(args[0]), args[1:]
	if role == "standin" {
		if len(rest) == 0 {
			fmt.Fprintln(stderr, "usage: standin ROLE [ARGS...]")
			return 2
		}
		role, rest = rest[0], rest[1:]
	}
	var err error
	switch role {
	case "cluster-version-operator":
		dir := ReleaseManifestsDir
		if d := os.Getenv("STANDIN_RELEASE_MANIFESTS"); d != "" {
			dir = d
		}
		err = runCVO(rest, dir, stdout)
	case "assisted-installer":
		err = runInstaller(ctx, rest, os.Getenv, stdout)
	case "component":
		err = runComponent(rest, os.Getenv, stdout)
	case "oc":
		err = runOC(ctx, rest, stdout)
	default:
		err = fmt.Errorf("unknown role %q (run as cluster-version-operator, assisted-installer, component or oc)", role)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", role, err)
		return 1
	}
	return 0
}
