package release

import (
	"fmt"
	"io"
	"strings"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
	"github.com/seed-a052040e/agentiso/pkg/releasepolicy"
)

// Description is what agentiso says of a release (release info): what the
// pull spec resolves to, where it was read and given, whether agentiso
// supports it, and the RHCOS live ISO it boots.
type Description struct {
	PullSpec      string   `json:"pullSpec"`
	Pinned        string   `json:"pinned"`
	Digest        string   `json:"digest,omitempty"`
	Version       string   `json:"version"`
	Arch          string   `json:"arch"`
	Architectures []string `json:"architectures"`
	Source        string   `json:"source"`
	// Origin is where the release was given (--release-image, its
	// environment variable or config-file key, IMAGE, the ClusterImageSet).
	Origin string `json:"origin"`
	// Support is the supported-release policy's verdict (Support).
	Support         string            `json:"support"`
	From            string            `json:"from,omitempty"`
	Attempts        []string          `json:"attempts,omitempty"`
	MachineOSImages string            `json:"machineOSImages,omitempty"`
	RHCOS           *RHCOSDescription `json:"rhcos,omitempty"`
	Warnings        []string          `json:"warnings,omitempty"`
}

// RHCOSDescription is the RHCOS live ISO of a release, from its CoreOS
// stream (FromStream "payload"), or unknown (FromStream "unknown": the
// payload was not read or carries no stream).
type RHCOSDescription struct {
	Stream     string `json:"stream,omitempty"`
	FromStream string `json:"streamFrom"` // "payload" or "unknown"
	Arch       string `json:"arch"`
	Release    string `json:"release,omitempty"`
	FileName   string `json:"fileName,omitempty"`
	URL        string `json:"url,omitempty"`
	MirrorURL  string `json:"mirrorURL,omitempty"`
	SHA256     string `json:"sha256,omitempty"`
	CachePath  string `json:"cachePath,omitempty"`
	Cached     bool   `json:"cached"`
	// BaseISOFrom is where `create image` would take the base ISO from
	// (without --base-iso).
	BaseISOFrom string `json:"baseISOFrom"`
}

// WriteText prints the description one value a line. Most of it is what a
// registry said (image references, the stream, attempts), so every value
// is escaped (internal/termsafe): it can neither drive the terminal nor
// add a line.
func (r *Description) WriteText(w io.Writer) error {
	q := termsafe.String
	var b strings.Builder
	fmt.Fprintf(&b, "Release:        %s\n", q(r.PullSpec))
	fmt.Fprintf(&b, "Pinned:         %s\n", q(r.Pinned))
	fmt.Fprintf(&b, "Version:        %s\n", q(r.Version))
	fmt.Fprintf(&b, "Architecture:   %s\n", q(r.Arch))
	fmt.Fprintf(&b, "Architectures:  %s\n", q(strings.Join(r.Architectures, ", ")))
	fmt.Fprintf(&b, "Source:         %s\n", q(r.Source))
	fmt.Fprintf(&b, "Given by:       %s\n", q(r.Origin))
	fmt.Fprintf(&b, "Supported:      %s\n", q(r.Support))
	if r.From != "" {
		fmt.Fprintf(&b, "Read from:      %s\n", q(r.From))
	}
	for i, a := range r.Attempts {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, q(a))
	}
	if r.MachineOSImages != "" {
		fmt.Fprintf(&b, "machine-os-images: %s\n", q(r.MachineOSImages))
	}
	if c := r.RHCOS; c != nil && c.FromStream == "unknown" {
		fmt.Fprintf(&b, "RHCOS stream:   unknown\n")
		fmt.Fprintf(&b, "Base ISO from:  %s\n", q(c.BaseISOFrom))
	} else if c != nil {
		fmt.Fprintf(&b, "RHCOS stream:   %s (%s)\n", q(c.Stream), q(c.FromStream))
		fmt.Fprintf(&b, "RHCOS ISO:      %s %s %s\n", q(c.Release), q(c.Arch), q(c.FileName))
		fmt.Fprintf(&b, "  URL:          %s\n", q(c.URL))
		fmt.Fprintf(&b, "  SHA256:       %s\n", q(c.SHA256))
		fmt.Fprintf(&b, "  cache:        %s (cached: %t)\n", q(c.CachePath), c.Cached)
		fmt.Fprintf(&b, "Base ISO from:  %s\n", q(c.BaseISOFrom))
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(&b, "Warning:        %s\n", q(wn))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Support is the supported-release policy's verdict on version
// (pkg/releasepolicy), as release info prints it.
func Support(version string) string {
	sp, err := releasepolicy.For(version)
	if err != nil {
		return "no: " + err.Error()
	}
	txt := fmt.Sprintf("yes: rules of assisted-service %s (authentication %s, fencing: %s, release matched by %s)", sp.Branch(), sp.Auth, sp.Fencing, sp.Match)
	if w := sp.Warning(); w != "" {
		txt += "; " + w
	}
	return txt
}
