// Package redfishsim is a Redfish BMC emulator for tests: service root, sessions and basic authentication, systems with power and one-time boot override, managers, and CD/DVD virtual media under the Manager or the System that fetches the inserted image with range requests, as real BMCs do, in vendor profiles (Supermicro, Dell iDRAC 9 and 10, Lenovo XCC, ASRockRack, HPE iLO) that each boot the host only the way that vendor's firmware does; hooks let a test drive a virtual machine from it.
package redfishsim

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// System describes one emulated computer system and its BMC's layout.
type System struct {
	// ID is the system's Id (its URL is /redfish/v1/Systems/<ID>);
	// ManagerID the manager's (default: the profile's, "BMC-<ID>" for
	// the generic profile).
	ID, ManagerID string
	// MediaUnderSystem puts the virtual media collection under the
	// System (newer firmware, Redfish 2020.3) instead of the Manager;
	// some profiles always do.
	MediaUnderSystem bool
	// PoweredOn is the initial power state.
	PoweredOn bool
}

// Options configure the emulator.
type Options struct {
	Username, Password string
	// Profile is the vendor the BMC behaves as (ProfileGeneric: the
	// Redfish standard).
	Profile Profile
	Systems []System
	// POST overrides how long the host stays in POST after it starts or
	// resets (only profiles with that quirk; negative: never in POST).
	POST time.Duration
	// EjectBusy overrides how long after an eject an insert fails as
	// "eject in progress" (only profiles with that quirk; negative: never).
	EjectBusy time.Duration
	// Unavailable answers this many authenticated requests 503 Service
	// Unavailable with Retry-After: 1 before serving (a BMC busy
	// restarting its web server).
	Unavailable int
	// Stall makes every authenticated request after the service root wait
	// this long (or until the client goes away) before it is answered: a
	// hung BMC.
	Stall time.Duration
	// MediaClient fetches inserted images (default: 10 s timeout).
	MediaClient *http.Client
	// SkipMediaCheck inserts images without fetching them.
	SkipMediaCheck bool
	// OnBoot is called when a system powers on or resets: with the image
	// URL when the firmware boots from the virtual CD, "" otherwise.
	OnBoot func(systemID, cdImage string)
	// OnPowerOff is called when a system is powered off.
	OnPowerOff func(systemID string)
}

// State is what a test can observe of a system.
type State struct {
	PowerState string
	// Inserted, Image and MediaUser are those of the first slot that
	// holds an image.
	Inserted            bool
	Image               string
	MediaUser           string
	BootOverrideEnabled string
	BootOverrideTarget  string
	BootOverrideMode    string
	// Slots maps each slot that holds an image to it.
	Slots map[string]string
	// Boots has one entry per boot: "cd:<url>" when the firmware booted
	// the virtual CD, "local-optical" when it booted the local drive (a
	// target this firmware does not boot virtual media from), "default"
	// otherwise.
	Boots                []string
	Calls                []string // "METHOD path" of every authenticated request
	ETagMismatch         int      // PATCHes refused for a stale If-Match
	InsertsWithTransport int      // InsertMedia calls that named TransferProtocolType
	// Refused are the MessageIds of the vendor quirks that refused a
	// request, in order.
	Refused []string
}

type slot struct {
	slotSpec
	inserted    bool
	image, user string
	etag        int
}

type system struct {
	System
	State
	v     vendor
	etag  int
	slots []*slot
	// settings holds the pending Boot of the @Redfish.Settings object
	// (settingsBoot profiles), applied at the next reset.
	settings    map[string]string
	settingsTag int
	// oemOnce is a pending Dell OEM one-time boot to the virtual CD.
	oemOnce    bool
	postUntil  time.Time
	lastEject  time.Time
	postLength time.Duration
	ejectBusy  time.Duration
}

// BMC is the emulator; it is an http.Handler.
type BMC struct {
	o        Options
	v        vendor
	mu       sync.Mutex
	systems  map[string]*system
	order    []string
	sessions map[string]string // token -> session id
	nextSess int
	busy     int
	tasks    int
}

// Logins is how many sessions were created (Redfish session login).
func (b *BMC) Logins() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.nextSess
}

// OpenSessions is how many sessions are still open (not logged out).
func (b *BMC) OpenSessions() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.sessions)
}

