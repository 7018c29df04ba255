package agent_test

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/rendezvoussim"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
)

// Fixtures built once for the package: generating the install's
// credentials is most of this package's CPU time (four 2048-bit RSA signer
// CAs and a bcrypt hash per store, about 0.4 s of CPU each time, and far
// more on a loaded machine), and the tests that build ISOs, manifests or
// Ignition are not about them. Tests of the credentials themselves (their
// generation, the guard on auth/, the state) keep generating their own:
// they use asset.NewStore directly, not newStore.

// credentialState is a state file holding the TLS signer CAs and the
// kubeadmin password, generated once, as a real run records them.
var credentialState = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp(packageTemp(), "credentials-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	s, err := asset.NewStore(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	for _, a := range []asset.Asset{&agent.SignerCAs{}, &agent.KubeadminPassword{}} {
		if _, err := s.Fetch(context.Background(), a); err != nil {
			return nil, err
		}
	}
	if err := s.SaveState(); err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, assetdir.State))
})

// newStore opens the asset store on dir as asset.NewStore does, after
// giving dir (when it has no state file yet) the package's credentials
// in its state, where a second run finds its own: they are then reused,
// not generated, as the store reuses any unchanged asset from state.
func newStore(t *testing.T, dir string, log *slog.Logger) *asset.Store {
	t.Helper()
	st := filepath.Join(dir, assetdir.State)
	if _, err := os.Lstat(st); os.IsNotExist(err) {
		b, err := credentialState()
		require.NoError(t, err)
		require.NoError(t, fsutil.WriteFileAtomic(st, b, assetdir.Mode(assetdir.State)))
	}
	s, err := asset.NewStore(dir, log)
	require.NoError(t, err)
	return s
}

// seeded is newStore as an opener of stores (storeWithoutOn).
func seeded(t *testing.T) func(string, *slog.Logger) (*asset.Store, error) {
	return func(dir string, log *slog.Logger) (*asset.Store, error) { return newStore(t, dir, log), nil }
}

// packageTemp is the directory TestMain made for the package's run (and
// removes at its end): XDG_CACHE_HOME is its cache/ subdirectory.
func packageTemp() string { return filepath.Dir(os.Getenv("XDG_CACHE_HOME")) }

// quietLog discards what the store logs.
func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// devDir is the directory `agentiso-dev init-dir --local` writes (its
// credentials generated once), copied for each test that may change it.
var devDir = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp(packageTemp(), "devdir-")
	if err != nil {
		return "", err
	}
	return dir, rendezvoussim.WriteDevDir(rendezvoussim.DevDirOptions{Dir: dir, RendezvousIP: "127.0.0.1", ClusterName: "ocp", BaseDomain: "example.com", Local: true})
})

func waitDevDir(t *testing.T) string {
	t.Helper()
	src, err := devDir()
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
	// CopyFS writes files 0644 (directories 0777 less umask): keep the
	// modes WriteDevDir gave them (secrets 0600).
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		return os.Chmod(filepath.Join(dir, rel), fi.Mode().Perm())
	}))
	return dir
}
