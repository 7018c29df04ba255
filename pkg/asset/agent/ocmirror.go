package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/ocmirror"
)

// MirrorFrom is --mirror-from: the directory of an oc-mirror v2 run
// (empty without the flag). The command provides it.
type MirrorFrom struct {
	Dir string `json:"dir,omitempty"`
}

// Name implements asset.Asset.
func (*MirrorFrom) Name() string { return "oc-mirror Directory" }

// Doing implements asset.Described.
func (*MirrorFrom) Doing() string { return "take --mirror-from" }

// Dependencies implements asset.Asset.
func (*MirrorFrom) Dependencies() []asset.Asset { return nil }

// Volatile implements asset.Volatile: one run's option.
func (*MirrorFrom) Volatile() {}

// Generate implements asset.Asset: not given.
func (*MirrorFrom) Generate(context.Context, asset.Parents) error { return nil }

// OCMirror is what the --mirror-from directory holds (docs/airgap.md):
// the cluster resources oc-mirror v2 wrote in its workspace
// (working-dir/cluster-resources: the mirror sets, catalogs, release
// signatures), applied to the install as imageDigestSources and extra
// manifests; and its image store (the archives mirror_000001.tar, ... of
// a mirror-to-disk run, or an extracted docker/registry/v2 tree), from
// which every image is read instead of from a registry.
type OCMirror struct {
	Dir string `json:"dir,omitempty"`
	// Store names the image store read ("" without one); Archives are its
	// archives.
	Store    string   `json:"store,omitempty"`
	Archives []string `json:"archives,omitempty"`
	// Resources are the cluster resources (nil without them).
	Resources *ocmirror.Resources `json:"resources,omitempty"`
	store     *ocmirror.Store
}

// Name implements asset.Asset.
func (*OCMirror) Name() string { return "oc-mirror Output" }

// Doing implements asset.Described.
func (*OCMirror) Doing() string { return "read the oc-mirror output given with --mirror-from" }

// Dependencies implements asset.Asset.
func (*OCMirror) Dependencies() []asset.Asset { return []asset.Asset{&MirrorFrom{}} }

// Volatile implements asset.Volatile: the directory is read on every run.
func (*OCMirror) Volatile() {}

// Generate implements asset.Asset.
func (a *OCMirror) Generate(_ context.Context, p asset.Parents) error {
	dir := asset.Get[*MirrorFrom](p).Dir
	if dir == "" {
		return nil
	}
	a.Dir = dir
	s, err := ocmirror.OpenStore(dir)
	var none *ocmirror.NoStoreError
	switch {
	case errors.As(err, &none):
	case err != nil:
		return err
	default:
		a.store, a.Store, a.Archives = s, s.String(), s.Archives
	}
	if _, err := ocmirror.FindDir(dir); err == nil {
		if a.Resources, err = ocmirror.Read(dir); err != nil {
			return err
		}
	}
	if a.store == nil && a.Resources == nil {
		return fmt.Errorf("--mirror-from %s: neither oc-mirror v2's images (its archives mirror_000001.tar, ... or an extracted docker/registry/v2) nor its cluster resources (working-dir/cluster-resources) are there", dir)
	}
	return nil
}
