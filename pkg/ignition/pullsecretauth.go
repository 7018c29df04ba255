package ignition

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// What assisted-service requires of the pull secret when the agent client
// registers the cluster (POST /v2/clusters). Facts from openshift/
// assisted-service, internal/cluster/validations/pull_secret_validation.go
// and cmd/main.go (NewPullSecretValidator), branches release-4.18 to
// master:
//
//   - Registries needing no auth: PUBLIC_CONTAINER_REGISTRIES, plus (from
//     release-4.19) the host of every source location of the mirror
//     registries.conf the service is given (ParseMirrorRegistries).
//   - Images whose registry needs auth: OPENSHIFT_INSTALL_RELEASE_IMAGE_MIRROR,
//     AGENT_DOCKER_IMAGE, INSTALLER_IMAGE, CONTROLLER_IMAGE and the
//     cluster's release image URL (RELEASE_IMAGES url).
//   - release-4.18 and release-4.19 take the image's host only and need an
//     auths key equal to it; from release-4.20 the image's host/path is
//     matched, and an auths key (or public registry) equal to it or to any
//     leading path of it (host, host/a, ...) counts (findFullRegistryInSet).
//   - "docker.io" is also satisfied by "https://index.docker.io/v1/";
//     "registry.stage.redhat.io" never needs an entry.
//   - Every auths entry must pass parseAuthConfig (same on every branch):
//     "auth" absent or "" is accepted; otherwise it must be a string of
//     base64 that decodes to "user:password".
//
// A miss is HTTP 400 "pull secret for new cluster is invalid", and
// agent-register-cluster retries it forever.

// Images assisted-service reads from the release payload at boot (the
// payload's image-references tags), by the variable it reads them from.
var serviceComponentImages = []struct{ Env, Component string }{
	{"AGENT_DOCKER_IMAGE", "agent-installer-node-agent"},
	{"INSTALLER_IMAGE", "agent-installer-orchestrator"},
	{"CONTROLLER_IMAGE", "agent-installer-csr-approver"},
}

// ServiceComponents lists the payload components assisted-service checks
// the pull secret for.
func ServiceComponents() []string {
	out := make([]string, len(serviceComponentImages))
	for i, c := range serviceComponentImages {
		out[i] = c.Component
	}
	return out
}

// MissingAuth is one image whose registry assisted-service requires an
// auths entry for, and the pull secret has none.
type MissingAuth struct {
	// Registry is what needs an entry (as the service of the release
	// names it); Image is the pull spec; For says what the service uses it
	// for.
	Registry, Image, For string
}

// PullSecretAuthError is an auths entry assisted-service cannot parse.
type PullSecretAuthError struct{ Registry, Detail string }

func (e *PullSecretAuthError) Error() string {
	return fmt.Sprintf("auths[%q]: %s", e.Registry, e.Detail)
}

// publicRegistries is PUBLIC_CONTAINER_REGISTRIES as written for in.
func publicRegistries(in *Input, regs []registry) []string {
	switch {
	case len(in.PublicContainerRegistries) > 0:
		return in.PublicContainerRegistries
	case haveMirrors(regs):
		// As upstream: the mirrored sources' registries.
		return mirroredRegistries(regs)
	}
	return []string{"quay.io"}
}

// releaseImageMirror is OPENSHIFT_INSTALL_RELEASE_IMAGE_MIRROR as written.
func releaseImageMirror(in *Input, regs []registry) string {
	if in.ReleaseImageMirror != "" {
		return in.ReleaseImageMirror
	}
	return mirrorOf(in.ReleaseImage, regs)
}