// New returns an emulator.
func New(o Options) *BMC {
	v := vendorOf(o.Profile)
	b := &BMC{o: o, v: v, systems: map[string]*system{}, sessions: map[string]string{}, busy: o.Unavailable}
	if b.o.MediaClient == nil {
		b.o.MediaClient = &http.Client{Timeout: 10 * time.Second}
	}
	for _, s := range o.Systems {
		if s.ManagerID == "" {
			s.ManagerID = v.managerID
			if s.ManagerID == "" {
				s.ManagerID = "BMC-" + s.ID
			}
		}
		if v.mediaUnderSystem {
			s.MediaUnderSystem = true
		}
		st := &system{System: s, v: v, postLength: pick(o.POST, v.post), ejectBusy: pick(o.EjectBusy, v.ejectBusy)}
		for _, sp := range v.slots {
			st.slots = append(st.slots, &slot{slotSpec: sp})
		}
		st.PowerState = "Off"
		if s.PoweredOn {
			st.PowerState = "On"
			// a host found powered on has just been reset
			st.postUntil = time.Now().Add(st.postLength)
		}
		st.BootOverrideEnabled, st.BootOverrideTarget, st.BootOverrideMode = "Disabled", "None", "UEFI"
		if v.settingsBoot {
			st.settings = map[string]string{}
		}
		b.systems[s.ID] = st
		b.order = append(b.order, s.ID)
	}
	return b
}

func pick(override, def time.Duration) time.Duration {
	switch {
	case def == 0 || override < 0:
		return 0
	case override > 0:
		return override
	}
	return def
}

// State returns a copy of a system's state.
func (b *BMC) State(id string) State {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.systems[id]
	if s == nil {
		return State{}
	}
	st := s.State
	st.Inserted, st.Image, st.MediaUser = false, "", ""
	st.Slots = map[string]string{}
	for _, sl := range s.slots {
		if sl.inserted {
			st.Slots[sl.id] = sl.image
			if !st.Inserted {
				st.Inserted, st.Image, st.MediaUser = true, sl.image, sl.user
			}
		}
	}
	st.Boots = append([]string(nil), st.Boots...)
	st.Calls = append([]string(nil), st.Calls...)
	st.Refused = append([]string(nil), st.Refused...)
	return st
}

// Insert puts an image in a system's slot as if someone had inserted it
// before (an earlier boot, the web console): no fetch.
func (b *BMC) Insert(systemID, slotID, image string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.systems[systemID]
	if s == nil {
		return fmt.Errorf("no system %s", systemID)
	}
	for _, sl := range s.slots {
		if sl.id == slotID {
			sl.inserted, sl.image = true, image
			sl.etag++
			return nil
		}
	}
	return fmt.Errorf("system %s has no slot %s", systemID, slotID)
}

const root = "/redfish/v1"

