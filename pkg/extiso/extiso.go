// Package extiso builds the extended agent ISO of the registry-less flow (docs/airgap.md): the release payload, read once through the mirrors, laid out as the distribution registry's storage in a data image written after the agent ISO in the same pass.
package extiso

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"

	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
	"github.com/seed-a052040e/agentiso/pkg/isofs"
	"github.com/seed-a052040e/agentiso/pkg/regstore"
	"github.com/seed-a052040e/agentiso/pkg/release"
)

// The names upstream reads (docs/airgap.md, with the sources there).
const (
	// FirstRelease is the first release whose components serve and keep
	// an embedded payload (assisted-service release-4.21's
	// InternalReleaseImage patcher; the payload's docker-registry carries
	// the distribution binary from 4.21.0).
	FirstRelease = "4.21"
	// FeatureGate is the gate behind which the release's installer makes
	// the node-local registry's serving certificate and credentials
	// (installer pkg/asset/tls/iricertkey.go, iriregistryauth.go);
	// openshift/api features.go enables it for self-managed clusters in
	// DevPreviewNoUpgrade and TechPreviewNoUpgrade only.
	FeatureGate = "NoRegistryClusterInstall"
	// ReleaseRepository and ComponentRepository are oc-mirror v2's
	// repositories of a release and of its components.
	ReleaseRepository   = "openshift/release-images"
	ComponentRepository = "openshift/release"
	// RegistryComponent is the payload's registry image, also stored in
	// the containers-image dir: layout under RegistryImageDir.
	RegistryComponent = "docker-registry"
	// BundleRepository holds the release bundle image, an empty image
	// (FROM scratch) tagged with the InternalReleaseImage release name,
	// which the Machine Config Operator lists (openshift/appliance
	// bundle/Dockerfile.bundle, pkg/releasebundle; machine-config-operator
	// pkg/daemon/internalreleaseimage/iriregistry.go ocpBundlesRepo).
	BundleRepository = "openshift/release-bundles"
	RegistryImageDir = "images/registry"
	// VolumeID is the data image's volume ID, Dir and Prefix name its
	// pieces on the ISO (registry/data.iso.aa, ...), each PieceSize long.
	VolumeID  = "agentdata"
	Dir       = "registry"
	Prefix    = "data.iso."
	PieceSize = 3 << 30
)

// Images opens an image by pull spec (release.Client does, through the
// mirrors), returning where it was read from.
type Images interface {
	Image(ctx context.Context, spec string) (v1.Image, string, error)
}

// TooOldError is a release before FirstRelease.
type TooOldError struct{ Version string }

func (e *TooOldError) Error() string {
	return fmt.Sprintf("release %s cannot be embedded in the ISO: the registry-less install (NoRegistryClusterInstall) first comes with OpenShift %s", e.Version, FirstRelease)
}

// atLeast reports whether version (x.y.z...) is at least major.minor.
func atLeast(version, min string) bool {
	v := strings.SplitN(version, ".", 3)
	m := strings.SplitN(min, ".", 2)
	if len(v) < 2 {
		return false
	}
	vmaj, e1 := strconv.Atoi(v[0])
	vmin, e2 := strconv.Atoi(v[1])
	mmaj, _ := strconv.Atoi(m[0])
	mmin, _ := strconv.Atoi(m[1])
	if e1 != nil || e2 != nil {
		return false
	}
	return vmaj > mmaj || vmaj == mmaj && vmin >= mmin
}

