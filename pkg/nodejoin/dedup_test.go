package nodejoin

import (
	"encoding/pem"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUniqueNoProxy(t *testing.T) {
	for in, want := range map[string]struct{ out, note string }{
		"":                        {"", ""},
		"*":                       {"*", ""},
		".example.com,10.0.0.0/8": {".example.com,10.0.0.0/8", ""},
		"a,b,a,c,b,a":             {"a,b,c", "lists a, b more than once:"},
		"a,,b":                    {"a,b", "lists an empty entry:"},
		"a,,a":                    {"a", "lists a more than once and an empty entry:"},
		"A,a":                     {"A,a", ""}, // compared as the cluster's set compares them: exactly
		",":                       {"", "lists an empty entry:"},
	} {
		out, note := uniqueNoProxy(in)
		assert.Equal(t, want.out, out, in)
		if want.note == "" {
			assert.Empty(t, note, in)
		} else {
			assert.Contains(t, note, want.note, in)
		}
	}
}

func TestUniqueCertificates(t *testing.T) {
	a := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not DER a")}))
	b := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not DER b")}))
	out, note := uniqueCertificates(a + b)
	assert.Equal(t, a+b, out)
	assert.Empty(t, note)
	out, note = uniqueCertificates("# comment\n" + a + "\n" + b + a + a + "trailing text\n")
	assert.Equal(t, a+b, out, "each block once, the text around them dropped")
	assert.Equal(t, "configmap openshift-config/user-ca-bundle holds 1 certificate more than once (a certificate block): the new hosts get each certificate once", note)
	out, note = uniqueCertificates("-----BEGIN CERTIFICATE-----\nMIRROR\n-----END CERTIFICATE-----\n")
	assert.Equal(t, "-----BEGIN CERTIFICATE-----\nMIRROR\n-----END CERTIFICATE-----\n", out, "no readable PEM block: kept as read")
	assert.Empty(t, note)
}

func FuzzUniqueNoProxy(f *testing.F) {
	for _, s := range []string{"", "*", "a,b,a", ",,", ".example.com,10.0.0.0/8,.example.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, _ := uniqueNoProxy(in)
		again, note := uniqueNoProxy(out)
		assert.Equal(t, out, again, "idempotent")
		assert.Empty(t, note)
		if out == "" {
			return
		}
		seen := map[string]bool{}
		for _, e := range strings.Split(out, ",") {
			assert.NotEmpty(t, e)
			assert.False(t, seen[e], e)
			seen[e] = true
			assert.Contains(t, ","+in+",", ","+e+",")
		}
	})
}

func FuzzUniqueCertificates(f *testing.F) {
	c := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1, 2, 3}}))
	for _, s := range []string{"", c, c + c, "x\n" + c + "y\n" + c, "-----BEGIN CERTIFICATE-----\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, _ := uniqueCertificates(in)
		again, note := uniqueCertificates(out)
		assert.Equal(t, out, again, "idempotent")
		assert.Empty(t, note)
	})
}
