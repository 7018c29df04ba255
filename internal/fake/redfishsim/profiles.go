package redfishsim

import "time"

// Profile is a vendor's BMC as the projects that boot bare metal for a
// living document it: what the BMC says it is and the quirks agentiso boot
// must handle to boot the host from virtual media. Each quirk names its
// source (repository, path or commit); the sources are the bare clones the
// project reads (openstack/sushy 820c32f2, openstack/ironic 7bc6aba7,
// dell/iDRAC-Redfish-Scripting issues), docs/serve-boot.md has the table.
type Profile string

// The profiles.
const (
	// ProfileGeneric is a BMC that follows the Redfish standard.
	ProfileGeneric Profile = ""
	// ProfileSupermicro is a Supermicro X11/X12 board.
	ProfileSupermicro Profile = "supermicro"
	// ProfileIDRAC9Old is a Dell iDRAC 9 with firmware 5.x or older.
	ProfileIDRAC9Old Profile = "idrac9-5x"
	// ProfileIDRAC9 is a Dell iDRAC 9 with firmware 6.x/7.x.
	ProfileIDRAC9 Profile = "idrac9-6x"
	// ProfileIDRAC10 is a Dell iDRAC 10 (17th generation PowerEdge).
	ProfileIDRAC10 Profile = "idrac10"
	// ProfileLenovoXCC is a Lenovo XCC with older firmware (no InsertMedia).
	ProfileLenovoXCC Profile = "lenovo-xcc"
	// ProfileASRockRack is an AMI MegaRAC based ASRockRack BMC.
	ProfileASRockRack Profile = "asrockrack"
	// ProfileILO5 is an HPE iLO 5 whose host is still in POST.
	ProfileILO5 Profile = "ilo5"
	// ProfileBasicDisabled is a standard BMC with HTTP Basic
	// authentication disabled: Redfish sessions only.
	ProfileBasicDisabled Profile = "basic-disabled"
	// ProfileNoVirtualMedia is a BMC without virtual media (no licence).
	ProfileNoVirtualMedia Profile = "no-virtual-media"
	// ProfileNoCDImages is a BMC whose only CD slot cannot take an image
	// URL (a slot for the remote console's client only).
	ProfileNoCDImages Profile = "cd-console-only"
	// ProfileOneSlot is a standard BMC whose only virtual media slot is
	// the CD: it boots an ISO but cannot hold a config image beside it.
	ProfileOneSlot Profile = "one-slot"
)

// Profiles returns every profile that boots, then those that cannot.
func Profiles() []Profile {
	return []Profile{ProfileGeneric, ProfileSupermicro, ProfileIDRAC9Old, ProfileIDRAC9, ProfileIDRAC10,
		ProfileLenovoXCC, ProfileASRockRack, ProfileILO5, ProfileBasicDisabled, ProfileOneSlot, ProfileNoVirtualMedia, ProfileNoCDImages}
}

// Boots says whether a host behind this profile can boot an ISO URL.
func (p Profile) Boots() bool { return p != ProfileNoVirtualMedia && p != ProfileNoCDImages }

// Known says whether p is a profile.
func (p Profile) Known() bool {
	for _, q := range Profiles() {
		if p == q {
			return true
		}
	}
	return false
}

// slotSpec is one virtual media slot.
type slotSpec struct {
	id    string
	types []string
	// insertAction: the slot has #VirtualMedia.InsertMedia/EjectMedia;
	// patch: it is inserted by PATCHing the resource (Allow: PATCH).
	insertAction, patch bool
	// boots: the firmware boots from this slot (a one-time boot to the
	// vendor's virtual-media target uses it).
	boots bool
}

// vendor is a profile's behaviour.
type vendor struct {
	// What the BMC says it is: System Manufacturer/Model, Manager
	// Manufacturer/Model/FirmwareVersion.
	manufacturer, model, mgrModel, firmware string
	// managerID and systemID are the vendor's usual ids (when a test
	// names none).
	managerID string
	// mediaUnderSystem forces the virtual media under the System.
	mediaUnderSystem bool
	// noMedia: no virtual media anywhere.
	noMedia bool
	slots   []slotSpec
	// targets are BootSourceOverrideTarget@Redfish.AllowableValues.
	targets []string
	// vmTarget is the one-time boot target the firmware boots virtual
	// media from ("" none: only an OEM call does); localCD means Cd boots
	// the local optical drive instead.
	vmTarget string
	localCD  bool
	// oemImport: the Manager has Dell's ImportSystemConfiguration, whose
	// ServerBoot.1#FirstBootDevice VCD-DVD boots the virtual CD once.
	oemImport bool
	// settingsBoot: the boot override is written to the System's
	// @Redfish.Settings object (applied at the next reset); a PATCH of
	// the System's Boot is refused.
	settingsBoot bool
	// modeRequired: a Boot PATCH without BootSourceOverrideMode is refused.
	modeRequired bool
	// refusesOptional: InsertMedia refuses Inserted and WriteProtected.
	refusesOptional bool
	// post: the host is in POST this long after it starts or resets, and
	// a Boot PATCH meanwhile is refused.
	post time.Duration
	// ejectBusy: an InsertMedia this soon after an EjectMedia fails with
	// SYS446 (HTTP 500), the eject still in progress.
	ejectBusy time.Duration
	// basicDisabled: HTTP Basic authentication is refused.
	basicDisabled bool
}

