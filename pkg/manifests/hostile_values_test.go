package manifests

import (
	"strings"
	"testing"

	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProxyValidation checks that proxy URLs are parsed for real (an
// unterminated IPv6 host is refused) and that the password of a refused
// proxy URL never appears in the error.
func TestProxyValidation(t *testing.T) {
	tests := []struct {
		name, proxy string
		want        []string
	}{
		{"valid with credentials", "http://user:s3cret@proxy.example.com:3128", nil},
		{"valid IPv6", "http://[fd00::1]:3128", nil},
		{"unterminated IPv6 host", "http://u:s3cret@[::1", []string{`install-config.yaml:22: proxy.httpProxy: Invalid value: "http://u:xxxxx@[::1": not a valid proxy URL`}},
		{"no host", "http://u:s3cret@", []string{`proxy.httpProxy: Invalid value: "http://u:xxxxx@": the proxy URL has no host`}},
		{"no scheme", "u:s3cret@proxy.example.com:3128", []string{`proxy.httpProxy: Invalid value: "u:xxxxx@proxy.example.com:3128": must be a URL with a scheme`}},
		{"unsupported scheme", "socks5://u:s3cret@proxy.example.com:1080", []string{`proxy.httpProxy: Unsupported value: "socks5://u:xxxxx@proxy.example.com:1080": supported values: "http"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y := testfixture.InstallConfig + "proxy:\n  httpProxy: '" + tc.proxy + "'\n"
			ic, lines := decodeT[InstallConfig](t, assetdir.InstallConfig, y)
			ic.SetDefaults()
			err := ValidateInstallConfig(ic, lines)
			assertErrs(t, err, tc.want...)
			if err != nil {
				assert.NotContains(t, err.Error(), "s3cret", "the proxy password must not be echoed")
			}
		})
	}
}

// TestHostnameLength checks the DNS limits on host names: 63 characters
// per label, 253 in all.
func TestHostnameLength(t *testing.T) {
	long63 := strings.Repeat("a", 63)
	long64 := strings.Repeat("a", 64)
	long254 := strings.Repeat(long63+".", 3) + strings.Repeat("b", 62) // 4*63+2 = 254
	require.Len(t, long254, 254)
	tests := []struct {
		name, hostname string
		want           []string
	}{
		{"63-character label", long63, nil},
		{"64-character label", long64, []string{"agent-config.yaml:5: hosts[0].hostname: Invalid value: \"" + long64 + "\": has a label longer than 63 characters"}},
		{"254 characters", long254, []string{"agent-config.yaml:5: hosts[0].hostname: Invalid value: \"" + long254 + "\": is longer than 253 characters"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y := edit(t, baseAgentConfig, "hostname: master-0", "hostname: "+tc.hostname)
			ac, lines := decodeT[AgentConfig](t, assetdir.AgentConfig, y)
			assertErrs(t, ValidateAgentConfig(ac, lines), tc.want...)
		})
	}
	t.Run("install-config host name", func(t *testing.T) {
		y := edit(t, testfixture.InstallConfig, "    ingressVIPs: [192.168.111.4]\n",
			"    ingressVIPs: [192.168.111.4]\n    hosts:\n    - name: "+long64+"\n      bootMACAddress: 52:54:00:00:00:01\n")
		ic, lines := decodeT[InstallConfig](t, assetdir.InstallConfig, y)
		ic.SetDefaults()
		assertErrs(t, ValidateInstallConfig(ic, lines), "platform.baremetal.hosts[0].name: Invalid value: \""+long64+"\": has a label longer than 63 characters")
	})
}

// TestDNSSearchEntries checks that a search domain cannot smuggle a second
// one (keyfiles separate search domains with ';').
func TestDNSSearchEntries(t *testing.T) {
	dns := "  networkConfig:\n    dns-resolver:\n      config:\n        server: [192.168.111.1]\n        search: [%s]\n    interfaces:"
	for _, tc := range []struct {
		name, search string
		want         []string
	}{
		{"valid", "example.com, lab.example.com", nil},
		{"semicolon", "'a.com;evil.com'", []string{`hosts[0].networkConfig.dns-resolver.config.search[0]: Invalid value: "a.com;evil.com": not a valid DNS search domain`}},
		{"space", "'a.com evil.com'", []string{`hosts[0].networkConfig.dns-resolver.config.search[0]: Invalid value: "a.com evil.com": not a valid DNS search domain`}},
		{"label too long", strings.Repeat("a", 64) + ".com", []string{"hosts[0].networkConfig.dns-resolver.config.search[0]: Invalid value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := edit(t, baseAgentConfig, "  networkConfig:\n    interfaces:", strings.Replace(dns, "%s", tc.search, 1))
			ac, lines := decodeT[AgentConfig](t, assetdir.AgentConfig, y)
			assertErrs(t, ValidateAgentConfig(ac, lines), tc.want...)
		})
	}
}

// FuzzRedactURL checks that RedactURL never panics and that the password
// of a URL's user information never survives it.
func FuzzRedactURL(f *testing.F) {
	for _, s := range []string{"http://u:p4ss@proxy:3128", "http://u:p4ss@[::1", "u:p4ss@host", "http://[::1]:80", "http://u@h", "%zz://a:b@c/d?e#f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := RedactURL(s)
		rest := s
		if i := strings.Index(rest, "://"); i >= 0 {
			rest = rest[i+3:]
		}
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			rest = rest[:i]
		}
		at := strings.LastIndex(rest, "@")
		if at < 0 {
			return
		}
		_, pass, ok := strings.Cut(rest[:at], ":")
		if !ok || len(pass) < 4 || strings.Count(s, pass) != 1 || strings.Contains("xxxxx", pass) {
			return
		}
		if strings.Contains(out, pass) {
			t.Fatalf("RedactURL(%q) = %q keeps the password %q", s, out, pass)
		}
	})
}

// TestNoProxyValidation checks noProxy as upstream does: no spaces, and
// every element an IP, a CIDR or a lower-case domain (optionally with a
// leading dot), or "*" alone; and that a proxy IP inside the cluster or
// service network is refused.
func TestNoProxyValidation(t *testing.T) {
	for _, tc := range []struct {
		name, proxy string
		want        []string
	}{
		{"valid", "  httpProxy: http://proxy.example.com:3128\n  noProxy: .example.com,192.168.0.0/16,10.1.2.3,fd00::1,localhost\n", nil},
		{"star", "  httpProxy: http://proxy.example.com:3128\n  noProxy: '*'\n", nil},
		{"wildcard", "  httpProxy: http://proxy.example.com:3128\n  noProxy: good.example.com,*.bad.example.com\n",
			[]string{`install-config.yaml:23: proxy.noProxy: Invalid value: "good.example.com,*.bad.example.com": each element of noProxy must be an IP, a CIDR or a domain without wildcard characters, which is violated by element 1 "*.bad.example.com"`}},
		{"spaces", "  httpProxy: http://proxy.example.com:3128\n  noProxy: a.example.com, b.example.com\n",
			[]string{`proxy.noProxy: Invalid value: "a.example.com, b.example.com": noProxy must not have spaces`}},
		{"proxy in service network", "  httpProxy: http://u:s3cret@172.30.1.25:3128\n",
			[]string{`install-config.yaml:22: proxy.httpProxy: Invalid value: "http://u:xxxxx@172.30.1.25:3128": proxy value is part of the service networks`}},
		{"proxy in cluster network", "  httpsProxy: http://10.128.1.25:3128\n",
			[]string{`proxy.httpsProxy: Invalid value: "http://10.128.1.25:3128": proxy value is part of the cluster networks`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ic, lines := decodeT[InstallConfig](t, assetdir.InstallConfig, testfixture.InstallConfig+"proxy:\n"+tc.proxy)
			ic.SetDefaults()
			assertErrs(t, ValidateInstallConfig(ic, lines), tc.want...)
		})
	}
}
