package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

type odataRef struct {
	ID string `json:"@odata.id"`
}

type collection struct {
	Members []odataRef `json:"Members"`
}

type computerSystem struct {
	ID           string `json:"Id"`
	PowerState   string `json:"PowerState"`
	Manufacturer string `json:"Manufacturer"`
	Model        string `json:"Model"`
	Boot         struct {
		Enabled string   `json:"BootSourceOverrideEnabled"`
		Target  string   `json:"BootSourceOverrideTarget"`
		Mode    string   `json:"BootSourceOverrideMode"`
		Allowed []string `json:"BootSourceOverrideTarget@Redfish.AllowableValues"`
	} `json:"Boot"`
	Settings *struct {
		Object odataRef `json:"SettingsObject"`
	} `json:"@Redfish.Settings"`
	Actions struct {
		Reset struct {
			Target  string   `json:"target"`
			Allowed []string `json:"ResetType@Redfish.AllowableValues"`
		} `json:"#ComputerSystem.Reset"`
	} `json:"Actions"`
	Links struct {
		ManagedBy []odataRef `json:"ManagedBy"`
	} `json:"Links"`
	VirtualMedia *odataRef `json:"VirtualMedia"`
}

func (s *computerSystem) allowedTargets() []string { return s.Boot.Allowed }

type manager struct {
	ID              string    `json:"Id"`
	ManagerType     string    `json:"ManagerType"`
	Manufacturer    string    `json:"Manufacturer"`
	Model           string    `json:"Model"`
	FirmwareVersion string    `json:"FirmwareVersion"`
	VirtualMedia    *odataRef `json:"VirtualMedia"`
	Actions         struct {
		Oem map[string]json.RawMessage `json:"Oem"`
	} `json:"Actions"`
}

type virtualMedia struct {
	ID         string   `json:"@odata.id"`
	Ident      string   `json:"Id"`
	MediaTypes []string `json:"MediaTypes"`
	Inserted   *bool    `json:"Inserted"`
	Image      *string  `json:"Image"`
	Actions    struct {
		Insert *struct {
			Target string `json:"target"`
		} `json:"#VirtualMedia.InsertMedia"`
		Eject *struct {
			Target string `json:"target"`
		} `json:"#VirtualMedia.EjectMedia"`
	} `json:"Actions"`
	// byPatch: the slot has no InsertMedia action but allows PATCH (its
	// Allow header): it is inserted by PATCHing it (sushy 9e5a103,
	// Lenovo XCC).
	byPatch bool
}

// Step is a step of a virtual-media boot, reported as it starts.
type Step string

// The steps, in order.
const (
	StepConnect Step = "connecting"
	StepFind    Step = "finding virtual media"
	StepEject   Step = "ejecting"
	StepInsert  Step = "inserting"
	// StepInsertConfig puts the config image in a second slot.
	StepInsertConfig Step = "inserting the config image"
	StepBoot         Step = "setting one-time boot"
	StepPower        Step = "powering on"
	StepReset        Step = "resetting"
)

// Media is the ISO to insert and the credentials the BMC should fetch it
// with (Redfish InsertMedia UserName/Password; empty for none).
type Media struct {
	URL                string
	Username, Password string
	// ConfigURL, when set, is a config image (create config-image) to
	// insert in a second slot, with the same credentials, for a host
	// booted from the generic ISO.
	ConfigURL string
}

// target is a resolved system and its CD slot.
type target struct {
	sysPath string
	sys     computerSystem
	etag    string
	media   *virtualMedia
	// where says where the slot was found, "Manager" or "System".
	where string
	rules rules
	// others are the other slots that take an image URL (CD/DVD, USB
	// stick or floppy), in the order found: where a config image goes.
	others []*virtualMedia
}