func (b *BMC) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimSuffix(r.URL.Path, "/")
	if p == "/redfish" && r.Method == http.MethodGet {
		writeJSON(w, http.StatusOK, map[string]any{"v1": root + "/"})
		return
	}
	if p == root && r.Method == http.MethodGet { // unauthenticated, as the spec has it
		writeJSON(w, http.StatusOK, b.serviceRoot())
		return
	}
	if p == root+"/SessionService/Sessions" && r.Method == http.MethodPost {
		b.login(w, r)
		return
	}
	if !b.authenticated(r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="redfishsim"`)
		msg := "There is no valid session established with the implementation: invalid user name or password."
		if _, _, basic := r.BasicAuth(); basic && b.v.basicDisabled && r.Header.Get("X-Auth-Token") == "" {
			msg = "There is no valid session established with the implementation: HTTP Basic authentication is disabled on this BMC, log in through the SessionService."
		}
		redfishError(w, http.StatusUnauthorized, "Base.1.8.NoValidSession", msg)
		return
	}
	if b.o.Stall > 0 {
		select {
		case <-time.After(b.o.Stall):
		case <-r.Context().Done():
			return
		}
	}
	b.mu.Lock()
	if b.busy > 0 {
		b.busy--
		b.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		redfishError(w, http.StatusServiceUnavailable, "Base.1.8.ServiceTemporarilyUnavailable", "The service is temporarily unavailable. Retry in 1 seconds.")
		return
	}
	for _, s := range b.systems {
		if strings.HasPrefix(p, root+"/Systems/"+s.ID) || strings.HasPrefix(p, root+"/Managers/"+s.ManagerID) {
			s.Calls = append(s.Calls, r.Method+" "+p)
		}
	}
	b.mu.Unlock()
	b.route(w, r, p)
}

func (b *BMC) serviceRoot() map[string]any {
	return map[string]any{
		"@odata.id": root, "@odata.type": "#ServiceRoot.v1_5_0.ServiceRoot",
		"Id": "RootService", "Name": "Root Service", "RedfishVersion": "1.11.0",
		"UUID":           "8b1c2f9a-0000-4000-8000-00000000e5e5",
		"Vendor":         b.v.manufacturer,
		"Systems":        odata(root + "/Systems"),
		"Managers":       odata(root + "/Managers"),
		"SessionService": odata(root + "/SessionService"),
		"Links":          map[string]any{"Sessions": odata(root + "/SessionService/Sessions")},
	}
}

func odata(id string) map[string]any { return map[string]any{"@odata.id": id} }

func (b *BMC) authenticated(r *http.Request) bool {
	if tok := r.Header.Get("X-Auth-Token"); tok != "" {
		b.mu.Lock()
		_, ok := b.sessions[tok]
		b.mu.Unlock()
		return ok
	}
	if b.v.basicDisabled {
		return false
	}
	u, p, ok := r.BasicAuth()
	return ok && b.credentialsOK(u, p)
}

func (b *BMC) credentialsOK(u, p string) bool {
	return subtle.ConstantTimeCompare([]byte(u), []byte(b.o.Username))&subtle.ConstantTimeCompare([]byte(p), []byte(b.o.Password)) == 1
}

func (b *BMC) login(w http.ResponseWriter, r *http.Request) {
	var req struct{ UserName, Password string }
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil {
		redfishError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "The request body submitted was malformed JSON.")
		return
	}
	if !b.credentialsOK(req.UserName, req.Password) {
		redfishError(w, http.StatusUnauthorized, "Base.1.8.NoValidSession", "Invalid user name or password.")
		return
	}
	tok := make([]byte, 16)
	_, _ = rand.Read(tok)
	b.mu.Lock()
	b.nextSess++
	id := fmt.Sprint(b.nextSess)
	b.sessions[hex.EncodeToString(tok)] = id
	b.mu.Unlock()
	loc := root + "/SessionService/Sessions/" + id
	w.Header().Set("X-Auth-Token", hex.EncodeToString(tok))
	w.Header().Set("Location", loc)
	writeJSON(w, http.StatusCreated, map[string]any{"@odata.id": loc, "Id": id, "Name": "User Session", "UserName": req.UserName})
}

func (b *BMC) route(w http.ResponseWriter, r *http.Request, p string) {
	parts := strings.Split(strings.TrimPrefix(p, root+"/"), "/")
	get := r.Method == http.MethodGet
	switch {
	case get && p == root+"/SessionService":
		writeJSON(w, http.StatusOK, map[string]any{"@odata.id": p, "Id": "SessionService", "Name": "Session Service", "ServiceEnabled": true, "SessionTimeout": 300, "Sessions": odata(p + "/Sessions")})
	case parts[0] == "SessionService" && len(parts) == 3:
		b.session(w, r, p, parts[2])
	case get && (p == root+"/Systems" || p == root+"/Managers"):
		var members []any
		b.mu.Lock()
		for _, id := range b.order {
			if parts[0] == "Systems" {
				members = append(members, odata(p+"/"+id))
			} else {
				members = append(members, odata(p+"/"+b.systems[id].ManagerID))
			}
		}
		b.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"@odata.id": p, "Name": parts[0] + " Collection", "Members": members, "Members@odata.count": len(members)})
	case get && len(parts) == 3 && parts[0] == "TaskService" && parts[1] == "Tasks":
		writeJSON(w, http.StatusOK, map[string]any{"@odata.id": p, "@odata.type": "#Task.v1_4_3.Task", "Id": parts[2], "Name": "Import Configuration",
			"TaskState": "Completed", "TaskStatus": "OK", "PercentComplete": 100,
			"Messages": []any{map[string]any{"MessageId": "IDRAC.2.8.SYS053", "Message": "Successfully imported and applied Server Configuration Profile."}}})
	case parts[0] == "Systems" && len(parts) >= 2:
		b.systemRoute(w, r, p, parts[1], parts[2:])
	case parts[0] == "Managers" && len(parts) >= 2:
		b.managerRoute(w, r, p, parts[1], parts[2:])
	default:
		redfishError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+p+" was not found.")
	}
}

func (b *BMC) session(w http.ResponseWriter, r *http.Request, p, id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for tok, sid := range b.sessions {
		if sid != id {
			continue
		}
		if r.Method == http.MethodDelete {
			delete(b.sessions, tok)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"@odata.id": p, "Id": id, "Name": "User Session", "UserName": b.o.Username})
		return
	}
	redfishError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "No session "+id+".")
}

func (b *BMC) systemByManager(mid string) *system {
	for _, s := range b.systems {
		if s.ManagerID == mid {
			return s
		}
	}
	return nil
}

func (b *BMC) systemRoute(w http.ResponseWriter, r *http.Request, p, id string, rest []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.systems[id]
	if s == nil {
		redfishError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+p+" was not found.")
		return
	}
	switch {
	case len(rest) == 0 && r.Method == http.MethodGet:
		w.Header().Set("ETag", s.etagValue())
		writeJSON(w, http.StatusOK, b.systemJSON(s))
	case len(rest) == 0 && r.Method == http.MethodPatch:
		b.patchSystem(w, r, s)
	case len(rest) == 1 && rest[0] == "Settings" && s.v.settingsBoot && r.Method == http.MethodGet:
		w.Header().Set("ETag", fmt.Sprintf(`"s%d"`, s.settingsTag))
		writeJSON(w, http.StatusOK, b.settingsJSON(s))
	case len(rest) == 1 && rest[0] == "Settings" && s.v.settingsBoot && r.Method == http.MethodPatch:
		b.patchSettings(w, r, s)
	case len(rest) == 2 && rest[0] == "Actions" && rest[1] == "ComputerSystem.Reset" && r.Method == http.MethodPost:
		b.reset(w, r, s)
	case len(rest) >= 1 && rest[0] == "VirtualMedia" && s.MediaUnderSystem && !s.v.noMedia:
		b.mediaRoute(w, r, root+"/Systems/"+id+"/VirtualMedia", s, rest[1:])
	default:
		redfishError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+p+" was not found.")
	}
}

func (s *system) etagValue() string { return fmt.Sprintf(`W/"%d"`, s.etag) }

var resetTypes = []string{"On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "PowerCycle"}

func (b *BMC) systemJSON(s *system) map[string]any {
	p := root + "/Systems/" + s.ID
	boot := map[string]any{
		"BootSourceOverrideEnabled":                        s.BootOverrideEnabled,
		"BootSourceOverrideTarget":                         s.BootOverrideTarget,
		"BootSourceOverrideMode":                           s.BootOverrideMode,
		"BootSourceOverrideTarget@Redfish.AllowableValues": s.v.targets,
	}
	if s.v.settingsBoot {
		// iDRAC 10: the target and its allowed values moved to the
		// Settings object (sushy 0865ce5).
		delete(boot, "BootSourceOverrideTarget")
		delete(boot, "BootSourceOverrideTarget@Redfish.AllowableValues")
	}
	m := map[string]any{
		"@odata.id": p, "@odata.type": "#ComputerSystem.v1_13_0.ComputerSystem", "@odata.etag": s.etagValue(),
		"Id": s.ID, "Name": "Emulated system " + s.ID, "SystemType": "Physical",
		"Manufacturer": s.v.manufacturer, "Model": s.v.model,
		"PowerState": s.PowerState,
		"Status":     map[string]any{"State": "Enabled", "Health": "OK"},
		"Boot":       boot,
		"Actions": map[string]any{"#ComputerSystem.Reset": map[string]any{
			"target": p + "/Actions/ComputerSystem.Reset", "ResetType@Redfish.AllowableValues": resetTypes}},
		"Links": map[string]any{"ManagedBy": []any{odata(root + "/Managers/" + s.ManagerID)}},
	}
	if s.v.settingsBoot {
		m["@Redfish.Settings"] = map[string]any{"@odata.type": "#Settings.v1_3_5.Settings", "SettingsObject": odata(p + "/Settings"),
			"SupportedApplyTimes": []string{"OnReset"}}
	}
	if s.MediaUnderSystem && !s.v.noMedia {
		m["VirtualMedia"] = odata(p + "/VirtualMedia")
	}
	return m
}

func (b *BMC) settingsJSON(s *system) map[string]any {
	boot := map[string]any{
		"BootSourceOverrideEnabled":                        s.BootOverrideEnabled,
		"BootSourceOverrideTarget":                         s.BootOverrideTarget,
		"BootSourceOverrideMode":                           s.BootOverrideMode,
		"BootSourceOverrideTarget@Redfish.AllowableValues": s.v.targets,
	}
	for k, v := range s.settings {
		boot[k] = v
	}
	return map[string]any{"@odata.id": root + "/Systems/" + s.ID + "/Settings", "@odata.type": "#ComputerSystem.v1_20_0.ComputerSystem",
		"Id": "Settings", "Name": "Pending settings of " + s.ID, "Boot": boot}
}

// refuse answers a vendor quirk's refusal and records it.
func (s *system) refuse(w http.ResponseWriter, code int, id, msg string) {
	s.Refused = append(s.Refused, id)
	redfishError(w, code, id, msg)
}

type bootPatch struct {
	Boot *struct {
		BootSourceOverrideEnabled *string
		BootSourceOverrideTarget  *string
		BootSourceOverrideMode    *string
	}
}

// checkBoot validates a Boot PATCH against the profile and returns the
// changes; false when it answered an error.
func (s *system) checkBoot(w http.ResponseWriter, r *http.Request) (map[string]string, bool) {
	var req bootPatch
	if err := decode(r, &req); err != nil || req.Boot == nil {
		redfishError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "The request body submitted was malformed JSON or has no Boot.")
		return nil, false
	}
	if s.postLength > 0 && time.Now().Before(s.postUntil) {
		s.refuse(w, http.StatusBadRequest, "iLO.2.14.UnableToModifyDuringSystemPOST", "The value for the property cannot be changed while the computer system is in POST.")
		return nil, false
	}
	if s.v.modeRequired && req.Boot.BootSourceOverrideMode == nil {
		s.refuse(w, http.StatusBadRequest, "Base.1.8.PropertyMissing", "The property BootSourceOverrideMode is a required property and must be included in the request.")
		return nil, false
	}
	ch := map[string]string{}
	if e := req.Boot.BootSourceOverrideEnabled; e != nil {
		if *e != "Once" && *e != "Continuous" && *e != "Disabled" {
			redfishError(w, http.StatusBadRequest, "Base.1.8.PropertyValueNotInList", "The value "+*e+" for the property BootSourceOverrideEnabled is not in the list of acceptable values.")
			return nil, false
		}
		ch["BootSourceOverrideEnabled"] = *e
	}
	if t := req.Boot.BootSourceOverrideTarget; t != nil {
		if !slices.Contains(s.v.targets, *t) {
			redfishError(w, http.StatusBadRequest, "Base.1.8.PropertyValueNotInList", "The value "+*t+" for the property BootSourceOverrideTarget is not in the list of acceptable values.")
			return nil, false
		}
		ch["BootSourceOverrideTarget"] = *t
	}
	if m := req.Boot.BootSourceOverrideMode; m != nil {
		if *m != "UEFI" && *m != "Legacy" {
			redfishError(w, http.StatusBadRequest, "Base.1.8.PropertyValueNotInList", "The value "+*m+" for the property BootSourceOverrideMode is not in the list of acceptable values.")
			return nil, false
		}
		ch["BootSourceOverrideMode"] = *m
	}
	return ch, true
}

func (s *system) applyBoot(ch map[string]string) {
	for k, v := range ch {
		switch k {
		case "BootSourceOverrideEnabled":
			s.BootOverrideEnabled = v
		case "BootSourceOverrideTarget":
			s.BootOverrideTarget = v
		case "BootSourceOverrideMode":
			s.BootOverrideMode = v
		}
	}
}

func (b *BMC) patchSystem(w http.ResponseWriter, r *http.Request, s *system) {
	if im := r.Header.Get("If-Match"); im != "" && im != "*" && im != s.etagValue() && strings.TrimPrefix(im, "W/") != strings.TrimPrefix(s.etagValue(), "W/") {
		s.ETagMismatch++
		redfishError(w, http.StatusPreconditionFailed, "Base.1.8.PreconditionFailed", "The ETag supplied did not match the ETag required to change this resource.")
		return
	}
	if s.v.settingsBoot {
		s.refuse(w, http.StatusBadRequest, "Base.1.12.PropertyNotWritable", "The property Boot is a read only property and cannot be assigned a value: change it in the resource's @Redfish.Settings SettingsObject.")
		return
	}
	ch, ok := s.checkBoot(w, r)
	if !ok {
		return
	}
	s.applyBoot(ch)
	s.etag++
	w.WriteHeader(http.StatusNoContent)
}

func (b *BMC) patchSettings(w http.ResponseWriter, r *http.Request, s *system) {
	if im := r.Header.Get("If-Match"); im != "" && im != "*" && strings.Trim(strings.TrimPrefix(im, "W/"), `"`) != fmt.Sprintf("s%d", s.settingsTag) {
		s.ETagMismatch++
		redfishError(w, http.StatusPreconditionFailed, "Base.1.8.PreconditionFailed", "The ETag supplied did not match the ETag required to change this resource.")
		return
	}
	ch, ok := s.checkBoot(w, r)
	if !ok {
		return
	}
	for k, v := range ch {
		s.settings[k] = v
	}
	s.settingsTag++
	w.WriteHeader(http.StatusNoContent)
}

