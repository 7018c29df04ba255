package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/release"
)

// The command lines assisted-service release-4.20 runs
// (internal/oc/release.go), split on spaces as its execute() does.
func TestParseOCArgsUpstreamCommands(t *testing.T) {
	a, err := parseOCArgs([]string{"adm", "release", "info", "-o", "template", "--template", "'{{.metadata.version}}'",
		"--insecure=false", "--idms-file=/tmp/idms", "quay.io/o/r@sha256:ab", "--registry-config=/tmp/rc"})
	require.NoError(t, err)
	assert.Equal(t, &ocArgs{cmd: "adm release info", image: "quay.io/o/r@sha256:ab", output: "template",
		template: "'{{.metadata.version}}'", idmsFile: "/tmp/idms", registryConfig: "/tmp/rc"}, a)

	a, err = parseOCArgs([]string{"adm", "release", "info", "--image-for=machine-config-operator", "--insecure=false", "quay.io/o/r@sha256:ab", "--registry-config=/tmp/rc"})
	require.NoError(t, err)
	assert.Equal(t, "machine-config-operator", a.imageFor)

	a, err = parseOCArgs([]string{"image", "info", "--output", "json", "--icsp-file=/tmp/i", "quay.io/o/r@sha256:ab", "--registry-config=/tmp/rc"})
	require.NoError(t, err)
	assert.Equal(t, "image info", a.cmd)
	assert.Equal(t, "/tmp/i", a.icspFile)

	a, err = parseOCArgs([]string{"adm", "release", "info", "--help"})
	require.NoError(t, err)
	assert.True(t, a.help)

	_, err = parseOCArgs([]string{"adm", "upgrade"})
	require.ErrorContains(t, err, "only runs")
	_, err = parseOCArgs([]string{"image", "info", "--frob", "x"})
	require.ErrorContains(t, err, "unknown flag: --frob")
	_, err = parseOCArgs([]string{"image", "info", "a", "b"})
	require.ErrorContains(t, err, "want one image")
}

// assisted-service picks --idms-file when oc's help lists it
// (flagsFromHelpRE of internal/oc/release.go, release-4.20).
func TestOCHelpListsIDMSFile(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, runOC(context.Background(), []string{"image", "info", "--help"}, &out))
	re := regexp.MustCompile(`(?m)^\s*(?:-\w,\s+)?--(\w+(?:-\w+)*)=.*:\s*$`)
	var flags []string
	for _, m := range re.FindAllStringSubmatch(out.String(), -1) {
		flags = append(flags, m[1])
	}
	assert.Contains(t, flags, "idms-file")
	assert.Contains(t, flags, "icsp-file")
}

func TestOCRefusesExtract(t *testing.T) {
	err := runOC(context.Background(), []string{"adm", "release", "extract", "--command=openshift-install", "--to=/tmp/x", "quay.io/o/r@sha256:ab"}, &bytes.Buffer{})
	require.ErrorContains(t, err, "no real release binaries")
}

func TestMirrorsFile(t *testing.T) {
	dir := t.TempDir()
	idms := filepath.Join(dir, "idms")
	require.NoError(t, os.WriteFile(idms, []byte(`apiVersion: config.openshift.io/v1
kind: ImageDigestMirrorSet
spec:
  imageDigestMirrors:
  - source: quay.io/openshift-release-dev/ocp-release
    mirrors: [192.168.112.1:5000/openshift-release-dev/ocp-release]
`), 0o600))
	m, err := mirrorsFile(idms, false)
	require.NoError(t, err)
	assert.Equal(t, []release.Mirror{{Source: "quay.io/openshift-release-dev/ocp-release",
		Mirrors: []string{"192.168.112.1:5000/openshift-release-dev/ocp-release"}, DigestOnly: true}}, m)
	icsp := filepath.Join(dir, "icsp")
	require.NoError(t, os.WriteFile(icsp, []byte(`{"kind":"ImageContentSourcePolicy","spec":{"repositoryDigestMirrors":[{"source":"a/b","mirrors":["m/b"]}]}}`), 0o600))
	m, err = mirrorsFile(icsp, true)
	require.NoError(t, err)
	assert.Equal(t, []release.Mirror{{Source: "a/b", Mirrors: []string{"m/b"}, DigestOnly: true}}, m)
	m, err = mirrorsFile("", false)
	require.NoError(t, err)
	assert.Nil(t, m)
	_, err = mirrorsFile(filepath.Join(dir, "none"), false)
	require.Error(t, err)
}
