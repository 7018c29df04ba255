// Package redfishsim is a Redfish BMC emulator for tests: service root, sessions and basic authentication, systems with power and one-time boot override, managers, and CD/DVD virtual media under the Manager or the System that fetches the inserted image with range requests, as real BMCs do; hooks let a test drive a virtual machine from it.
package redfishsim

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// System describes one emulated computer system and its BMC's layout.
type System struct {
	// ID is the system's Id (its URL is /redfish/v1/Systems/<ID>);
	// ManagerID the manager's (default "BMC-<ID>").
	ID, ManagerID string
	// MediaUnderSystem puts the virtual media collection under the
	// System (newer firmware, Redfish 2020.3) instead of the Manager.
	MediaUnderSystem bool
	// PoweredOn is the initial power state.
	PoweredOn bool
}

// Options configure the emulator.
type Options struct {
	Username, Password string
	Systems            []System
	// Stall makes every authenticated request after the service root wait
	// this long (or until the client goes away) before it is answered: a
	// hung BMC.
	Stall time.Duration
	// MediaClient fetches inserted images (default: 10 s timeout).
	MediaClient *http.Client
	// SkipMediaCheck inserts images without fetching them.
	SkipMediaCheck bool
	// OnBoot is called when a system powers on or resets: with the image
	// URL when it boots from the virtual CD (one-time override to Cd with
	// media inserted), "" otherwise.
	OnBoot func(systemID, cdImage string)
	// OnPowerOff is called when a system is powered off.
	OnPowerOff func(systemID string)
}

// State is what a test can observe of a system.
type State struct {
	PowerState           string
	Inserted             bool
	Image                string
	MediaUser            string
	BootOverrideEnabled  string
	BootOverrideTarget   string
	Boots                []string // "cd:<url>" or "default", one per boot
	Calls                []string // "METHOD path" of every authenticated request
	ETagMismatch         int      // PATCHes refused for a stale If-Match
	InsertsWithTransport int      // InsertMedia calls that named TransferProtocolType
}

type system struct {
	System
	State
	etag int
}

// BMC is the emulator; it is an http.Handler.
type BMC struct {
	o        Options
	mu       sync.Mutex
	systems  map[string]*system
	order    []string
	sessions map[string]string // token -> session id
	nextSess int
}

// Logins is how many sessions were created (Redfish session login).
func (b *BMC) Logins() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.nextSess
}

// New returns an emulator.
func New(o Options) *BMC {
	b := &BMC{o: o, systems: map[string]*system{}, sessions: map[string]string{}}
	if b.o.MediaClient == nil {
		b.o.MediaClient = &http.Client{Timeout: 10 * time.Second}
	}
	for _, s := range o.Systems {
		if s.ManagerID == "" {
			s.ManagerID = "BMC-" + s.ID
		}
		st := &system{System: s}
		st.PowerState = "Off"
		if s.PoweredOn {
			st.PowerState = "On"
		}
		st.BootOverrideEnabled, st.BootOverrideTarget = "Disabled", "None"
		b.systems[s.ID] = st
		b.order = append(b.order, s.ID)
	}
	return b
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
	st.Boots = append([]string(nil), st.Boots...)
	st.Calls = append([]string(nil), st.Calls...)
	return st
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
		redfishError(w, http.StatusUnauthorized, "Base.1.8.NoValidSession", "There is no valid session established with the implementation: invalid user name or password.")
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
	case len(rest) == 2 && rest[0] == "Actions" && rest[1] == "ComputerSystem.Reset" && r.Method == http.MethodPost:
		b.reset(w, r, s)
	case len(rest) >= 1 && rest[0] == "VirtualMedia" && s.MediaUnderSystem:
		b.mediaRoute(w, r, root+"/Systems/"+id+"/VirtualMedia", s, rest[1:])
	default:
		redfishError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+p+" was not found.")
	}
}

func (s *system) etagValue() string { return fmt.Sprintf(`W/"%d"`, s.etag) }

