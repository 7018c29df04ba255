//go:build e2elive

package live

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/internal/fake/testcluster"
	"github.com/seed-a052040e/agentiso/pkg/ignition"
	"github.com/seed-a052040e/agentiso/test/live/mirror"
)

// The add-nodes scenario (issue 25): an installed cluster (the fake API
// server of internal/fake/testcluster, with its machine-config server on the
// bridge) gets one worker from node-image create's ISO. The host runs its
// own assisted-service, which imports the cluster (agent-import-cluster),
// registers the host, and, once the host's day-2 validations pass (the
// worker Ignition config downloaded from the machine-config server, the
// cluster's names resolved), installs it (agent-add-node).

// addNodesCluster is the installed cluster: named as clusterDNS's names
// (live.lab.test), platform None (no VIPs: the day-2 DNS validations
// apply), its machine-config server on the bridge.
func addNodesCluster(m *mirror.Mirror) testcluster.Options {
	o := testcluster.Default()
	o.ClusterName, o.BaseDomain, o.Platform = "live", "lab.test", "None"
	o.Version, o.ReleaseImage = m.Version, m.ReleaseImage
	// As the install's: the pull secret holds an auth for the mirror
	// (mirrorInputs says why), the trust bundle its CA.
	o.PullSecret = `{"auths":{"` + m.Addr + `":{"auth":"bGFiOm1pcnJvcg=="},"quay.io":{"auth":"dXNlcjpwYXNz"}}}`
	o.TrustBundle = string(m.CACertPEM)
	o.DigestMirrors = nil
	for _, s := range m.ImageDigestSources {
		o.DigestMirrors = append(o.DigestMirrors, testcluster.Mirror{Source: s.Source, Mirrors: s.Mirrors})
	}
	o.SSHKey = sshKey
	o.MCSListen = BridgeIP + ":22623"
	return o
}

// addNodesConfig is nodes-config.yaml: one host h with a static address
// outside the cluster's nodes' (.20 to .23), with role (none: a worker).
func addNodesConfig(h host, role string) string {
	roleLine := ""
	if role != "" {
		roleLine = "    role: " + role + "\n"
	}
	return `hosts:
  - hostname: ` + h.name + `
` + roleLine + `    interfaces:
      - name: eno1
        macAddress: ` + h.macs[0] + `
    networkConfig:
      interfaces:
        - name: eno1
          type: ethernet
          state: up
          mac-address: ` + h.macs[0] + `
          ipv4:
            enabled: true
            dhcp: false
            address:
              - ip: ` + h.ip + `
                prefix-length: 24
          ipv6:
            enabled: false
      dns-resolver:
        config:
          server:
            - 192.168.111.1
      routes:
        config:
          - destination: 0.0.0.0/0
            next-hop-address: 192.168.111.1
            next-hop-interface: eno1
`
}

// addNodesHost is the worker of the add-nodes scenario: its own node zero.
var addNodesHost = host{name: "worker-live", macs: []string{"52:54:00:cc:00:01"}, ip: "192.168.111.83", nodeZero: true}

// addNodesMasterHost is the control-plane host of add-nodes-master (role
// master in nodes-config.yaml).
var addNodesMasterHost = host{name: "master-live", macs: []string{"52:54:00:cc:00:02"}, ip: "192.168.111.84", nodeZero: true}

