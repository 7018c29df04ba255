package nodejoin

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/pkg/manifests"
	"github.com/seed-a052040e/agentiso/pkg/nmstate"
)

// NodesConfigFile is the input of node-image create in its directory,
// with the layout of upstream's nodes-config.yaml (openshift/installer
// pkg/asset/agent/joiner/addnodesconfig.go): hosts as in agent-config.yaml,
// and optional cpuArchitecture, sshKey and bootArtifactsBaseURL.
const NodesConfigFile = "nodes-config.yaml"

// NodesConfig is nodes-config.yaml, decoded and checked.
type NodesConfig struct {
	APIVersion           string                `json:"apiVersion,omitempty"`
	Kind                 string                `json:"kind,omitempty"`
	Metadata             map[string]any        `json:"metadata,omitempty"`
	CPUArchitecture      string                `json:"cpuArchitecture,omitempty"`
	SSHKey               string                `json:"sshKey,omitempty"`
	BootArtifactsBaseURL string                `json:"bootArtifactsBaseURL,omitempty"`
	Hosts                []manifests.AgentHost `json:"hosts,omitempty"`

	// lines are the file's line numbers, for the checks made once the
	// cluster is read (CheckRoles); nil for the single-host flags.
	lines manifests.Lines
}

// ParseNodesConfig decodes nodes-config.yaml strictly (unknown fields are
// errors with their line) and checks its hosts.
func ParseNodesConfig(data []byte) (*NodesConfig, error) {
	nc := &NodesConfig{}
	dec, err := manifests.DecodeStrict(NodesConfigFile, data, nc)
	if err != nil {
		return nil, err
	}
	nc.lines = dec.Lines
	return nc, nc.check(dec.Lines)
}

func (nc *NodesConfig) check(lines manifests.Lines) error {
	var errs []error
	if len(nc.Hosts) == 0 {
		errs = append(errs, fmt.Errorf("%s: hosts: at least one host must be defined", NodesConfigFile))
	}
	if err := manifests.ValidateHosts(NodesConfigFile, nc.Hosts, lines); err != nil {
		errs = append(errs, err)
	}
	for i, h := range nc.Hosts {
		where := fmt.Sprintf("%s:%d: hosts[%d]", NodesConfigFile, lines.Line(fmt.Sprintf("hosts[%d]", i)), i)
		if len(h.Interfaces) == 0 {
			errs = append(errs, fmt.Errorf("%s.interfaces: every host needs at least one interface with its MAC address: the host finds its configuration by MAC", where))
		}
	}
	if u := nc.BootArtifactsBaseURL; u != "" {
		if why := badBootArtifactsURL(u); why != "" {
			errs = append(errs, fmt.Errorf("%s:%d: bootArtifactsBaseURL %q: %s", NodesConfigFile, lines.Line("bootArtifactsBaseURL"), u, why))
		}
		nc.BootArtifactsBaseURL = strings.TrimSuffix(u, "/")
	}
	return errors.Join(errs...)
}

// SingleHost is the nodes-config of node-image create's single-host flags
// (--mac-address and the flags that go with it, as oc adm node-image
// create's). rootDeviceHint is "<hint>:<value>" (deviceName:/dev/sda);
// networkConfig is an NMState YAML document, "" for DHCP.
func SingleHost(mac, hostname, rootDeviceHint string, networkConfig []byte, cpuArch, sshKey string) (*NodesConfig, error) {
	if _, err := net.ParseMAC(mac); err != nil || strings.Count(mac, ":") != 5 {
		return nil, fmt.Errorf("--mac-address %q is not a MAC address (e.g. 00:d8:e7:c7:4b:bb)", mac)
	}
	h := manifests.AgentHost{Hostname: hostname, Interfaces: []manifests.HostInterface{{Name: "eth0", MACAddress: mac}}}
	if rootDeviceHint != "" {
		name, value, ok := strings.Cut(rootDeviceHint, ":")
		if !ok || name == "" || value == "" {
			return nil, fmt.Errorf("--root-device-hint %q: use <hint name>:<value>, e.g. deviceName:/dev/sda", rootDeviceHint)
		}
		h.RootDeviceHints = &manifests.RootDeviceHints{}
		if _, err := manifests.DecodeStrict("--root-device-hint", []byte(name+": "+quoteYAML(value)), h.RootDeviceHints); err != nil {
			return nil, fmt.Errorf("--root-device-hint %q: %w", rootDeviceHint, err)
		}
	}
	if len(networkConfig) > 0 {
		if err := nmstate.Validate(networkConfig, nmstate.Options{}); err != nil {
			return nil, fmt.Errorf("--network-config-path: %w", err)
		}
		js, err := yaml.YAMLToJSON(networkConfig)
		if err != nil {
			return nil, fmt.Errorf("--network-config-path: %w", err)
		}
		h.NetworkConfig = js
		if nc, err := manifests.ParseNetworkConfig(js); err == nil {
			if names := nc.InterfaceNames(); len(names) > 0 {
				h.Interfaces[0].Name = names[0]
			}
		}
	}
	nc := &NodesConfig{CPUArchitecture: cpuArch, SSHKey: sshKey, Hosts: []manifests.AgentHost{h}}
	return nc, nc.check(nil)
}

func quoteYAML(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// NewHosts is what the conflict checks need of the hosts.
func (nc *NodesConfig) NewHosts() []NewHost {
	var out []NewHost
	for _, h := range nc.Hosts {
		nh := NewHost{Name: h.Hostname, Role: h.Role}
		for _, itf := range h.Interfaces {
			nh.MACs = append(nh.MACs, manifests.NormalizeMAC(itf.MACAddress))
		}
		if len(h.NetworkConfig) > 0 {
			if cfg, err := manifests.ParseNetworkConfig(h.NetworkConfig); err == nil {
				for _, a := range cfg.StaticIPs() {
					nh.IPs = append(nh.IPs, a.String())
				}
			}
		}
		out = append(out, nh)
	}
	return out
}

// badBootArtifactsURL says why u cannot be the base URL the iPXE script
// boots the PXE files from ("" when it can): the URL goes into kernel
// arguments and the script.
func badBootArtifactsURL(u string) string {
	pu, err := url.Parse(u)
	switch {
	case err != nil || pu.Host == "":
		return "not a URL; use e.g. http://10.0.0.1:8080/boot"
	case pu.Scheme != "http" && pu.Scheme != "https":
		return "hosts download the PXE files over http or https, not " + pu.Scheme
	case strings.ContainsAny(u, "?#"):
		return "it has a query or a fragment: the file names are appended to it"
	case strings.ContainsAny(u, " \t\r\n\"'$\\"):
		return "no spaces, quotes, $ or \\: the URL goes into kernel arguments and an iPXE script"
	}
	return ""
}
