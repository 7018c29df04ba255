package ignition

import (
	"fmt"
	"strings"

	"github.com/coreos/ignition/v2/config/v3_2/types"
)

// Payload is the node-local registry of an extended ISO (docs/airgap.md):
// the release payload rides on the ISO as a data image cut into pieces
// (/registry/data.iso.*), which every host joins, mounts at
// PayloadMountDir and serves on port 22625 with the payload's own
// docker-registry image, before anything pulls an image.
type Payload struct {
	// RegistryImage is the payload's docker-registry component, by
	// digest; the hosts load it from the data image's dir: copy.
	RegistryImage string
	// CertPEM and KeyPEM are the registry's serving certificate (its own
	// CA) and key.
	CertPEM, KeyPEM []byte
}

// Where the payload's pieces are read and served from (the paths of
// upstream's appliance live ISO: mount-agent-data.sh, the IRI
// registry's certificate directory).
const (
	PayloadISODir      = "/run/media/iso/registry"
	PayloadMountDir    = "/mnt/agentdata"
	PayloadCertDir     = "/etc/iri-registry/certs"
	PayloadRegistry    = "localhost:22625"
	PayloadUnit        = "start-local-registry.service"
	PayloadMountScript = "/usr/local/bin/mount-agent-payload.sh"
	PayloadTrustPath   = "/etc/pki/ca-trust/source/anchors/agent-payload-registry.crt"
)

// payloadPullers are the units that pull images: the registry comes up
// before them.
var payloadPullers = []string{"node-zero.service", "assisted-service-db.service", "assisted-service-pod.service", "assisted-service.service",
	"agent.service", "agent-register-cluster.service", "agent-register-infraenv.service", "apply-host-config.service", "start-cluster-installation.service"}

// mountScript joins the pieces (read-only loop devices, one linear
// device-mapper table, as upstream's mount-agent-data.sh does) and mounts
// the data image read-only.
const mountScript = `#!/bin/bash
# Mount the release payload the extended ISO carries (agentiso, docs/airgap.md).
set -euo pipefail
dev=agent-payload
for _ in $(seq 120); do mountpoint -q /run/media/iso && break; sleep 1; done
mountpoint -q /run/media/iso || { echo "the live ISO is not mounted at /run/media/iso" >&2; exit 1; }
if ! dmsetup info "$dev" >/dev/null 2>&1; then
    table=""
    start=0
    for piece in ` + PayloadISODir + `/data.iso.*; do
        loop=$(losetup --find --show --read-only "$piece")
        size=$(blockdev --getsz "$loop")
        table+="$start $size linear $loop 0"$'\n'
        start=$((start + size))
    done
    [ -n "$table" ] || { echo "no payload pieces in ` + PayloadISODir + `" >&2; exit 1; }
    printf '%s' "$table" | dmsetup create "$dev"
fi
mkdir -p ` + PayloadMountDir + `
mountpoint -q ` + PayloadMountDir + ` || mount -o ro "/dev/mapper/$dev" ` + PayloadMountDir + `
# A stale virtual-media session shows up as an I/O error here, not later.
head -c 4096 ` + PayloadMountDir + `/images/registry/manifest.json >/dev/null
`

// PayloadRegistryEnv is the environment the hosts' registry runs with
// (the -e flags of its podman run), over the payload's own
// /etc/registry/config.yaml: the address and TLS upstream's units set
// (openshift/appliance data/services/local-registry-ocp/start-local-registry.service,
// machine-config-operator iri-registry.service.yaml) and the read-only
// mode in the form the Machine Config Operator gives it: a YAML map
// (OCPBUGS-82974: REGISTRY_STORAGE_MAINTENANCE_READONLY_ENABLED=true
// yields a map distribution's app panics on).
func PayloadRegistryEnv() []string {
	return []string{
		"REGISTRY_HTTP_ADDR=0.0.0.0:22625",
		"REGISTRY_HTTP_TLS_CERTIFICATE=/certs/tls.crt",
		"REGISTRY_HTTP_TLS_KEY=/certs/tls.key",
		`REGISTRY_STORAGE_MAINTENANCE_READONLY={"enabled":true}`,
	}
}

