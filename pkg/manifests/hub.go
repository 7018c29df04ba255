package manifests

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The BareMetalHost a hub's Metal3 (baremetal-operator) and
// assisted-service's BareMetalAgentController (BMAC) consume, with the
// fields and keys of assisted-service release-4.20:
// vendor/github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1/baremetalhost_types.go
// and internal/controller/controllers/bmh_agent_controller.go. Own small
// types: the metal3 module is not on the module proxy.
const (
	BareMetalHostAPIVersion = "metal3.io/v1alpha1"
	// BMHInfraEnvLabel ties a BareMetalHost to the InfraEnv whose ISO it
	// boots (BMAC's BMH_INFRA_ENV_LABEL).
	BMHInfraEnvLabel = "infraenvs.agent-install.openshift.io"
	// BMHInspectAnnotation "disabled": no Ironic inspection, the agent
	// inventories the host (BMAC sets it when missing).
	BMHInspectAnnotation = "inspect.metal3.io"
	// BMHHostnameAnnotation and BMHRoleAnnotation give the agent its
	// hostname and role (BMAC's BMH_AGENT_HOSTNAME, BMH_AGENT_ROLE).
	BMHHostnameAnnotation = "bmac.agent-install.openshift.io/hostname"
	BMHRoleAnnotation     = "bmac.agent-install.openshift.io/role"
	// BMHInstallerArgsAnnotation carries coreos-installer arguments
	// (BMAC's BMH_AGENT_INSTALLER_ARGS).
	BMHInstallerArgsAnnotation = "bmac.agent-install.openshift.io/installer-args"
)

// Metal3BareMetalHost is a metal3.io/v1alpha1 BareMetalHost, the fields agentiso sets.
type Metal3BareMetalHost struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta        `json:"metadata"`
	Spec     BareMetalHostSpec `json:"spec"`
}

// BareMetalHostSpec is the spec of a BareMetalHost.
type BareMetalHostSpec struct {
	// Online is always written: BMAC powers the host through it.
	Online                bool             `json:"online"`
	BootMACAddress        string           `json:"bootMACAddress,omitempty"`
	BootMode              string           `json:"bootMode,omitempty"`
	AutomatedCleaningMode string           `json:"automatedCleaningMode,omitempty"`
	BMC                   BMCDetails       `json:"bmc"`
	RootDeviceHints       *RootDeviceHints `json:"rootDeviceHints,omitempty"`
}

// BMCDetails is spec.bmc: the address and the Secret with the credentials.
type BMCDetails struct {
	Address                        string `json:"address"`
	CredentialsName                string `json:"credentialsName"`
	DisableCertificateVerification bool   `json:"disableCertificateVerification,omitempty"`
}

// HubHost is one host's handover to a hub: its BMC credentials Secret
// and its BareMetalHost.
type HubHost struct {
	Name          string
	Secret        Secret
	BareMetalHost Metal3BareMetalHost
}