func cdSlot(id string) slotSpec {
	return slotSpec{id: id, types: []string{"CD", "DVD"}, insertAction: true, boots: true}
}

func floppySlot(id string) slotSpec {
	return slotSpec{id: id, types: []string{"Floppy", "USBStick"}, insertAction: true}
}

func vendorOf(p Profile) vendor {
	switch p {
	case ProfileSupermicro:
		// sushy 11a6de2 (sushy/resources/manager/virtual_media.py,
		// story 2009086): X11/X12 refuse Inserted and WriteProtected in
		// InsertMedia. sushy f7c873f and 595ffbc
		// (sushy/resources/system/system.py, story 2009663): these
		// boards boot virtual media through the UsbCd target only; Cd
		// lists but does not boot it.
		return vendor{manufacturer: "Supermicro", model: "X12DPG-QT6", mgrModel: "X12DPG-QT6", firmware: "01.01.06", managerID: "1",
			slots:   []slotSpec{{id: "CD1", types: []string{"CD", "DVD"}, insertAction: true, boots: true}, floppySlot("USB1")},
			targets: []string{"None", "Pxe", "Floppy", "Cd", "Usb", "Hdd", "BiosSetup", "UsbCd", "UefiBootNext"}, vmTarget: "UsbCd",
			refusesOptional: true}
	case ProfileIDRAC9Old:
		// ironic ironic/drivers/modules/drac/boot.py
		// (DracRedfishVirtualMediaBoot._set_boot_device) and
		// ironic/drivers/modules/redfish/boot.py (_validate_vendor:
		// standard virtual media boot only on iDRAC 9 firmware 6.x and
		// 7.x): a Redfish Cd boot boots the local optical drive; the
		// virtual CD boots through Dell's OEM ImportSystemConfiguration
		// with ServerBoot.1#FirstBootDevice VCD-DVD
		// (sushy/oem/dell/resources/manager/manager.py,
		// set_virtual_boot_device). Manager model and firmware as in
		// sushy/tests/oem/dell/unit/json_samples/manager.json.
		return vendor{manufacturer: "Dell Inc.", model: "PowerEdge R640", mgrModel: "14G Monolithic", firmware: "5.10.50.00", managerID: "iDRAC.Embedded.1",
			slots:   []slotSpec{{id: "RemovableDisk", types: []string{"USBStick"}, insertAction: true}, cdSlot("CD")},
			targets: []string{"None", "Pxe", "Floppy", "Cd", "Hdd", "BiosSetup", "Utilities", "UefiTarget", "SDCard"}, localCD: true,
			oemImport: true}
	case ProfileIDRAC9:
		// ironic ironic/drivers/modules/redfish/boot.py (_validate_vendor):
		// iDRAC 9 firmware 6.x/7.x boots virtual media the standard way;
		// its virtual media is under the System with index ids
		// (dell/iDRAC-Redfish-Scripting issue 265: "Starting in iDRAC
		// version 6.00.02 insert / eject virtual media now uses Systems
		// schema"). ironic 1a0f1cd5 (story 2008504): an insert right
		// after an eject fails while the eject is in progress; the
		// message is iDRAC's SYS446 (dell/iDRAC-Redfish-Scripting issue
		// 60: HTTP 500, "Retry the operation after a few minutes").
		return vendor{manufacturer: "Dell Inc.", model: "PowerEdge R650", mgrModel: "15G Monolithic", firmware: "6.10.30.00", managerID: "iDRAC.Embedded.1",
			mediaUnderSystem: true,
			slots:            []slotSpec{{id: "1", types: []string{"CD", "DVD"}, insertAction: true, boots: true}, {id: "2", types: []string{"USBStick"}, insertAction: true}},
			targets:          []string{"None", "Pxe", "Floppy", "Cd", "Hdd", "BiosSetup", "Utilities", "UefiTarget", "SDCard", "UefiHttp"}, vmTarget: "Cd",
			oemImport: true, ejectBusy: 1500 * time.Millisecond}
	case ProfileIDRAC10:
		// sushy 0865ce5 (launchpad 2121895) and 2c82290
		// (sushy/resources/system/system.py, set_system_boot_options):
		// iDRAC 10 moved the boot override to the System's
		// @Redfish.Settings object, where it must be PATCHed. ironic
		// af0b9751 (launchpad 2125571,
		// ironic/drivers/modules/drac/boot.py _get_acceptable_media_id):
		// only virtual media slot 1 boots, and the slots are not always
		// listed in order; ironic tells iDRAC 10 apart by the Manager's
		// Model (generation > 16) and notes its firmware restarted at
		// 1.x/2.x (8acd96fb).
		return vendor{manufacturer: "Dell Inc.", model: "PowerEdge R770", mgrModel: "17G Monolithic", firmware: "1.20.25.00", managerID: "iDRAC.Embedded.1",
			mediaUnderSystem: true,
			slots: []slotSpec{{id: "2", types: []string{"CD", "DVD", "USBStick"}, insertAction: true},
				{id: "1", types: []string{"CD", "DVD", "USBStick"}, insertAction: true, boots: true}},
			targets: []string{"None", "Pxe", "Cd", "Hdd", "BiosSetup", "Utilities", "UefiTarget", "UefiHttp"}, vmTarget: "Cd",
			settingsBoot: true, oemImport: true}
	case ProfileLenovoXCC:
		// sushy 9e5a103 (sushy/resources/manager/virtual_media.py,
		// _get_insert_media_uri/_allow_patch) and 11a6de2 (Lenovo SD530):
		// no InsertMedia action; the VirtualMedia resource is PATCHed
		// with Image, Inserted and WriteProtected, with If-Match from its
		// ETag (sushy sends it; this emulator answers 428 without it, as
		// the issue reports).
		return vendor{manufacturer: "Lenovo", model: "ThinkSystem SD530", mgrModel: "Lenovo XClarity Controller", firmware: "TEI3A2O 2.70", managerID: "1",
			slots:   []slotSpec{{id: "EXT1", types: []string{"CD", "DVD"}, patch: true, boots: true}, {id: "EXT2", types: []string{"Floppy", "USBStick"}, patch: true}},
			targets: []string{"None", "Pxe", "Cd", "Hdd", "BiosSetup"}, vmTarget: "Cd"}
	case ProfileASRockRack:
		// ironic 54977a14d (ironic/drivers/modules/redfish/management.py,
		// VENDORS_REQUIRING_FULL_BOOT_REQUEST: "american megatrends
		// international", "ami", "asrockrack"): every boot override
		// PATCH must carry BootSourceOverrideMode, Enabled and Target.
		return vendor{manufacturer: "ASRockRack", model: "ROMED8HM3", mgrModel: "AST2500", firmware: "01.02.00", managerID: "Self",
			slots:   []slotSpec{cdSlot("CD1"), floppySlot("USBStick1")},
			targets: []string{"None", "Pxe", "Cd", "Usb", "Hdd", "BiosSetup"}, vmTarget: "Cd", modeRequired: true}
	case ProfileILO5:
		// ironic 2d253a04f (launchpad 2136275,
		// ironic/drivers/modules/redfish/management.py
		// _is_during_post_error): iLO refuses a boot device change while
		// the host is in POST with UnableToModifyDuringSystemPOST (HTTP
		// 400); ironic retries with exponential backoff. sushy
		// connector.py (check_retry_on_exception) retries iLO's
		// InvalidOperationForSystemState the same way.
		return vendor{manufacturer: "HPE", model: "ProLiant DL360 Gen10", mgrModel: "iLO 5", firmware: "iLO 5 v2.72", managerID: "1",
			slots:   []slotSpec{{id: "1", types: []string{"Floppy", "USBStick"}, insertAction: true}, {id: "2", types: []string{"CD", "DVD"}, insertAction: true, boots: true}},
			targets: []string{"None", "Cd", "Hdd", "Usb", "SDCard", "Utilities", "Diags", "BiosSetup", "Pxe", "UefiShell", "UefiHttp", "UefiTarget"}, vmTarget: "Cd",
			post: 2500 * time.Millisecond}
	case ProfileBasicDisabled:
		// sushy sushy/auth.py (SessionOrBasicAuth): sushy logs in through
		// the SessionService first; a BMC with Basic authentication
		// disabled answers 401 to Basic.
		v := vendorOf(ProfileGeneric)
		v.basicDisabled = true
		return v
	case ProfileNoVirtualMedia:
		// ironic ironic/drivers/modules/redfish/boot.py (_get_vmedia: "No
		// suitable virtual media device found"): no VirtualMedia
		// collection under the System or the Manager.
		v := vendorOf(ProfileGeneric)
		v.noMedia, v.slots = true, nil
		return v
	case ProfileOneSlot:
		// Not a vendor's quirk but a limit: one slot, the CD (the
		// generic profile without its floppy/USB slot).
		v := vendorOf(ProfileGeneric)
		v.slots = []slotSpec{cdSlot("Cd")}
		return v
	case ProfileNoCDImages:
		// ironic ironic/drivers/modules/redfish/boot.py
		// (_insert_vmedia_in_resource, Cisco C845A M8): a CD slot for the
		// remote console's client only, with no InsertMedia action and
		// no PATCH.
		v := vendorOf(ProfileGeneric)
		v.slots = []slotSpec{{id: "Cd", types: []string{"CD", "DVD"}}}
		return v
	}
	return vendor{manufacturer: "Emulated", model: "redfishsim", mgrModel: "redfishsim BMC", firmware: "1.0.0",
		slots: []slotSpec{floppySlot("Floppy1"), cdSlot("Cd")}, targets: []string{"None", "Pxe", "Cd", "Hdd", "BiosSetup"}, vmTarget: "Cd"}
}