// system finds the system: the address's path, or the service's only one.
func (c *Client) system(ctx context.Context) (string, error) {
	if c.addr.SystemPath != "" {
		return c.addr.SystemPath, nil
	}
	if err := c.login(ctx); err != nil {
		return "", err
	}
	root := c.root
	if root.Systems == nil || root.Systems.ID == "" {
		return "", &CallError{BMC: c.addr.String(), Call: "GET /redfish/v1/", Message: "the service root lists no Systems"}
	}
	var coll collection
	if _, err := c.get(ctx, root.Systems.ID, &coll); err != nil {
		return "", err
	}
	switch len(coll.Members) {
	case 0:
		return "", &CallError{BMC: c.addr.String(), Call: "GET " + root.Systems.ID, Message: "the BMC manages no system"}
	case 1:
		return coll.Members[0].ID, nil
	}
	var ids []string
	for _, m := range coll.Members {
		if err := c.checkPath(m.ID); err != nil {
			return "", err
		}
		ids = append(ids, m.ID)
	}
	return "", fmt.Errorf("BMC %s manages %d systems (%s): name one in the address, e.g. %s", c.addr, len(ids), strings.Join(ids, ", "), c.addr.Endpoint.String()+ids[0])
}

func isCD(s string) bool { return s == "CD" || s == "DVD" }

// isRemovable is a media type a config image can be attached as besides
// a CD: a USB stick or a floppy (ironic's config_via_removable,
// ironic/drivers/modules/redfish/boot.py, attaches its configuration
// this way). The host finds the config image by its volume label
// whatever the device.
func isRemovable(s string) bool { return s == "USBStick" || s == "Floppy" }

// resolve finds the system, decides the vendor's rules and finds the
// CD/DVD virtual media slot to use: under the System (newer firmware) or
// under the Managers that manage it. It only reads.
func (c *Client) resolve(ctx context.Context) (*target, error) {
	sp, err := c.system(ctx)
	if err != nil {
		return nil, err
	}
	t := &target{sysPath: sp}
	if t.etag, err = c.get(ctx, sp, &t.sys); err != nil {
		return nil, err
	}
	type place struct{ where, coll string }
	var places []place
	if t.sys.VirtualMedia != nil && t.sys.VirtualMedia.ID != "" {
		places = append(places, place{"System", t.sys.VirtualMedia.ID})
	}
	var mgrs []manager
	for _, m := range t.sys.Links.ManagedBy {
		var mg manager
		if _, err := c.get(ctx, m.ID, &mg); err != nil {
			return nil, err
		}
		mgrs = append(mgrs, mg)
		if mg.VirtualMedia != nil && mg.VirtualMedia.ID != "" {
			places = append(places, place{"Manager", mg.VirtualMedia.ID})
		}
	}
	t.rules = rulesFor(&t.sys, mgrs)
	if t.rules.refuse != "" {
		return nil, fmt.Errorf("BMC %s%s: %s", c.addr, t.rules.named(), t.rules.refuse)
	}
	var noInsert, notBooting []string
	for _, p := range places {
		var coll collection
		if _, err := c.get(ctx, p.coll, &coll); err != nil {
			var ce *CallError
			if errors.As(err, &ce) && ce.Status == http.StatusNotFound {
				continue
			}
			return nil, err
		}
		for _, m := range coll.Members {
			var vm virtualMedia
			h, err := c.getH(ctx, m.ID, &vm)
			if err != nil {
				return nil, err
			}
			if vm.ID == "" {
				vm.ID = m.ID
			}
			if err := c.checkPath(vm.ID); err != nil {
				return nil, err
			}
			insertable := vm.Actions.Insert != nil || strings.Contains(strings.ToUpper(h.Get("Allow")), "PATCH")
			vm.byPatch = vm.Actions.Insert == nil && insertable
			if !slices.ContainsFunc(vm.MediaTypes, isCD) {
				if insertable && slices.ContainsFunc(vm.MediaTypes, isRemovable) {
					t.others = append(t.others, &vm)
				}
				continue
			}
			if !insertable {
				noInsert = append(noInsert, vm.ID)
				continue
			}
			if id := vm.Ident; t.media != nil || (t.rules.slot != "" && id != t.rules.slot && path.Base(vm.ID) != t.rules.slot) {
				if t.media == nil {
					notBooting = append(notBooting, vm.ID)
				}
				t.others = append(t.others, &vm)
				continue
			}
			t.media, t.where = &vm, p.where
		}
	}
	if t.media != nil {
		return t, nil
	}
	switch {
	case len(noInsert) > 0:
		return nil, fmt.Errorf("BMC %s%s: system %s: the CD/DVD virtual media slot %s cannot take an image URL (neither #VirtualMedia.InsertMedia nor PATCH is offered: it serves the BMC's remote console only): boot the ISO from the BMC's web console, or update the BMC firmware", c.addr, t.rules.named(), sp, strings.Join(noInsert, ", "))
	case len(notBooting) > 0:
		return nil, fmt.Errorf("BMC %s%s: system %s: only virtual media slot %s boots on this BMC and it is not there (found %s)", c.addr, t.rules.named(), sp, t.rules.slot, strings.Join(notBooting, ", "))
	}
	where := "under the System"
	if len(t.sys.Links.ManagedBy) > 0 {
		where += " nor under its Manager"
	}
	return nil, fmt.Errorf("BMC %s%s: system %s has no CD/DVD virtual media slot %s (looked in %d collection(s)): the BMC cannot boot an ISO URL (a license may be needed, e.g. iDRAC Enterprise or iLO Advanced)", c.addr, t.rules.named(), sp, where, len(places))
}