// buildNodeImage serves the installed cluster and runs node-image create
// against it with nodesConfig: the ISO's path, and the cluster (to be
// closed by the caller).
func (l *lab) buildNodeImage(ctx context.Context, dir string, m *mirror.Mirror, nodesConfig string) (string, *testcluster.Cluster, error) {
	c, err := testcluster.Start(addNodesCluster(m))
	if err != nil {
		return "", nil, fmt.Errorf("serve the installed cluster: %w", err)
	}
	kc := filepath.Join(dir, "cluster.kubeconfig")
	if err := os.WriteFile(kc, c.Kubeconfig(), 0o600); err != nil {
		c.Close()
		return "", nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "nodes-config.yaml"), []byte(nodesConfig), 0o600); err != nil {
		c.Close()
		return "", nil, err
	}
	args := []string{"node-image", "create", "--dir", dir, "--kubeconfig", kc, "--base-iso", l.fixture}
	out, err := exec.CommandContext(ctx, l.bin, args...).CombinedOutput()
	if err != nil {
		c.Close()
		return "", nil, fmt.Errorf("agentiso %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return filepath.Join(dir, "node.x86_64.iso"), c, nil
}

// isoUserToken is the userAuth token the ISO's units use (its
// rendezvous-host.env): node-image create keeps no user token in --dir.
func isoUserToken(iso string) (string, error) {
	// An ISO for 4.16 has AUTH_TYPE=none and no token (issue 37 item 4):
	// the service answers without one.
	senv, err := ISOFile(iso, "/usr/local/share/assisted-service/assisted-service.env")
	if err != nil {
		return "", err
	}
	if at, _ := EnvValue(senv, "AUTH_TYPE"); at == "none" {
		return "", nil
	}
	env, err := ISOFile(iso, "/etc/assisted/rendezvous-host.env")
	if err != nil {
		return "", err
	}
	tok, ok := EnvValue(env, "USER_AUTH_TOKEN")
	if !ok || tok == "" {
		return "", fmt.Errorf("%s: rendezvous-host.env holds no USER_AUTH_TOKEN", iso)
	}
	return tok, nil
}

// addNodesUnits are the units that must be active on an add-nodes host:
// the service, the import of the cluster, the InfraEnv, the host's
// configuration, and agent-add-node (a oneshot that stays active once the
// host's install call was answered 202).
func addNodesUnits() []string {
	units := append([]string{}, bootUnits...)
	units = append(units, "agent.service", "assisted-service-pod.service", "assisted-service-db.service", "assisted-service.service",
		"agent-register-infraenv.service", "apply-host-config.service")
	return append(units, ignition.AddNodesUnits()...)
}

// hostInstallingStatuses are the host statuses that follow an accepted
// install call on a day-2 host (assisted-service's host state machine).
var hostInstallingStatuses = []string{"installing", "installing-in-progress", "installing-pending-user-action", "added-to-existing-cluster", "installed"}

// checkAddNodeReal: the host's assisted-service holds one cluster, the
// installed one imported (kind AddHostsCluster, its OpenShift cluster ID,
// adding-hosts), and the host is installing with role (worker, master).
func checkAddNodeReal(ctx context.Context, svc *ServiceClient, clusterID string, h host, role string) error {
	// The service's cluster model, with the imported cluster's fields.
	var cls []struct {
		Kind               string `json:"kind"`
		Status             string `json:"status"`
		StatusInfo         string `json:"status_info"`
		OpenshiftClusterID string `json:"openshift_cluster_id"`
	}
	if err := svc.get(ctx, "/clusters", &cls); err != nil {
		return err
	}
	if len(cls) != 1 {
		return fmt.Errorf("assisted-service has %d clusters, want 1 (agent-import-cluster)", len(cls))
	}
	c := cls[0]
	var problems []string
	if c.Kind != "AddHostsCluster" {
		problems = append(problems, fmt.Sprintf("kind %q, want AddHostsCluster", c.Kind))
	}
	if c.OpenshiftClusterID != clusterID {
		problems = append(problems, fmt.Sprintf("openshift_cluster_id %q, want the installed cluster's %s", c.OpenshiftClusterID, clusterID))
	}
	if c.Status != "adding-hosts" {
		problems = append(problems, fmt.Sprintf("status %q (%s), want adding-hosts", c.Status, c.StatusInfo))
	}
	if len(problems) > 0 {
		return fmt.Errorf("the cluster in assisted-service is not the installed one imported: %s", strings.Join(problems, "; "))
	}
	hosts, err := svc.Hosts(ctx)
	if err != nil {
		return err
	}
	for _, sh := range hosts {
		if sh.RequestedHostname == h.name {
			if !slices.Contains(hostInstallingStatuses, sh.Status) {
				return fmt.Errorf("host %s is %s (%s), want one of %v: agent-add-node's install call was not taken", h.name, sh.Status, sh.StatusInfo, hostInstallingStatuses)
			}
			// The role of nodes-config.yaml, applied by the real client's
			// apply-host-config from the ISO's host configuration.
			if sh.Role != role {
				return fmt.Errorf("host %s installs with role %q, want %q (nodes-config.yaml's, through apply-host-config)", h.name, sh.Role, role)
			}
			return nil
		}
	}
	return errors.New("host " + h.name + " is not in assisted-service")
}

// checkPoolFetched: the host's day-2 check downloaded the Ignition config
// of its role's pool from the cluster's machine-config server:
// assisted-service asks for the imported endpoint joined with the pool
// (release-4.20 internal/host/hostutil/host_utils.go
// GetIgnitionEndpointAndCert), /config/worker/<role>.
func checkPoolFetched(c *testcluster.Cluster, role string) error {
	want := "MCS GET /config/worker/" + role
	got := c.Requests()
	for _, r := range got {
		if r == want {
			return nil
		}
	}
	var mcs []string
	for _, r := range got {
		if strings.HasPrefix(r, "MCS ") {
			mcs = append(mcs, r)
		}
	}
	return fmt.Errorf("the machine-config server never got %q: the host's day-2 check did not ask for the %s pool (it got %v)", want, role, mcs)
}

// checkNodeImageMonitor runs node-image monitor from the test machine: it
// reads the host's own assisted-service with the watcher token node-image
// create kept in dir and shows the host installing; the installed cluster
// never gets the node, so it gives up as documented (exit 5) with a report.
func checkNodeImageMonitor(ctx context.Context, bin, dir string, h host, res *result) error {
	mctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(mctx, bin, "node-image", "monitor", "--dir", dir, "--kubeconfig", filepath.Join(dir, "cluster.kubeconfig"),
		"--ip-addresses", h.ip, "--timeout", "40s", "--interval", "5s", "--report").CombinedOutput()
	res.waitFor = string(out)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 5 {
		return fmt.Errorf("agentiso node-image monitor: want exit code 5 after its timeout (the cluster never gets the node), got %v:\n%s", err, out)
	}
	seen := false
	for _, st := range hostInstallingStatuses {
		seen = seen || strings.Contains(res.waitFor, "Host "+h.name+" ("+h.ip+"): "+st)
	}
	if !seen {
		return fmt.Errorf("node-image monitor never showed %s installing (one of %v) from its assisted-service:\n%s", h.name, hostInstallingStatuses, out)
	}
	rep, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		return fmt.Errorf("node-image monitor --report: %w", err)
	}
	if !strings.Contains(string(rep), `"agent": {`) {
		return fmt.Errorf("node-image monitor's report holds no agent status:\n%s", rep)
	}
	return nil
}
