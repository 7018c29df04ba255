package ignition

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// ValidateImageReference checks that s is a fully specified container image
// reference (registry/repository with a tag or a digest) by the reference
// grammar, so nothing else can reach the scripts and env files an image
// reference is written into.
func ValidateImageReference(s string) error {
	if s == "" {
		return fmt.Errorf("empty image reference")
	}
	if strings.TrimSpace(s) != s {
		return fmt.Errorf("leading or trailing whitespace")
	}
	// Without a dot, a port or "localhost" the first component is not a
	// registry and the image would come from Docker Hub implicitly.
	first, _, ok := strings.Cut(s, "/")
	if !ok || !(strings.ContainsAny(first, ".:") || first == "localhost") {
		return fmt.Errorf("the reference must name its registry (like quay.io/...)")
	}
	if _, err := name.ParseReference(s, name.StrictValidation); err != nil {
		return err
	}
	return nil
}

// shellQuoted returns s as one single-quoted bash word.
func shellQuoted(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