func (vm *virtualMedia) inserted() bool { return vm.Inserted != nil && *vm.Inserted }

func actionPath(a *struct {
	Target string `json:"target"`
}, vm *virtualMedia, name string) string {
	if a != nil && a.Target != "" {
		return a.Target
	}
	return strings.TrimSuffix(vm.ID, "/") + "/Actions/VirtualMedia." + name
}

// Outcome is what BootFromISO or Eject did to a system, as far as it got.
type Outcome struct {
	// System is the system's Redfish path.
	System string
	// Vendor is what the BMC says it is (manufacturer, model, BMC
	// firmware), as far as it says.
	Vendor string
	// Media is the CD/DVD virtual media slot's path and Under where it
	// was found: "Manager" or "System".
	Media, Under string
	// Ejected is whether media was inserted and ejected, EjectedImage
	// its URL as the BMC named it.
	Ejected      bool
	EjectedImage string
	// BootTarget is how the one-time boot to the virtual CD was set:
	// "Cd", "UsbCd" (Supermicro), or "VCD-DVD" (Dell's OEM
	// ImportSystemConfiguration).
	BootTarget string
	// Power is the ResetType that started the system from the CD: "On"
	// when it was off, else "ForceRestart", "PowerCycle" or "ForceOff+On".
	Power string
	// ConfigMedia is the slot the config image was inserted in, and
	// EjectedConfig the config image an eject removed (its URL as the BMC
	// named it).
	ConfigMedia, EjectedConfig string
}

func (t *target) outcome() Outcome {
	return Outcome{System: t.sysPath, Vendor: t.rules.vendor, Media: t.media.ID, Under: t.where}
}

// eject removes the slot's media: EjectMedia, or a PATCH of the slot.
func (c *Client) eject(ctx context.Context, vm *virtualMedia) error {
	if !vm.byPatch {
		return c.post(ctx, actionPath(vm.Actions.Eject, vm, "EjectMedia"), map[string]any{})
	}
	etag, err := c.get(ctx, vm.ID, &virtualMedia{})
	if err != nil {
		return err
	}
	return c.patch(ctx, vm.ID, etag, map[string]any{"Image": nil, "Inserted": false})
}

