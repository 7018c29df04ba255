package manifests

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"

	"sigs.k8s.io/yaml"
)

// validateFencing checks controlPlane.fencing, the BMC credentials of a
// two-node cluster with fencing (TNF): only with controlPlane.replicas 2,
// on platform baremetal or none (assisted-service refuses fencing
// elsewhere), exactly two credentials, each complete and naming its host.
// The feature gate and release rules need the release and are checked by
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

// Releases for two-node fencing: assisted-service supports it from 4.20;
// the DualReplica feature gate is on by default from 4.22.
const (
	fencingMinMinor       = 20
	dualReplicaDefaultMin = 22
)

// ValidateFencingRelease checks the rules of two-node fencing that depend
// on the release version ("4.21.3"): OpenShift 4.20 or later, and the
// DualReplica feature gate enabled before 4.22. It returns nil without
// fencing credentials.
func ValidateFencingRelease(ic *InstallConfig, releaseVersion string, lines Lines) error {
	if ic == nil || ic.ControlPlane == nil || ic.ControlPlane.Fencing == nil || len(ic.ControlPlane.Fencing.Credentials) == 0 {
		return nil
	}
	e := newErrs(assetdir.InstallConfig, lines)
	major, minor, ok := releaseMajorMinor(releaseVersion)
	switch {
	case !ok:
		e.forbidden("controlPlane.fencing", "two-node fencing needs OpenShift 4.20 or later, and the release version %q is unknown", releaseVersion)
	case major < 4 || (major == 4 && minor < fencingMinMinor):
		e.forbidden("controlPlane.fencing", "two-node fencing needs OpenShift 4.%d or later; the release is %s", fencingMinMinor, releaseVersion)
	case major == 4 && minor < dualReplicaDefaultMin && !ic.featureGateOn("DualReplica"):
		e.forbidden("controlPlane.fencing", "fencing configuration requires the DualReplica feature gate before OpenShift 4.%d: add featureSet: TechPreviewNoUpgrade or featureGates: [DualReplica=true]", dualReplicaDefaultMin)
	}
	return e.err()
}

// releaseMajorMinor reads "X.Y" from a version like "4.21.3" or "4.22.0-ec.1".
func releaseMajorMinor(v string) (int, int, bool) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minorDigits := parts[1]
	if i := strings.IndexFunc(minorDigits, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minorDigits = minorDigits[:i]
	}
	minor, err2 := strconv.Atoi(minorDigits)
	return major, minor, err1 == nil && err2 == nil
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

// FencingFiles lays out the fencing credentials as upstream does for the
// live ISO: credentials with a hostName go into one shared file (for
// /etc/assisted/hostconfig/fencing-credentials.yaml), credentials with
// only a macAddress into the directory of the host that has that MAC
// (perHost, by index into hosts). A MAC that no host has is an error. It
// returns nothing without fencing credentials.
func FencingFiles(ic *InstallConfig, hosts []Host, lines Lines) (shared []byte, perHost map[int][]byte, err error) {
	if ic == nil || ic.ControlPlane == nil || ic.ControlPlane.Fencing == nil {
		return nil, nil, nil
	}
	var global fencingFile
	byHost := map[int]*fencingFile{}
	e := newErrs(assetdir.InstallConfig, lines)
	for i, c := range ic.ControlPlane.Fencing.Credentials {
		entry := fencingFileEntry{Hostname: c.HostName, MACAddress: c.MACAddress, Address: c.Address,
			Username: c.Username, Password: c.Password, CertificateVerification: c.CertificateVerification}
		if c.HostName != "" {
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
