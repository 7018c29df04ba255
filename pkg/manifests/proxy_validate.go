package manifests

import (
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/seed-a052040e/agentiso/internal/redact"
)

// RedactURL hides the password of a URL's user information
// ("http://user:xxxxx@host"), also when the URL does not parse, so errors
// and logs never carry proxy credentials (the query is kept: a proxy URL
// has none that is secret).
func RedactURL(s string) string { return redact.Password(s) }

// validateProxyURL checks one proxy URL as a URL with one of schemes and a
// host, reporting it with its password hidden.
func validateProxyURL(e *errs, field, v string, schemes ...string) {
	shown := RedactURL(v)
	if !strings.Contains(v, "://") {
		e.invalid(field, shown, "must be a URL with a scheme, e.g. http://proxy.example.com:3128")
		return
	}
	u, err := url.Parse(v)
	if err != nil {
		var ue *url.Error
		msg := err.Error()
		if asURLError(err, &ue) {
			msg = ue.Err.Error()
		}
		e.invalid(field, shown, "not a valid proxy URL: %s", msg)
		return
	}
	if !slices.Contains(schemes, u.Scheme) {
		e.unsupported(field, shown, schemes...)
		return
	}
	if u.Hostname() == "" {
		e.invalid(field, shown, "the proxy URL has no host; use e.g. %s://proxy.example.com:3128", u.Scheme)
	}
}

func asURLError(err error, target **url.Error) bool {
	ue, ok := err.(*url.Error)
	if ok {
		*target = ue
	}
	return ok
}

// validateNoProxy checks noProxy as upstream does: "*" alone, or a
// comma-separated list without spaces of IPs, CIDRs and lower-case
// domains (a leading dot allowed, no wildcards).
func validateNoProxy(e *errs, v string) {
	if v == "" || v == "*" {
		return
	}
	if strings.ContainsAny(v, " \t") {
		e.invalid("proxy.noProxy", v, "noProxy must not have spaces")
	}
	for i, el := range strings.Split(v, ",") {
		el = strings.TrimSpace(el)
		if _, err := netip.ParseAddr(el); err == nil {
			continue
		}
		if _, err := netip.ParsePrefix(el); err == nil {
			continue
		}
		if d := strings.TrimPrefix(el, "."); dns1123Subdomain.MatchString(d) && dnsLengthProblem(d) == "" {
			continue
		}
		e.invalid("proxy.noProxy", v, "each element of noProxy must be an IP, a CIDR or a domain without wildcard characters, which is violated by element %d %q", i, el)
	}
}

// validateProxyNotInNetworks refuses a proxy whose host is an IP inside
// the cluster or service network (those addresses belong to pods and
// services, not to a proxy outside the cluster).
func validateProxyNotInNetworks(e *errs, field, v string, n *Networking) {
	u, err := url.Parse(v)
	if err != nil || n == nil {
		return
	}
	ip, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return
	}
	for _, s := range n.ServiceNetwork {
		if pfx, err := netip.ParsePrefix(s); err == nil && pfx.Contains(ip) {
			e.invalid(field, RedactURL(v), "proxy value is part of the service networks")
			return
		}
	}
	for _, c := range n.ClusterNetwork {
		if pfx, err := netip.ParsePrefix(c.CIDR); err == nil && pfx.Contains(ip) {
			e.invalid(field, RedactURL(v), "proxy value is part of the cluster networks")
			return
		}
	}
}
