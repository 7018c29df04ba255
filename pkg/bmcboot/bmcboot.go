// Package bmcboot boots the hosts of install-config.yaml's platform.baremetal.hosts from the served agent ISO through their BMCs (Redfish virtual media), in parallel, with a live per-host table, and ejects the media after the install.
package bmcboot

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/seed-a052040e/agentiso/internal/redact"
	"github.com/seed-a052040e/agentiso/internal/termsafe"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
	"github.com/seed-a052040e/agentiso/pkg/redfish"
	"github.com/seed-a052040e/agentiso/pkg/serve"
)

// Options are what `agentiso boot` is given.
type Options struct {
	Dir string
	// URL is where agentiso serve serves --dir (http://host:port), or the
	// ISO's own URL (ending in .iso).
	URL string
	// Hosts are the host names to boot (empty: every host with a BMC).
	Hosts []string
	// ISO is the file name of the ISO in Dir to boot (empty: the agent
	// ISO; without one, the only other ISO there).
	ISO string
	// ConfigImage also inserts the config image (create config-image)
	// served beside the generic ISO in a second virtual media slot.
	ConfigImage bool
	// Eject removes the virtual media instead of booting.
	Eject bool
	// MediaUser and MediaPasswordFile are passed to the BMC for fetching
	// the ISO (serve's --user and --password-file).
	MediaUser, MediaPasswordFile string
	// CallTimeout bounds each Redfish call.
	CallTimeout time.Duration
	// Parallel bounds the BMCs spoken to at once (default 16).
	Parallel int
	Log      *slog.Logger
	// Table receives the live per-host table (a terminal: redrawn in
	// place) or, when Live is false, nothing (each change is logged).
	Table io.Writer
	Live  bool
	// Transport replaces the HTTP transport to the BMCs and the media
	// server (tests).
	Transport http.RoundTripper
	// RetryDelay is the first wait before a call a BMC refused for a
	// transient reason is tried again (redfish.DefaultRetryDelay when 0).
	RetryDelay time.Duration
}

// Host is one host to boot.
type Host struct {
	Name, Field string
	Addr        *redfish.Address
	Cred        Credentials
}

// Credentials are a BMC's, never printed.
type Credentials struct {
	Username, Password string
	Insecure           bool
}

// hosts reads install-config.yaml and returns the hosts with a BMC,
// every refused address reported at once.
// HostNames are the names of install-config.yaml's hosts in dir that have
// a BMC address (platform.baremetal.hosts[].bmc), the hosts boot can
// boot; nil when dir holds none (for shell completion: no error to show).
func HostNames(ctx context.Context, dir string) []string {
	st, err := asset.NewStore(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil
	}
	ic, err := asset.Fetch[*agent.InstallConfig](ctx, st)
	if err != nil || ic.Config == nil || ic.Config.Platform.BareMetal == nil {
		return nil
	}
	var out []string
	for _, h := range ic.Config.Platform.BareMetal.Hosts {
		if h.BMC != nil && h.BMC.Address != "" && h.Name != "" {
			out = append(out, h.Name)
		}
	}
	return out
}

