package mirror

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/ignition"
	"github.com/seed-a052040e/agentiso/pkg/regstore"
)

// TestRegistryConfigIsDistributions parses the lab image's
// /etc/registry/config.yaml with the distribution registry's own
// configuration package (v3.0.0, the version hack/build-distribution.sh
// builds; a test dependency, not in agentiso's binary) under the
// environment each unit that runs the payload's docker-registry sets, and
// runs the registry's application on the result: what `distribution serve
// /etc/registry/config.yaml` does with it on a host.
func TestRegistryConfigIsDistributions(t *testing.T) {
	logrus.SetOutput(io.Discard) // the registry logs every request
	for _, tc := range []struct {
		name     string
		env      []string
		readOnly bool
		cert     string
	}{
		// agentiso's start-local-registry.service (pkg/ignition), which
		// sets what the Machine Config Operator's iri-registry.service sets
		{name: "agentiso", env: ignition.PayloadRegistryEnv(), readOnly: true, cert: "/certs/tls.crt"},
		// the appliance's live ISO unit (local-registry-ocp)
		{name: "appliance", env: []string{"REGISTRY_HTTP_ADDR=0.0.0.0:22625", "REGISTRY_HTTP_TLS_CERTIFICATE=certs/tls.crt", "REGISTRY_HTTP_TLS_KEY=certs/tls.key"}, cert: "certs/tls.crt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, e := range tc.env {
				k, v, ok := strings.Cut(e, "=")
				require.True(t, ok, e)
				t.Setenv(k, v)
			}
			cfg, err := configuration.Parse(strings.NewReader(registryConfig))
			require.NoError(t, err)
			assert.Equal(t, "filesystem", cfg.Storage.Type())
			assert.Equal(t, "/var/lib/registry", cfg.Storage.Parameters()["rootdirectory"], "where every unit mounts the payload")
			assert.Equal(t, "inmemory", cfg.Storage["cache"]["blobdescriptor"])
			assert.Equal(t, "0.0.0.0:22625", cfg.HTTP.Addr)
			assert.Equal(t, tc.cert, cfg.HTTP.TLS.Certificate)
			assert.Equal(t, strings.Replace(tc.cert, ".crt", ".key", 1), cfg.HTTP.TLS.Key)
			assert.Equal(t, []string{"nosniff"}, cfg.HTTP.Headers["X-Content-Type-Options"])
			assert.Empty(t, cfg.Auth, "the live ISO's registry runs without authentication (MCO dropped its htpasswd: d374adcbf)")
			if tc.readOnly {
				assert.Equal(t, map[any]any{"enabled": true}, cfg.Storage["maintenance"]["readonly"],
					"the map type distribution's app reads (a map[string]any panics it)")
			} else {
				assert.NotContains(t, cfg.Storage, "maintenance")
			}

			// The registry's application on it, over a store holding
			// one image (TLS aside: httptest serves plain HTTP).
			root := filepath.Join(t.TempDir(), "store")
			img, err := random.Image(1024, 2)
			require.NoError(t, err)
			p := regstore.NewPlan()
			require.NoError(t, p.Add(context.Background(), "openshift/release", "x", img))
			require.NoError(t, regstore.WriteDir(context.Background(), root, p, nil))
			cfg.Storage["filesystem"]["rootdirectory"] = root
			cfg.HTTP.TLS = configuration.Configuration{}.HTTP.TLS
			cfg.HTTP.Secret = "test"
			srv := httptest.NewServer(handlers.NewApp(context.Background(), cfg))
			t.Cleanup(srv.Close)
			d, err := img.Digest()
			require.NoError(t, err)
			get := func(path string) int {
				req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
				require.NoError(t, err)
				req.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json")
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				resp.Body.Close()
				return resp.StatusCode
			}
			assert.Equal(t, http.StatusOK, get("/v2/"))
			assert.Equal(t, http.StatusOK, get("/v2/openshift/release/manifests/"+d.String()))
			assert.Equal(t, http.StatusOK, get("/v2/openshift/release/manifests/x"))
			resp, err := http.Post(srv.URL+"/v2/openshift/release/blobs/uploads/", "", nil)
			require.NoError(t, err)
			resp.Body.Close()
			if tc.readOnly {
				assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "a push is refused by the application, not by the read-only mount")
			} else {
				assert.Equal(t, http.StatusAccepted, resp.StatusCode)
			}
		})
	}
}

// TestRegistryReadOnlyEnvForm: the other spelling of the read-only mode,
// which OCPBUGS-82974 found panics the registry, does here too; the form
// PayloadRegistryEnv uses does not (above).
func TestRegistryReadOnlyEnvForm(t *testing.T) {
	logrus.SetOutput(io.Discard)
	t.Setenv("REGISTRY_STORAGE_MAINTENANCE_READONLY_ENABLED", "true")
	cfg, err := configuration.Parse(strings.NewReader(registryConfig))
	require.NoError(t, err)
	cfg.Storage["filesystem"]["rootdirectory"] = t.TempDir()
	assert.Panics(t, func() { handlers.NewApp(context.Background(), cfg) })
}