func (b *BMC) reset(w http.ResponseWriter, r *http.Request, s *system) {
	var req struct{ ResetType string }
	if err := decode(r, &req); err != nil {
		redfishError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "The request body submitted was malformed JSON.")
		return
	}
	boot := false
	switch req.ResetType {
	case "On":
		if s.PowerState == "On" {
			redfishError(w, http.StatusConflict, "Base.1.8.ActionNotSupported", "The system is already powered on.")
			return
		}
		boot = true
	case "ForceOff", "GracefulShutdown":
		s.PowerState = "Off"
		if b.o.OnPowerOff != nil {
			b.o.OnPowerOff(s.ID)
		}
	case "ForceRestart", "GracefulRestart", "PowerCycle":
		boot = true
	default:
		redfishError(w, http.StatusBadRequest, "Base.1.8.ActionParameterValueNotInList", "The value "+req.ResetType+" for the parameter ResetType is not in the list of acceptable values.")
		return
	}
	if boot {
		s.PowerState = "On"
		s.postUntil = time.Now().Add(s.postLength)
		// pending settings apply at reset (iDRAC 10)
		if len(s.settings) > 0 {
			s.applyBoot(s.settings)
			clear(s.settings)
			s.settingsTag++
		}
		what := s.firmwareBoot()
		if s.BootOverrideEnabled == "Once" {
			s.BootOverrideEnabled, s.BootOverrideTarget = "Disabled", "None"
		}
		s.oemOnce = false
		s.etag++
		s.Boots = append(s.Boots, what)
		if image, ok := strings.CutPrefix(what, "cd:"); b.o.OnBoot != nil {
			if !ok {
				image = ""
			}
			b.o.OnBoot(s.ID, image)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// firmwareBoot is what the host's firmware boots now, as this vendor's
// does: "cd:<url>" from the virtual CD, "local-optical" or "default".
func (s *system) firmwareBoot() string {
	virtual := s.oemOnce
	if s.BootOverrideEnabled != "Disabled" {
		switch {
		case s.BootOverrideTarget == s.v.vmTarget && s.v.vmTarget != "":
			virtual = true
		case s.BootOverrideTarget == "Cd" && !virtual:
			// Cd is the local optical drive on this firmware (iDRAC 9
			// before 6.x), or not the virtual media (Supermicro's UsbCd).
			return "local-optical"
		}
	}
	if !virtual {
		return "default"
	}
	for _, sl := range s.slots {
		if sl.boots && sl.inserted && slices.ContainsFunc(sl.types, isCD) {
			return "cd:" + sl.image
		}
	}
	return "default" // the firmware skips an empty virtual drive
}

func isCD(t string) bool { return t == "CD" || t == "DVD" }

func (b *BMC) managerRoute(w http.ResponseWriter, r *http.Request, p, mid string, rest []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.systemByManager(mid)
	if s == nil {
		redfishError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+p+" was not found.")
		return
	}
	mp := root + "/Managers/" + mid
	oemImport := mp + "/Actions/Oem/EID_674_Manager.ImportSystemConfiguration"
	switch {
	case len(rest) == 0 && r.Method == http.MethodGet:
		m := map[string]any{
			"@odata.id": mp, "@odata.type": "#Manager.v1_10_0.Manager", "Id": mid, "Name": "Emulated BMC",
			"ManagerType": "BMC", "Manufacturer": s.v.manufacturer, "Model": s.v.mgrModel, "FirmwareVersion": s.v.firmware,
			"Status": map[string]any{"State": "Enabled", "Health": "OK"},
			"Links":  map[string]any{"ManagerForServers": []any{odata(root + "/Systems/" + s.ID)}},
		}
		if !s.MediaUnderSystem && !s.v.noMedia {
			m["VirtualMedia"] = odata(mp + "/VirtualMedia")
		}
		if s.v.oemImport {
			// as sushy/tests/oem/dell/unit/json_samples/manager.json
			m["Actions"] = map[string]any{"Oem": map[string]any{
				"OemManager.v1_0_0#OemManager.ImportSystemConfiguration": map[string]any{
					"target": oemImport, "ShutdownType@Redfish.AllowableValues": []string{"Graceful", "Forced", "NoReboot"},
					"ShareParameters": map[string]any{"Target@Redfish.AllowableValues": []string{"ALL", "IDRAC", "BIOS", "NIC", "RAID"}},
				}}}
		}
		writeJSON(w, http.StatusOK, m)
	case len(rest) >= 1 && rest[0] == "VirtualMedia" && !s.MediaUnderSystem && !s.v.noMedia:
		b.mediaRoute(w, r, mp+"/VirtualMedia", s, rest[1:])
	case s.v.oemImport && p == oemImport && r.Method == http.MethodPost:
		b.oemImport(w, r, s)
	default:
		redfishError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+p+" was not found.")
	}
}