// PlanRelease plans rel's payload for arch (RPM spelling): the release
// image in ReleaseRepository and every component of its image-references
// in ComponentRepository, tagged as oc-mirror tags a release mirrored by
// digest (the digest's hex, then "-<component>"), plus the registry
// component in the dir: layout, and the release bundle image in
// BundleRepository. extra are more images, by digest, each in
// its source path tagged "sha256-<hex>" (oc-mirror's by-digest tag).
func PlanRelease(ctx context.Context, src Images, rel *release.Release, extra []string) (*regstore.Plan, error) {
	if !atLeast(rel.Version, FirstRelease) {
		return nil, &TooOldError{Version: rel.Version}
	}
	if rel.Arch == "multi" {
		return nil, fmt.Errorf("release %s is a multi-architecture payload: embedding one is not supported yet; give the single-architecture release of the cluster's architecture", rel.Version)
	}
	d, err := v1.NewHash(rel.Digest)
	if err != nil {
		return nil, fmt.Errorf("release %s: digest %q: %w", rel.Version, rel.Digest, err)
	}
	if _, ok := rel.Components[RegistryComponent]; !ok {
		return nil, fmt.Errorf("release %s has no %s component: the hosts' registry is that image", rel.Version, RegistryComponent)
	}
	p := regstore.NewPlan()
	if c, ok := src.(interface{ ChecksDigests() bool }); ok && c.ChecksDigests() {
		// the digest is checked once, by the source (docs/airgap.md
		// "Measured")
		p.SourceChecks = true
	}
	img, from, err := src.Image(ctx, rel.Pinned)
	if err != nil {
		return nil, fmt.Errorf("release image %s: %w", rel.Pinned, err)
	}
	if err := p.Add(ctx, ReleaseRepository, d.Hex, img); err != nil {
		return nil, fmt.Errorf("release image %s (from %s): %w", rel.Pinned, from, err)
	}
	names := make([]string, 0, len(rel.Components))
	for n := range rel.Components {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		spec := rel.Components[n]
		img, from, err := src.Image(ctx, spec)
		if err != nil {
			return nil, fmt.Errorf("component %s (%s): %w", n, spec, err)
		}
		if err := p.Add(ctx, ComponentRepository, d.Hex+"-"+n, img); err != nil {
			return nil, fmt.Errorf("component %s (%s, from %s): %w", n, spec, from, err)
		}
		if n == RegistryComponent {
			if err := p.AddDirImage(ctx, RegistryImageDir, img); err != nil {
				return nil, err
			}
		}
	}
	if err := p.Add(ctx, BundleRepository, BundleName(rel.Version, rel.Arch), empty.Image); err != nil {
		return nil, fmt.Errorf("release bundle image: %w", err)
	}
	for _, spec := range extra {
		ref, err := name.NewDigest(spec)
		if err != nil {
			return nil, fmt.Errorf("extra image %q: only images by digest are embedded: %w", spec, err)
		}
		img, from, err := src.Image(ctx, spec)
		if err != nil {
			return nil, fmt.Errorf("extra image %s: %w", spec, err)
		}
		dh, err := v1.NewHash(ref.DigestStr())
		if err != nil {
			return nil, err
		}
		if err := p.Add(ctx, ref.Context().RepositoryStr(), "sha256-"+dh.Hex, img); err != nil {
			return nil, fmt.Errorf("extra image %s (from %s): %w", spec, from, err)
		}
	}
	return p, nil
}

// Progress is where a write stands: the payload's bytes and blobs, and
// the time left at the rate so far.
type Progress = regstore.Progress

// Extended is the agent ISO edit with the payload's data image after it.
type Extended struct {
	ISO  *isoeditor.Extended
	Data *isofs.Layout
	plan *regstore.Plan
}

// Extend lays out the data image of plan after img (an edit of iso); date
// stamps the data image's records. progress, when not nil, is called after
// each blob is written.
func Extend(iso *isoeditor.ISO, img *isoeditor.Image, plan *regstore.Plan, date time.Time, progress func(Progress)) (*Extended, error) {
	data, err := isofs.Plan(VolumeID, date, plan.ISOFiles())
	if err != nil {
		return nil, err
	}
	st := Progress{Total: plan.Bytes(), Of: len(plan.Blobs()), ImagesOf: plan.Images()}
	// the small files (links, manifests, configs) come first in the data
	// image: written once the first blob is
	small := plan.Bytes()
	for _, b := range plan.Blobs() {
		small -= b.Size
	}
	var start time.Time
	fill := plan.Fill(func(b *regstore.Blob) {
		st.Bytes += b.Size
		st.Blobs++
		st.Images = plan.ImagesDone(st.Blobs)
		st.Elapsed = time.Since(start)
		if progress != nil {
			progress(st)
		}
	})
	x, err := iso.Extend(img, isoeditor.Appendix{
		Dir: Dir, Prefix: Prefix, PieceSize: PieceSize, Size: data.Size(),
		Write: func(ctx context.Context, w io.Writer) error {
			start = time.Now()
			st.Bytes, st.Blobs, st.Images = small, 0, plan.ImagesDone(0)
			_, err := data.WriteTo(ctx, w, fill)
			return err
		},
	})
	if err != nil {
		return nil, err
	}
	return &Extended{ISO: x, Data: data, plan: plan}, nil
}

// WriteStaged writes the extended ISO to dst, staged (isoeditor.Staged):
// nothing is under dst until Commit; an error leaves nothing.
func (x *Extended) WriteStaged(ctx context.Context, dst string, opts isoeditor.WriteOptions) (*isoeditor.Staged, error) {
	return isoeditor.WriteExtendedStaged(ctx, dst, x.ISO, opts)
}
