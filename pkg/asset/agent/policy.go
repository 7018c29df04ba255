package agent

import (
	"context"
	"fmt"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/releasepolicy"
)

// ReleaseSupport is the supported-release policy's verdict on the release
// being installed (pkg/releasepolicy, docs/release.md "Supported
// releases"): its rules (authentication, fencing, hardware, how the
// release is matched), or an error for a release below the floor. It is
// decided again on every run, so a state written by an older agentiso, or
// for another pinned default, cannot carry a release past the policy.
type ReleaseSupport struct {
	Warnings
	releasepolicy.Support
}

// Name implements asset.Asset.
func (*ReleaseSupport) Name() string { return "Release Support" }

// Doing says what a failure was doing, in the user's terms.
func (*ReleaseSupport) Doing() string { return "use this OpenShift release" }

// Dependencies implements asset.Asset.
func (*ReleaseSupport) Dependencies() []asset.Asset { return []asset.Asset{&ReleasePayload{}} }

// Volatile implements asset.Volatile: the policy of this build, not kept.
func (*ReleaseSupport) Volatile() {}

// Generate implements asset.Asset.
func (a *ReleaseSupport) Generate(_ context.Context, p asset.Parents) error {
	rel := asset.Get[*ReleasePayload](p)
	s, err := releasepolicy.For(rel.Version)
	switch {
	case err != nil && rel.Source == ReleaseFromOffline:
		return fmt.Errorf("release %s (--release-version %s): %w", rel.PullSpec, rel.Version, err)
	case err != nil:
		return fmt.Errorf("release %s: %w", rel.PullSpec, err)
	}
	a.Support = s
	if w := s.Warning(); w != "" {
		a.Warn = append(a.Warn, w)
	}
	return nil
}

// givenVersionSupported is the policy's check of a release whose version
// is known without reading its payload (--release-version): for what
// reads no payload (`create cluster-manifests`). ReleaseSupport decides
// again from the payload where it is read.
func givenVersionSupported(req *ReleaseImage) error {
	if req.Version == "" {
		return nil
	}
	if _, err := releasepolicy.For(req.Version); err != nil {
		return fmt.Errorf("release %s (--release-version %s): %w", req.PullSpec, req.Version, err)
	}
	return nil
}
