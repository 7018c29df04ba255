package manifests

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNoProxyGetsRendezvousMachineNetwork(t *testing.T) {
	ic := clusterIC(t)
	ic.Proxy = &Proxy{HTTPProxy: "http://p:3128", NoProxy: "example.com"}
	p := NoProxyWithRendezvous(ic, "10.0.0.7")
	assert.Equal(t, "example.com,10.0.0.0/24", p.NoProxy)
	assert.Equal(t, "example.com", ic.Proxy.NoProxy, "input is not modified")
	ic.Proxy.NoProxy = "10.0.0.0/24"
	assert.Equal(t, "10.0.0.0/24", NoProxyWithRendezvous(ic, "10.0.0.7").NoProxy)
}
