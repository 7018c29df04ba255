// Package testfixture holds the input documents the tests of several packages share (install-config.yaml, agent-config.yaml, two-node fencing), written once.
package testfixture

// PullSecret is a syntactically valid pull secret (quay.io, user:pass),
// quoted as install-config.yaml writes it.
const PullSecret = `'{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}'`

// SSHKey is a valid ed25519 public key.
const SSHKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGqSD39lBCzJKKW6OKTsxkQCW+GbT/f+OhO9xZLMB4i7 admin@laptop"

// The parts the install-configs below are made of. Tests assert errors at
// file:line, so every document keeps its exact lines.
const (
	bareMetalHead = `apiVersion: v1
metadata:
  name: ostest
  namespace: cluster0
baseDomain: example.com
controlPlane:
  name: master
  replicas: 3
`
	computeWorkers = `compute:
- name: worker
  replicas: `
	bareMetalTail = `networking:
  machineNetwork:
  - cidr: 192.168.111.0/24
platform:
  baremetal:
    apiVIPs: [192.168.111.5]
    ingressVIPs: [192.168.111.4]
pullSecret: ` + PullSecret + "\n"
)

// InstallConfig is a bare-metal install-config.yaml for cluster ostest in
// namespace cluster0: three control-plane and two compute replicas, machine
// network 192.168.111.0/24 with API VIP .5 and Ingress VIP .4, PullSecret
// and SSHKey, and no hosts.
const InstallConfig = bareMetalHead + computeWorkers + "2\n" + bareMetalTail + "sshKey: " + SSHKey + "\n"

// CompactInstallConfig is InstallConfig without compute replicas (a
// compact three-node cluster).
const CompactInstallConfig = bareMetalHead + computeWorkers + "0\n" + bareMetalTail + "sshKey: " + SSHKey + "\n"

// SNOInstallConfig is a single-node install-config.yaml (cluster sno,
// platform none), without an SSH key.
const SNOInstallConfig = `apiVersion: v1
metadata:
  name: sno
  namespace: cluster0
baseDomain: example.com
controlPlane:
  name: master
  replicas: 1
` + computeWorkers + `0
networking:
  machineNetwork:
  - cidr: 192.168.111.0/24
platform:
  none: {}
pullSecret: ` + PullSecret + "\n"

// The two-node-with-fencing install-configs: the BMC credentials of
// master-0 (line 11) and of a second host (line 15), whose key differs.
const (
	fencingHead = `apiVersion: v1
metadata:
  name: tnf
  namespace: cluster0
baseDomain: example.com
controlPlane:
  name: master
  replicas: 2
  fencing:
    credentials:
    - hostName: master-0
      address: redfish+https://192.168.111.1:8000/redfish/v1/Systems/1
      username: admin
      password: secret0
`
	fencingSecond = `      address: redfish+https://192.168.111.1:8000/redfish/v1/Systems/2
      username: admin
      password: secret1
      certificateVerification: Disabled
`
)

// FencingInstallConfig is a two-node bare-metal install-config.yaml (cluster
// tnf) with fencing credentials for master-0 and master-1, both keyed by
// host name; the second does not verify the BMC's certificate.
const FencingInstallConfig = fencingHead + "    - hostName: master-1\n" + fencingSecond + computeWorkers + "0\n" + bareMetalTail

// FencingMACInstallConfig is FencingInstallConfig with the second
// credential keyed by MAC address: 52:54:00:00:00:02, master-1's NIC in
// FencingAgentConfig.
const FencingMACInstallConfig = fencingHead + "    - macAddress: 52:54:00:00:00:02\n" + fencingSecond + computeWorkers + "0\n" + bareMetalTail

// AgentConfig is an agent-config.yaml with the rendezvous IP
// 192.168.111.20 (in every install-config's machine network) and no hosts.
const AgentConfig = `apiVersion: v1beta1
kind: AgentConfig
rendezvousIP: 192.168.111.20
`

// FencingAgentConfig is AgentConfig with the hosts of the fencing
// install-configs: master-0 (52:54:00:00:00:01) and master-1
// (52:54:00:00:00:02).
const FencingAgentConfig = AgentConfig + `hosts:
- hostname: master-0
  role: master
  interfaces: [{name: eth0, macAddress: '52:54:00:00:00:01'}]
- hostname: master-1
  role: master
  interfaces: [{name: eth0, macAddress: '52:54:00:00:00:02'}]
`
