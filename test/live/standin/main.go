// Command standin is the one static binary behind every stand-in image of
// the live lab (test/live): the release image's cluster-version-operator,
// assisted-service and its database, agent-installer-client, the discovery
// agent, and the other agent installer components. It is built by the
// test/live/mirror package with CGO_ENABLED=0 and placed in each image under
// the path the agent units run; it picks its role from the name it is run
// as (argv[0]), or from its first argument when run as "standin".
//
// Roles and what they replace:
//
//	cluster-version-operator image NAME
//	    prints the pull spec of release component NAME from
//	    /release-manifests/image-references, like the real CVO's image
//	    subcommand (no trailing newline); unknown names fail.
//	    STANDIN_RELEASE_MANIFESTS overrides the directory (tests run the
//	    binary outside the image).
//	assisted-service
//	    the assisted-service REST API on :8090, served by test/live/assisted
//	    (the lab's stand-in service): the same local JWT authentication,
//	    state driven by the requests of the clients and agents.
//	bash start_db.sh, postgres
//	    the database container: it only accepts TCP connections on the
//	    PostgreSQL port and stays up. /bin/bash in the image is this binary; it
//	    runs start_db.sh and nothing else, and says so when asked to.
//	agent-installer-client registerCluster|registerInfraEnv|configure
//	    reads the ZTP manifests and host configs and calls the REST API.
//	agent --url URL --infra-env-id ID --agent-version IMAGE
//	    the discovery agent: registers its host with the real inventory of the
//	    machine it runs on and answers the steps it is given.
//	assisted-installer --role ROLE --host-id ID --url URL ...
//	    the orchestrator image's entrypoint (INSTALLER_IMAGE), which the
//	    agent runs for the install step: it reports the "Installing" stage
//	    with the agent token and exits. It writes nothing to disk.
//	cp SRC DST
//	    copies one file (what extract-agent.sh runs in the agent image).
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
	case "assisted-service":
		err = runService(ctx, rest, os.Getenv, stdout)
	case "bash":
		err = runBash(ctx, rest, os.Getenv, stdout)
	case "postgres":
		err = runDB(ctx, os.Getenv, stdout)
	case "agent-installer-client":
		err = runClient(ctx, rest, os.Getenv, stdout)
	case "agent":
		err = runAgent(ctx, rest, os.Getenv, stdout)
	case "cp":
		err = runCP(rest)
	case "assisted-installer":
		err = runInstaller(ctx, rest, os.Getenv, stdout)
	case "component":
		err = runComponent(rest, os.Getenv, stdout)
	case "oc":
		err = runOC(ctx, rest, stdout)
	default:
		err = fmt.Errorf("unknown role %q (run as cluster-version-operator, assisted-service, bash, postgres, agent-installer-client, agent, assisted-installer, cp, component or oc)", role)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", role, err)
		return 1
	}
	return 0
}
