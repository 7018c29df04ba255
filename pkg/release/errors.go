package release

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

// UnauthorizedError: the registry refused the credentials (or their
// absence).
type UnauthorizedError struct {
	Registry  string // host[:port] that refused
	Location  string // pull spec that was requested
	AuthEntry string // pull secret "auths" key used; empty when none matched
	Status    int
	Err       error
}

func (e *UnauthorizedError) Error() string {
	used := "no entry of the pull secret matches it, so the request was anonymous; add an \"auths\" entry for " + e.Registry
	if e.AuthEntry != "" {
		used = fmt.Sprintf("the pull secret entry %q was used; check that its credentials are valid for %s", e.AuthEntry, e.Location)
	}
	return fmt.Sprintf("registry %s refused access to %s (HTTP %d): %s", e.Registry, e.Location, e.Status, used)
}

func (e *UnauthorizedError) Unwrap() error { return e.Err }

// UnknownCAError: the registry's certificate chain does not lead to a
// trusted CA.
type UnknownCAError struct {
	Registry string
	// Subject and Issuer of the certificate the registry presented.
	Subject, Issuer string
	DNSNames        []string
	// Bundle describes the trust store that was tried.
	Bundle string
	Err    error
}

func (e *UnknownCAError) Error() string {
	subj := e.Subject
	if len(e.DNSNames) > 0 {
		subj += " (DNS " + strings.Join(e.DNSNames, ", ") + ")"
	}
	return fmt.Sprintf("registry %s presented a certificate for %s issued by %q, which is not signed by any CA in %s; add the CA that issued it to additionalTrustBundle in install-config.yaml",
		e.Registry, termsafe.String(subj), termsafe.String(e.Issuer), e.Bundle)
}

func (e *UnknownCAError) Unwrap() error { return e.Err }

// MirrorMissError: no location (mirror or source) served the reference.
type MirrorMissError struct {
	Ref      string // the user's spelling
	Attempts []Attempt
}

func (e *MirrorMissError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s could not be found at any location; tried in order:", e.Ref)
	for i, a := range e.Attempts {
		fmt.Fprintf(&b, "\n  %d. %s", i+1, a)
	}
	return b.String()
}

// Unwrap returns the errors of the contacted locations.
func (e *MirrorMissError) Unwrap() []error {
	var out []error
	for _, a := range e.Attempts {
		if a.Err != nil {
			out = append(out, a.Err)
		}
	}
	return out
}

// NotReleaseError: the image is not an OpenShift release payload.
type NotReleaseError struct {
	Ref    string
	Digest string
	Reason string
}

func (e *NotReleaseError) Error() string {
	return fmt.Sprintf("%s (%s) is not an OpenShift release image: %s", e.Ref, e.Digest, termsafe.String(e.Reason))
}

// ArchMismatchError: the release cannot install the wanted architecture.
type ArchMismatchError struct {
	Ref       string
	Want      string   // architecture the cluster needs
	Available []string // architectures the release provides
	// WantFrom, when set, says where Want came from for hosts added to an
	// installed cluster (node-image); empty: install-config.yaml's
	// controlPlane.architecture.
	WantFrom string
}

func (e *ArchMismatchError) Error() string {
	if e.WantFrom != "" {
		return fmt.Sprintf("release %s is for %s, but the new hosts are %s (%s); use a release for %s or the -multi payload",
			e.Ref, strings.Join(e.Available, ", "), e.Want, e.WantFrom, e.Want)
	}
	return fmt.Sprintf("release %s is for %s, but the cluster is %s (controlPlane.architecture in install-config.yaml); use a release for %s or the -multi payload",
		e.Ref, strings.Join(e.Available, ", "), e.Want, e.Want)
}

// remoteError is an error whose text comes, at least in part, from a
// registry (its error messages, a layer's content): it is shown through
// termsafe.String, newlines included, so that it can neither drive the
// terminal nor forge a log line.
type remoteError struct{ err error }

func (e *remoteError) Error() string { return termsafe.String(e.err.Error()) }
func (e *remoteError) Unwrap() error { return e.err }

// safeError is what the Client's methods return: err itself when it is one
// of the errors above (whose messages show remote text escaped and keep
// their own line breaks), else err with its whole text escaped.
func safeError(err error) error {
	switch err.(type) {
	case nil:
		return nil
	case *UnauthorizedError, *UnknownCAError, *MirrorMissError, *NotReleaseError, *ArchMismatchError, *remoteError:
		return err
	}
	return &remoteError{err}
}

// classify turns transport failures into the actionable errors above.
func (c *Client) classify(err error, location, registry string) error {
	var te *transport.Error
	if errors.As(err, &te) && (te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden) {
		key, _ := c.secret.lookup(repoOf(location))
		return &UnauthorizedError{Registry: registry, Location: location, AuthEntry: key, Status: te.StatusCode, Err: err}
	}
	var cve *tls.CertificateVerificationError
	if errors.As(err, &cve) && len(cve.UnverifiedCertificates) > 0 {
		var ua x509.UnknownAuthorityError
		if errors.As(cve.Err, &ua) || errors.As(err, &ua) {
			leaf := cve.UnverifiedCertificates[0]
			return &UnknownCAError{Registry: registry, Subject: leaf.Subject.String(), Issuer: leaf.Issuer.String(),
				DNSNames: leaf.DNSNames, Bundle: c.bundleDesc, Err: err}
		}
	}
	return err
}

// repoOf strips the tag or digest of a pull spec.
func repoOf(spec string) string {
	if i := strings.Index(spec, "@"); i >= 0 {
		return spec[:i]
	}
	if i := strings.LastIndex(spec, ":"); i > strings.LastIndex(spec, "/") {
		return spec[:i]
	}
	return spec
}
