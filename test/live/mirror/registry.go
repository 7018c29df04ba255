package mirror

import (
	"fmt"
	"os"
)

// The payload's docker-registry component as the registry-less install runs
// it (docs/airgap.md): from OpenShift 4.21 the appliance, and the Machine
// Config Operator after the reboot, run the distribution/distribution
// registry from it with `--entrypoint=/usr/bin/distribution <image> serve
// /etc/registry/config.yaml` (openshift/appliance
// data/services/local-registry-ocp/start-local-registry.service,
// pkg/registry/registry.go registryStartCmdOcp; machine-config-operator
// pkg/controller/internalreleaseimage/templates/master/units/iri-registry.service.yaml).
const (
	RegistryComponent  = "docker-registry"
	RegistryBinaryPath = "/usr/bin/distribution"
	RegistryConfigPath = "/etc/registry/config.yaml"
)

// registryConfig is the lab image's /etc/registry/config.yaml. The real
// image's file is not readable here (its source is not among the
// repositories this project can read), so the lab's holds what every
// upstream unit relies on: the filesystem store at /var/lib/registry, where
// the units mount the payload, and port 22625; the units set the address,
// TLS and read-only mode by environment. The layout is the appliance's own
// registry configuration (openshift/appliance registry/config.yml) without
// its health check.
const registryConfig = `version: 0.1
log:
  fields:
    service: registry
storage:
  cache:
    blobdescriptor: inmemory
  filesystem:
    rootdirectory: /var/lib/registry
http:
  addr: :22625
  headers:
    X-Content-Type-Options: [nosniff]
`

// registrySpec is the docker-registry image: the real registry binary
// (hack/build-distribution.sh) and its configuration, no stand-in. Tracing
// export is off, as the appliance's registry image sets it
// (registry/Dockerfile.registry: OTEL_TRACES_EXPORTER none,
// distribution/distribution#4270): otherwise the registry tries to export
// traces to a collector the hosts do not have.
func registrySpec(binary string) (spec, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return spec{}, fmt.Errorf("mirror: the registry binary: %w (hack/build-distribution.sh builds it)", err)
	}
	return spec{
		Component:  RegistryComponent,
		Entrypoint: []string{RegistryBinaryPath},
		Cmd:        []string{"serve", RegistryConfigPath},
		Env:        []string{"OTEL_TRACES_EXPORTER=none"},
		NoStandin:  true,
		Files: []entry{
			{Path: RegistryBinaryPath, Mode: 0o755, Data: data},
			{Path: RegistryConfigPath, Mode: 0o644, Data: []byte(registryConfig)},
		},
	}, nil
}
