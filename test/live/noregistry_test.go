//go:build e2elive

package live

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/test/live/mirror"
)

// The registry-less scenarios (issue 36, docs/airgap.md): the extended ISO,
// built by `agentiso create image --embed-payload` from the lab's payload,
// carries the release; the lab's mirror is stopped before the hosts boot,
// so the only registry the hosts can reach is the one each of them starts
// from the ISO: the payload's own docker-registry image, the real
// distribution registry (hack/build-distribution.sh), serving the data image
// on localhost:22625.

// The repositories of the node-local registry the hosts pull from: oc-mirror
// v2's, which the appliance and the Machine Config Operator read
// (openshift/oc-mirror internal/pkg/release/const.go; machine-config-operator
// pkg/daemon/internalreleaseimage/iriregistry.go).
const (
	embeddedReleaseRepo   = "openshift/release-images"
	embeddedComponentRepo = "openshift/release"
	// embeddedRegistryUnit is the ISO's unit that runs the node-local registry.
	embeddedRegistryUnit = "start-local-registry.service"
)

// firstEmbeddedMinor is the first 4.y whose components serve an embedded
// payload: agentiso refuses an older release with --embed-payload, and
// assisted-service first has its InternalReleaseImage patcher on
// release-4.21 (docs/airgap.md).
const firstEmbeddedMinor = 21

// noRegistryScenarios declares, through liveScenarios' run, the
// registry-less scenario and its corrupted-blob control (full set only).
func noRegistryScenarios(l *lab, run func(name string, f func(t *testing.T))) {
	sno := scenario{
		name: "no-registry-extended-iso",
		// The release's installer serves the payload after the reboot only
		// behind NoRegistryClusterInstall, which agentiso therefore
		// requires with --embed-payload.
		installConfig: snoInstallConfig + "featureSet: TechPreviewNoUpgrade\n",
		agentConfig:   snoAgentConfig,
		embedPayload:  true,
		dns:           clusterDNS("192.168.111.80", "192.168.111.80"),
		hosts: []host{{name: "sno-live", macs: []string{"52:54:00:aa:00:01", "52:54:00:aa:00:02"},
			iface: "bond0", kind: "bond", ip: "192.168.111.80", nodeZero: true}},
		// Under TCG at load 17 to 40 the pulls from the node-local registry
		// alone took 27 minutes (docs/e2e.md).
		deadline: 22 * time.Minute,
	}
	run("no-registry-extended-iso", func(t *testing.T) {
		requireEmbeddable(t, l)
		res, err := l.run(t, sno)
		require.NoError(t, err)
		t.Logf("node-local registry requests: %d; the lab's mirror: %d requests while agentiso built the ISO, %d after it was stopped (checked: none)",
			len(res.localPulls), res.builtPulls, len(res.pulls)-res.builtPulls)
	})
	// The same ISO with one blob changed after agentiso wrote it (the
	// agent image's config, which every host pulls): the hosts' pull must
	// stop on containers/image's digest check, naming the blob.
	run("negative/no-registry-corrupted-blob", func(t *testing.T) {
		requireEmbeddable(t, l)
		sc := sno
		sc.name, sc.bootOnly, sc.deadline = "no-registry-corrupted-blob", true, 10*time.Minute
		var corrupted string
		sc.tamper = func(iso, _ string, m *mirror.Mirror) error {
			d, off, err := corruptAgentConfig(iso, m)
			corrupted = d
			if err == nil {
				t.Logf("%s: corrupted the agent image's config blob %s in the ISO (byte at offset %d flipped)", sc.name, d, off)
			}
			return err
		}
		_, err := l.run(t, sc)
		require.Error(t, err, "an extended ISO with a corrupted blob passed the lab")
		require.ErrorContains(t, err, PullDigestMismatch.String(), "the hosts' pull must stop on the digest check")
		require.ErrorContains(t, err, corrupted, "the error names the corrupted blob's digest")
		t.Logf("detected: %v", firstLine(err))
	})
}