var resetTypes = []string{"On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "PowerCycle"}

func (b *BMC) systemJSON(s *system) map[string]any {
	p := root + "/Systems/" + s.ID
	m := map[string]any{
		"@odata.id": p, "@odata.type": "#ComputerSystem.v1_13_0.ComputerSystem", "@odata.etag": s.etagValue(),
		"Id": s.ID, "Name": "Emulated system " + s.ID, "SystemType": "Physical",
		"PowerState": s.PowerState,
		"Status":     map[string]any{"State": "Enabled", "Health": "OK"},
		"Boot": map[string]any{
			"BootSourceOverrideEnabled":                        s.BootOverrideEnabled,
			"BootSourceOverrideTarget":                         s.BootOverrideTarget,
			"BootSourceOverrideMode":                           "UEFI",
			"BootSourceOverrideTarget@Redfish.AllowableValues": []string{"None", "Pxe", "Cd", "Hdd", "BiosSetup"},
		},
		"Actions": map[string]any{"#ComputerSystem.Reset": map[string]any{
			"target": p + "/Actions/ComputerSystem.Reset", "ResetType@Redfish.AllowableValues": resetTypes}},
		"Links": map[string]any{"ManagedBy": []any{odata(root + "/Managers/" + s.ManagerID)}},
	}
	if s.MediaUnderSystem {
		m["VirtualMedia"] = odata(p + "/VirtualMedia")
	}
	return m
}

func (b *BMC) patchSystem(w http.ResponseWriter, r *http.Request, s *system) {
	if im := r.Header.Get("If-Match"); im != "" && im != "*" && im != s.etagValue() && strings.TrimPrefix(im, "W/") != strings.TrimPrefix(s.etagValue(), "W/") {
		s.ETagMismatch++
		redfishError(w, http.StatusPreconditionFailed, "Base.1.8.PreconditionFailed", "The ETag supplied did not match the ETag required to change this resource.")
		return
	}
	var req struct {
		Boot *struct {
			BootSourceOverrideEnabled *string
			BootSourceOverrideTarget  *string
			BootSourceOverrideMode    *string
		}
	}
	if err := decode(r, &req); err != nil || req.Boot == nil {
		redfishError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "The request body submitted was malformed JSON or has no Boot.")
		return
	}
	if e := req.Boot.BootSourceOverrideEnabled; e != nil {
		if *e != "Once" && *e != "Continuous" && *e != "Disabled" {
			redfishError(w, http.StatusBadRequest, "Base.1.8.PropertyValueNotInList", "The value "+*e+" for the property BootSourceOverrideEnabled is not in the list of acceptable values.")
			return
		}
		s.BootOverrideEnabled = *e
	}
	if t := req.Boot.BootSourceOverrideTarget; t != nil {
		switch *t {
		case "None", "Pxe", "Cd", "Hdd", "BiosSetup":
			s.BootOverrideTarget = *t
		default:
			redfishError(w, http.StatusBadRequest, "Base.1.8.PropertyValueNotInList", "The value "+*t+" for the property BootSourceOverrideTarget is not in the list of acceptable values.")
			return
		}
	}
	s.etag++
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
		image := ""
		if s.BootOverrideEnabled != "Disabled" && s.BootOverrideTarget == "Cd" && s.Inserted {
			image = s.Image
		}
		if s.BootOverrideEnabled == "Once" {
			s.BootOverrideEnabled, s.BootOverrideTarget = "Disabled", "None"
			s.etag++
		}
		if image != "" {
			s.Boots = append(s.Boots, "cd:"+image)
		} else {
			s.Boots = append(s.Boots, "default")
		}
		if b.o.OnBoot != nil {
			b.o.OnBoot(s.ID, image)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

func (b *BMC) managerRoute(w http.ResponseWriter, r *http.Request, p, mid string, rest []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.systemByManager(mid)
	if s == nil {
		redfishError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+p+" was not found.")
		return
	}
	mp := root + "/Managers/" + mid
	switch {
	case len(rest) == 0 && r.Method == http.MethodGet:
		m := map[string]any{
			"@odata.id": mp, "@odata.type": "#Manager.v1_10_0.Manager", "Id": mid, "Name": "Emulated BMC",
			"ManagerType": "BMC", "Status": map[string]any{"State": "Enabled", "Health": "OK"},
			"Links": map[string]any{"ManagerForServers": []any{odata(root + "/Systems/" + s.ID)}},
		}
		if !s.MediaUnderSystem {
			m["VirtualMedia"] = odata(mp + "/VirtualMedia")
		}
		writeJSON(w, http.StatusOK, m)
	case len(rest) >= 1 && rest[0] == "VirtualMedia" && !s.MediaUnderSystem:
		b.mediaRoute(w, r, mp+"/VirtualMedia", s, rest[1:])
	default:
		redfishError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+p+" was not found.")
	}
}

