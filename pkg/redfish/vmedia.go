package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
	ID         string `json:"Id"`
	PowerState string `json:"PowerState"`
	Boot       struct {
		Enabled string   `json:"BootSourceOverrideEnabled"`
		Target  string   `json:"BootSourceOverrideTarget"`
		Allowed []string `json:"BootSourceOverrideTarget@Redfish.AllowableValues"`
	} `json:"Boot"`
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

type manager struct {
	VirtualMedia *odataRef `json:"VirtualMedia"`
}

type virtualMedia struct {
	ID         string   `json:"@odata.id"`
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
}

// Step is a step of a virtual-media boot, reported as it starts.
type Step string

// The steps, in order.
const (
	StepConnect Step = "connecting"
	StepFind    Step = "finding virtual media"
	StepEject   Step = "ejecting"
	StepInsert  Step = "inserting"
	StepBoot    Step = "setting one-time boot"
	StepPower   Step = "powering on"
	StepReset   Step = "resetting"
)

// Media is the ISO to insert and the credentials the BMC should fetch it
// with (Redfish InsertMedia UserName/Password; empty for none).
type Media struct {
	URL                string
	Username, Password string
}

// target is a resolved system and its CD slot.
type target struct {
	sysPath string
	sys     computerSystem
	etag    string
	media   *virtualMedia
	// where says where the slot was found, "Manager" or "System".
	where string
}

// system finds the system: the address's path, or the service's only one.
func (c *Client) system(ctx context.Context) (string, error) {
	if c.addr.SystemPath != "" {
		return c.addr.SystemPath, nil
	}
	var root struct {
		Systems *odataRef `json:"Systems"`
	}
	if _, err := c.get(ctx, "/redfish/v1/", &root); err != nil {
		return "", err
	}
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

// resolve finds the system and its CD/DVD virtual media slot: under the
// System (newer firmware; iDRAC first) or under the Managers that manage it.
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
	for _, m := range t.sys.Links.ManagedBy {
		var mg manager
		if _, err := c.get(ctx, m.ID, &mg); err != nil {
			return nil, err
		}
		if mg.VirtualMedia != nil && mg.VirtualMedia.ID != "" {
			places = append(places, place{"Manager", mg.VirtualMedia.ID})
		}
	}
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
			if _, err := c.get(ctx, m.ID, &vm); err != nil {
				return nil, err
			}
			if vm.ID == "" {
				vm.ID = m.ID
			}
			if err := c.checkPath(vm.ID); err != nil {
				return nil, err
			}
			if slices.ContainsFunc(vm.MediaTypes, func(s string) bool { return s == "CD" || s == "DVD" }) {
				t.media, t.where = &vm, p.where
				return t, nil
			}
		}
	}
	where := "under the System"
	if len(t.sys.Links.ManagedBy) > 0 {
		where += " nor under its Manager"
	}
	return nil, fmt.Errorf("BMC %s: system %s has no CD/DVD virtual media slot %s (looked in %d collection(s)): the BMC cannot boot an ISO URL (a license may be needed, e.g. iDRAC Enterprise or iLO Advanced)", c.addr, sp, where, len(places))
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
	// Media is the CD/DVD virtual media slot's path and Under where it
	// was found: "Manager" or "System".
	Media, Under string
	// Ejected is whether media was inserted and ejected, EjectedImage
	// its URL as the BMC named it.
	Ejected      bool
	EjectedImage string
	// Power is the ResetType that started the system from the CD: "On"
	// when it was off, else "ForceRestart", "PowerCycle" or "ForceOff+On".
	Power string
}

func (t *target) outcome() Outcome {
	return Outcome{System: t.sysPath, Media: t.media.ID, Under: t.where}
}

// BootFromISO boots the host from media: ejects what is mounted, inserts
// the ISO URL, sets a one-time boot override to the CD and powers the
// system on (or resets it when on). step is told each step as it starts.
// The outcome says what was done, also when an error stopped it.
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
	if t.media.inserted() {
		step(StepEject, detail)
		if err := c.post(ctx, actionPath(t.media.Actions.Eject, t.media, "EjectMedia"), map[string]any{}); err != nil {
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
	step(StepBoot, detail)
	if len(t.sys.Boot.Allowed) > 0 && !slices.Contains(t.sys.Boot.Allowed, "Cd") {
		return out, fmt.Errorf("BMC %s: system %s cannot boot from CD once: BootSourceOverrideTarget allows only %s", c.addr, t.sysPath, termsafe.String(trim(strings.Join(t.sys.Boot.Allowed, ", "), 300)))
	}
	if err := c.patch(ctx, t.sysPath, t.etag, map[string]any{"Boot": map[string]any{"BootSourceOverrideEnabled": "Once", "BootSourceOverrideTarget": "Cd"}}); err != nil {
		var ce *CallError
		if !errors.As(err, &ce) || ce.Status != http.StatusPreconditionFailed {
			return out, err
		}
		// The ETag went stale (the insert changed the system): read it again.
		if t.etag, err = c.get(ctx, t.sysPath, &t.sys); err != nil {
			return out, err
		}
		if err := c.patch(ctx, t.sysPath, t.etag, map[string]any{"Boot": map[string]any{"BootSourceOverrideEnabled": "Once", "BootSourceOverrideTarget": "Cd"}}); err != nil {
			return out, err
		}
	}
	out.Power, err = c.power(ctx, t, step, detail)
	return out, err
}

// insert calls InsertMedia; a BMC that insists on TransferProtocolType
// (some do, others refuse it) is asked again with it.
func (c *Client) insert(ctx context.Context, vm *virtualMedia, m Media) error {
	body := map[string]any{"Image": m.URL, "Inserted": true, "WriteProtected": true}
	if m.Username != "" {
		body["UserName"], body["Password"] = m.Username, m.Password
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
	if !t.media.inserted() {
		return out, nil
	}
	if err := c.post(ctx, actionPath(t.media.Actions.Eject, t.media, "EjectMedia"), map[string]any{}); err != nil {
		return out, err
	}
	out.Ejected = true
	if t.media.Image != nil {
		out.EjectedImage = *t.media.Image
	}
	return out, nil
}
