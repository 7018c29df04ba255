package mirror_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/test/live/mirror"
)

// podmanOrSkip returns podman's path. Outside CI a missing podman, or not
// being root, skips; in CI (hack/install-deps.sh installs podman, the
// tests run as root) it fails.
func podmanOrSkip(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("podman")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("podman not found; run hack/install-deps.sh (required when CI is set)")
		}
		t.Fatal("podman not found but CI is set; hack/install-deps.sh must install it")
	}
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "" {
			t.Skip("pulling with podman into a private store needs root; skipped outside CI")
		}
		t.Fatal("CI is set but the tests do not run as root")
	}
	return p
}

// TestPodmanPullsThroughDigestOnlyMirror has podman (containers/image, as
// on the hosts) pull every image of the payload by its SOURCE pull spec,
// with a registries.conf whose digest-only mirrors point at the lab mirror
// and whose sources are blocked (nothing leaves the machine), trusting the
// mirror only through the CA. The release tag cannot be pulled. Running the
// containers needs a container runtime this test does not assume.
func TestPodmanPullsThroughDigestOnlyMirror(t *testing.T) {
	podman := podmanOrSkip(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	m, err := mirror.Start(ctx, mirror.Options{Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, m.Close()) })

	// podman refuses a runroot longer than 50 characters: keep it short.
	dir, err := os.MkdirTemp("", "lab-pm")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	certs := filepath.Join(dir, "certs.d")
	require.NoError(t, os.MkdirAll(filepath.Join(certs, m.Addr), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(certs, m.Addr, "ca.crt"), m.CACertPEM, 0o644))
	var conf strings.Builder
	conf.WriteString("unqualified-search-registries = []\n")
	for _, s := range m.ImageDigestSources {
		fmt.Fprintf(&conf, "\n[[registry]]\nlocation = %q\nmirror-by-digest-only = true\nblocked = true\n", s.Source)
		for _, mr := range s.Mirrors {
			fmt.Fprintf(&conf, "\n[[registry.mirror]]\nlocation = %q\n", mr)
		}
	}
	regConf := filepath.Join(dir, "registries.conf")
	require.NoError(t, os.WriteFile(regConf, []byte(conf.String()), 0o644))
	policy := filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(policy, []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644))

	pull := func(ref string) (string, error) {
		c, cancel := context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(c, podman, "--root", filepath.Join(dir, "storage"), "--runroot", filepath.Join(dir, "run"),
			"--storage-driver", "vfs", "--events-backend", "file", "pull", "--quiet", "--cert-dir", filepath.Join(certs, m.Addr),
			"--signature-policy", policy, ref)
		cmd.Env = append(os.Environ(), "CONTAINERS_REGISTRIES_CONF="+regConf)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, im := range m.Images {
		out, err := pull(im.Source)
		require.NoError(t, err, "%s: %s", im.Source, out)
	}
	pulls := m.Pulls()
	require.NotEmpty(t, pulls)
	for _, p := range pulls {
		assert.True(t, p.ByDigest(), "podman asked the digest-only mirror for a tag: %s", p)
		assert.Equal(t, 200, p.Status, p.String())
	}
	for _, im := range m.Images {
		repo := mirror.MirrorComponentRepo
		if im.Component == "" {
			repo = mirror.MirrorReleaseRepo
		}
		assert.Contains(t, pulls, mirror.Pull{Method: "GET", Repository: repo, Kind: "manifests", Reference: im.Digest, Status: 200}, im.Source)
	}

	n := len(m.Pulls())
	out, err := pull(m.ReleaseTag)
	require.Error(t, err, "a tag is never pulled through a digest-only mirror: %s", out)
	assert.Contains(t, out, "blocked")
	assert.Len(t, m.Pulls(), n, "the mirror is not even asked")
}
