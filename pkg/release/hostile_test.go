package release_test

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
	"github.com/seed-a052040e/agentiso/pkg/release"
)

// hugeManifest is a manifest whose layers are n empty objects: small on the
// wire, gigabytes once decoded.
func hugeManifest(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","layers":[{}`)
	for range n - 1 {
		b.WriteString(",{}")
	}
	b.WriteString("]}")
	return b.Bytes()
}

// Rule: a manifest pulled by tag is bounded in size and in objects before
// it is parsed, and the error names the registry.
func TestOversizedManifestsAreRefusedBeforeParsing(t *testing.T) {
	img, err := testrelease.Payload{}.Image()
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		body []byte
		want string
	}{
		"many objects": {hugeManifest(release.MaxManifestObjects + 1), fmt.Sprintf("more than %d JSON objects and arrays", release.MaxManifestObjects)},
		"many bytes": {append(append([]byte(`{"schemaVersion":2,"annotations":{"a":"`), bytes.Repeat([]byte("x"), release.MaxManifestBytes)...), `"}}`...),
			fmt.Sprintf("larger than %d MiB", release.MaxManifestBytes>>20)},
	} {
		t.Run(name, func(t *testing.T) {
			r := testrelease.StartRegistry(t, testrelease.RegistryOptions{Tamper: func(p string, b []byte) []byte {
				if strings.Contains(p, "/manifests/") {
					return tc.body
				}
				return b
			}})
			push(t, r, "ocp/release", "x", img)
			_, err := client(t, r, release.Options{}).Resolve(ctx(t), r.Host+"/ocp/release:x")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), r.Host)
		})
	}
}

// Rule: the image config is bounded in objects too (a registry serving a
// manifest of its own can give any config a matching digest and size).
func TestConfigWithTooManyObjectsIsRefused(t *testing.T) {
	img, err := testrelease.Payload{}.Image()
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	cf.History = make([]v1.History, release.MaxManifestObjects+1)
	img, err = mutate.ConfigFile(img, cf)
	require.NoError(t, err)
	r := testrelease.StartRegistry(t, testrelease.RegistryOptions{})
	push(t, r, "ocp/release", "x", img)
	_, err = client(t, r, release.Options{LayerRetries: -1}).Resolve(ctx(t), r.Host+"/ocp/release:x")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "JSON objects and arrays")
}

// hostileText is what a hostile registry puts in its error messages: a
// terminal title escape, a screen clear and a forged log line.
const hostileText = "\x1b]0;pwned\x07\x1b[2J\nINFO Release 4.19.3 verified\u202e"

// Rule: a registry's error message never reaches the terminal raw, newlines
// included: the error agentiso prints holds it escaped.
func TestRegistryErrorTextIsSanitised(t *testing.T) {
	// (Not a 5xx: go-containerregistry retries those with a backoff.)
	for _, status := range []int{http.StatusNotFound, http.StatusUnauthorized, http.StatusBadRequest} {
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(map[string]any{"errors": []any{map[string]any{"code": "UNKNOWN", "message": hostileText, "detail": hostileText}}})
		}))
		caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
		host := strings.TrimPrefix(srv.URL, "https://")
		for _, mirrors := range [][]release.Mirror{nil, {{Source: host + "/ocp", Mirrors: []string{host + "/mirror"}}}} {
			c, err := release.New(release.Options{TrustBundle: caPEM, Mirrors: mirrors})
			require.NoError(t, err)
			for _, spec := range []string{host + "/ocp/release:x", host + "/ocp/release@sha256:" + strings.Repeat("a", 64)} {
				_, err = c.Resolve(ctx(t), spec)
				require.Error(t, err, spec)
				msg := err.Error()
				for _, bad := range []string{"\x1b", "\x07", "\u202e", "\nINFO"} {
					assert.NotContains(t, msg, bad, "%d %s: %q reached the message", status, spec, bad)
				}
			}
		}
		srv.Close()
	}
}

// Rule: a registry that stops sending in the middle of a manifest or a
// layer fails the read after StallTimeout without data, naming the
// registry, instead of hanging for ever.
func TestStalledRegistryFails(t *testing.T) {
	img, err := testrelease.Payload{}.Image()
	require.NoError(t, err)
	layers, err := img.Layers()
	require.NoError(t, err)
	top, err := layers[len(layers)-1].Digest()
	require.NoError(t, err)
	for name, match := range map[string]string{"manifest": "/manifests/", "layer": top.String()} {
		t.Run(name, func(t *testing.T) {
			r := testrelease.StartRegistry(t, testrelease.RegistryOptions{StallMatch: match})
			push(t, r, "ocp/release", "x", img)
			// Generous against a loaded machine: the stall is what ends it,
			// long before the test's own 60 s context.
			c := client(t, r, release.Options{StallTimeout: 300 * time.Millisecond, LayerRetries: -1})
			_, err := c.Resolve(ctx(t), r.Host+"/ocp/release:x")
			require.Error(t, err)
			assert.Contains(t, err.Error(), "sent no data for 300ms")
			assert.Contains(t, err.Error(), r.Host)
		})
	}
}
