// Package assisted is the stand-in assisted-service of the live lab (test/live): its REST API with state that comes from the requests it gets (Live), and the request and response models the stand-in client and agent share with it, on pkg/rendezvous/sim's model of the API (requests, authentication, host stages, events).
package assisted

import (
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/credentials"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous/sim"
)

// LiveConfig configures a Live service.
type LiveConfig struct {
	// PublicKey checks the JWTs (assisted-service's EC_PUBLIC_KEY_PEM with AUTH_TYPE=agent-installer-local).
	PublicKey *ecdsa.PublicKey
	// InfraEnvID is the id given to the registered infra-env, like
	// assisted-service's INFRA_ENV_ID in the agent flow. Empty draws one.
	InfraEnvID string
	// BootstrapHostMAC marks the host holding this MAC as the bootstrap host
	// when the install starts (BOOTSTRAP_HOST_MAC from /etc/assisted/node0).
	BootstrapHostMAC string
	// PrepareFor is how long the cluster stays preparing-for-installation
	// before it turns installing; 0 means 5 s.
	PrepareFor time.Duration
	// ReleaseImages are the releases the service knows (RELEASE_IMAGES); when
	// set, a cluster whose openshift_version and cpu_architecture match none
	// is refused, as assisted-service does.
	ReleaseImages []ReleaseImage
	// InstallerImage is the image agents run for the install step
	// (INSTALLER_IMAGE); empty means no install step is handed out.
	InstallerImage string
	// NextInstruction is the next_instruction_seconds given to agents; 0 means 5.
	NextInstruction int64
	Now             func() time.Time
	Random          io.Reader
	Log             *slog.Logger
}

// Live is assisted-service's REST API in a form whose state comes from the
// requests it gets, as in the real service: the client registers the
// cluster and infra-env from the ZTP manifests, agents register hosts and
// post their inventory, configure applies roles and disks, and
// POST .../actions/install starts the installation. It serves what the
// agent units, the stand-in client and agent, and agentiso wait-for call.
// It does not install anything: once the cluster is installing, it stays
// there.
type Live struct {
	cfg LiveConfig
	log *slog.Logger

	mu        sync.Mutex
	cluster   *LiveCluster
	infraEnv  *LiveInfraEnv
	hosts     []*liveHost
	manifests []Manifest
	events    []rendezvous.Event
	requests  []sim.Request
	// installAt is when the install was requested (zero before).
	installAt time.Time
}

type liveHost struct {
	h         LiveHost
	inventory *Inventory
	// pendingInventory is set when an inventory step is due.
	pendingInventory bool
	stepSeq          int
	// hostnameSet is true once a PATCH set host_name; the inventory's
	// hostname no longer overrides it.
	hostnameSet bool
	// installStep is the id of the install step handed out, if any.
	installStep string
}