// oemImport is Dell's ImportSystemConfiguration, as
// sushy/oem/dell/resources/manager/manager.py set_virtual_boot_device
// calls it: ServerBoot.1#BootOnce Enabled with
// ServerBoot.1#FirstBootDevice VCD-DVD boots the virtual CD at the next
// reset. It answers 202 with a task. b.mu is held.
func (b *BMC) oemImport(w http.ResponseWriter, r *http.Request, s *system) {
	var req struct {
		ShareParameters struct{ Target any }
		ImportBuffer    string
	}
	if err := decode(r, &req); err != nil || req.ImportBuffer == "" {
		redfishError(w, http.StatusBadRequest, "IDRAC.2.8.SYS405", "Unable to import the Server Configuration Profile: no ImportBuffer.")
		return
	}
	var scp struct {
		Components []struct {
			FQDD       string `xml:"FQDD,attr"`
			Attributes []struct {
				Name  string `xml:"Name,attr"`
				Value string `xml:",chardata"`
			} `xml:"Attribute"`
		} `xml:"Component"`
	}
	if err := xml.Unmarshal([]byte(req.ImportBuffer), &scp); err != nil {
		redfishError(w, http.StatusBadRequest, "IDRAC.2.8.SYS405", "Unable to import the Server Configuration Profile: "+err.Error())
		return
	}
	once, dev := "", ""
	for _, c := range scp.Components {
		for _, a := range c.Attributes {
			switch a.Name {
			case "ServerBoot.1#BootOnce":
				once = strings.TrimSpace(a.Value)
			case "ServerBoot.1#FirstBootDevice":
				dev = strings.TrimSpace(a.Value)
			}
		}
	}
	if dev == "VCD-DVD" && once == "Enabled" {
		s.oemOnce = true
	}
	b.tasks++
	w.Header().Set("Location", fmt.Sprintf("%s/TaskService/Tasks/JID_%09d", root, b.tasks))
	w.WriteHeader(http.StatusAccepted)
}