// BootFromISO boots the host from media: ejects what is mounted, inserts
// the ISO URL, sets a one-time boot override to the virtual CD as this
// vendor's firmware boots it, and powers the system on (or resets it when
// on). step is told each step as it starts. The outcome says what was
// done, also when an error stopped it.
func (c *Client) BootFromISO(ctx context.Context, media Media, step func(Step, string)) (Outcome, error) {
	if step == nil {
		step = func(Step, string) {}
	}
	step(StepFind, "")
	t, err := c.resolve(ctx)
	if err != nil {
		return Outcome{}, err
	}
	out := t.outcome()
	detail := fmt.Sprintf("%s, CD at %s under the %s", t.sysPath, t.media.ID, t.where)
	if t.rules.vendor != "" {
		detail += ", " + t.rules.vendor
	}
	if t.media.inserted() {
		step(StepEject, detail)
		if err := c.eject(ctx, t.media); err != nil {
			return out, err
		}
		out.Ejected = true
		if t.media.Image != nil {
			out.EjectedImage = *t.media.Image
		}
	}
	step(StepInsert, detail)
	if err := c.insert(ctx, t.media, media); err != nil {
		return out, err
	}
	var after virtualMedia
	if _, err := c.get(ctx, t.media.ID, &after); err != nil {
		return out, err
	}
	if !after.inserted() || after.Image == nil || *after.Image != media.URL {
		got := "none"
		if after.Image != nil {
			got = termsafe.String(trim(*after.Image, 300))
		}
		return out, &CallError{BMC: c.addr.String(), Call: "GET " + t.media.ID, Message: fmt.Sprintf("InsertMedia was accepted but the media is not inserted (Inserted %v, Image %s)", after.inserted(), got)}
	}
	if media.ConfigURL != "" {
		if out.ConfigMedia, err = c.insertConfig(ctx, t, media, step, detail); err != nil {
			return out, err
		}
	}
	step(StepBoot, detail)
	if out.BootTarget, err = c.setBoot(ctx, t); err != nil {
		return out, err
	}
	out.Power, err = c.power(ctx, t, step, detail)
	return out, err
}

// ConfigImageName is the file name of the config image (create
// config-image): an eject removes a slot's media of that name too.
const ConfigImageName = "agentconfig.noarch.iso"

// configSlot picks the slot for the config image among the other slots:
// a USB stick or floppy slot first (ironic's config_via_removable), then
// another CD.
func (t *target) configSlot() *virtualMedia {
	for _, vm := range t.others {
		if slices.ContainsFunc(vm.MediaTypes, isRemovable) {
			return vm
		}
	}
	if len(t.others) > 0 {
		return t.others[0]
	}
	return nil
}

// insertConfig puts the config image in a second slot (ejecting what it
// holds) and checks it is there; it returns the slot's path.
func (c *Client) insertConfig(ctx context.Context, t *target, media Media, step func(Step, string), detail string) (string, error) {
	vm := t.configSlot()
	if vm == nil {
		return "", fmt.Errorf("BMC %s%s: system %s has no second virtual media slot for the config image (only the CD at %s takes an image URL): attach the config image another way (a USB stick, the BMC's console), or boot the agent ISO of create image instead of the generic ISO", c.addr, t.rules.named(), t.sysPath, t.media.ID)
	}
	d := detail + ", config image at " + vm.ID
	if vm.inserted() {
		step(StepEject, d)
		if err := c.eject(ctx, vm); err != nil {
			return vm.ID, err
		}
	}
	step(StepInsertConfig, d)
	cfg := media
	cfg.URL = media.ConfigURL
	if err := c.insert(ctx, vm, cfg); err != nil {
		return vm.ID, err
	}
	var after virtualMedia
	if _, err := c.get(ctx, vm.ID, &after); err != nil {
		return vm.ID, err
	}
	if !after.inserted() || after.Image == nil || *after.Image != cfg.URL {
		return vm.ID, &CallError{BMC: c.addr.String(), Call: "GET " + vm.ID, Message: "the config image was accepted but is not inserted"}
	}
	return vm.ID, nil
}