// envFlags renders env as podman -e flags, single-quoting a value that
// systemd would otherwise split or unquote.
func envFlags(env []string) string {
	var fs []string
	for _, e := range env {
		if strings.ContainsAny(e, "\"{}' ") {
			e = "'" + e + "'"
		}
		fs = append(fs, "-e "+e)
	}
	return strings.Join(fs, " ")
}

func payloadUnit(p *Payload) string {
	base, _, _ := strings.Cut(p.RegistryImage, "@")
	return fmt.Sprintf(`[Unit]
Description=Local registry serving the embedded release payload
Wants=network-online.target
After=network-online.target
Before=%s

[Service]
Environment=PODMAN_SYSTEMD_UNIT=%%n
ExecStartPre=%s
ExecStartPre=/usr/bin/update-ca-trust extract
ExecStartPre=/bin/sh -c 'podman image exists %s || { id=$(podman pull -q dir:%s/images/registry) && podman tag "$id" %s:latest; }'
ExecStartPre=/bin/rm -f %%t/%%n.ctr-id
ExecStart=/usr/bin/podman run --net host --cidfile=%%t/%%n.ctr-id --replace --log-driver=journald --name=agent-payload-registry -v %s:/var/lib/registry:ro -v %s:/certs:ro %s -u 0 --entrypoint=/usr/bin/distribution %s serve /etc/registry/config.yaml
ExecStartPost=/bin/sh -c 'for i in $(seq 120); do curl -sf -o /dev/null https://%s/v2/ && exit 0; sleep 1; done; exit 1'
ExecStop=/usr/bin/podman stop --ignore --cidfile=%%t/%%n.ctr-id
ExecStopPost=/usr/bin/podman rm -f --ignore --cidfile=%%t/%%n.ctr-id
Restart=on-failure
RestartSec=10
TimeoutStartSec=900

[Install]
WantedBy=multi-user.target
`, strings.Join(payloadPullers, " "), PayloadMountScript, p.RegistryImage, PayloadMountDir, base,
		PayloadMountDir, PayloadCertDir, envFlags(PayloadRegistryEnv()), p.RegistryImage, PayloadRegistry)
}

func (in *Input) validatePayload(p *problems) {
	pl := in.Payload
	if pl == nil {
		return
	}
	if i := strings.Index(pl.RegistryImage, "@sha256:"); i <= 0 || ValidateImageReference(pl.RegistryImage) != nil {
		p.add("Payload.RegistryImage: %q must be an image by digest", pl.RegistryImage)
	}
	if !strings.HasPrefix(strings.TrimSpace(string(pl.CertPEM)), "-----BEGIN CERTIFICATE-----") {
		p.add("Payload.CertPEM: must be a PEM certificate")
	}
	if !strings.HasPrefix(strings.TrimSpace(string(pl.KeyPEM)), "-----BEGIN ") {
		p.add("Payload.KeyPEM: must be a PEM private key")
	}
}

// addPayload adds the mount script, the registry's certificate (served,
// and trusted by the host and by podman) and its unit.
func (b *builder) addPayload(p *Payload) error {
	for _, f := range []struct {
		path string
		mode int
		data []byte
	}{
		{PayloadMountScript, 0o755, []byte(mountScript)},
		{PayloadCertDir + "/tls.crt", 0o644, p.CertPEM},
		{PayloadCertDir + "/tls.key", 0o600, p.KeyPEM},
		{PayloadTrustPath, 0o644, p.CertPEM},
		{"/etc/containers/certs.d/" + PayloadRegistry + "/ca.crt", 0o644, p.CertPEM},
	} {
		if err := b.addFile(f.path, f.mode, f.data, false, false); err != nil {
			return err
		}
	}
	unit := payloadUnit(p)
	t := true
	b.units = append(b.units, types.Unit{Name: PayloadUnit, Enabled: &t, Contents: &unit})
	return nil
}