func hosts(ctx context.Context, o Options) ([]Host, error) {
	if fi, err := os.Stat(o.Dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("--dir %s: not a directory", o.Dir)
	}
	st, err := asset.NewStore(o.Dir, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	ic, err := asset.Fetch[*agent.InstallConfig](ctx, st)
	if err != nil {
		return nil, err
	}
	if ic.Config == nil {
		return nil, fmt.Errorf("no %s in %s: agentiso boot reads the hosts' BMCs from its platform.baremetal.hosts[].bmc", assetdir.InstallConfig, o.Dir)
	}
	bm := ic.Config.Platform.BareMetal
	if bm == nil {
		return nil, fmt.Errorf("%s: platform is not baremetal: agentiso boot reads the hosts' BMCs from platform.baremetal.hosts[].bmc, which only the baremetal platform has (a single-node cluster is platform none: boot its ISO through the BMC's own console)", assetdir.InstallConfig)
	}
	want := map[string]bool{}
	for _, n := range o.Hosts {
		want[n] = true
	}
	named := map[string]bool{}
	var out []Host
	var problems []string
	var known []string
	for i, h := range bm.Hosts {
		field := fmt.Sprintf("%s: platform.baremetal.hosts[%d]", assetdir.InstallConfig, i)
		if h.BMC == nil || h.BMC.Address == "" {
			continue
		}
		known = append(known, h.Name)
		if len(o.Hosts) > 0 && !want[h.Name] {
			continue
		}
		named[h.Name] = true
		a, err := redfish.ParseAddress(h.BMC.Address)
		if err != nil {
			problems = append(problems, fmt.Sprintf("host %s (%s.bmc.address): %v", h.Name, field, err))
			continue
		}
		if h.BMC.Username == "" || h.BMC.Password == "" {
			problems = append(problems, fmt.Sprintf("host %s (%s.bmc): username and password are required to reach %s", h.Name, field, a))
			continue
		}
		out = append(out, Host{Name: h.Name, Field: field, Addr: a, Cred: Credentials{h.BMC.Username, h.BMC.Password, h.BMC.DisableCertificateVerification}})
	}
	var missing []string
	for n := range want {
		if !named[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		problems = append(problems, fmt.Sprintf("no host named %s has a BMC in %s (hosts with one: %s)", strings.Join(missing, ", "), assetdir.InstallConfig, orNone(known)))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("cannot boot through the BMCs; nothing was done:\n  %s", strings.Join(problems, "\n  "))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no host in platform.baremetal.hosts has a bmc.address: add each host's BMC (e.g. redfish-virtualmedia://10.0.0.5/redfish/v1/Systems/1, username, password)", assetdir.InstallConfig)
	}
	return out, nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// media is what the BMCs are given: the ISO's URL and the local ISO's
// sha256 ("" unknown), and with --config-image the config image's.
type media struct {
	iso, sum       string
	config, cfgSum string
}

// isGeneric says whether name is a generic ISO (create
// unconfigured-image).
func isGeneric(name string) bool {
	return strings.HasPrefix(name, "agent-unconfigured.") && strings.HasSuffix(name, ".iso")
}

// localISOs are the ISOs in dir that a host can boot (the config image is
// not one), sorted.
func localISOs(dir string) []string {
	var out []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(n, ".iso") && !strings.HasPrefix(n, ".") && n != assetdir.ConfigImage {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// chooseISO is the file name of the ISO to boot when --url names none:
// --iso, else the agent ISO, else the only other ISO of dir.
func chooseISO(o Options) (string, error) {
	isos := localISOs(o.Dir)
	if o.ISO != "" {
		if !slices.Contains(isos, o.ISO) {
			return "", fmt.Errorf("--iso %s: no such ISO in %s (ISOs there: %s)", o.ISO, o.Dir, orNone(isos))
		}
		return o.ISO, nil
	}
	var agents []string
	for _, n := range isos {
		if strings.HasPrefix(n, "agent.") {
			agents = append(agents, n)
		}
	}
	switch {
	case len(agents) == 1:
		return agents[0], nil
	case len(agents) > 1:
		return "", fmt.Errorf("%s holds %d agent ISOs (%s): name the one to boot with --iso, or give its URL in --url", o.Dir, len(agents), strings.Join(agents, ", "))
	case len(isos) == 1:
		return isos[0], nil
	case len(isos) == 0:
		return "", fmt.Errorf("no ISO in %s: run agentiso create image (or create unconfigured-image, node-image create) first, or give the ISO's own URL in --url", o.Dir)
	}
	return "", fmt.Errorf("no agent ISO (agent.<arch>.iso) in %s but %d other ISOs: %s: name the one to boot with --iso", o.Dir, len(isos), strings.Join(isos, ", "))
}

// localSum is the sha256 that name.sha256 in dir records ("" unknown).
func localSum(dir, name string) string {
	sum := ""
	if b, err := fsutil.ReadRegular(filepath.Join(dir, name+".sha256"), 4096); err == nil {
		sum, _ = serve.ParseSumLine(string(b), name)
	}
	return sum
}

// mediaURLs returns the URLs the BMCs are given and the local files'
// sha256.
func mediaURLs(o Options) (media, error) {
	if o.URL == "" {
		return media{}, errors.New("--url is required: where agentiso serve serves this directory, as the BMCs reach it (e.g. http://10.0.0.1:8080)")
	}
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return media{}, fmt.Errorf("--url %s: not an http:// or https:// URL", redact.Password(o.URL))
	}
	if u.User != nil {
		return media{}, errors.New("--url must not carry credentials: give them with --media-user and --media-password-file")
	}
	if o.ISO != "" && (o.ISO != filepath.Base(o.ISO) || strings.ContainsAny(o.ISO, `/\`) || !strings.HasSuffix(o.ISO, ".iso") || o.ISO == assetdir.ConfigImage) {
		return media{}, fmt.Errorf("--iso %s: give the file name of an ISO in --dir (agent.<arch>.iso, agent-unconfigured.<arch>.iso, node.<arch>.iso)", o.ISO)
	}
	name := path(u.Path)
	if strings.HasSuffix(name, ".iso") {
		if o.ISO != "" && o.ISO != name {
			return media{}, fmt.Errorf("--url names an ISO (%s) and --iso another (%s): give one", name, o.ISO)
		}
	} else {
		if name, err = chooseISO(o); err != nil {
			return media{}, err
		}
		u.Path = strings.TrimSuffix(u.Path, "/") + "/" + name
	}
	m := media{iso: u.String(), sum: localSum(o.Dir, name)}
	switch {
	case o.ConfigImage && !isGeneric(name):
		return media{}, fmt.Errorf("--config-image goes with the generic ISO (agent-unconfigured.<arch>.iso): %s carries its configuration; boot it without --config-image", name)
	case o.ConfigImage:
		if _, err := os.Stat(filepath.Join(o.Dir, assetdir.ConfigImage)); err != nil {
			return media{}, fmt.Errorf("--config-image: no %s in %s: run agentiso create config-image first", assetdir.ConfigImage, o.Dir)
		}
		cu := *u
		cu.Path = strings.TrimSuffix(u.Path, name) + assetdir.ConfigImage
		m.config, m.cfgSum = cu.String(), localSum(o.Dir, assetdir.ConfigImage)
	case isGeneric(name):
		o.Log.Warn("the generic ISO waits for its config image after boot: give --config-image to attach " + assetdir.ConfigImage + " in a second virtual media slot, or attach it later")
	}
	return m, nil
}

func path(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}

// checkMedia reads one byte of the ISO with a range request, as the BMCs
// will: the server must answer 206, and when it names the file's sha256
// (agentiso serve's ETag) it must be the local ISO's.
func checkMedia(ctx context.Context, o Options, isoURL, sum, user, pass string) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, isoURL, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Range", "bytes=0-0")
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	tr := o.Transport
	if tr == nil {
		// As the BMCs will: directly, never through the workstation's proxy.
		tr = &http.Transport{Proxy: nil, TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: 20 * time.Second,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}} //nolint:gosec // only the range support and the ETag are checked; BMCs commonly do not verify either
	}
	hc := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("the ISO at %s cannot be read from here (is agentiso serve running?): %v", isoURL, unwrapURL(err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	switch resp.StatusCode {
	case http.StatusPartialContent:
	case http.StatusOK:
		return fmt.Errorf("the server at %s ignores range requests (it answered 200 with the whole file to Range: bytes=0-0): BMC virtual media reads the ISO in ranges and fails on such a server; serve it with agentiso serve", isoURL)
	case http.StatusUnauthorized:
		return fmt.Errorf("the server at %s wants credentials (HTTP 401): give the ones of agentiso serve --user/--password-file with --media-user and --media-password-file", isoURL)
	default:
		return fmt.Errorf("the server at %s answered HTTP %d to a range request for the ISO", isoURL, resp.StatusCode)
	}
	if et := strings.Trim(strings.TrimPrefix(resp.Header.Get("ETag"), "W/"), `"`); sum != "" && len(et) == 64 && et != sum {
		return fmt.Errorf("the server at %s serves another ISO (sha256 %s) than %s (sha256 %s): is agentiso serve running on another directory, or is the ISO newer than the server started with?", isoURL, et, filepath.Join(o.Dir, path(isoURL)), sum)
	}
	if h, _, err := net.SplitHostPort(req.URL.Host); err == nil {
		if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
			o.Log.Warn("the ISO URL is on loopback: a BMC on another machine cannot reach it; give --url the address of this machine on the BMC network", "url", isoURL)
		}
	} else if ip := net.ParseIP(req.URL.Host); (ip != nil && ip.IsLoopback()) || req.URL.Hostname() == "localhost" {
		o.Log.Warn("the ISO URL is on loopback: a BMC on another machine cannot reach it", "url", isoURL)
	}
	return nil
}

func unwrapURL(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// Result is what agentiso boot did, for scripts (boot -o json|yaml): made
// once every host is done, host by host in install-config.yaml's order.
// It never holds a credential.
type Result struct {
	// Action is "boot" or "eject".
	Action string `json:"action"`
	// Result is "complete" (every host), "failed" (one or more) or
	// "interrupted".
	Result string `json:"result"`
	// ISO is the URL the BMCs were given and SHA256 the local ISO's
	// (boot only).
	ISO    string `json:"iso,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// ConfigImage is the config image's URL and ConfigSHA256 its sha256
	// (boot --config-image).
	ConfigImage  string       `json:"configImage,omitempty"`
	ConfigSHA256 string       `json:"configSHA256,omitempty"`
	Hosts        []HostResult `json:"hosts"`
	// Error is the error the command ends with ("" on success).
	Error string `json:"error,omitempty"`
}

// The results of a run.
const (
	ResultComplete    = "complete"
	ResultFailed      = "failed"
	ResultInterrupted = "interrupted"
)

// FailedBefore is the result of a run that err stopped before any BMC was
// spoken to (a usage error, a refused address or ISO URL): no host.
func FailedBefore(eject bool, err error) *Result {
	r := &Result{Action: "boot", Result: ResultFailed, Hosts: []HostResult{}}
	if eject {
		r.Action = "eject"
	}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

// The results of a host.
const (
	HostBooting         = "booting"
	HostEjected         = "ejected"
	HostNothingInserted = "nothing-inserted"
	HostFailed          = "failed"
)

// HostResult is one host's outcome.
type HostResult struct {
	Name string `json:"name"`
	// BMC is the Redfish address, without credentials.
	BMC string `json:"bmc"`
	// Result is "booting" (the system was started from the ISO),
	// "ejected", "nothing-inserted" (eject) or "failed".
	Result string `json:"result"`
	// Step is the step that failed ("finding virtual media", "ejecting",
	// "inserting", "setting one-time boot", "powering on", "resetting")
	// and Error why, naming the BMC, the Redfish call and its message.
	Step  string `json:"step,omitempty"`
	Error string `json:"error,omitempty"`
	// System is the system's Redfish path, VirtualMedia the CD/DVD slot
	// used and VirtualMediaUnder where it was found ("Manager" or
	// "System").
	System string `json:"system,omitempty"`
	// Vendor is what the BMC says it is (manufacturer, model, BMC
	// firmware), which decides how it is booted (docs/serve-boot.md).
	Vendor            string `json:"vendor,omitempty"`
	VirtualMedia      string `json:"virtualMedia,omitempty"`
	VirtualMediaUnder string `json:"virtualMediaUnder,omitempty"`
	// Ejected says media was inserted and ejected (before the insert when
	// booting), EjectedImage its URL as the BMC named it (secrets masked).
	Ejected      bool   `json:"ejected,omitempty"`
	EjectedImage string `json:"ejectedImage,omitempty"`
	// BootTarget is the one-time boot to the virtual CD: "Cd", "UsbCd"
	// (Supermicro) or "VCD-DVD" (Dell's OEM ImportSystemConfiguration).
	BootTarget string `json:"bootTarget,omitempty"`
	// Power is the Redfish ResetType that started the system: "On" when
	// it was off, "ForceRestart", "PowerCycle" or "ForceOff+On" when on.
	Power string `json:"power,omitempty"`
	// ConfigMedia is the slot the config image went in (--config-image)
	// or was ejected from; EjectedConfig the config image an eject
	// removed.
	ConfigMedia   string `json:"configMedia,omitempty"`
	EjectedConfig string `json:"ejectedConfig,omitempty"`
}

func (h *HostResult) set(out redfish.Outcome) {
	h.System, h.VirtualMedia, h.VirtualMediaUnder, h.Power = out.System, out.Media, out.Under, out.Power
	// The Image is the BMC's word: shown with its control characters
	// escaped, so that it forges no line of the output.
	h.Ejected, h.EjectedImage = out.Ejected, termsafe.String(redact.URL(out.EjectedImage))
	h.Vendor, h.BootTarget = termsafe.String(out.Vendor), out.BootTarget
	h.ConfigMedia, h.EjectedConfig = out.ConfigMedia, termsafe.String(redact.URL(out.EjectedConfig))
}

// Run boots (or, with Eject, ejects) every selected host through its BMC.
// The result is nil when it stopped before speaking to any BMC (a refused
// address, missing credentials, the ISO not served as the BMCs need it).
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	hs, err := hosts(ctx, o)
	if err != nil {
		return nil, err
	}
	var mediaPass string
	if (o.MediaUser == "") != (o.MediaPasswordFile == "") {
		return nil, errors.New("--media-user and --media-password-file go together")
	}
	if o.MediaPasswordFile != "" {
		b, err := fsutil.ReadRegular(o.MediaPasswordFile, 4096)
		if err != nil {
			return nil, fmt.Errorf("read --media-password-file: %w", err)
		}
		mediaPass = strings.TrimRight(string(b), "\r\n")
	}
	res := &Result{Action: "eject", Hosts: make([]HostResult, len(hs))}
	var media redfish.Media
	if !o.Eject {
		m, err := mediaURLs(o)
		if err != nil {
			return nil, err
		}
		if err := checkMedia(ctx, o, m.iso, m.sum, o.MediaUser, mediaPass); err != nil {
			return nil, err
		}
		if m.config != "" {
			if err := checkMedia(ctx, o, m.config, m.cfgSum, o.MediaUser, mediaPass); err != nil {
				return nil, err
			}
		}
		media = redfish.Media{URL: m.iso, Username: o.MediaUser, Password: mediaPass, ConfigURL: m.config}
		o.Log.Info("booting "+strconv.Itoa(len(hs))+" host(s) from "+m.iso, "sha256", m.sum)
		if m.config != "" {
			o.Log.Info("with the config image "+m.config+" in a second virtual media slot", "sha256", m.cfgSum)
		}
		res.Action, res.ISO, res.SHA256, res.ConfigImage, res.ConfigSHA256 = "boot", m.iso, m.sum, m.config, m.cfgSum
	}
	for i, h := range hs {
		res.Hosts[i] = HostResult{Name: h.Name, BMC: h.Addr.String()}
	}
	tb := newTable(hs, o)
	par := o.Parallel
	if par <= 0 {
		par = 16
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	errs := make([]error, len(hs))
	for i, h := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			c := redfish.New(h.Addr, redfish.Options{Username: h.Cred.Username, Password: h.Cred.Password, Insecure: h.Cred.Insecure,
				CallTimeout: o.CallTimeout, Transport: o.Transport, Log: o.Log.With("host", h.Name), RetryDelay: o.RetryDelay})
			defer func() {
				if err := c.Close(ctx); err != nil {
					o.Log.Warn("host "+h.Name+": logging out of the BMC failed (its session times out by itself)", "bmc", h.Addr.String(), "error", err.Error())
				}
			}()
			hr := &res.Hosts[i]
			if o.Eject {
				hr.Step = "ejecting"
				tb.set(i, "ejecting", "")
				out, err := c.Eject(ctx)
				hr.set(out)
				switch {
				case err != nil:
					errs[i] = err
					hr.Result, hr.Error = HostFailed, err.Error()
					tb.set(i, "failed", err.Error())
				case !out.Ejected:
					hr.Result, hr.Step = HostNothingInserted, ""
					tb.set(i, "nothing inserted", "")
				default:
					hr.Result, hr.Step = HostEjected, ""
					tb.set(i, "ejected", hr.EjectedImage)
				}
				return
			}
			out, err := c.BootFromISO(ctx, media, func(s redfish.Step, d string) {
				hr.Step = string(s)
				tb.set(i, string(s), d)
			})
			hr.set(out)
			if err != nil {
				errs[i] = err
				hr.Result, hr.Error = HostFailed, err.Error()
				tb.set(i, "failed", err.Error())
				return
			}
			hr.Result, hr.Step = HostBooting, ""
			tb.set(i, "booting from the ISO", "")
		}()
	}
	wg.Wait()
	var failed []string
	for i, err := range errs {
		if err != nil {
			failed = append(failed, fmt.Sprintf("host %s: %v", hs[i].Name, err))
		}
	}
	res.Result = ResultComplete
	if len(failed) > 0 {
		err := fmt.Errorf("%d of %d host(s) failed:\n  %s", len(failed), len(hs), strings.Join(failed, "\n  "))
		res.Result, res.Error = ResultFailed, err.Error()
		if ctx.Err() != nil {
			res.Result = ResultInterrupted
		}
		return res, err
	}
	return res, nil
}

// table is the per-host state: on a terminal redrawn in place, otherwise
// one log line per change.
type table struct {
	mu    sync.Mutex
	o     Options
	hosts []Host
	state []string
	info  []string
	drawn int
}

func newTable(hs []Host, o Options) *table {
	t := &table{o: o, hosts: hs, state: make([]string, len(hs)), info: make([]string, len(hs))}
	for i := range t.state {
		t.state[i] = "waiting"
	}
	t.draw()
	return t
}

func (t *table) set(i int, state, info string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.state[i], t.info[i] = state, info
	if !t.o.Live {
		lv := slog.LevelInfo
		if state == "failed" {
			lv = slog.LevelError
		}
		attrs := []any{"bmc", t.hosts[i].Addr.String()}
		if info != "" && state != "failed" {
			attrs = append(attrs, "detail", info)
		}
		msg := "host " + t.hosts[i].Name + ": " + state
		if state == "failed" {
			msg += " (below)"
		}
		t.o.Log.Log(context.Background(), lv, termsafe.String(msg), attrs...)
		return
	}
	t.drawLocked()
}

func (t *table) draw() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.drawLocked()
}

func (t *table) drawLocked() {
	if !t.o.Live || t.o.Table == nil {
		return
	}
	var b strings.Builder
	if t.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", t.drawn)
	}
	w := 4
	for _, h := range t.hosts {
		w = max(w, utf8.RuneCountInString(h.Name))
	}
	fmt.Fprintf(&b, "\x1b[2K%s  %s  %s\n", pad("HOST", w), pad("BMC", 40), "STATE")
	for i, h := range t.hosts {
		s := t.state[i]
		if t.state[i] == "failed" {
			s = "failed (below)"
		}
		fmt.Fprintf(&b, "\x1b[2K%s  %s  %s\n", pad(termsafe.String(h.Name), w), pad(trim(h.Addr.String(), 40), 40), s)
	}
	t.drawn = len(t.hosts) + 1
	_, _ = io.WriteString(t.o.Table, b.String())
}

// trim shortens s to n characters, the last one an ellipsis.
func trim(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// pad fills s with spaces to n characters (fmt pads by bytes).
func pad(s string, n int) string {
	if c := utf8.RuneCountInString(s); c < n {
		return s + strings.Repeat(" ", n-c)
	}
	return s
}