// dellBootOnceVCD is the Server Configuration Profile that makes an iDRAC
// boot its virtual CD once (sushy oem/dell manager.py IDRAC_CONFIG_CD;
// the iDRAC refuses insignificant white space in it).
const dellBootOnceVCD = `<SystemConfiguration><Component FQDD="%s"><Attribute Name="ServerBoot.1#BootOnce">Enabled</Attribute><Attribute Name="ServerBoot.1#FirstBootDevice">VCD-DVD</Attribute></Component></SystemConfiguration>`

// setBoot sets the one-time boot to the virtual CD and returns the target.
func (c *Client) setBoot(ctx context.Context, t *target) (string, error) {
	if t.rules.oem != "" {
		body := map[string]any{"ShareParameters": map[string]any{"Target": []string{"ALL"}}, "ImportBuffer": fmt.Sprintf(dellBootOnceVCD, t.rules.fqdd)}
		if err := c.post(ctx, t.rules.oem, body); err != nil {
			var ce *CallError
			if errors.As(err, &ce) && strings.Contains(ce.Message, "LC068") {
				ce.Hint = "a configuration job is pending on the iDRAC: let it finish or delete it from the iDRAC's job queue, then run agentiso boot again"
			}
			return "", err
		}
		return "VCD-DVD", nil
	}
	// The boot override is PATCHed where the BMC keeps it: the System, or
	// its @Redfish.Settings object when that holds the override (sushy
	// 2c82290; iDRAC 10, sushy 0865ce5).
	bootPath, etag, allowed, mode := t.sysPath, t.etag, t.sys.Boot.Allowed, t.sys.Boot.Mode
	reread := func() error {
		var err error
		t.etag, err = c.get(ctx, t.sysPath, &t.sys)
		etag = t.etag
		return err
	}
	if t.sys.Settings != nil && t.sys.Settings.Object.ID != "" {
		sp := t.sys.Settings.Object.ID
		var st struct {
			Boot map[string]json.RawMessage `json:"Boot"`
		}
		h, err := c.getH(ctx, sp, &st)
		if err != nil {
			return "", err
		}
		if _, ok := st.Boot["BootSourceOverrideTarget"]; ok {
			bootPath, etag = sp, h.Get("ETag")
			if len(allowed) == 0 {
				_ = json.Unmarshal(st.Boot["BootSourceOverrideTarget@Redfish.AllowableValues"], &allowed)
			}
			if mode == "" {
				_ = json.Unmarshal(st.Boot["BootSourceOverrideMode"], &mode)
			}
			reread = func() error {
				h, err := c.getH(ctx, sp, &st)
				if err == nil {
					etag = h.Get("ETag")
				}
				return err
			}
		}
	}
	tg := t.rules.target
	if len(allowed) > 0 && !slices.Contains(allowed, tg) {
		return "", fmt.Errorf("BMC %s: system %s cannot boot from %s once: BootSourceOverrideTarget allows only %s", c.addr, t.sysPath, tg, termsafe.String(trim(strings.Join(allowed, ", "), 300)))
	}
	boot := map[string]any{"BootSourceOverrideEnabled": "Once", "BootSourceOverrideTarget": tg}
	if t.rules.withMode {
		// ironic redfish/management.py: the current mode, else UEFI
		if mode == "" {
			mode = "UEFI"
		}
		boot["BootSourceOverrideMode"] = mode
	}
	body := map[string]any{"Boot": boot}
	if err := c.patch(ctx, bootPath, etag, body); err != nil {
		var ce *CallError
		if !errors.As(err, &ce) || ce.Status != http.StatusPreconditionFailed {
			return "", err
		}
		// The ETag went stale (the insert changed the system): read it again.
		if err := reread(); err != nil {
			return "", err
		}
		if err := c.patch(ctx, bootPath, etag, body); err != nil {
			return "", err
		}
	}
	return tg, nil
}

