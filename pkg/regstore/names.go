package regstore

import (
	"fmt"
	"regexp"
	"strings"
)

// The grammar of distribution/reference (reference/regexp.go): a
// repository is path components of lower-case alphanumerics joined by
// separators, a tag is up to 128 word characters, dots and dashes. Names
// that pass cannot leave the store's directory (no "..", no "/" at either
// end, no empty component).
var (
	pathComponent = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*$`)
	tagRE         = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	dirComponent  = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)
)

// maxRepository is distribution's NameTotalLengthMax.
const maxRepository = 255

// ValidateRepository checks a repository name (without the registry host),
// e.g. "openshift/release".
func ValidateRepository(repo string) error {
	if repo == "" || len(repo) > maxRepository {
		return fmt.Errorf("regstore: repository %q: must be 1 to %d characters", repo, maxRepository)
	}
	for _, c := range strings.Split(repo, "/") {
		if !pathComponent.MatchString(c) {
			return fmt.Errorf("regstore: repository %q: component %q is not lower-case letters and digits joined by '.', '_', '__' or '-'", repo, c)
		}
	}
	return nil
}

// ValidateTag checks a tag, e.g. "4.21.3-x86_64".
func ValidateTag(tag string) error {
	if !tagRE.MatchString(tag) {
		return fmt.Errorf("regstore: tag %q: must be 1 to 128 letters, digits, '_', '.' or '-', not starting with '.' or '-'", tag)
	}
	return nil
}

// validDir checks the directory of a "dir:" image: relative, clean, and
// outside the store.
func validDir(dir string) error {
	if dir == "" {
		return fmt.Errorf("regstore: empty directory for a dir: image")
	}
	for _, c := range strings.Split(dir, "/") {
		if !dirComponent.MatchString(c) {
			return fmt.Errorf("regstore: directory %q: component %q is not a plain name", dir, c)
		}
	}
	if dir == "docker" || strings.HasPrefix(dir, "docker/") {
		return fmt.Errorf("regstore: directory %q is inside the store (%s)", dir, Root)
	}
	return nil
}
