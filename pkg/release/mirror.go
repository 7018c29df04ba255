package release

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

// Mirror is one mirror rule, as install-config imageDigestSources (or the
// older imageContentSources) describes it: pulls of images under Source may
// be served by Mirrors, tried in order.
type Mirror struct {
	// Source is a registry, a registry/namespace or a repository
	// (e.g. quay.io/openshift-release-dev/ocp-release).
	Source string
	// Mirrors replace the Source prefix, in order.
	Mirrors []string
	// DigestOnly mirrors serve pulls by digest only: a tag is never looked
	// up on them (containers-registries.conf mirror-by-digest-only). Every
	// install-config mirror is digest-only.
	DigestOnly bool
	// Blocked means the source itself is never contacted
	// (sourcePolicy: NeverContactSource).
	Blocked bool
}

// Attempt is one location tried for a reference, in order.
type Attempt struct {
	Location string // the rewritten pull spec
	Mirror   bool   // a mirror, not the source
	// Skipped says why the location was not contacted; empty when it was.
	Skipped string
	Err     error // what went wrong when it was contacted
}

func (a Attempt) String() string {
	kind := "source"
	if a.Mirror {
		kind = "mirror"
	}
	switch {
	case a.Skipped != "":
		return fmt.Sprintf("%s %s: skipped (%s)", kind, a.Location, a.Skipped)
	case a.Err != nil:
		return fmt.Sprintf("%s %s: %s", kind, a.Location, termsafe.String(a.Err.Error()))
	default:
		return fmt.Sprintf("%s %s: ok", kind, a.Location)
	}
}

// matches reports whether repo (registry/path, no tag or digest) lies under
// prefix, at a path boundary, as registries.conf prefixes match.
func matches(prefix, repo string) bool {
	return repo == prefix || strings.HasPrefix(repo, prefix+"/")
}

// mergeMirrors folds rules with the same source into one, keeping the
// first-seen order of mirrors and dropping duplicates. A merged source is
// digest-only or blocked when any of its rules says so.
func mergeMirrors(in []Mirror) []Mirror {
	var out []Mirror
	idx := map[string]int{}
	for _, m := range in {
		src := strings.TrimSuffix(strings.TrimSpace(m.Source), "/")
		if src == "" {
			continue
		}
		i, ok := idx[src]
		if !ok {
			idx[src] = len(out)
			out = append(out, Mirror{Source: src, DigestOnly: m.DigestOnly, Blocked: m.Blocked})
			i = len(out) - 1
		}
		out[i].DigestOnly = out[i].DigestOnly || m.DigestOnly
		out[i].Blocked = out[i].Blocked || m.Blocked
		for _, mm := range m.Mirrors {
			mm = strings.TrimSuffix(strings.TrimSpace(mm), "/")
			if mm == "" || contains(out[i].Mirrors, mm) {
				continue
			}
			out[i].Mirrors = append(out[i].Mirrors, mm)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// candidates lists, in order, where ref may be pulled from: the mirrors of
// the longest matching source (digest-only mirrors skipped for a tag), then
// the source itself unless it is blocked.
func candidates(mirrors []Mirror, ref name.Reference) []Attempt {
	repo := ref.Context().Name()
	var best *Mirror
	for i := range mirrors {
		m := &mirrors[i]
		if matches(m.Source, repo) && (best == nil || len(m.Source) > len(best.Source)) {
			best = m
		}
	}
	_, isTag := ref.(name.Tag)
	var out []Attempt
	if best != nil {
		rest := strings.TrimPrefix(repo, best.Source)
		for _, m := range best.Mirrors {
			loc := m + rest + refSuffix(ref)
			a := Attempt{Location: loc, Mirror: true}
			if isTag && best.DigestOnly {
				a.Skipped = "mirror-by-digest-only: a tag is never looked up on it; give the release by digest"
			}
			out = append(out, a)
		}
	}
	src := Attempt{Location: repo + refSuffix(ref)}
	if best != nil && best.Blocked {
		src.Skipped = "blocked: sourcePolicy NeverContactSource"
	}
	return append(out, src)
}

// LookupRefused says why ref can be looked up nowhere with these mirrors:
// every place to ask is skipped (a tag on mirror-by-digest-only mirrors,
// and the source blocked), each with its reason; "" when some place may
// answer, or when ref is no reference (its own error is said elsewhere).
// It contacts nothing.
func LookupRefused(mirrors []Mirror, ref string) string {
	r, err := name.ParseReference(ref)
	if err != nil {
		return ""
	}
	var why []string
	for _, a := range candidates(mirrors, r) {
		if a.Skipped == "" {
			return ""
		}
		why = append(why, a.Location+": "+a.Skipped)
	}
	return strings.Join(why, "; ")
}

// refSuffix is ":tag" or "@sha256:...".
func refSuffix(ref name.Reference) string {
	if _, ok := ref.(name.Digest); ok {
		return "@" + ref.Identifier()
	}
	return ":" + ref.Identifier()
}
