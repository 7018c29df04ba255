package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRedactSetting(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:pw@proxy:3128":                          "http://user:xxxxx@proxy:3128",
		"https://isos.lab/rhcos.iso?X-Amz-Signature=abc&x=1": "https://isos.lab/rhcos.iso?X-Amz-Signature=xxxxx&x=xxxxx",
		"https://isos.lab/rhcos.iso":                         "https://isos.lab/rhcos.iso",
		"http://user:p%ZZ@host/x":                            "http://user:xxxxx@host/x",
		"quay.io/ocp/release@sha256:abc":                     "quay.io/ocp/release@sha256:abc",
		"/srv/isos/rhcos.iso":                                "/srv/isos/rhcos.iso",
		"":                                                   "",
	} {
		assert.Equal(t, want, redactValue(in), in)
	}
}
