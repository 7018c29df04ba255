package nodejoin

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
)

// uniqueNoProxy is noProxy (the cluster's Proxy spec.noProxy) with each
// entry once, in the order first seen, and no empty entry. The new hosts'
// own assisted-service refuses an InfraEnv whose noProxy lists an entry
// twice ("duplicate no_proxy entry defined", assisted-service
// pkg/validations/validations.go ValidateNoProxyFormat, release-4.20), and
// an empty entry is no destination; the cluster itself merges spec.noProxy
// into a set for its status.noProxy (the cluster-network-operator's
// proxyconfig controller), and upstream's node-joiner passes spec.noProxy
// as read (openshift/installer pkg/asset/agent/joiner/clusterinfo.go
// retrieveProxy, commit c1436495). note says what was dropped, "" when
// nothing was.
func uniqueNoProxy(noProxy string) (out, note string) {
	if noProxy == "" {
		return "", ""
	}
	seen := map[string]bool{}
	var keep, twice []string
	empty := false
	for _, e := range strings.Split(noProxy, ",") {
		switch {
		case e == "":
			empty = true
		case seen[e]:
			if !contains(twice, e) {
				twice = append(twice, e)
			}
		default:
			seen[e] = true
			keep = append(keep, e)
		}
	}
	out = strings.Join(keep, ",")
	if len(twice) == 0 && !empty {
		return out, ""
	}
	what := strings.Join(twice, ", ") + " more than once"
	switch {
	case len(twice) == 0:
		what = "an empty entry"
	case empty:
		what += " and an empty entry"
	}
	return out, fmt.Sprintf("the cluster's Proxy spec.noProxy lists %s: the new hosts get each entry once (their assisted-service refuses a duplicate no_proxy entry; the cluster's own status.noProxy is a set too)", what)
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// uniqueCertificates is bundle (the user-ca-bundle's PEM) with each
// certificate once, in the order first seen, written back as its PEM
// blocks only: text around them (comments) is dropped, which the new
// hosts' assisted-service would refuse after the last certificate
// (internal/cluster/validations ValidatePEMCertificateBundle,
// release-4.20). A bundle in which no PEM block can be read is returned as
// it is, for the ISO's own checks to refuse. note names the certificates
// given more than once, "" when none was.
func uniqueCertificates(bundle string) (out, note string) {
	rest := []byte(bundle)
	var blocks []*pem.Block
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		blocks = append(blocks, b)
	}
	if len(blocks) == 0 {
		return bundle, ""
	}
	var buf bytes.Buffer
	seen := map[string]bool{}
	var twice []string
	for _, b := range blocks {
		k := b.Type + "\x00" + string(b.Bytes)
		if seen[k] {
			name := "a " + strings.ToLower(b.Type) + " block"
			if c, err := x509.ParseCertificate(b.Bytes); err == nil {
				name = c.Subject.String()
			}
			if !contains(twice, name) {
				twice = append(twice, name)
			}
			continue
		}
		seen[k] = true
		// Blocks read back from PEM encode again.
		_ = pem.Encode(&buf, b)
	}
	if len(twice) == 0 {
		return buf.String(), ""
	}
	word := "certificates"
	if len(twice) == 1 {
		word = "certificate"
	}
	return buf.String(), fmt.Sprintf("configmap openshift-config/user-ca-bundle holds %d %s more than once (%s): the new hosts get each certificate once",
		len(twice), word, strings.Join(twice, "; "))
}
