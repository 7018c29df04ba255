package redfish

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

// rules are how agentiso boots virtual media on one BMC, decided from what
// the BMC says it is (System and Manager Manufacturer, Model,
// FirmwareVersion) and which resources and actions it has, before anything
// is changed. Each rule follows what OpenStack ironic and its Redfish
// library sushy do (docs/serve-boot.md has the table with the sources).
type rules struct {
	// vendor names the BMC for messages and the outcome.
	vendor string
	// target is the one-time BootSourceOverrideTarget that boots the
	// virtual CD ("Cd"; "UsbCd" on Supermicro).
	target string
	// oem is Dell's ImportSystemConfiguration action, used instead of
	// the standard boot override; fqdd the iDRAC's FQDD for it.
	oem, fqdd string
	// withMode: every boot override PATCH carries BootSourceOverrideMode.
	withMode bool
	// slot, when set, is the only virtual media slot Id that boots.
	slot string
	// refuse, when set, is why this BMC cannot boot an ISO URL.
	refuse string
}

// fullBootVendors need BootSourceOverrideMode in every boot override
// PATCH (ironic 54977a14d, redfish/management.py
// VENDORS_REQUIRING_FULL_BOOT_REQUEST; matched here as whole names, where
// ironic matches substrings).
func fullBootVendor(m string) bool {
	m = strings.ToLower(strings.TrimSpace(m))
	return m == "ami" || strings.HasPrefix(m, "ami ") || strings.Contains(m, "american megatrends") ||
		strings.Contains(m, "asrockrack") || strings.Contains(m, "asrock rack") || m == "redfish_compatible"
}

// idracGeneration is the iDRAC's generation from the Manager's Model
// ("14G Monolithic"), as ironic's DracRedfishVirtualMediaBoot
// ._get_idrac_version_from_model (ironic af0b9751): PowerEdge generation
// above 16 is iDRAC 10, 14 to 16 iDRAC 9, 12 and 13 iDRAC 8; 0 unknown.
func idracGeneration(model string) int {
	if len(model) < 2 {
		return 0
	}
	g, err := strconv.Atoi(model[:2])
	switch {
	case err != nil:
		return 0
	case g > 16:
		return 10
	case g >= 14:
		return 9
	case g >= 12:
		return 8
	}
	return 0
}

// major is a firmware version's first number (-1 when there is none).
func major(v string) int {
	f, _, _ := strings.Cut(strings.TrimSpace(v), ".")
	n, err := strconv.Atoi(f)
	if err != nil {
		return -1
	}
	return n
}

// oemImportTarget is the Manager's Dell ImportSystemConfiguration action
// (sushy oem/dell/resources/manager/manager.py: an Actions.Oem key ending
// in #OemManager.ImportSystemConfiguration).
func (m *manager) oemImportTarget() string {
	for k, raw := range m.Actions.Oem {
		if strings.HasSuffix(k, "#OemManager.ImportSystemConfiguration") {
			var a struct {
				Target string `json:"target"`
			}
			if json.Unmarshal(raw, &a) == nil {
				return a.Target
			}
		}
	}
	return ""
}

// rulesFor decides how to boot this BMC's virtual CD.
func rulesFor(sys *computerSystem, mgrs []manager) rules {
	r := rules{target: "Cd"}
	var bmc *manager
	for i := range mgrs {
		if bmc == nil || mgrs[i].ManagerType == "BMC" {
			bmc = &mgrs[i]
		}
	}
	manuf := sys.Manufacturer
	if manuf == "" && bmc != nil {
		manuf = bmc.Manufacturer
	}
	r.vendor = strings.TrimSpace(manuf + " " + sys.Model)
	if bmc != nil && bmc.FirmwareVersion != "" {
		r.vendor += fmt.Sprintf(" (BMC %s, firmware %s)", strings.TrimSpace(bmc.Model), bmc.FirmwareVersion)
	}
	// the BMC's words: escaped, so that they forge no line of the output
	r.vendor = termsafe.String(trim(r.vendor, 200))
	lower := strings.ToLower(manuf)
	switch {
	case strings.Contains(lower, "dell"):
		gen, fw, oem := 0, -1, ""
		if bmc != nil {
			gen, fw, oem = idracGeneration(bmc.Model), major(bmc.FirmwareVersion), bmc.oemImportTarget()
			r.fqdd = bmc.ID
		}
		switch {
		case gen == 10:
			// ironic af0b9751 (drac/boot.py _get_acceptable_media_id):
			// only virtual media slot 1 boots on iDRAC 10; the boot
			// override is on the System's Settings object (sushy
			// 0865ce5, 2c82290), which setBoot finds by itself.
			r.slot = "1"
		case gen == 9 && (fw == 6 || fw == 7), gen == 0 && fw >= 6 && fw <= 7:
			// ironic redfish/boot.py _validate_vendor: iDRAC 9
			// firmware 6.x and 7.x boot virtual media the standard way.
		case oem != "":
			// ironic drac/boot.py DracRedfishVirtualMediaBoot
			// ._set_boot_device and sushy oem/dell manager.py
			// set_virtual_boot_device: on older iDRAC firmware a Redfish
			// Cd boot boots the local optical drive; Dell's OEM
			// ImportSystemConfiguration with
			// ServerBoot.1#FirstBootDevice VCD-DVD boots the virtual CD.
			r.oem = oem
			if r.fqdd == "" {
				r.fqdd = "iDRAC.Embedded.1"
			}
		default:
			r.refuse = "on this iDRAC firmware a Redfish one-time Cd boot boots the local optical drive, not the virtual media, and the iDRAC offers no OEM ImportSystemConfiguration to boot the virtual CD: update the iDRAC firmware to 6.00 or later"
		}
	case lower == "supermicro":
		// sushy f7c873f and 595ffbc (system.py set_system_boot_options):
		// X11/X12 boards boot virtual media through UsbCd; the
		// ARS-111GL-NHR through Cd (sushy's _supermicro_models_cd_vmedia).
		if strings.ToLower(sys.Model) != "ars-111gl-nhr" && slices.Contains(sys.allowedTargets(), "UsbCd") {
			r.target = "UsbCd"
		}
	case fullBootVendor(manuf):
		r.withMode = true
	}
	return r
}

// named is " (<vendor>)" for messages, "" when the BMC says nothing.
func (r rules) named() string {
	if r.vendor == "" {
		return ""
	}
	return " (" + r.vendor + ")"
}