func (s *system) slot(id string) *slot {
	for _, sl := range s.slots {
		if sl.id == id {
			return sl
		}
	}
	return nil
}

// mediaRoute serves a virtual media collection with the profile's slots
// (many BMCs list a floppy or USB slot first). b.mu is held.
func (b *BMC) mediaRoute(w http.ResponseWriter, r *http.Request, coll string, s *system, rest []string) {
	get := r.Method == http.MethodGet
	if len(rest) == 0 && get {
		var members []any
		for _, sl := range s.slots {
			members = append(members, odata(coll+"/"+sl.id))
		}
		writeJSON(w, http.StatusOK, map[string]any{"@odata.id": coll, "Name": "Virtual Media Services", "Members": members, "Members@odata.count": len(members)})
		return
	}
	sl := s.slot(rest[0])
	if sl == nil {
		redfishError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+r.URL.Path+" was not found.")
		return
	}
	switch {
	case len(rest) == 1 && get:
		var image any
		via := "NotConnected"
		if sl.inserted {
			image, via = sl.image, "URI"
		}
		m := map[string]any{"@odata.id": coll + "/" + sl.id, "@odata.type": "#VirtualMedia.v1_3_0.VirtualMedia",
			"Id": sl.id, "Name": "Virtual " + strings.Join(sl.types, "/"), "MediaTypes": sl.types, "Inserted": sl.inserted, "Image": image,
			"WriteProtected": true, "ConnectedVia": via, "TransferProtocolType": "HTTP"}
		if sl.insertAction {
			m["Actions"] = map[string]any{
				"#VirtualMedia.InsertMedia": map[string]any{"target": coll + "/" + sl.id + "/Actions/VirtualMedia.InsertMedia"},
				"#VirtualMedia.EjectMedia":  map[string]any{"target": coll + "/" + sl.id + "/Actions/VirtualMedia.EjectMedia"},
			}
		}
		allow := "GET"
		if sl.patch {
			allow = "GET, PATCH"
			w.Header().Set("ETag", fmt.Sprintf(`"vm%d"`, sl.etag))
		}
		w.Header().Set("Allow", allow)
		writeJSON(w, http.StatusOK, m)
	case len(rest) == 1 && r.Method == http.MethodPatch && sl.patch:
		b.patchMedia(w, r, s, sl)
	case len(rest) == 3 && rest[1] == "Actions" && rest[2] == "VirtualMedia.InsertMedia" && r.Method == http.MethodPost && sl.insertAction:
		b.insert(w, r, s, sl)
	case len(rest) == 3 && rest[1] == "Actions" && rest[2] == "VirtualMedia.EjectMedia" && r.Method == http.MethodPost && sl.insertAction:
		if !sl.inserted {
			redfishError(w, http.StatusBadRequest, "Base.1.8.ActionNotSupported", "There is no media inserted to eject.")
			return
		}
		sl.inserted, sl.image, sl.user = false, "", ""
		sl.etag++
		s.lastEject = time.Now()
		w.WriteHeader(http.StatusNoContent)
	case len(rest) == 1:
		w.Header().Set("Allow", "GET")
		redfishError(w, http.StatusMethodNotAllowed, "Base.1.8.OperationNotAllowed", "The method "+r.Method+" is not allowed on "+r.URL.Path+".")
	default:
		redfishError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+r.URL.Path+" was not found.")
	}
}

