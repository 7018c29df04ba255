package redact

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://admin:secret@h/x.iso":     "http://admin:xxxxx@h/x.iso",
		"https://h/x.iso?sig=abc&se=2026": "https://h/x.iso?se=xxxxx&sig=xxxxx",
		"https://h/x.iso":                 "https://h/x.iso",
		"not a url":                       "not a url",
		"http://u:p@h:bad port/x":         "http://u:xxxxx@h:bad port/x",
		"https://user@h/x":                "https://user@h/x",
	} {
		assert.Equal(t, want, URL(in), in)
	}
}

func TestScrubber(t *testing.T) {
	raw := "http://admin:s3cretpw@127.0.0.1:8080/rhcos.iso?sig=t0kenvalue"
	s := NewScrubber(raw, "", "https://plain.example.com/x")
	text := fmt.Sprintf("download %s: Get %q: EOF; sidecar http://admin:s3cretpw@127.0.0.1:8080/rhcos.iso.sha256?sig=t0kenvalue",
		raw, "http://admin:***@127.0.0.1:8080/rhcos.iso?sig=t0kenvalue")
	out := s.String(text)
	assert.NotContains(t, out, "s3cretpw")
	assert.NotContains(t, out, "t0kenvalue")
	assert.Contains(t, out, "http://admin:xxxxx@127.0.0.1:8080/rhcos.iso?sig=xxxxx")
	assert.Equal(t, "https://plain.example.com/x", s.String("https://plain.example.com/x"))

	err := s.Error(fmt.Errorf("base ISO %s: %w", raw, fs.ErrNotExist))
	assert.NotContains(t, err.Error(), "s3cretpw")
	assert.True(t, errors.Is(err, fs.ErrNotExist))

	var b strings.Builder
	log := slog.New(s.Handler(slog.NewTextHandler(&b, nil))).With("base", raw)
	log.Warn("No checksum for "+raw, "url", raw, "err", errors.New("GET "+raw), slog.Group("g", "u", raw))
	assert.NotContains(t, b.String(), "s3cretpw")
	assert.NotContains(t, b.String(), "t0kenvalue")
	assert.Contains(t, b.String(), "xxxxx")
}

// URL never panics, and a password it can see never survives.
func FuzzURL(f *testing.F) {
	f.Add("http://admin:secret@h/x.iso?sig=abc")
	f.Add("http://u:p@h:bad port/x")
	f.Add("not a url")
	f.Fuzz(func(t *testing.T, s string) {
		out := URL(s)
		if u, err := url.Parse(s); err == nil && u.User != nil {
			if p, ok := u.User.Password(); ok && len(p) >= 8 && !strings.Contains(u.User.Username(), p) && !strings.Contains(u.Host+u.Path, p) {
				assert.NotContains(t, out, p)
			}
		}
		_ = NewScrubber(s).String(s + " " + out)
	})
}

func TestPasswordIn(t *testing.T) {
	for in, want := range map[string]string{
		"http://u:p4ss@h/x":                      "p4ss",
		`redfish://admin:Pa"ss%zzSECRET@h/x`:     `Pa"ss%zzSECRET`,
		"http://u@h/x":                           "",
		"http://h/x?u:p@h":                       "",
		"u:pw@h":                                 "pw",
		"http://u:p%41ss@h/x":                    "pAss",
		"redfish://admin:a:b@c@h/redfish/v1/x/y": "a:b@c",
	} {
		assert.Equal(t, want, PasswordIn(in), in)
	}
}