// insert puts the ISO URL in the slot. InsertMedia gets Image (and the
// media credentials) only: Inserted and WriteProtected default to true
// and some BMCs refuse them (sushy 11a6de2, Supermicro X11/X12); a BMC
// that insists on TransferProtocolType is asked again with it (sushy
// ecf1bcc). A slot without the action is PATCHed with Image, Inserted and
// WriteProtected and the slot's ETag in If-Match (sushy 9e5a103, Lenovo).
func (c *Client) insert(ctx context.Context, vm *virtualMedia, m Media) error {
	body := map[string]any{"Image": m.URL}
	if m.Username != "" {
		body["UserName"], body["Password"] = m.Username, m.Password
	}
	if vm.byPatch {
		etag, err := c.get(ctx, vm.ID, &virtualMedia{})
		if err != nil {
			return err
		}
		body["Inserted"], body["WriteProtected"] = true, true
		return c.patch(ctx, vm.ID, etag, body)
	}
	path := actionPath(vm.Actions.Insert, vm, "InsertMedia")
	err := c.post(ctx, path, body)
	var ce *CallError
	if err != nil && errors.As(err, &ce) && ce.Status == http.StatusBadRequest && strings.Contains(ce.Message, "TransferProtocolType") {
		body["TransferProtocolType"] = strings.ToUpper(strings.SplitN(m.URL, ":", 2)[0])
		return c.post(ctx, path, body)
	}
	return err
}

// power turns the system on, or restarts it when it is on, and returns
// the ResetType that did it ("ForceOff+On" for the two calls).
func (c *Client) power(ctx context.Context, t *target, step func(Step, string), detail string) (string, error) {
	path := t.sys.Actions.Reset.Target
	if path == "" {
		path = strings.TrimSuffix(t.sysPath, "/") + "/Actions/ComputerSystem.Reset"
	}
	allowed := func(s string) bool {
		return len(t.sys.Actions.Reset.Allowed) == 0 || slices.Contains(t.sys.Actions.Reset.Allowed, s)
	}
	if t.sys.PowerState != "On" && t.sys.PowerState != "PoweringOn" {
		step(StepPower, detail)
		if err := c.post(ctx, path, map[string]any{"ResetType": "On"}); err != nil {
			return "", err
		}
		return "On", nil
	}
	step(StepReset, detail)
	for _, rt := range []string{"ForceRestart", "PowerCycle"} {
		if allowed(rt) {
			if err := c.post(ctx, path, map[string]any{"ResetType": rt}); err != nil {
				return "", err
			}
			return rt, nil
		}
	}
	if err := c.post(ctx, path, map[string]any{"ResetType": "ForceOff"}); err != nil {
		return "", err
	}
	if err := c.post(ctx, path, map[string]any{"ResetType": "On"}); err != nil {
		return "", err
	}
	return "ForceOff+On", nil
}

// Eject removes the inserted media, if any; the outcome's Ejected is the
// image that was inserted ("" when there was none).
func (c *Client) Eject(ctx context.Context) (Outcome, error) {
	t, err := c.resolve(ctx)
	if err != nil {
		return Outcome{}, err
	}
	out := t.outcome()
	for _, vm := range t.others {
		if !vm.inserted() || vm.Image == nil || path.Base(strings.SplitN(*vm.Image, "?", 2)[0]) != ConfigImageName {
			continue
		}
		if err := c.eject(ctx, vm); err != nil {
			return out, err
		}
		out.Ejected, out.EjectedConfig, out.ConfigMedia = true, *vm.Image, vm.ID
	}
	if !t.media.inserted() {
		return out, nil
	}
	if err := c.eject(ctx, t.media); err != nil {
		return out, err
	}
	out.Ejected = true
	if t.media.Image != nil {
		out.EjectedImage = *t.media.Image
	}
	return out, nil
}
