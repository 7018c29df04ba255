// Package redfish is agentiso's Redfish client for booting a host from virtual media: it parses Metal3-style BMC addresses, logs in with a Redfish session (HTTP Basic where the BMC has none), decides from what the BMC says it is how its firmware boots virtual media (Supermicro, Dell iDRAC, Lenovo, AMI, HPE, as ironic and sushy do), finds the system and its CD/DVD virtual media slot (under the Manager or the System), ejects, inserts an ISO URL, sets a one-time boot override and powers on, retrying the BMCs' documented transient refusals, with bounded time and response sizes and errors that name the BMC, the call and the BMC's own message.
package redfish

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/seed-a052040e/agentiso/internal/redact"
	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

// Address is a parsed BMC address (install-config's
// platform.baremetal.hosts[].bmc.address), in Metal3's schemes
// (baremetal-operator pkg/hardwareutils/bmc, as vendored by
// assisted-service release-4.20): "<driver>[+http|+https]://host[:port]/path",
// HTTPS when no transport is given.
type Address struct {
	// Driver is the scheme's driver part: redfish, redfish-virtualmedia,
	// idrac-virtualmedia, ...
	Driver string
	// Endpoint is the Redfish service's scheme://host[:port].
	Endpoint *url.URL
	// SystemPath is the system's path from the address ("" when the
	// address names none: the service's only system is used).
	SystemPath string
	// VirtualMedia is whether Metal3 would also boot this address with
	// virtual media (the address names a virtual-media driver); the
	// others Metal3 network-boots, agentiso uses virtual media anyway.
	VirtualMedia bool
	// Vendor hints where the virtual media is: "idrac" looks under the
	// System first (iDRAC 6.x firmware moved it there).
	Vendor string
}

// String is the address without credentials, for messages.
func (a *Address) String() string { return a.Endpoint.String() + a.SystemPath }

// redfishDrivers are the drivers agentiso drives through Redfish.
var redfishDrivers = map[string]struct {
	virtualMedia bool
	vendor       string
}{
	"redfish":              {false, ""},
	"redfish-virtualmedia": {true, ""},
	"ilo5-redfish":         {false, "ilo"},
	"ilo5-virtualmedia":    {true, "ilo"},
	"idrac-redfish":        {false, "idrac"},
	"idrac-virtualmedia":   {true, "idrac"},
}

// refused are the drivers Metal3 knows that agentiso cannot use, and why.
var refused = map[string]string{
	"ipmi":    "IPMI has no virtual media: the host can only network-boot (PXE), which needs a provisioning network agentiso does not run; use the BMC's Redfish address (redfish-virtualmedia://...) or boot the ISO by hand",
	"libvirt": "libvirt addresses are virtual BMCs spoken to over IPMI (virtualbmc): no virtual media; use sushy-tools' Redfish address (redfish-virtualmedia://...)",
	"idrac":   "idrac:// is iDRAC's WS-Management interface, which agentiso does not speak; use idrac-virtualmedia://<host>/redfish/v1/Systems/System.Embedded.1",
	"ilo4":    "ilo4:// is HPE iLO 4's proprietary interface (network boot only); iLO 4 firmware 2.30+ has Redfish: use redfish-virtualmedia://",
	"ilo5":    "ilo5:// is HPE iLO 5's proprietary interface; use ilo5-virtualmedia://<host>/redfish/v1/Systems/1",
	"irmc":    "irmc:// is Fujitsu iRMC's proprietary interface; use its Redfish address (redfish-virtualmedia://)",
	"ibmc":    "ibmc:// is Huawei iBMC's interface, which agentiso does not speak; use its Redfish address (redfish-virtualmedia://)",
}

// ParseAddress parses a BMC address. A scheme agentiso cannot boot from
// is refused with the reason.
func ParseAddress(s string) (*Address, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty BMC address")
	}
	if !strings.Contains(s, "://") {
		// Metal3 reads a bare host as IPMI.
		return nil, fmt.Errorf("BMC address %s has no scheme, which Metal3 reads as IPMI: %s", shown(s), refused["ipmi"])
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("BMC address %s is not a URL: %s", shown(s), parseReason(s, err))
	}
	if u.User != nil {
		return nil, fmt.Errorf("BMC address %s carries user information: put the credentials in bmc.username and bmc.password", u.Redacted())
	}
	driver, transport, _ := strings.Cut(strings.ToLower(u.Scheme), "+")
	d, ok := redfishDrivers[driver]
	if !ok {
		if why, known := refused[driver]; known {
			return nil, fmt.Errorf("BMC address %s: %s", u.Redacted(), why)
		}
		return nil, fmt.Errorf("BMC address %s: unknown scheme %q; agentiso boots through Redfish: redfish-virtualmedia://, idrac-virtualmedia://, ilo5-virtualmedia://, redfish:// (each may end in +http or +https)", u.Redacted(), u.Scheme)
	}
	switch transport {
	case "":
		transport = "https"
	case "http", "https":
	default:
		return nil, fmt.Errorf("BMC address %s: transport %q after + must be http or https", u.Redacted(), transport)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("BMC address %s has no host", u.Redacted())
	}
	if u.Port() != "" {
		if _, err := net.LookupPort("tcp", u.Port()); err != nil {
			return nil, fmt.Errorf("BMC address %s: bad port %q", u.Redacted(), u.Port())
		}
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("BMC address %s: a query or fragment is not part of a Redfish address", u.Redacted())
	}
	sys := strings.TrimSuffix(u.Path, "/")
	if sys != "" && !strings.HasPrefix(sys, "/redfish/v1/") {
		return nil, fmt.Errorf("BMC address %s: the path must be the system's Redfish path, such as /redfish/v1/Systems/1", u.Redacted())
	}
	if strings.Contains(sys, "/../") || strings.HasSuffix(sys, "/..") {
		return nil, fmt.Errorf("BMC address %s: the path must not contain \"..\" segments", u.Redacted())
	}
	return &Address{
		Driver:       driver,
		Endpoint:     &url.URL{Scheme: transport, Host: u.Host},
		SystemPath:   sys,
		VirtualMedia: d.virtualMedia,
		Vendor:       d.vendor,
	}, nil
}

// shown is an address as messages show it: its password masked (also
// when it does not parse), control characters escaped, and never quoted
// with %q, whose escaping of a '"' once hid the password from the masking.
func shown(s string) string { return termsafe.String(redact.Password(s)) }

// parseReason is why url.Parse refused s, without s itself (net/url
// quotes it whole, password included) and without any piece of the
// password (an invalid escape names the three characters at fault).
func parseReason(s string, err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ee url.EscapeError
	if errors.As(err, &ee) {
		return "a '%' not followed by two hexadecimal digits (write a '%' in a password as %25; better, put the credentials in bmc.username and bmc.password)"
	}
	reason := err.Error()
	if p := redact.PasswordIn(s); p != "" {
		reason = strings.ReplaceAll(reason, p, redact.Mask)
	}
	return termsafe.String(reason)
}