type insertRequest struct {
	Image                *string
	Inserted             *bool
	WriteProtected       *bool
	TransferProtocolType string
	UserName, Password   string
}

// patchMedia inserts or ejects by PATCHing the slot (Lenovo XCC): an
// If-Match is required. b.mu is held.
func (b *BMC) patchMedia(w http.ResponseWriter, r *http.Request, s *system, sl *slot) {
	im := r.Header.Get("If-Match")
	if im == "" {
		s.refuse(w, http.StatusPreconditionRequired, "Base.1.8.PreconditionRequired", "A precondition header or annotation is required to change this resource: send If-Match with the resource's ETag.")
		return
	}
	if im != "*" && strings.Trim(strings.TrimPrefix(im, "W/"), `"`) != fmt.Sprintf("vm%d", sl.etag) {
		s.ETagMismatch++
		redfishError(w, http.StatusPreconditionFailed, "Base.1.8.PreconditionFailed", "The ETag supplied did not match the ETag required to change this resource.")
		return
	}
	var req insertRequest
	if err := decode(r, &req); err != nil {
		redfishError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "The request body submitted was malformed JSON.")
		return
	}
	if req.Inserted != nil && !*req.Inserted {
		sl.inserted, sl.image, sl.user = false, "", ""
		sl.etag++
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if req.Image == nil || req.Inserted == nil {
		// sushy 11a6de2: this BMC attaches the media only when Inserted is given
		s.refuse(w, http.StatusBadRequest, "Base.1.8.PropertyMissing", "The properties Image and Inserted are required to attach media.")
		return
	}
	b.mount(w, r, s, sl, req)
}

