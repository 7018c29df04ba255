package manifests

import (
	"fmt"
	"slices"
	"strings"
)

// DefaultRegistriesConf is what podman ships when no mirror is configured.
const DefaultRegistriesConf = `unqualified-search-registries = []

short-name-mode = ""
`

// GenerateRegistriesConf renders containers-registries.conf(5) (v2) from
// imageDigestSources: one [[registry]] per source (entries of one source
// merged), digest-only mirrors,
// blocked when the source must never be contacted.
func GenerateRegistriesConf(sources []ImageDigestSource) string {
	if len(sources) == 0 {
		return DefaultRegistriesConf
	}
	var b strings.Builder
	b.WriteString("unqualified-search-registries = []\nshort-name-mode = \"\"\n")
	for _, s := range MergeMirrorSources(sources) {
		fmt.Fprintf(&b, "\n[[registry]]\n  location = %q\n  mirror-by-digest-only = true\n", s.Source)
		if s.SourcePolicy == "NeverContactSource" {
			b.WriteString("  blocked = true\n")
		}
		for _, m := range s.Mirrors {
			fmt.Fprintf(&b, "\n  [[registry.mirror]]\n    location = %q\n", m)
		}
	}
	return b.String()
}

// MirrorCovers reports whether some source is a prefix of the release
// image repository, so the release can be pulled through a mirror.
func MirrorCovers(sources []ImageDigestSource, releaseImage string) bool {
	repo := releaseImage
	if i := strings.IndexAny(repo, "@"); i >= 0 {
		repo = repo[:i]
	} else if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	for _, s := range sources {
		if repo == s.Source || strings.HasPrefix(repo, s.Source+"/") {
			return true
		}
	}
	return false
}

// RegistriesConfLocations lists the location keys of a registries.conf,
// enough to warn when the release image is not covered.
func RegistriesConfLocations(conf string) []string {
	var out []string
	inRegistry := false
	for _, line := range strings.Split(conf, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "[[registry]]":
			inRegistry = true
		case strings.HasPrefix(t, "[["):
			inRegistry = false
		case inRegistry && strings.HasPrefix(t, "location"):
			if _, v, ok := strings.Cut(t, "="); ok {
				out = append(out, strings.Trim(strings.TrimSpace(v), `"'`))
			}
		}
	}
	return out
}

// MergeMirrorSources folds entries with the same source into one, keeping
// the first-seen order of sources and of their mirrors and dropping
// repeated mirrors, as upstream does before writing registries.conf. The
// merged entry is blocked when any entry is; validation refuses entries of
// one source that disagree on that.
func MergeMirrorSources(sources []ImageDigestSource) []ImageDigestSource {
	var out []ImageDigestSource
	index := map[string]int{}
	for _, s := range sources {
		i, ok := index[s.Source]
		if !ok {
			index[s.Source] = len(out)
			out = append(out, ImageDigestSource{Source: s.Source, SourcePolicy: s.SourcePolicy})
			i = len(out) - 1
		}
		if s.SourcePolicy == "NeverContactSource" {
			out[i].SourcePolicy = s.SourcePolicy
		}
		for _, m := range s.Mirrors {
			if !slices.Contains(out[i].Mirrors, m) {
				out[i].Mirrors = append(out[i].Mirrors, m)
			}
		}
	}
	return out
}
