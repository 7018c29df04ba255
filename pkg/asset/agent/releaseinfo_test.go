package agent

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

func TestHasReleaseInputs(t *testing.T) {
	dir := t.TempDir()
	has, err := HasReleaseInputs(dir)
	require.NoError(t, err)
	assert.False(t, has)
	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.InstallConfig), []byte("x"), 0o600))
	has, err = HasReleaseInputs(dir)
	require.NoError(t, err)
	assert.True(t, has)
}

// Offline, a release is described as given, never read, and its RHCOS is
// unknown: the base ISO must be given.
func TestReleaseInfoOffline(t *testing.T) {
	digest := "sha256:" + strings.Repeat("4", 64)
	d, err := ReleaseInfo(context.Background(), ReleaseQuery{Image: "quay.io/openshift-release-dev/ocp-release@" + digest, Version: "4.20.0",
		Offline: true, Origin: "--release-image"})
	require.NoError(t, err)
	assert.Equal(t, digest, d.Digest)
	assert.Equal(t, "4.20.0", d.Version)
	assert.Equal(t, ReleaseFromOffline, d.Source)
	assert.Equal(t, "--release-image", d.Origin)
	require.NotNil(t, d.RHCOS)
	assert.Equal(t, "unknown", d.RHCOS.FromStream)
	assert.Contains(t, d.RHCOS.BaseISOFrom, "--offline: the payload was not read")

	_, err = ReleaseInfo(context.Background(), ReleaseQuery{Image: "quay.io/openshift-release-dev/ocp-release:4.20.0-x86_64", Version: "4.20.0", Offline: true})
	assert.ErrorContains(t, err, "is a tag, and --offline forbids looking it up")
	_, err = ReleaseInfo(context.Background(), ReleaseQuery{Image: "quay.io/openshift-release-dev/ocp-release@" + digest, Offline: true})
	assert.ErrorContains(t, err, "--offline needs --release-version")
	_, err = ReleaseInfo(context.Background(), ReleaseQuery{})
	assert.ErrorIs(t, err, ErrNoRelease)
}

// DirReleaseInfo reads the release as given when the directory holds no
// input, and through the directory's store (its install-config.yaml) when
// it does.
func TestDirReleaseInfo(t *testing.T) {
	r := ReleaseRequest{Image: "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("4", 64), Version: "4.20.0", Offline: true, Origin: "the IMAGE argument"}
	dir := t.TempDir()
	d, err := DirReleaseInfo(context.Background(), dir, slog.New(slog.DiscardHandler), r, "", "")
	require.NoError(t, err)
	assert.Equal(t, "4.20.0", d.Version)
	assert.Equal(t, "the IMAGE argument", d.Origin)

	require.NoError(t, os.WriteFile(filepath.Join(dir, assetdir.InstallConfig), []byte("apiVersion: [\n"), 0o600))
	_, err = DirReleaseInfo(context.Background(), dir, slog.New(slog.DiscardHandler), r, "", "")
	assert.ErrorContains(t, err, assetdir.InstallConfig, "read through the directory's inputs")
}