// NewLive checks cfg and returns the service; serve Handler().
func NewLive(cfg LiveConfig) (*Live, error) {
	if cfg.PublicKey == nil {
		return nil, errors.New("live simulator: no public key to check tokens with")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Random == nil {
		cfg.Random = rand.Reader
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.PrepareFor <= 0 {
		cfg.PrepareFor = 5 * time.Second
	}
	if cfg.NextInstruction <= 0 {
		cfg.NextInstruction = 5
	}
	if cfg.InfraEnvID != "" && !uuidRE.MatchString(cfg.InfraEnvID) {
		return nil, fmt.Errorf("live simulator: infra-env id %q is not a UUID", cfg.InfraEnvID)
	}
	return &Live{cfg: cfg, log: cfg.Log}, nil
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func (l *Live) newID() string {
	var b [16]byte
	if _, err := io.ReadFull(l.cfg.Random, b[:]); err != nil {
		// Fall back to the clock: ids only need to be unique within one run.
		t := l.cfg.Now().UnixNano()
		for i := range b {
			b[i] = byte(t >> (8 * (i % 8)))
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Requests returns the REST requests seen so far.
func (l *Live) Requests() []sim.Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.requests)
}

// Events returns the events recorded so far, oldest first.
func (l *Live) Events() []rendezvous.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

// Cluster returns the current cluster with its hosts, or nil before registration.
func (l *Live) Cluster() *LiveCluster {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.advanceLocked()
	if l.cluster == nil {
		return nil
	}
	c := l.clusterLocked(true)
	return &c
}

func (l *Live) eventLocked(sev, msg string, hostID string, clusterLevel bool) {
	e := rendezvous.Event{Severity: sev, Message: msg, EventTime: l.cfg.Now().UTC(), HostID: hostID, Category: "user"}
	if l.cluster != nil {
		e.ClusterID = l.cluster.ID
	}
	if !clusterLevel && l.infraEnv != nil {
		e.InfraEnvID = l.infraEnv.ID
	}
	l.events = append(l.events, e)
	l.log.Info("event", "severity", sev, "message", msg)
}

// requiredMasters is the control plane count of the registered cluster.
func (l *Live) requiredMasters() int64 {
	if l.cluster == nil {
		return 1
	}
	if l.cluster.ControlPlaneCount > 0 {
		return l.cluster.ControlPlaneCount
	}
	if l.cluster.HighAvailabilityMode == "None" {
		return 1
	}
	return 3
}

func (l *Live) setHostStatusLocked(h *liveHost, status, info string) {
	if h.h.Status == status && h.h.StatusInfo == info {
		return
	}
	old := h.h.Status
	h.h.Status, h.h.StatusInfo = status, info
	now := l.cfg.Now().UTC()
	h.h.StatusUpdatedAt = &now
	if old != status {
		msg := fmt.Sprintf("Host %s: updated status from %s to %s", h.h.Name(), old, status)
		if info != "" {
			msg += " (" + info + ")"
		}
		l.eventLocked("info", msg, h.h.ID, false)
	}
}

func (l *Live) setClusterStatusLocked(status, info string) {
	c := l.cluster
	if c.Status == status && c.StatusInfo == info {
		return
	}
	old := c.Status
	c.Status, c.StatusInfo = status, info
	now := l.cfg.Now().UTC()
	c.StatusUpdatedAt = &now
	if old != status {
		l.eventLocked("info", "Updated status of the cluster to "+status, "", true)
	}
}

// hostValidationsLocked computes the host's validations the way the
// lab needs them: an inventory, a valid unique hostname, an installation disk.
func (l *Live) hostValidationsLocked(h *liveHost) []rendezvous.Validation {
	var vs []rendezvous.Validation
	add := func(id, cat string, ok bool, okMsg, failMsg string) {
		v := rendezvous.Validation{ID: id, Category: cat, Status: rendezvous.ValidationSuccess, Message: okMsg}
		if !ok {
			v.Status, v.Message = rendezvous.ValidationFailure, failMsg
		}
		vs = append(vs, v)
	}
	inv := h.inventory
	add("has-inventory", "hardware", inv != nil, "Valid inventory exists for the host", "Inventory has not been received for the host")
	if inv == nil {
		return vs
	}
	name := h.h.Name()
	unique := true
	for _, o := range l.hosts {
		if o != h && o.inventory != nil && o.h.Name() == name {
			unique = false
		}
	}
	add("hostname-unique", "hardware", unique, fmt.Sprintf("Hostname %s is unique in cluster", name), fmt.Sprintf("Hostname %s is not unique in cluster", name))
	valid := name != "" && name != "localhost" && name != "localhost.localdomain"
	add("hostname-valid", "hardware", valid, fmt.Sprintf("Hostname %s is allowed", name), fmt.Sprintf("Hostname %s is forbidden", name))
	add("has-installation-disk", "hardware", h.h.InstallationDiskID != "", "Installation disk is selected", "No eligible disks were found, please check specific disks to see why they are not eligible")
	return vs
}

// advanceLocked recomputes statuses: host discovering/known/insufficient,
// cluster insufficient/ready before the install, and
// preparing-for-installation -> installing once PrepareFor has passed.
func (l *Live) advanceLocked() {
	if !l.installAt.IsZero() {
		if l.cluster.Status == rendezvous.ClusterPreparing && !l.cfg.Now().Before(l.installAt.Add(l.cfg.PrepareFor)) {
			l.eventLocked("info", "Cluster was prepared successfully for installation", "", true)
			l.setClusterStatusLocked(rendezvous.ClusterInstalling, "Installation in progress")
			for _, h := range l.hosts {
				l.setHostStatusLocked(h, "installing", "Installation is in progress")
				now := l.cfg.Now().UTC()
				h.h.Progress = &rendezvous.HostProgress{CurrentStage: "Starting installation", StageStartedAt: &now, StageUpdatedAt: &now}
				l.eventLocked("info", fmt.Sprintf("Host: %s, reached installation stage Starting installation", h.h.Name()), h.h.ID, false)
			}
		}
		return
	}
	masters := l.requiredMasters()
	mastersAssigned := int64(0)
	for _, h := range l.hosts {
		if h.h.Role == "master" {
			mastersAssigned++
		}
	}
	allKnown := len(l.hosts) > 0
	for _, h := range l.hosts {
		if h.h.Role == "" || h.h.Role == "auto-assign" {
			h.h.Role = "auto-assign"
			if mastersAssigned < masters {
				h.h.SuggestedRole = "master"
				mastersAssigned++
			} else {
				h.h.SuggestedRole = "worker"
			}
		} else {
			h.h.SuggestedRole = h.h.Role
		}
		vs := l.hostValidationsLocked(h)
		h.h.ValidationsInfo, _ = rendezvous.EncodeValidations(vs)
		var failing []string
		for _, v := range vs {
			if v.Status == rendezvous.ValidationFailure {
				failing = append(failing, v.Message)
			}
		}
		switch {
		case h.inventory == nil:
			l.setHostStatusLocked(h, "discovering", "Waiting for host to send hardware details")
			allKnown = false
		case len(failing) > 0:
			l.setHostStatusLocked(h, "insufficient", "Host cannot be installed due to following failing validation(s): "+strings.Join(failing, " ; "))
			allKnown = false
		default:
			l.setHostStatusLocked(h, "known", "Host is ready to be installed")
		}
	}
	if l.cluster == nil {
		return
	}
	if allKnown && int64(len(l.hosts)) >= masters {
		l.setClusterStatusLocked(rendezvous.ClusterReady, "Cluster ready to be installed")
	} else {
		l.setClusterStatusLocked(rendezvous.ClusterInsufficient,
			fmt.Sprintf("Cluster is not ready for install: %d host(s) registered, %d known, %d control plane host(s) required", len(l.hosts), l.knownLocked(), masters))
	}
}

func (l *Live) knownLocked() int {
	n := 0
	for _, h := range l.hosts {
		if h.h.Status == "known" {
			n++
		}
	}
	return n
}

func (l *Live) clusterLocked(withHosts bool) LiveCluster {
	c := *l.cluster
	c.TotalHostCount = int64(len(l.hosts))
	c.ReadyHostCount = int64(l.knownLocked())
	c.Hosts = nil
	if withHosts {
		c.Hosts = l.hostsLocked()
	}
	return c
}

func (l *Live) hostsLocked() []LiveHost {
	out := []LiveHost{}
	for _, h := range l.hosts {
		c := h.h
		if h.h.Progress != nil {
			p := *h.h.Progress
			c.Progress = &p
		}
		out = append(out, c)
	}
	return out
}

func (l *Live) hostByIDLocked(id string) *liveHost {
	for _, h := range l.hosts {
		if h.h.ID == id {
			return h
		}
	}
	return nil
}

func notFound(w http.ResponseWriter, r *http.Request, what string) {
	sim.WriteJSON(w, 404, rendezvous.APIError{Kind: "Error", ID: 404, Href: r.URL.Path, Code: "404", Reason: what + " can not be found"})
}

func badRequest(w http.ResponseWriter, r *http.Request, reason string) {
	sim.WriteJSON(w, 400, rendezvous.APIError{Kind: "Error", ID: 400, Href: r.URL.Path, Code: "400", Reason: reason})
}

func conflict(w http.ResponseWriter, r *http.Request, reason string) {
	sim.WriteJSON(w, 409, rendezvous.APIError{Kind: "Error", ID: 409, Href: r.URL.Path, Code: "409", Reason: reason})
}

// decodeBody reads a JSON body into out, refusing unknown fields so that a
// client sending a misspelled field fails here as it would against the
// swagger-validated real service.
func decodeBody(r *http.Request, out any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 8<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("invalid request body: %w", err)
	}
	return nil
}

// validPullSecret checks the pull secret is a JSON object with "auths".
func validPullSecret(ps string) error {
	var v struct {
		Auths map[string]json.RawMessage `json:"auths"`
	}
	if err := json.Unmarshal([]byte(ps), &v); err != nil {
		return fmt.Errorf("pull secret is not valid JSON: %w", err)
	}
	if v.Auths == nil {
		return errors.New("pull secret has no auths")
	}
	return nil
}

// Handler serves the REST API.
func (l *Live) Handler() http.Handler {
	const base = rendezvous.APIPath
	u, a, wa := credentials.SchemeUser, credentials.SchemeAgent, credentials.SchemeWatcher
	pub := l.cfg.PublicKey
	mux := http.NewServeMux()
	handle := func(pattern string, schemes []string, f func(w http.ResponseWriter, r *http.Request)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if !sim.Authorize(w, r, pub, schemes...) {
				return
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			l.advanceLocked()
			f(w, r)
			l.advanceLocked()
		})
	}
	clusterOK := func(w http.ResponseWriter, r *http.Request) bool {
		if l.cluster == nil || r.PathValue("id") != l.cluster.ID {
			notFound(w, r, "cluster "+r.PathValue("id"))
			return false
		}
		return true
	}
	infraEnvOK := func(w http.ResponseWriter, r *http.Request) bool {
		if l.infraEnv == nil || r.PathValue("ie") != l.infraEnv.ID {
			notFound(w, r, "infra-env "+r.PathValue("ie"))
			return false
		}
		return true
	}

	handle("GET "+base+"/clusters", []string{u, wa}, func(w http.ResponseWriter, r *http.Request) {
		out := []LiveCluster{}
		if l.cluster != nil {
			out = append(out, l.clusterLocked(r.URL.Query().Get("with_hosts") == "true"))
		}
		sim.WriteJSON(w, 200, out)
	})
	handle("POST "+base+"/clusters", []string{u}, func(w http.ResponseWriter, r *http.Request) {
		var p ClusterCreateParams
		if err := decodeBody(r, &p); err != nil {
			badRequest(w, r, err.Error())
			return
		}
		switch {
		case p.Name == "":
			badRequest(w, r, "name is required")
			return
		case p.OpenshiftVersion == "":
			badRequest(w, r, "openshift_version is required")
			return
		}
		if err := validPullSecret(p.PullSecret); err != nil {
			badRequest(w, r, err.Error())
			return
		}
		rel, err := l.releaseFor(p.OCPReleaseImage, p.OpenshiftVersion, p.CPUArchitecture)
		if err != nil {
			badRequest(w, r, err.Error())
			return
		}
		if p.OCPReleaseImage == "" && rel != nil {
			p.OCPReleaseImage = rel.URL
		}
		if l.cluster != nil {
			conflict(w, r, "the stand-in assisted-service holds one cluster, and "+l.cluster.ID+" is registered")
			return
		}
		now := l.cfg.Now().UTC()
		id := l.newID()
		l.cluster = &LiveCluster{
			Cluster: rendezvous.Cluster{Kind: "Cluster", ID: id, Href: base + "/clusters/" + id, Name: p.Name, BaseDNSDomain: p.BaseDNSDomain,
				Status: rendezvous.ClusterInsufficient, StatusInfo: "Cluster is not ready for install", StatusUpdatedAt: &now},
			OpenshiftVersion: p.OpenshiftVersion, OCPReleaseImage: p.OCPReleaseImage, CPUArchitecture: p.CPUArchitecture,
			HighAvailabilityMode: p.HighAvailabilityMode, ControlPlaneCount: p.ControlPlaneCount,
			APIVIPs: p.APIVIPs, IngressVIPs: p.IngressVIPs, MachineNetworks: p.MachineNetworks, ClusterNetworks: p.ClusterNetworks,
			ServiceNetworks: p.ServiceNetworks, NetworkType: p.NetworkType, UserManagedNetworking: p.UserManagedNetworking,
			Platform: p.Platform, SSHPublicKey: p.SSHPublicKey, HTTPProxy: p.HTTPProxy, HTTPSProxy: p.HTTPSProxy, NoProxy: p.NoProxy,
			PullSecretSet: true, CreatedAt: now, UpdatedAt: now,
		}
		if l.cluster.HighAvailabilityMode == "" {
			l.cluster.HighAvailabilityMode = "Full"
		}
		l.eventLocked("info", fmt.Sprintf("Successfully registered cluster %s with id %s", p.Name, id), "", true)
		l.advanceLocked()
		sim.WriteJSON(w, 201, l.clusterLocked(true))
	})
	handle("GET "+base+"/clusters/{id}", []string{u, a, wa}, func(w http.ResponseWriter, r *http.Request) {
		if !clusterOK(w, r) {
			return
		}
		sim.WriteJSON(w, 200, l.clusterLocked(r.URL.Query().Get("exclude-hosts") != "true"))
	})
	handle("PATCH "+base+"/clusters/{id}/install-config", []string{u}, func(w http.ResponseWriter, r *http.Request) {
		if !clusterOK(w, r) {
			return
		}
		var s string
		if err := decodeBody(r, &s); err != nil {
			badRequest(w, r, err.Error())
			return
		}
		if !json.Valid([]byte(s)) {
			badRequest(w, r, "install config overrides are not valid JSON")
			return
		}
		l.cluster.InstallConfigOverrides = s
		l.eventLocked("info", "Custom install config was applied to the cluster", "", true)
		w.WriteHeader(201)
	})
	handle("GET "+base+"/clusters/{id}/manifests", []string{u}, func(w http.ResponseWriter, r *http.Request) {
		if !clusterOK(w, r) {
			return
		}
		out := []Manifest{}
		for _, m := range l.manifests {
			out = append(out, Manifest{FileName: m.FileName, Folder: m.Folder})
		}
		sim.WriteJSON(w, 200, out)
	})
	handle("POST "+base+"/clusters/{id}/manifests", []string{u}, func(w http.ResponseWriter, r *http.Request) {
		if !clusterOK(w, r) {
			return
		}
		var m Manifest
		if err := decodeBody(r, &m); err != nil {
			badRequest(w, r, err.Error())
			return
		}
		if m.Folder == "" {
			m.Folder = "manifests"
		}
		if m.Folder != "manifests" && m.Folder != "openshift" {
			badRequest(w, r, "folder must be manifests or openshift")
			return
		}
		if _, err := base64.StdEncoding.DecodeString(m.Content); err != nil || m.FileName == "" || strings.Contains(m.FileName, "/") {
			badRequest(w, r, "a manifest needs a file_name without / and base64 content")
			return
		}
		if slices.ContainsFunc(l.manifests, func(o Manifest) bool { return o.Folder == m.Folder && o.FileName == m.FileName }) {
			conflict(w, r, "manifest "+m.Folder+"/"+m.FileName+" already exists")
			return
		}
		l.manifests = append(l.manifests, m)
		sim.WriteJSON(w, 201, Manifest{FileName: m.FileName, Folder: m.Folder})
	})
	handle("POST "+base+"/clusters/{id}/actions/install", []string{u}, func(w http.ResponseWriter, r *http.Request) {
		if !clusterOK(w, r) {
			return
		}
		if l.cluster.Status != rendezvous.ClusterReady {
			conflict(w, r, fmt.Sprintf("cluster %s is expected to be in ready state to install, but it is %s", l.cluster.ID, l.cluster.Status))
			return
		}
		now := l.cfg.Now().UTC()
		l.installAt = now
		l.cluster.InstallStartedAt = &now
		l.eventLocked("info", "Cluster installation was requested", "", true)
		boot := l.bootstrapLocked()
		for _, h := range l.hosts {
			if h.h.Role == "auto-assign" {
				h.h.Role = h.h.SuggestedRole
			}
			h.h.Bootstrap = h == boot
			l.setHostStatusLocked(h, "preparing-for-installation", "Host is preparing for installation")
		}
		l.setClusterStatusLocked(rendezvous.ClusterPreparing, "Preparing cluster for installation")
		sim.WriteJSON(w, 202, l.clusterLocked(true))
	})
	handle("GET "+base+"/infra-envs", []string{u, wa}, func(w http.ResponseWriter, r *http.Request) {
		out := []LiveInfraEnv{}
		if l.infraEnv != nil {
			out = append(out, *l.infraEnv)
		}
		sim.WriteJSON(w, 200, out)
	})
	handle("POST "+base+"/infra-envs", []string{u}, func(w http.ResponseWriter, r *http.Request) {
		var p InfraEnvCreateParams
		if err := decodeBody(r, &p); err != nil {
			badRequest(w, r, err.Error())
			return
		}
		if p.Name == "" {
			badRequest(w, r, "name is required")
			return
		}
		if err := validPullSecret(p.PullSecret); err != nil {
			badRequest(w, r, err.Error())
			return
		}
		if p.ImageType != "" && p.ImageType != "full-iso" && p.ImageType != "minimal-iso" {
			badRequest(w, r, "image_type must be full-iso or minimal-iso")
			return
		}
		if p.ClusterID != "" && (l.cluster == nil || p.ClusterID != l.cluster.ID) {
			notFound(w, r, "cluster "+p.ClusterID)
			return
		}
		if l.infraEnv != nil {
			conflict(w, r, "the stand-in assisted-service holds one infra-env, and "+l.infraEnv.ID+" is registered")
			return
		}
		for i, c := range p.StaticNetworkConfig {
			if len(c.MacInterfaceMap) == 0 || c.NetworkYAML == "" {
				badRequest(w, r, fmt.Sprintf("static_network_config[%d] needs mac_interface_map and network_yaml", i))
				return
			}
		}
		id := l.cfg.InfraEnvID
		if id == "" {
			id = l.newID()
		}
		now := l.cfg.Now().UTC()
		snc := ""
		if len(p.StaticNetworkConfig) > 0 {
			b, _ := json.Marshal(p.StaticNetworkConfig)
			snc = string(b)
		}
		typ := p.ImageType
		if typ == "" {
			typ = "full-iso"
		}
		l.infraEnv = &LiveInfraEnv{
			InfraEnv: rendezvous.InfraEnv{Kind: "InfraEnv", ID: id, Href: base + "/infra-envs/" + id, Name: p.Name, Type: typ,
				ClusterID: p.ClusterID, CreatedAt: now, UpdatedAt: now},
			OpenshiftVersion: p.OpenshiftVersion, CPUArchitecture: p.CPUArchitecture, SSHAuthorizedKey: p.SSHAuthorizedKey,
			PullSecretSet: true, StaticNetworkConfig: snc, AdditionalNTPSources: p.AdditionalNTPSources, Proxy: p.Proxy,
		}
		l.eventLocked("info", fmt.Sprintf("Registered infra env %s with id %s", p.Name, id), "", false)
		sim.WriteJSON(w, 201, *l.infraEnv)
	})
	handle("GET "+base+"/infra-envs/{ie}", []string{u, a}, func(w http.ResponseWriter, r *http.Request) {
		if !infraEnvOK(w, r) {
			return
		}
		sim.WriteJSON(w, 200, *l.infraEnv)
	})
	handle("GET "+base+"/infra-envs/{ie}/hosts", []string{u, a}, func(w http.ResponseWriter, r *http.Request) {
		if !infraEnvOK(w, r) {
			return
		}
		sim.WriteJSON(w, 200, l.hostsLocked())
	})
	handle("POST "+base+"/infra-envs/{ie}/hosts", []string{a}, func(w http.ResponseWriter, r *http.Request) {
		if !infraEnvOK(w, r) {
			return
		}
		var p HostCreateParams
		if err := decodeBody(r, &p); err != nil {
			badRequest(w, r, err.Error())
			return
		}
		if !uuidRE.MatchString(p.HostID) {
			badRequest(w, r, "host_id must be a UUID")
			return
		}
		now := l.cfg.Now().UTC()
		h := l.hostByIDLocked(p.HostID)
		if h == nil {
			h = &liveHost{h: LiveHost{Host: rendezvous.Host{Kind: "Host", ID: p.HostID, Href: base + "/infra-envs/" + l.infraEnv.ID + "/hosts/" + p.HostID,
				InfraEnvID: l.infraEnv.ID, Status: "discovering", StatusInfo: "Waiting for host to send hardware details", StatusUpdatedAt: &now},
				CreatedAt: now}}
			if l.cluster != nil && (l.infraEnv.ClusterID == "" || l.infraEnv.ClusterID == l.cluster.ID) {
				h.h.ClusterID = l.cluster.ID
			}
			l.hosts = append(l.hosts, h)
			l.eventLocked("info", fmt.Sprintf("Host %s: Successfully registered", p.HostID), p.HostID, false)
		} else {
			if !l.installAt.IsZero() {
				conflict(w, r, "host "+p.HostID+" cannot register again: the installation has started")
				return
			}
			h.inventory = nil
			h.h.Inventory = ""
			l.eventLocked("info", fmt.Sprintf("Host %s: registered again", h.h.Name()), p.HostID, false)
		}
		h.h.DiscoveryAgentVersion = p.DiscoveryAgentVersion
		h.h.UpdatedAt = now
		h.h.CheckedInAt = &now
		h.pendingInventory = true
		l.advanceLocked()
		sim.WriteJSON(w, 201, HostRegistrationResponse{LiveHost: h.h, NextStepRunnerCommand: &StepRunnerCommand{
			Command: "", Args: []string{"--url", "", "--infra-env-id", l.infraEnv.ID, "--host-id", p.HostID}, RetrySeconds: l.cfg.NextInstruction}})
	})
	hostOK := func(w http.ResponseWriter, r *http.Request) *liveHost {
		if !infraEnvOK(w, r) {
			return nil
		}
		h := l.hostByIDLocked(r.PathValue("host"))
		if h == nil {
			notFound(w, r, "host "+r.PathValue("host"))
		}
		return h
	}
	handle("GET "+base+"/infra-envs/{ie}/hosts/{host}", []string{u, a}, func(w http.ResponseWriter, r *http.Request) {
		if h := hostOK(w, r); h != nil {
			sim.WriteJSON(w, 200, h.h)
		}
	})
	handle("GET "+base+"/infra-envs/{ie}/hosts/{host}/instructions", []string{a}, func(w http.ResponseWriter, r *http.Request) {
		h := hostOK(w, r)
		if h == nil {
			return
		}
		now := l.cfg.Now().UTC()
		h.h.CheckedInAt = &now
		steps := Steps{NextInstructionSeconds: l.cfg.NextInstruction, PostStepAction: "continue", Instructions: []AgentStep{}}
		if h.pendingInventory {
			h.stepSeq++
			steps.Instructions = append(steps.Instructions, AgentStep{StepType: StepInventory, StepID: fmt.Sprintf("%s-%d", StepInventory, h.stepSeq), Args: []string{}})
		}
		if h.h.Status == "installing" && h.installStep == "" && l.cfg.InstallerImage != "" {
			h.stepSeq++
			h.installStep = fmt.Sprintf("%s-%d", StepInstall, h.stepSeq)
			steps.Instructions = append(steps.Instructions, AgentStep{StepType: StepInstall, StepID: h.installStep, Args: l.installArgsLocked(h, r)})
			l.eventLocked("info", fmt.Sprintf("Host %s: the install step was handed out (installer image %s)", h.h.Name(), l.cfg.InstallerImage), h.h.ID, false)
		}
		sim.WriteJSON(w, 200, steps)
	})
	handle("POST "+base+"/infra-envs/{ie}/hosts/{host}/instructions", []string{a}, func(w http.ResponseWriter, r *http.Request) {
		h := hostOK(w, r)
		if h == nil {
			return
		}
		var rep StepReply
		if err := decodeBody(r, &rep); err != nil {
			badRequest(w, r, err.Error())
			return
		}
		if rep.StepType == StepInstall && rep.StepID != "" && rep.StepID == h.installStep {
			if rep.ExitCode != 0 {
				l.setHostStatusLocked(h, "error", fmt.Sprintf("Host failed to install: the installer exited with code %d: %s", rep.ExitCode, rep.Error))
			} else {
				l.eventLocked("info", fmt.Sprintf("Host %s: the installer ran", h.h.Name()), h.h.ID, false)
			}
			w.WriteHeader(204)
			return
		}
		if rep.StepType != StepInventory {
			badRequest(w, r, fmt.Sprintf("step %q of type %q was never asked for", rep.StepID, rep.StepType))
			return
		}
		if rep.ExitCode != 0 {
			l.eventLocked("warning", fmt.Sprintf("Host %s: inventory step failed (exit code %d): %s", h.h.Name(), rep.ExitCode, rep.Error), h.h.ID, false)
			w.WriteHeader(204)
			return
		}
		var inv Inventory
		if err := json.Unmarshal([]byte(rep.Output), &inv); err != nil {
			badRequest(w, r, "inventory output is not valid JSON: "+err.Error())
			return
		}
		if err := checkInventory(&inv); err != nil {
			badRequest(w, r, err.Error())
			return
		}
		h.inventory = &inv
		h.h.Inventory = rep.Output
		h.pendingInventory = false
		if h.h.RequestedHostname == "" || h.hostnameFromInventory() {
			h.h.RequestedHostname = inv.Hostname
		}
		if h.h.InstallationDiskID == "" {
			for _, d := range inv.Disks {
				if d.InstallationEligibility.Eligible {
					h.h.InstallationDiskID, h.h.InstallationDiskPath = d.ID, d.Path
					break
				}
			}
		}
		h.h.UpdatedAt = l.cfg.Now().UTC()
		l.eventLocked("info", fmt.Sprintf("Host %s: received the inventory (%d interface(s), %d disk(s))", h.h.Name(), len(inv.Interfaces), len(inv.Disks)), h.h.ID, false)
		w.WriteHeader(204)
	})
	handle("PUT "+base+"/infra-envs/{ie}/hosts/{host}/progress", []string{a}, func(w http.ResponseWriter, r *http.Request) {
		h := hostOK(w, r)
		if h == nil {
			return
		}
		var p HostProgressParams
		if err := decodeBody(r, &p); err != nil {
			badRequest(w, r, err.Error())
			return
		}
		if h.h.Status != "installing" && h.h.Status != "installing-in-progress" {
			conflict(w, r, fmt.Sprintf("host %s is %s, not installing: no progress to report", h.h.Name(), h.h.Status))
			return
		}
		order := sim.StageOrder(h.h.Role, h.h.Bootstrap, len(l.hosts) == 1)
		k := slices.Index(order, p.CurrentStage)
		if k < 0 {
			badRequest(w, r, fmt.Sprintf("stage %q is not a stage of a %s host", p.CurrentStage, h.h.Role))
			return
		}
		now := l.cfg.Now().UTC()
		if h.h.Progress == nil {
			h.h.Progress = &rendezvous.HostProgress{}
		}
		if h.h.Progress.CurrentStage != p.CurrentStage {
			h.h.Progress.StageStartedAt = &now
		}
		h.h.Progress.CurrentStage, h.h.Progress.ProgressInfo, h.h.Progress.StageUpdatedAt = p.CurrentStage, p.ProgressInfo, &now
		h.h.Progress.InstallationPercentage = int64(100 * (k + 1) / len(order))
		l.setHostStatusLocked(h, "installing-in-progress", "Host is being installed")
		msg := fmt.Sprintf("Host: %s, reached installation stage %s", h.h.Name(), p.CurrentStage)
		if p.ProgressInfo != "" {
			msg += ": " + p.ProgressInfo
		}
		l.eventLocked("info", msg, h.h.ID, false)
		w.WriteHeader(200)
	})
	handle("PATCH "+base+"/infra-envs/{ie}/hosts/{host}", []string{u}, func(w http.ResponseWriter, r *http.Request) {
		h := hostOK(w, r)
		if h == nil {
			return
		}
		var p HostUpdateParams
		if err := decodeBody(r, &p); err != nil {
			badRequest(w, r, err.Error())
			return
		}
		if !l.installAt.IsZero() {
			conflict(w, r, "host "+h.h.ID+" cannot be updated: the installation has started")
			return
		}
		switch p.HostRole {
		case "", "auto-assign", "master", "worker", "arbiter":
		default:
			badRequest(w, r, fmt.Sprintf("host_role %q is not one of auto-assign, master, worker, arbiter", p.HostRole))
			return
		}
		for _, d := range p.DisksSelectedConfig {
			if d.Role != "install" && d.Role != "none" {
				badRequest(w, r, fmt.Sprintf("disk role %q is not install or none", d.Role))
				return
			}
			if d.Role != "install" {
				continue
			}
			disk, ok := h.diskByID(d.ID)
			if !ok {
				badRequest(w, r, fmt.Sprintf("disk %s is not a disk of host %s", d.ID, h.h.Name()))
				return
			}
			if !disk.InstallationEligibility.Eligible {
				badRequest(w, r, fmt.Sprintf("disk %s is not eligible for installation: %s", d.ID, strings.Join(disk.InstallationEligibility.NotEligibleReasons, "; ")))
				return
			}
		}
		if p.HostRole != "" {
			h.h.Role = p.HostRole
			l.eventLocked("info", fmt.Sprintf("Host %s: role set to %s", h.h.Name(), p.HostRole), h.h.ID, false)
		}
		if p.HostName != "" {
			h.h.RequestedHostname = p.HostName
			h.hostnameSet = true
		}
		for _, d := range p.DisksSelectedConfig {
			if d.Role == "install" {
				disk, _ := h.diskByID(d.ID)
				h.h.InstallationDiskID, h.h.InstallationDiskPath = disk.ID, disk.Path
				l.eventLocked("info", fmt.Sprintf("Host %s: installation disk set to %s", h.h.Name(), disk.Path), h.h.ID, false)
			}
		}
		h.h.UpdatedAt = l.cfg.Now().UTC()
		l.advanceLocked()
		sim.WriteJSON(w, 201, h.h)
	})
	handle("PATCH "+base+"/infra-envs/{ie}/hosts/{host}/installer-args", []string{u}, func(w http.ResponseWriter, r *http.Request) {
		h := hostOK(w, r)
		if h == nil {
			return
		}
		var p InstallerArgsParams
		if err := decodeBody(r, &p); err != nil {
			badRequest(w, r, err.Error())
			return
		}
		b, _ := json.Marshal(p.Args)
		h.h.InstallerArgs = string(b)
		l.eventLocked("info", fmt.Sprintf("Host %s: custom installer arguments were applied", h.h.Name()), h.h.ID, false)
		sim.WriteJSON(w, 201, h.h)
	})
	handle("PATCH "+base+"/infra-envs/{ie}/hosts/{host}/ignition", []string{u}, func(w http.ResponseWriter, r *http.Request) {
		h := hostOK(w, r)
		if h == nil {
			return
		}
		var p IgnitionParams
		if err := decodeBody(r, &p); err != nil {
			badRequest(w, r, err.Error())
			return
		}
		var ign struct {
			Ignition struct {
				Version string `json:"version"`
			} `json:"ignition"`
		}
		if err := json.Unmarshal([]byte(p.Config), &ign); err != nil || ign.Ignition.Version == "" {
			badRequest(w, r, "the ignition config override is not an Ignition config with ignition.version")
			return
		}
		h.h.IgnitionConfigOverrides = p.Config
		l.eventLocked("info", fmt.Sprintf("Host %s: custom discovery ignition config was applied", h.h.Name()), h.h.ID, false)
		w.WriteHeader(201)
	})
	handle("GET "+base+"/events", []string{u, wa}, func(w http.ResponseWriter, r *http.Request) {
		sim.WriteJSON(w, 200, sim.QueryEvents(l.events, r.URL.Query()))
	})
	// The lab's own endpoint (not in assisted-service): every request seen.
	mux.HandleFunc("GET "+LabRequestsPath, func(w http.ResponseWriter, r *http.Request) {
		if !sim.Authorize(w, r, pub, u, wa) {
			return
		}
		sim.WriteJSON(w, 200, l.Requests())
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdrs := authHeaders(r)
		rec := &sim.StatusRecorder{ResponseWriter: w, Code: 200}
		mux.ServeHTTP(rec, r)
		l.mu.Lock()
		l.requests = append(l.requests, sim.Request{Method: r.Method, Path: r.URL.Path, AuthHeaders: hdrs, Status: rec.Code})
		l.mu.Unlock()
		l.log.Info("request", "method", r.Method, "path", r.URL.Path, "status", rec.Code, "remote", remoteIP(r))
	})
}

// LabRequestsPath lists the requests the live service has seen; it is the
// lab's own addition, readable with the user or watcher token.
const LabRequestsPath = rendezvous.APIPath + "/lab/requests"

func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func authHeaders(r *http.Request) []string {
	var hdrs []string
	for _, h := range []string{"X-Secret-Key", "Authorization", rendezvous.WatcherHeader, "Image-Token"} {
		if r.Header.Get(h) != "" {
			hdrs = append(hdrs, h)
		}
	}
	if r.URL.Query().Get("api_key") != "" {
		hdrs = append(hdrs, "api_key")
	}
	return hdrs
}

// installArgsLocked are the install step's image and installer arguments.
func (l *Live) installArgsLocked(h *liveHost, r *http.Request) []string {
	role := h.h.Role
	if h.h.Bootstrap {
		role = "bootstrap"
	}
	return []string{l.cfg.InstallerImage,
		"--role", role, "--infra-env-id", l.infraEnv.ID, "--cluster-id", l.cluster.ID, "--host-id", h.h.ID,
		"--boot-device", h.h.InstallationDiskPath, "--url", "http://" + r.Host + "/",
		"--openshift-version", l.cluster.OpenshiftVersion, "--high-availability-mode", l.cluster.HighAvailabilityMode}
}

// releaseFor finds the RELEASE_IMAGES entry of a cluster registration the
// way assisted-service does. With ocp_release_image (the release-4.22+
// client sends its ClusterImageSet's spec.releaseImage), the entry whose
// url is exactly that string (internal/bminventory/inventory.go
// getReleaseImage -> GetReleaseImageByURL, "url = ?"): a tag never matches
// a url by digest. Without it (the release-4.18 ... 4.21 client), by
// openshift_version: an x.y.z must be an entry's exact version, an x.y
// takes an entry of that minor (internal/versions/rest_api_versions.go
// GetReleaseImage). The CPU architecture must match as well.
func (l *Live) releaseFor(url, version, arch string) (*ReleaseImage, error) {
	if len(l.cfg.ReleaseImages) == 0 {
		return nil, nil
	}
	archOK := func(ri ReleaseImage) bool {
		return arch == "" || ri.CPUArchitecture == arch || slices.Contains(ri.CPUArchitectures, arch)
	}
	if url != "" {
		for i, ri := range l.cfg.ReleaseImages {
			if ri.URL == url {
				if !archOK(ri) {
					return nil, fmt.Errorf("requested CPU architecture %s is not supported for release image URL %s", arch, url)
				}
				return &l.cfg.ReleaseImages[i], nil
			}
		}
		return nil, fmt.Errorf("failed to get release image by URL %s during cluster registration: no RELEASE_IMAGES entry has that url", url)
	}
	exact := strings.Count(version, ".") >= 2
	for i, ri := range l.cfg.ReleaseImages {
		if exact && ri.Version != version || !exact && ri.OpenshiftVersion != version {
			continue
		}
		if !archOK(ri) {
			continue
		}
		return &l.cfg.ReleaseImages[i], nil
	}
	return nil, fmt.Errorf("no release image found for version %s and CPU architecture %s in RELEASE_IMAGES", version, arch)
}

// bootstrapLocked picks the bootstrap host: the one holding
// BootstrapHostMAC, else the first master-to-be.
func (l *Live) bootstrapLocked() *liveHost {
	if mac := strings.ToLower(l.cfg.BootstrapHostMAC); mac != "" {
		for _, h := range l.hosts {
			if h.inventory == nil {
				continue
			}
			for _, i := range h.inventory.Interfaces {
				if strings.EqualFold(i.MacAddress, mac) {
					return h
				}
			}
		}
	}
	for _, h := range l.hosts {
		if h.h.Role == "master" || h.h.SuggestedRole == "master" {
			return h
		}
	}
	return nil
}

func (h *liveHost) hostnameFromInventory() bool { return !h.hostnameSet }

func (h *liveHost) diskByID(id string) (Disk, bool) {
	if h.inventory == nil {
		return Disk{}, false
	}
	for _, d := range h.inventory.Disks {
		if d.ID == id {
			return d, true
		}
	}
	return Disk{}, false
}

// checkInventory refuses inventories a real agent would never send.
func checkInventory(inv *Inventory) error {
	if len(inv.Interfaces) == 0 {
		return errors.New("inventory has no interfaces")
	}
	for i, itf := range inv.Interfaces {
		if _, err := net.ParseMAC(itf.MacAddress); err != nil {
			return fmt.Errorf("inventory interfaces[%d] (%s): mac_address %q: %w", i, itf.Name, itf.MacAddress, err)
		}
		for _, a := range append(slices.Clone(itf.IPV4Addresses), itf.IPV6Addresses...) {
			if _, _, err := net.ParseCIDR(a); err != nil {
				return fmt.Errorf("inventory interfaces[%d] (%s): address %q is not CIDR: %w", i, itf.Name, a, err)
			}
		}
	}
	if inv.CPU.Count <= 0 {
		return errors.New("inventory cpu.count is not positive")
	}
	return nil
}
