package manifests

import (
	"fmt"
	"net"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/releasepolicy"

	"sigs.k8s.io/yaml"
)

// validateFencing checks controlPlane.fencing, the BMC credentials of a
// two-node cluster with fencing (TNF): only with controlPlane.replicas 2,
// on platform baremetal or none (assisted-service refuses fencing
// elsewhere), exactly two credentials, each complete and naming its host.
// The release rules need the release and are checked by
// ValidateFencingRelease.
func validateFencing(e *errs, ic *InstallConfig) {
	f := ic.ControlPlane.Fencing
	if f == nil {
		return
	}
	if r := ic.ControlPlaneReplicas(); r != 2 {
		e.forbidden("controlPlane.fencing", "fencing credentials are only for a two-node cluster (controlPlane.replicas: 2); found %d replicas", r)
	}
	if p := ic.Platform.PlatformName(); p != "baremetal" && p != "none" && p != "" {
		e.forbidden("controlPlane.fencing", "two-node fencing is supported on platforms baremetal and none only, not %q", p)
	}
	if len(f.Credentials) != 2 {
		e.forbidden("controlPlane.fencing.credentials", "there should be exactly two fencing credentials to support the two node cluster, instead %d credentials were found", len(f.Credentials))
	}
	hosts, addrs, macs := map[string]int{}, map[string]int{}, map[string]int{}
	for i, c := range f.Credentials {
		p := fmt.Sprintf("controlPlane.fencing.credentials[%d]", i)
		for _, req := range []struct{ field, v, what string }{
			{"address", c.Address, "the BMC address, e.g. redfish+https://10.0.0.1/redfish/v1/Systems/1"},
			{"username", c.Username, "the BMC user name"},
			{"password", c.Password, "the BMC password"},
		} {
			if req.v == "" {
				e.required(p+"."+req.field, "%s is required", req.what)
			}
		}
		if c.HostName == "" && c.MACAddress == "" {
			e.required(p, "set hostName (the node's host name) or macAddress (one of its NICs) so the credential can be matched to a host")
		}
		if c.MACAddress != "" {
			if hw, err := net.ParseMAC(c.MACAddress); err != nil || len(hw) != 6 {
				e.invalid(p+".macAddress", c.MACAddress, "not a MAC address; use the form 52:54:00:aa:bb:cc")
			} else if j, dup := macs[hw.String()]; dup {
				e.add(p+".macAddress", TypeDuplicate, c.MACAddress, "also used by controlPlane.fencing.credentials[%d]", j)
			} else {
				macs[hw.String()] = i
			}
		}
		if c.HostName != "" {
			if j, dup := hosts[c.HostName]; dup {
				e.add(p+".hostName", TypeDuplicate, c.HostName, "also used by controlPlane.fencing.credentials[%d]", j)
			}
			hosts[c.HostName] = i
		}
		if c.Address != "" {
			if j, dup := addrs[c.Address]; dup {
				e.add(p+".address", TypeDuplicate, c.Address, "also used by controlPlane.fencing.credentials[%d]", j)
			}
			addrs[c.Address] = i
		}
		switch c.CertificateVerification {
		case "", "Enabled", "Disabled":
		default:
			e.unsupported(p+".certificateVerification", c.CertificateVerification, "Enabled", "Disabled")
		}
	}
}

// ValidateFencingRelease checks that the release ("4.22.3") can apply the
// two-node fencing credentials, by what its assisted-service and
// agent-installer client do with them (pkg/releasepolicy, read from
// openshift/assisted-service release-4.NN: cmd/agentbasedinstaller and
// internal/): nothing before 4.21; in 4.21 the service requires them but
// the client cannot send them; 4.22's client reads only the hostname-keyed
// file; 4.23 and later also read the per-host MAC-keyed files. It returns
// nil without fencing credentials.
func ValidateFencingRelease(ic *InstallConfig, releaseVersion string, lines Lines) error {
	if ic == nil || ic.ControlPlane == nil || ic.ControlPlane.Fencing == nil || len(ic.ControlPlane.Fencing.Credentials) == 0 {
		return nil
	}
	e := newErrs(assetdir.InstallConfig, lines)
	s, err := releasepolicy.For(releaseVersion)
	if err != nil {
		what := fmt.Sprintf("the release version %q is unknown", releaseVersion)
		if releaseVersion != "" {
			what = err.Error()
		}
		e.forbidden("controlPlane.fencing", "two-node fencing depends on the release, and %s", what)
		return e.err()
	}
	v, branch := releaseVersion, s.Branch()
	switch s.Fencing {
	case releasepolicy.FencingNone:
		instead := "use 3 control-plane replicas, or OpenShift 4.22 or later"
		if !s.Minor.Less(releasepolicy.Minor{Major: 4, Minor: 19}) {
			// The arbiter topology exists from 4.19 (assisted-service
			// internal/common/common.go MinimumVersionForArbiterClusters).
			instead = fmt.Sprintf("with 2 control-plane replicas OpenShift %s needs an arbiter host (arbiter.replicas: 1) instead of fencing; or use OpenShift 4.22 or later", v)
		}
		e.forbidden("controlPlane.fencing", "OpenShift %s cannot apply two-node fencing: neither its assisted-service nor its agent-installer client knows fencing (assisted-service %s); %s", v, branch, instead)
	case releasepolicy.FencingServiceOnly:
		e.forbidden("controlPlane.fencing", "OpenShift %s cannot apply two-node fencing: its assisted-service requires fencing credentials on both control-plane hosts, but its agent-installer client has no fencing code (assisted-service %s, cmd/agentbasedinstaller), so they never reach the service and the installation waits forever; use OpenShift 4.22 or later, or an arbiter host (arbiter.replicas: 1) instead of fencing", v, branch)
	case releasepolicy.FencingHostnameFile:
		for i, c := range ic.ControlPlane.Fencing.Credentials {
			if c.HostName == "" {
				e.forbidden(fmt.Sprintf("controlPlane.fencing.credentials[%d].macAddress", i), "OpenShift %s's agent-installer client matches fencing credentials by host name only (assisted-service %s, cmd/agentbasedinstaller/host_config.go): set hostName to the host's name, or use OpenShift 4.23 or later to match by MAC", v, branch)
			}
		}
	case releasepolicy.FencingPerHostMAC:
	default:
		e.forbidden("controlPlane.fencing", "OpenShift %s: no rule for two-node fencing %q", v, s.Fencing)
	}
	return e.err()
}

