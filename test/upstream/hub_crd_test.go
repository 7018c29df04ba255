//go:build upstream

package upstream

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/manifests"
	"github.com/seed-a052040e/agentiso/pkg/redfish"
)

// TestHubManifestsAgainstCRDTypes checks `create cluster-manifests
// --for-hub` against the REAL types vendored by assisted-service of one
// branch (AGENTISO_UPSTREAM_BRANCH, default release-4.20), in the checkout
// hack/build-upstream.sh --source makes from the pinned commit: every
// BareMetalHost and Secret decodes strictly (no unknown field) into
// metal3.io/v1alpha1 BareMetalHost and core/v1 Secret and passes Metal3's
// own create-time validation (which parses the BMC address with
// baremetal-operator's bmc package); the label and annotation keys are the
// constants of assisted-service's BareMetalAgentController; and, for a set
// of BMC addresses, agentiso's redfish.ParseAddress accepts exactly the
// Redfish ones Metal3 knows, and calls virtual media what Metal3 boots with
// virtual media.
func TestHubManifestsAgainstCRDTypes(t *testing.T) {
	branch := envOr("AGENTISO_UPSTREAM_BRANCH", "release-4.20")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	src := upstreamSource(t, ctx, root, branch)
	work := t.TempDir()
	bin := agentisoBinary(t, ctx, root, work)

	dir := filepath.Join(work, "cluster")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "install-config.yaml"), []byte(hubInstallConfig), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent-config.yaml"), []byte("apiVersion: v1beta1\nkind: AgentConfig\nrendezvousIP: 192.168.111.20\n"), 0o600))
	cmd := exec.Command(bin, "create", "cluster-manifests", "--for-hub", "--dir", dir, "--offline", "--release-version", "4.20.0",
		"--release-image", "quay.io/openshift-release-dev/ocp-release@sha256:"+strings.Repeat("42", 32))
	out, err := Run(ctx, 5*time.Minute, cmd)
	require.NoError(t, err, "%s", out)
	files, err := filepath.Glob(filepath.Join(dir, "hub", "*.yaml"))
	require.NoError(t, err)
	require.Len(t, files, 3)

	addrs := []string{
		"redfish-virtualmedia://10.0.0.5/redfish/v1/Systems/1", "redfish-virtualmedia+http://10.0.0.5:8000/redfish/v1/Systems/1",
		"idrac-virtualmedia://10.0.0.6/redfish/v1/Systems/System.Embedded.1", "ilo5-virtualmedia://10.0.0.7/redfish/v1/Systems/1",
		"redfish://10.0.0.8/redfish/v1/Systems/1", "redfish+https://10.0.0.8/redfish/v1/Systems/1", "idrac-redfish://10.0.0.9/redfish/v1/Systems/1",
		"ilo5-redfish://10.0.0.9/redfish/v1/Systems/1",
		"ipmi://10.0.0.10:623", "libvirt://192.168.122.1", "idrac://10.0.0.11", "ilo4://10.0.0.12", "ilo5://10.0.0.13", "irmc://10.0.0.14",
		"ibmc://10.0.0.15", "frobnicate://10.0.0.16",
	}
	checker := crdChecker(t, ctx, src, work)
	args := append(append(append([]string{}, files...), "--"), addrs...)
	resb, err := Run(ctx, 30*time.Minute, checkerCmd(src, checker, args))
	res := string(resb)
	t.Logf("crdcheck (%s):\n%s", branch, res)
	require.NoError(t, err)
	assert.NotContains(t, res, "FAIL")
	assert.Contains(t, res, "OK Secret cluster0/master-0-bmc-secret type=Opaque username=5 bytes password=9 bytes")
	assert.Contains(t, res, "OK BareMetalHost cluster0/master-0 online=true cleaning=disabled bootMAC=52:54:00:aa:00:01 bmc=redfish-virtualmedia://10.0.0.5/redfish/v1/Systems/1 credentials=master-0-bmc-secret insecure=true boot=redfish-virtual-media labels=map[infraenvs.agent-install.openshift.io:ostest]")
	assert.Contains(t, res, "OK BareMetalHost cluster0/master-1 online=true cleaning=disabled bootMAC=52:54:00:aa:00:02 bmc=idrac-virtualmedia://10.0.0.6/redfish/v1/Systems/System.Embedded.1 credentials=master-1-bmc-secret insecure=false boot=idrac-redfish-virtual-media")
	// master-2 was given as redfish:// (Metal3 network-boots that scheme);
	// agentiso boots it from virtual media, so the hub gets the matching
	// virtual-media scheme and Metal3 must call it virtual media too.
	assert.Contains(t, res, "OK BareMetalHost cluster0/master-2 online=true cleaning=disabled bootMAC=52:54:00:aa:00:03 bmc=redfish-virtualmedia://10.0.0.8/redfish/v1/Systems/1 credentials=master-2-bmc-secret insecure=false boot=redfish-virtual-media")
	assert.NotContains(t, res, "bmc=redfish://")

	// Redfish address schemes: agentiso and Metal3 agree.
	verdict := map[string]string{}
	for _, l := range strings.Split(res, "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "ADDR" {
			verdict[f[1]] = strings.Join(f[2:], " ")
		}
	}
	for _, a := range addrs {
		v, ok := verdict[a]
		require.True(t, ok, "no verdict for %s", a)
		ours, err := redfish.ParseAddress(a)
		if err != nil {
			// Refused: Metal3 does not know it either, or drives it
			// without Redfish and without virtual media.
			assert.True(t, v == "error" || (!strings.Contains(v, "driver=redfish") && !strings.Contains(v, "virtual-media")),
				"agentiso refuses %s (%v), Metal3 drives it with %s", a, err, v)
			continue
		}
		assert.NotEqual(t, "error", v, "agentiso accepts %s, Metal3 does not know it", a)
		assert.Equal(t, strings.Contains(v, "virtual-media"), ours.VirtualMedia, "%s: Metal3 %s", a, v)
	}

	// The label and annotation keys are BMAC's.
	ctrl, err := os.ReadFile(filepath.Join(src, "internal", "controller", "controllers", "bmh_agent_controller.go"))
	require.NoError(t, err)
	for name, val := range map[string]string{
		"BMH_INFRA_ENV_LABEL": manifests.BMHInfraEnvLabel, "BMH_AGENT_HOSTNAME": manifests.BMHHostnameAnnotation,
		"BMH_AGENT_ROLE": manifests.BMHRoleAnnotation, "BMH_INSPECT_ANNOTATION": manifests.BMHInspectAnnotation,
		"BMH_AGENT_INSTALLER_ARGS": manifests.BMHInstallerArgsAnnotation,
	} {
		assert.Regexp(t, regexp.MustCompile(`\b`+name+`\s*=\s*"`+regexp.QuoteMeta(val)+`"`), string(ctrl), name)
	}
}