// requireEmbeddable skips the scenario on a branch whose release cannot be
// embedded, saying which branches run it.
func requireEmbeddable(t *testing.T, l *lab) {
	t.Helper()
	parts := strings.SplitN(l.version, ".", 3)
	minor, err := strconv.Atoi(parts[min(1, len(parts)-1)])
	if err == nil && len(parts) >= 2 && parts[0] == "4" && minor >= firstEmbeddedMinor {
		return
	}
	t.Skipf("the lab's payload is %s: the registry-less install first comes with OpenShift 4.%d (agentiso refuses --embed-payload before it; assisted-service's InternalReleaseImage patcher is first on release-4.%d); LIVE_SET=full runs it on release-4.23",
		l.version, firstEmbeddedMinor, firstEmbeddedMinor)
}

// registryBinary is the real distribution registry for the payload's
// docker-registry image (hack/build-distribution.sh builds or finds it;
// AGENTISO_LIVE_DISTRIBUTION names one).
func (l *lab) registryBinary(t *testing.T) string {
	t.Helper()
	if l.registry == "" {
		if l.registry = os.Getenv("AGENTISO_LIVE_DISTRIBUTION"); l.registry == "" {
			l.registry = scriptPath(t, "build-distribution.sh")
		}
		require.FileExists(t, l.registry, "the distribution registry")
	}
	return l.registry
}

// corruptAgentConfig flips one byte of the agent image's config blob in the
// extended ISO and returns the blob's digest and the byte's offset.
func corruptAgentConfig(iso string, m *mirror.Mirror) (string, int64, error) {
	agent, ok := m.Component("agent-installer-node-agent")
	if !ok {
		return "", 0, errors.New("the lab's payload has no agent-installer-node-agent")
	}
	tr, err := m.Transport()
	if err != nil {
		return "", 0, err
	}
	ref, err := name.ParseReference(agent.Mirror)
	if err != nil {
		return "", 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	img, err := remote.Image(ref, remote.WithContext(ctx), remote.WithTransport(tr))
	if err != nil {
		return "", 0, fmt.Errorf("read the agent image from the lab's mirror: %w", err)
	}
	raw, err := img.RawConfigFile()
	if err != nil {
		return "", 0, err
	}
	d, err := img.ConfigName()
	if err != nil {
		return "", 0, err
	}
	off, err := CorruptBlob(iso, raw)
	return d.String(), off, err
}

// checkLocalPulls: each host's node-local registry (its access log in the
// host's journal) served the release image and the images the units run,
// by digest, from the repositories upstream names, and every manifest
// request was answered; the lab's mirror was asked for nothing after the
// build (mirrorPulls: its requests since it was stopped).
func checkLocalPulls(reqs map[string][]RegistryRequest, mirrorPulls []mirror.Pull, m *mirror.Mirror, bootOnly bool) error {
	if len(mirrorPulls) > 0 {
		return fmt.Errorf("the lab's mirror, stopped before the boot, was asked for %s", mirrorPulls[0])
	}
	want := []struct{ what, repo, digest string }{{"the release image", embeddedReleaseRepo, m.Images[0].Digest}}
	comps := []string{"agent-installer-node-agent"}
	if !bootOnly {
		comps = append(comps, "agent-installer-api-server")
	}
	for _, c := range comps {
		img, ok := m.Component(c)
		if !ok {
			return fmt.Errorf("the lab's payload has no %s", c)
		}
		want = append(want, struct{ what, repo, digest string }{c, embeddedComponentRepo, img.Digest})
	}
	for host, rs := range reqs {
		got := map[string]bool{}
		for _, r := range rs {
			if r.Kind != "manifests" {
				continue
			}
			if r.Status >= 400 {
				return fmt.Errorf("%s: the node-local registry refused a manifest: %s\n%s", host, r, r.Line)
			}
			if r.ByDigest() {
				got[r.Repository+"@"+r.Reference] = true
			}
		}
		for _, w := range want {
			if !got[w.repo+"@"+w.digest] {
				return fmt.Errorf("%s: %s (%s@%s) was never pulled from the node-local registry; it served %d requests", host, w.what, w.repo, w.digest, len(rs))
			}
		}
	}
	return nil
}