// fencingFileEntry is one credential as assisted-service's agent-based
// installer client reads fencing-credentials.yaml: it matches keys
// case-insensitively to hostname, macaddress, address, username, password
// and certificateVerification.
type fencingFileEntry struct {
	Hostname                string `json:"hostname,omitempty"`
	MACAddress              string `json:"macaddress,omitempty"`
	Address                 string `json:"address"`
	Username                string `json:"username"`
	Password                string `json:"password"`
	CertificateVerification string `json:"certificateVerification,omitempty"`
}

type fencingFile struct {
	Credentials []fencingFileEntry `json:"credentials"`
}

// FencingFiles lays out the fencing credentials as the client of release
// releaseVersion reads them in the live ISO, after ValidateFencingRelease:
// credentials with a hostName go into one shared file (for
// /etc/assisted/hostconfig/fencing-credentials.yaml), credentials with
// only a macAddress (4.23 and later) into the directory of the host that
// has that MAC (perHost, by index into hosts). For 4.22, whose client
// parses the shared file strictly without a macaddress key, no MAC is
// written. A MAC that no host has is an error. It returns nothing without
// fencing credentials.
func FencingFiles(ic *InstallConfig, hosts []Host, lines Lines, releaseVersion string) (shared []byte, perHost map[int][]byte, err error) {
	if ic == nil || ic.ControlPlane == nil || ic.ControlPlane.Fencing == nil || len(ic.ControlPlane.Fencing.Credentials) == 0 {
		return nil, nil, nil
	}
	if err := ValidateFencingRelease(ic, releaseVersion, lines); err != nil {
		return nil, nil, err
	}
	s, err := releasepolicy.For(releaseVersion)
	if err != nil {
		return nil, nil, err
	}
	hostnameOnly := s.Fencing == releasepolicy.FencingHostnameFile
	var global fencingFile
	byHost := map[int]*fencingFile{}
	e := newErrs(assetdir.InstallConfig, lines)
	for i, c := range ic.ControlPlane.Fencing.Credentials {
		entry := fencingFileEntry{Hostname: c.HostName, MACAddress: c.MACAddress, Address: c.Address,
			Username: c.Username, Password: c.Password, CertificateVerification: c.CertificateVerification}
		if c.HostName != "" {
			if hostnameOnly {
				entry.MACAddress = ""
			}
			global.Credentials = append(global.Credentials, entry)
			continue
		}
		entry.MACAddress = NormalizeMAC(c.MACAddress)
		owner := -1
		for h, host := range hosts {
			for _, itf := range host.Interfaces {
				if NormalizeMAC(itf.MACAddress) == entry.MACAddress {
					owner = h
				}
			}
		}
		if owner < 0 {
			e.invalid(fmt.Sprintf("controlPlane.fencing.credentials[%d].macAddress", i), c.MACAddress,
				"does not match any configured host interface; list the host with this MAC in agent-config.yaml hosts[].interfaces, or use hostName")
			continue
		}
		if byHost[owner] == nil {
			byHost[owner] = &fencingFile{}
		}
		byHost[owner].Credentials = append(byHost[owner].Credentials, entry)
	}
	if err := e.err(); err != nil {
		return nil, nil, err
	}
	if len(global.Credentials) > 0 {
		if shared, err = yaml.Marshal(global); err != nil {
			return nil, nil, fmt.Errorf("encode fencing credentials: %w", err)
		}
	}
	for h, f := range byHost {
		b, err := yaml.Marshal(f)
		if err != nil {
			return nil, nil, fmt.Errorf("encode fencing credentials of host %d: %w", h, err)
		}
		if perHost == nil {
			perHost = map[int][]byte{}
		}
		perHost[h] = b
	}
	return shared, perHost, nil
}