// HubHosts builds, for every platform.baremetal.hosts entry of ic with a
// BMC, the BMC Secret and the BareMetalHost that boot it from infraEnv's
// ISO on a hub (labelled with the InfraEnv, in its namespace).
// installerArgs are agent-config's per-host installer arguments, by
// hostname.
//
// A BMC address in a network-booting Redfish scheme (redfish://,
// idrac-redfish://, ilo5-redfish://) becomes the matching virtual-media
// scheme, which notes say: Metal3 boots the former with iPXE over a
// provisioning network, while agentiso boot (and the BareMetalAgentController's
// InfraEnv ISO) boots these hosts from virtual media.
func HubHosts(ic *InstallConfig, infraEnv *InfraEnv, installerArgs map[string][]string) ([]HubHost, []string, error) {
	if ic == nil || ic.Platform.BareMetal == nil {
		return nil, nil, fmt.Errorf("--for-hub needs install-config.yaml with platform.baremetal.hosts[].bmc (the hosts' BMCs)")
	}
	if infraEnv == nil || infraEnv.Metadata.Name == "" {
		return nil, nil, fmt.Errorf("--for-hub needs the InfraEnv's name")
	}
	var out []HubHost
	var missing, notes []string
	for i, h := range ic.Platform.BareMetal.Hosts {
		if h.BMC == nil || h.BMC.Address == "" {
			continue
		}
		p := fmt.Sprintf("platform.baremetal.hosts[%d].bmc", i)
		if h.BMC.Username == "" || h.BMC.Password == "" {
			missing = append(missing, p+": username and password are required (they go into the BMC Secret)")
			continue
		}
		secretName := h.Name + "-bmc-secret"
		hh := HubHost{Name: h.Name}
		hh.Secret = Secret{
			TypeMeta: TypeMeta{APIVersion: "v1", Kind: "Secret"},
			Metadata: ObjectMeta{Name: secretName, Namespace: infraEnv.Metadata.Namespace},
			Type:     "Opaque",
			Data:     map[string][]byte{"username": []byte(h.BMC.Username), "password": []byte(h.BMC.Password)},
		}
		ann := map[string]string{BMHInspectAnnotation: "disabled", BMHHostnameAnnotation: h.Name}
		if h.Role != "" {
			ann[BMHRoleAnnotation] = h.Role
		}
		if args := installerArgs[h.Name]; len(args) > 0 {
			b, err := json.Marshal(args)
			if err != nil {
				return nil, nil, err
			}
			ann[BMHInstallerArgsAnnotation] = string(b)
		}
		addr, note := HubBMCAddress(h.BMC.Address)
		if note != "" {
			notes = append(notes, fmt.Sprintf("host %s (%s.address): %s", h.Name, p, note))
		}
		hh.BareMetalHost = Metal3BareMetalHost{
			TypeMeta: TypeMeta{APIVersion: BareMetalHostAPIVersion, Kind: "BareMetalHost"},
			Metadata: ObjectMeta{Name: h.Name, Namespace: infraEnv.Metadata.Namespace,
				Labels: map[string]string{BMHInfraEnvLabel: infraEnv.Metadata.Name}, Annotations: ann},
			Spec: BareMetalHostSpec{
				Online:                true,
				BootMACAddress:        strings.ToLower(h.BootMACAddress),
				BootMode:              h.BootMode,
				AutomatedCleaningMode: "disabled",
				BMC:                   BMCDetails{Address: addr, CredentialsName: secretName, DisableCertificateVerification: h.BMC.DisableCertificateVerification},
				RootDeviceHints:       h.RootDeviceHints,
			},
		}
		out = append(out, hh)
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("install-config.yaml: %s", strings.Join(missing, "; "))
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("--for-hub: no host in install-config.yaml platform.baremetal.hosts has a bmc.address: a hub boots hosts through their BMCs")
	}
	return out, notes, nil
}

// HubBMCAddress is the BMC address a hub's BareMetalHost gets: a
// network-booting Redfish scheme is mapped to the virtual-media one of
// the same driver and transport, with a note saying so ("" when the
// address is kept). In Metal3 (baremetal-operator 02aa5059,
// pkg/hardwareutils/bmc/redfish.go) redfish://, ilo5-redfish:// and
// idrac-redfish:// boot with iPXE and need a provisioning network;
// redfish-virtualmedia.go and idrac_virtualmedia.go boot from virtual
// media, as agentiso boot does.
func HubBMCAddress(addr string) (string, string) {
	scheme, rest, ok := strings.Cut(addr, "://")
	if !ok {
		return addr, ""
	}
	driver, transport, _ := strings.Cut(scheme, "+")
	vm := map[string]string{"redfish": "redfish-virtualmedia", "idrac-redfish": "idrac-virtualmedia", "ilo5-redfish": "ilo5-virtualmedia"}[strings.ToLower(driver)]
	if vm == "" {
		return addr, ""
	}
	if transport != "" {
		vm += "+" + transport
	}
	out := vm + "://" + rest
	return out, fmt.Sprintf("the hub's BareMetalHost gets %s:// instead of %s:// (Metal3 network-boots %s:// hosts over a provisioning network; agentiso boots them from virtual media, and so will the hub)", vm, scheme, driver)
}
