// Package redact hides the secrets a URL can carry (the password of its user information, the values of its query: tokens, signatures) wherever agentiso prints it.
package redact

import (
	"context"
	"log/slog"
	"net/url"
	"sort"
	"strings"
)

// Mask replaces a hidden secret.
const Mask = "xxxxx"

// URL returns s with the password of its user information and every query
// value replaced by Mask ("http://admin:xxxxx@host/x.iso?sig=xxxxx"). A
// value that does not parse as a URL keeps all but the password of what
// looks like user information.
func URL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return Password(s)
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{Mask}
		}
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// Password returns s with only the password of its user information
// replaced by Mask ("http://user:xxxxx@host"), also when s does not parse as
// a URL; the rest of s, query included, is kept.
func Password(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	prefix, user, _, rest, ok := splitUserinfo(s)
	if !ok {
		return s
	}
	return prefix + user + ":" + Mask + rest
}

// PasswordIn returns the password of s's user information, "" when it has
// none: what Password masks, also when s does not parse as a URL.
func PasswordIn(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		p, _ := u.User.Password()
		return p
	}
	_, _, pass, _, _ := splitUserinfo(s)
	return pass
}

// splitUserinfo splits what looks like "scheme://user:pass@rest" without
// parsing it as a URL (it may not parse): prefix "scheme://", the user,
// the password and "@rest"; ok is false without a password.
func splitUserinfo(s string) (prefix, user, pass, rest string, ok bool) {
	rest = s
	if i := strings.Index(s, "://"); i >= 0 {
		prefix, rest = s[:i+3], s[i+3:]
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	at := strings.LastIndex(authority, "@")
	if at < 0 {
		return "", "", "", "", false
	}
	user, pass, ok = strings.Cut(authority[:at], ":")
	if !ok {
		return "", "", "", "", false
	}
	return prefix, user, pass, rest[at:], true
}

// minSecret is the shortest secret replaced wherever it appears in text;
// a shorter one cannot be told from ordinary text, and is hidden only
// where the whole URL appears.
const minSecret = 4

// Scrubber hides, in any text, the secrets of a few URLs the user gave:
// each URL (also as net/http prints it, password as "***") becomes its
// URL form, and each secret of at least 4 characters becomes Mask.
type Scrubber struct{ r *strings.Replacer }

// NewScrubber returns a Scrubber for urls (empty ones are ignored).
func NewScrubber(urls ...string) *Scrubber {
	var whole, secrets []string
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if raw == "" || err != nil {
			continue
		}
		shown := URL(raw)
		if shown == raw {
			continue
		}
		whole = append(whole, raw, shown)
		if u.User != nil {
			if p, ok := u.User.Password(); ok {
				stripped := *u
				stripped.User = url.UserPassword(u.User.Username(), "***")
				whole = append(whole, stripped.String(), shown)
				secrets = append(secrets, p, url.QueryEscape(p), url.PathEscape(p))
			}
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				secrets = append(secrets, v, url.QueryEscape(v))
			}
		}
	}
	// Longer secrets first: one may hold another.
	sort.SliceStable(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	pairs := whole
	seen := map[string]bool{}
	for _, s := range secrets {
		if len(s) >= minSecret && !seen[s] {
			seen[s] = true
			pairs = append(pairs, s, Mask)
		}
	}
	if len(pairs) == 0 {
		return &Scrubber{}
	}
	return &Scrubber{r: strings.NewReplacer(pairs...)}
}

// String hides the secrets in s.
func (s *Scrubber) String(text string) string {
	if s == nil || s.r == nil {
		return text
	}
	return s.r.Replace(text)
}

// Error wraps err so that its message hides the secrets; errors.Is and
// errors.As still see err.
func (s *Scrubber) Error(err error) error {
	if err == nil || s == nil || s.r == nil || s.String(err.Error()) == err.Error() {
		return err
	}
	return &scrubbed{err: err, msg: s.String(err.Error())}
}

type scrubbed struct {
	err error
	msg string
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// Handler wraps h so that log messages and attribute values hide the
// secrets.
func (s *Scrubber) Handler(h slog.Handler) slog.Handler {
	if s == nil || s.r == nil {
		return h
	}
	return &handler{h: h, s: s}
}

type handler struct {
	h slog.Handler
	s *Scrubber
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.s.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.s.String(v.String()))
	case slog.KindGroup:
		var as []any
		for _, g := range v.Group() {
			as = append(as, h.attr(g))
		}
		return slog.Group(a.Key, as...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.s.String(err.Error()))
		}
		return slog.String(a.Key, h.s.String(v.String()))
	}
	return slog.Attr{Key: a.Key, Value: v}
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = h.attr(a)
	}
	return &handler{h: h.h.WithAttrs(out), s: h.s}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{h: h.h.WithGroup(name), s: h.s}
}
