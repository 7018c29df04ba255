package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real agent (assisted-installer-agent release-4.20,
// src/commands/actions/install_cmd.go) runs the installer with these
// arguments; a day-2 worker's install (seen in the live lab's add-nodes
// scenario) has no --openshift-version and adds --controller-image,
// --agent-image, --insecure, --installer-args and --notify-num-reboots.
// The stand-in takes every flag the agent can give.
func TestInstallerTakesTheAgentsFlags(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Method + " " + r.URL.Path + " " + r.Header.Get("X-Secret-Key")
	}))
	defer srv.Close()
	args := []string{"--role", "worker", "--infra-env-id", "ie1", "--cluster-id", "c1", "--host-id", "h1",
		"--boot-device", "/dev/disk/by-path/pci-0000:00:05.0", "--url", srv.URL + "/",
		"--controller-image", "quay.io/x@sha256:1", "--agent-image", "quay.io/x@sha256:2", "--insecure",
		"--installer-args", `["--copy-network"]`, "--notify-num-reboots",
		"--mco-image", "quay.io/x@sha256:3", "--must-gather-image", "quay.io/x@sha256:4", "--check-cluster-version",
		"--openshift-version", "4.20.0", "--control-plane-count", "3", "--enable-skip-mco-reboot",
		"--skip-installation-disk-cleanup", "--format-disk", "/dev/sdb", "--format-disk", "/dev/sdc",
		"--service-ips", "10.0.0.1", "--cacert", "/etc/assisted-service/service-ca-cert.crt", "--coreos-image", "quay.io/x@sha256:5",
		"--http-proxy", "http://p:3128", "--https-proxy", "http://p:3128", "--no-proxy", ".lab.test"}
	var b bytes.Buffer
	err := runInstaller(context.Background(), args, func(k string) string { return map[string]string{"PULL_SECRET_TOKEN": "tok"}[k] }, &b)
	require.NoError(t, err, b.String())
	assert.Equal(t, "PUT /api/assisted-install/v2/infra-envs/ie1/hosts/h1/progress tok", got)
	assert.True(t, strings.HasPrefix(b.String(), "stand-in assisted-installer: worker host h1 of cluster c1"), b.String())

	// An unknown flag is still refused: the stand-in checks its arguments.
	err = runInstaller(context.Background(), append(args, "--frobnicate"), func(string) string { return "tok" }, &b)
	assert.ErrorContains(t, err, "flag provided but not defined: -frobnicate")
}
