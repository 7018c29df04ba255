package live

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProxyRequiresPercentEncodedCredentials(t *testing.T) {
	backend := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "mirror")
	}))
	defer backend.Close()
	p, err := StartProxy(context.Background(), "127.0.0.1:0", "us@er", "p%ss")
	require.NoError(t, err)
	defer p.Close()

	get := func(proxyURL string) (int, string, error) {
		u, err := url.Parse(proxyURL)
		require.NoError(t, err)
		c := &http.Client{Transport: &http.Transport{
			Proxy:           http.ProxyURL(u),
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // test server
		}}
		resp, err := c.Get(backend.URL)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}

	code, body, err := get("http://us%40er:p%25ss@" + p.Addr)
	require.NoError(t, err)
	assert.Equal(t, 200, code)
	assert.Equal(t, "mirror", body)

	_, _, err = get("http://us%40er:wrong@" + p.Addr)
	require.Error(t, err, "a wrong password must not tunnel")

	reqs := p.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, ProxyRequest{Method: "CONNECT", Target: backend.Listener.Addr().String(), Authorized: true}, reqs[0])
	assert.False(t, reqs[1].Authorized)
}