// upstreamSource returns the checkout of assisted-service at the pinned
// commit of branch (hack/build-upstream.sh --source).
func upstreamSource(t *testing.T, ctx context.Context, root, branch string) string {
	cmd := exec.Command("bash", filepath.Join(root, "hack", "build-upstream.sh"), "--source", "assisted-service", branch)
	cmd.Dir = root
	out, err := Run(ctx, 20*time.Minute, cmd)
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	dir := strings.TrimSpace(lines[len(lines)-1])
	require.True(t, filepath.IsAbs(dir), "hack/build-upstream.sh --source: last line %q", dir)
	return dir
}

// crdChecker places testdata/crdcheck/main.go in the checkout through a
// go build overlay (the checkout is never written) and returns the
// overlay file.
func crdChecker(t *testing.T, _ context.Context, src, work string) string {
	main, err := filepath.Abs(filepath.Join("testdata", "crdcheck", "main.go"))
	require.NoError(t, err)
	ov := map[string]map[string]string{"Replace": {filepath.Join(src, "cmd", "agentiso-crdcheck", "main.go"): main}}
	b, err := json.Marshal(ov)
	require.NoError(t, err)
	p := filepath.Join(work, "overlay.json")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

func checkerCmd(src, overlay string, args []string) *exec.Cmd {
	cmd := exec.Command("go", append([]string{"run", "-trimpath", "-overlay", overlay, "./cmd/agentiso-crdcheck"}, args...)...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=vendor", "GOTOOLCHAIN=local", "GOPROXY=off", "GOWORK=off")
	return cmd
}

const hubInstallConfig = `apiVersion: v1
metadata:
  name: ostest
  namespace: cluster0
baseDomain: test.metalkube.org
controlPlane: {name: master, replicas: 3}
compute: [{name: worker, replicas: 0}]
networking:
  machineNetwork: [{cidr: 192.168.111.0/24}]
platform:
  baremetal:
    apiVIPs: [192.168.111.5]
    ingressVIPs: [192.168.111.4]
    hosts:
      - name: master-0
        role: master
        bootMACAddress: 52:54:00:aa:00:01
        bootMode: UEFI
        rootDeviceHints: {deviceName: /dev/sda, minSizeGigabytes: 100}
        bmc: {address: 'redfish-virtualmedia://10.0.0.5/redfish/v1/Systems/1', username: admin, password: secret-pw, disableCertificateVerification: true}
      - name: master-1
        role: master
        bootMACAddress: 52:54:00:aa:00:02
        bmc: {address: 'idrac-virtualmedia://10.0.0.6/redfish/v1/Systems/System.Embedded.1', username: root, password: calvin}
      - name: master-2
        role: master
        bootMACAddress: 52:54:00:aa:00:03
        bmc: {address: 'redfish://10.0.0.8/redfish/v1/Systems/1', username: admin, password: pw}
pullSecret: '{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}'
sshKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGqSD39lBCzJKKW6OKTsxkQCW+GbT/f+OhO9xZLMB4i7 admin@laptop
`