// mediaRoute serves a virtual media collection with two slots, a floppy
// (listed first, as on many BMCs) and the CD/DVD. b.mu is held.
func (b *BMC) mediaRoute(w http.ResponseWriter, r *http.Request, coll string, s *system, rest []string) {
	get := r.Method == http.MethodGet
	switch {
	case len(rest) == 0 && get:
		writeJSON(w, http.StatusOK, map[string]any{"@odata.id": coll, "Name": "Virtual Media Services",
			"Members": []any{odata(coll + "/Floppy1"), odata(coll + "/Cd")}, "Members@odata.count": 2})
	case len(rest) == 1 && rest[0] == "Floppy1" && get:
		writeJSON(w, http.StatusOK, map[string]any{"@odata.id": coll + "/Floppy1", "Id": "Floppy1", "Name": "Virtual Removable Media",
			"MediaTypes": []string{"Floppy", "USBStick"}, "Inserted": false, "Image": nil, "ConnectedVia": "NotConnected"})
	case len(rest) == 1 && rest[0] == "Cd" && get:
		var image any
		via := "NotConnected"
		if s.Inserted {
			image, via = s.Image, "URI"
		}
		writeJSON(w, http.StatusOK, map[string]any{"@odata.id": coll + "/Cd", "@odata.type": "#VirtualMedia.v1_3_0.VirtualMedia",
			"Id": "Cd", "Name": "Virtual CD", "MediaTypes": []string{"CD", "DVD"}, "Inserted": s.Inserted, "Image": image,
			"WriteProtected": true, "ConnectedVia": via, "TransferProtocolType": "HTTP",
			"Actions": map[string]any{
				"#VirtualMedia.InsertMedia": map[string]any{"target": coll + "/Cd/Actions/VirtualMedia.InsertMedia"},
				"#VirtualMedia.EjectMedia":  map[string]any{"target": coll + "/Cd/Actions/VirtualMedia.EjectMedia"},
			}})
	case len(rest) == 3 && rest[0] == "Cd" && rest[2] == "VirtualMedia.InsertMedia" && r.Method == http.MethodPost:
		b.insert(w, r, s)
	case len(rest) == 3 && rest[0] == "Cd" && rest[2] == "VirtualMedia.EjectMedia" && r.Method == http.MethodPost:
		if !s.Inserted {
			redfishError(w, http.StatusBadRequest, "Base.1.8.ActionNotSupported", "There is no media inserted to eject.")
			return
		}
		s.Inserted, s.Image, s.MediaUser = false, "", ""
		w.WriteHeader(http.StatusNoContent)
	default:
		redfishError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+r.URL.Path+" was not found.")
	}
}

// insert mounts an image: like a real BMC it reads the image with range
// requests before it reports it inserted, so a URL it cannot read, or a
// server that ignores ranges, fails the action with the BMC's message.
func (b *BMC) insert(w http.ResponseWriter, r *http.Request, s *system) {
	var req struct {
		Image                string
		Inserted             *bool
		WriteProtected       *bool
		TransferProtocolType string
		UserName, Password   string
	}
	if err := decode(r, &req); err != nil {
		redfishError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "The request body submitted was malformed JSON.")
		return
	}
	if s.Inserted {
		redfishError(w, http.StatusConflict, "Base.1.8.ResourceInUse", "Virtual media is already inserted; eject it first.")
		return
	}
	if req.Image == "" || !(strings.HasPrefix(req.Image, "http://") || strings.HasPrefix(req.Image, "https://")) {
		redfishError(w, http.StatusBadRequest, "Base.1.8.ActionParameterValueFormatError", "The value for the parameter Image is not an HTTP or HTTPS URL.")
		return
	}
	if req.TransferProtocolType != "" {
		s.InsertsWithTransport++
	}
	if !b.o.SkipMediaCheck {
		b.mu.Unlock()
		err := b.checkMedia(r.Context(), req.Image, req.UserName, req.Password)
		b.mu.Lock()
		if err != nil {
			redfishError(w, http.StatusBadRequest, "Base.1.8.GeneralError", "Unable to mount the image: "+err.Error())
			return
		}
	}
	s.Inserted, s.Image, s.MediaUser = true, req.Image, req.UserName
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
