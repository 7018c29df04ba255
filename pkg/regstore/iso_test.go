package regstore_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/isofs"
	"github.com/seed-a052040e/agentiso/pkg/regstore"
)

// The data image (docs/airgap.md): the store as an ISO 9660 image, read
// back by xorriso and served by the real distribution registry.
func TestDataImageServedByDistribution(t *testing.T) {
	osirrox, err := exec.LookPath("osirrox")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("osirrox (xorriso) is required in CI")
		}
		t.Skip("osirrox (xorriso) not installed")
	}
	f := newFixture(t)
	p := f.plan(t)
	l, err := isofs.Plan("agentdata", time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC), p.ISOFiles())
	require.NoError(t, err)
	iso := filepath.Join(t.TempDir(), "data.iso")
	out, err := os.Create(iso)
	require.NoError(t, err)
	blobs := 0
	n, err := l.WriteTo(context.Background(), out, p.Fill(func(*regstore.Blob) { blobs++ }))
	require.NoError(t, err)
	require.NoError(t, out.Close())
	assert.Equal(t, l.Size(), n)
	assert.Equal(t, len(p.Blobs()), blobs, "each blob is read once")
	// The image holds each blob's bytes once: its size is the tree's
	// bytes plus the structures and the sector padding, not more.
	assert.Less(t, l.Size()-l.HeaderSize(), p.Bytes()+int64(len(p.ISOFiles()))*isofs.Sector)

	dir := filepath.Join(t.TempDir(), "x")
	b, err := exec.Command(osirrox, "-indev", iso, "-extract", "/", dir).CombinedOutput()
	require.NoError(t, err, "%s", b)
	host := serve(t, dir)
	got := pull(t, host+"/openshift/release-images:4.21.3-x86_64")
	assert.Equal(t, digestOf(t, f.release), digestOf(t, got))
	readAll(t, got)
	readAll(t, pull(t, host+"/openshift/release@"+digestOf(t, f.compB).String()))
	m, err := os.ReadFile(filepath.Join(dir, "images", "registry", "manifest.json"))
	require.NoError(t, err)
	raw, err := f.registry.RawManifest()
	require.NoError(t, err)
	assert.Equal(t, raw, m)
}
