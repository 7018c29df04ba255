package agent

import (
	"context"
	"fmt"

	"github.com/seed-a052040e/agentiso/pkg/asset"
)

// Created is what a create command did, for scripts (create -o json): the
// files it wrote into the asset directory, the release they install and
// where it was given, and the base ISO they were built from.
type Created struct {
	Command string          `json:"command"`
	Dir     string          `json:"dir"`
	Release *ReleaseSummary `json:"release,omitempty"`
	BaseISO *BaseISOSummary `json:"baseISO,omitempty"`
	// Files are the outputs in the order they were written, each with its
	// size and sha256; a file that already held the same content is
	// listed as unchanged.
	Files []asset.Output `json:"files"`
}

// ReleaseSummary names the OpenShift release a command's outputs install.
type ReleaseSummary struct {
	// PullSpec is what the hosts pull: by digest once the payload was
	// read (or given by digest), else the reference as given.
	PullSpec string `json:"pullSpec"`
	// Version is empty when the command did not need the payload and no
	// version was given.
	Version string `json:"version,omitempty"`
	Arch    string `json:"arch"`
	// Origin is where the release was given: "--release-image",
	// "$AGENTISO_RELEASE_IMAGE", "<config file>:<line>" or the
	// ClusterImageSet's file and line.
	Origin string `json:"origin"`
	// VersionFrom says where Version comes from: "payload" (read from the
	// release payload), "given" (--release-version or the ClusterImageSet,
	// checked against the payload when the ignition or ISO is built),
	// "offline" (taken as given with --offline) or "" (no version known).
	VersionFrom string `json:"versionFrom,omitempty"`
}

// BaseISOSummary is the RHCOS live ISO the outputs were built from.
type BaseISOSummary struct {
	Path   string `json:"path"`
	Source string `json:"source"`
}

// Where the version of a ReleaseSummary comes from.
const (
	VersionFromPayload = "payload"
	VersionFromGiven   = "given"
	VersionFromOffline = "offline"
)

// DescribeRelease names the release of what s resolved, or returns nil
// when the command did not resolve one (no release was needed). It reads
// only assets s already resolved: it never contacts a registry.
func DescribeRelease(ctx context.Context, s *asset.Store) *ReleaseSummary {
	if s.SourceOf(&ReleaseImage{}) == "" {
		return nil
	}
	ri, err := asset.Fetch[*ReleaseImage](ctx, s)
	if err != nil {
		return nil
	}
	if s.SourceOf(&ReleasePayload{}) != "" {
		p, err := asset.Fetch[*ReleasePayload](ctx, s)
		if err != nil {
			return nil
		}
		r := &ReleaseSummary{PullSpec: p.Pinned, Version: p.Version, Arch: p.Arch, Origin: ri.Origin, VersionFrom: VersionFromPayload}
		if p.Source == ReleaseFromOffline {
			r.VersionFrom = VersionFromOffline
		}
		return r
	}
	a, err := asset.Fetch[*Architecture](ctx, s)
	if err != nil {
		return nil
	}
	r := &ReleaseSummary{PullSpec: ri.PullSpec, Version: ri.Version, Arch: a.Arch, Origin: ri.Origin}
	switch {
	case ri.Version != "" && ri.Offline:
		r.VersionFrom = VersionFromOffline
	case ri.Version != "":
		r.VersionFrom = VersionFromGiven
	}
	return r
}

// String is the line every create command logs about its release.
func (r *ReleaseSummary) String() string {
	switch r.VersionFrom {
	case VersionFromPayload:
		return fmt.Sprintf("Release: OpenShift %s for %s, release image %s (given by %s; version read from its payload)", r.Version, r.Arch, r.PullSpec, r.Origin)
	case VersionFromOffline:
		return fmt.Sprintf("Release: OpenShift %s for %s, release image %s (given by %s; version taken as given (--offline))", r.Version, r.Arch, r.PullSpec, r.Origin)
	case VersionFromGiven:
		return fmt.Sprintf("Release: OpenShift %s for %s, release image %s (given by %s; version as given, checked against the payload when the ignition or ISO is built)", r.Version, r.Arch, r.PullSpec, r.Origin)
	}
	return fmt.Sprintf("Release: release image %s for %s (given by %s; its payload is not read: the manifests do not need it)", r.PullSpec, r.Arch, r.Origin)
}

// DescribeBaseISO names the base ISO s resolved, or returns nil when the
// command built nothing from one.
func DescribeBaseISO(ctx context.Context, s *asset.Store) *BaseISOSummary {
	if s.SourceOf(&BaseISO{}) == "" {
		return nil
	}
	b, err := asset.Fetch[*BaseISO](ctx, s)
	if err != nil {
		return nil
	}
	return &BaseISOSummary{Path: b.Path, Source: string(b.Source)}
}

// Describe is what a create command did once s persisted its targets.
func Describe(ctx context.Context, s *asset.Store, command string) *Created {
	files := s.Outputs()
	if files == nil {
		files = []asset.Output{}
	}
	return &Created{Command: command, Dir: s.Dir(), Release: DescribeRelease(ctx, s), BaseISO: DescribeBaseISO(ctx, s), Files: files}
}