// insert is #VirtualMedia.InsertMedia. b.mu is held.
func (b *BMC) insert(w http.ResponseWriter, r *http.Request, s *system, sl *slot) {
	var req insertRequest
	if err := decode(r, &req); err != nil {
		redfishError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "The request body submitted was malformed JSON.")
		return
	}
	if s.v.refusesOptional && (req.Inserted != nil || req.WriteProtected != nil) {
		prop := "Inserted"
		if req.Inserted == nil {
			prop = "WriteProtected"
		}
		s.refuse(w, http.StatusBadRequest, "Base.1.4.PropertyUnknown", "The property "+prop+" is not in the list of valid properties for the resource.")
		return
	}
	if s.ejectBusy > 0 && time.Since(s.lastEject) < s.ejectBusy {
		s.refuse(w, http.StatusInternalServerError, "IDRAC.2.8.SYS446", "The requested operation cannot be completed because of an internal error. Resolution: Retry the operation after a few minutes.")
		return
	}
	b.mount(w, r, s, sl, req)
}

// mount reads the image like a real BMC, with range requests, before it
// reports it inserted, so a URL it cannot read, or a server that ignores
// ranges, fails with the BMC's message. b.mu is held.
func (b *BMC) mount(w http.ResponseWriter, r *http.Request, s *system, sl *slot, req insertRequest) {
	if sl.inserted {
		redfishError(w, http.StatusConflict, "Base.1.8.ResourceInUse", "Virtual media is already inserted; eject it first.")
		return
	}
	image := ""
	if req.Image != nil {
		image = *req.Image
	}
	if !(strings.HasPrefix(image, "http://") || strings.HasPrefix(image, "https://")) {
		redfishError(w, http.StatusBadRequest, "Base.1.8.ActionParameterValueFormatError", "The value for the parameter Image is not an HTTP or HTTPS URL.")
		return
	}
	if req.TransferProtocolType != "" {
		s.InsertsWithTransport++
	}
	if !b.o.SkipMediaCheck {
		b.mu.Unlock()
		err := b.checkMedia(r.Context(), image, req.UserName, req.Password)
		b.mu.Lock()
		if err != nil {
			redfishError(w, http.StatusBadRequest, "Base.1.8.GeneralError", "Unable to mount the image: "+err.Error())
			return
		}
	}
	sl.inserted, sl.image, sl.user = true, image, req.UserName
	sl.etag++
	w.WriteHeader(http.StatusNoContent)
}

// checkMedia reads the ISO 9660 primary volume descriptor with a range
// request.
func (b *BMC) checkMedia(ctx context.Context, url, user, pass string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Range", "bytes=32768-34815")
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := b.o.MediaClient.Do(req)
	if err != nil {
		return errors.New("cannot reach the image server")
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return errors.New("the image server does not support range requests")
	}
	if resp.StatusCode != http.StatusPartialContent {
		return fmt.Errorf("the image server answered HTTP %d", resp.StatusCode)
	}
	buf := make([]byte, 2048)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		return errors.New("short read from the image server")
	}
	if string(buf[1:6]) != "CD001" {
		return errors.New("the image is not an ISO 9660 image")
	}
	return nil
}

func decode(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		b = []byte("{}")
	}
	return json.Unmarshal(b, v)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("OData-Version", "4.0")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func redfishError(w http.ResponseWriter, code int, id, msg string) {
	writeJSON(w, code, map[string]any{"error": map[string]any{
		"code": id, "message": "A general error has occurred. See ExtendedInfo for more information.",
		"@Message.ExtendedInfo": []any{map[string]any{"MessageId": id, "Message": msg, "Severity": "Critical"}},
	}})
}

// SystemIDs returns the emulated systems' ids, sorted.
func (b *BMC) SystemIDs() []string {
	out := append([]string(nil), b.order...)
	sort.Strings(out)
	return out
}