// CheckPullSecretAuth returns the images of in whose registry the
// assisted-service of in.ReleaseVersion requires an auths entry for and
// in.PullSecret lacks, or a *PullSecretAuthError for an entry it refuses.
// components maps payload component names (ServiceComponents) to pull
// specs; a missing one is not checked (unknown until the payload is read).
func CheckPullSecretAuth(in *Input, components map[string]string) ([]MissingAuth, error) {
	var doc struct {
		Auths map[string]map[string]any `json:"auths"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(in.PullSecret)), &doc); err != nil {
		return nil, fmt.Errorf("the pull secret is not valid JSON: %w", err)
	}
	keys := make([]string, 0, len(doc.Auths))
	for k := range doc.Auths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := checkAuthEntry(k, doc.Auths[k]); err != nil {
			return nil, err
		}
	}
	regs, err := parseRegistries(in.RegistriesConf)
	if err != nil {
		return nil, err
	}
	ok := map[string]bool{}
	for _, r := range publicRegistries(in, regs) {
		ok[r] = true
	}
	for _, k := range keys {
		ok[k] = true
	}
	// An unknown version gets the newest rule.
	byPath, mirrorSourcesPublic := true, true
	if mm, err := majorMinor(in.ReleaseVersion); err == nil {
		major, minor, _ := strings.Cut(mm, ".")
		maj, _ := strconv.Atoi(major)
		mi, _ := strconv.Atoi(minor)
		byPath = maj > 4 || (maj == 4 && mi >= 20)
		mirrorSourcesPublic = maj > 4 || (maj == 4 && mi >= 19)
	}
	if mirrorSourcesPublic {
		for _, r := range mirroredRegistries(regs) {
			ok[r] = true
		}
	}
	type need struct{ image, what string }
	needs := []need{}
	if m := releaseImageMirror(in, regs); m != "" {
		needs = append(needs, need{m, "the release image mirror (OPENSHIFT_INSTALL_RELEASE_IMAGE_MIRROR)"})
	}
	for _, c := range serviceComponentImages {
		if img := components[c.Component]; img != "" {
			needs = append(needs, need{img, fmt.Sprintf("the %s image (%s)", c.Component, c.Env)})
		}
	}
	needs = append(needs, need{in.ReleaseImage, "the cluster's release image (RELEASE_IMAGES url)"})
	var out []MissingAuth
	seen := map[string]bool{}
	for _, n := range needs {
		if n.image == "" {
			continue
		}
		reg := registryOfImage(n.image, byPath)
		if registryCovered(reg, ok, byPath) || seen[reg] {
			continue
		}
		seen[reg] = true
		out = append(out, MissingAuth{Registry: reg, Image: n.image, For: n.what})
	}
	return out, nil
}

// checkAuthEntry applies parseAuthConfig's rules to one auths entry.
func checkAuthEntry(key string, entry map[string]any) error {
	v, present := entry["auth"]
	if !present {
		return nil
	}
	s, isString := v.(string)
	if !isString {
		return &PullSecretAuthError{key, fmt.Sprintf("\"auth\" is %v, not a string", v)}
	}
	if s == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return &PullSecretAuthError{key, "\"auth\" is not base64"}
	}
	if !strings.Contains(string(b), ":") {
		return &PullSecretAuthError{key, "\"auth\" does not decode to user:password"}
	}
	return nil
}

// registryOfImage is the image's registry as the service names it: the
// host (release-4.18/4.19) or host/path (release-4.20+), digest and tag
// removed, with Docker Hub's normalisation.
func registryOfImage(image string, byPath bool) string {
	repo := image
	if i := strings.Index(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	host, rest, found := strings.Cut(repo, "/")
	if !found || !(strings.ContainsAny(host, ".:") || host == "localhost") {
		host, rest = "docker.io", repo
		if !strings.Contains(rest, "/") {
			rest = "library/" + rest
		}
	}
	if host == "index.docker.io" {
		host = "docker.io"
	}
	if !byPath {
		return host
	}
	return host + "/" + rest
}

// registryCovered reports whether reg, or (byPath) any leading path of it,
// needs no auth.
func registryCovered(reg string, ok map[string]bool, byPath bool) bool {
	in := func(r string) bool {
		return r == "registry.stage.redhat.io" || ok[r] || (r == "docker.io" && ok["https://index.docker.io/v1/"])
	}
	if in(reg) {
		return true
	}
	if !byPath {
		return false
	}
	for i := strings.LastIndex(reg, "/"); i > 0; i = strings.LastIndex(reg, "/") {
		reg = reg[:i]
		if in(reg) {
			return true
		}
	}
	return false
}
