package redfish

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

// Limits on what a BMC may send and how long it may take.
const (
	// MaxBody bounds every response body read from a BMC.
	MaxBody = 1 << 20
	// DefaultCallTimeout bounds one Redfish call (connect, request,
	// response).
	DefaultCallTimeout = 30 * time.Second
	// maxTaskWait bounds the wait for a task a BMC answers 202 with.
	maxTaskWait = 2 * time.Minute
	// DefaultRetryDelay is the first wait before a call the BMC refused
	// for a documented transient reason is tried again; each next wait
	// doubles, up to 6 times the first (ironic's post_boot_retry_delay
	// backoff), for at most maxAttempts calls.
	DefaultRetryDelay = 2 * time.Second
	maxAttempts       = 6
)

// Options configure a Client.
type Options struct {
	Username, Password string
	// Insecure skips the BMC's certificate verification
	// (bmc.disableCertificateVerification).
	Insecure bool
	// CallTimeout bounds each call (DefaultCallTimeout when zero).
	CallTimeout time.Duration
	// Transport replaces the HTTP transport (tests).
	Transport http.RoundTripper
	// Log receives a warning for every call tried again (default: none).
	Log *slog.Logger
	// RetryDelay is the first wait before a retry (DefaultRetryDelay
	// when zero).
	RetryDelay time.Duration
}

// Client talks to one BMC. It logs in with a Redfish session (X-Auth-Token)
// when the BMC has a SessionService, else with HTTP Basic authentication;
// Close logs out.
type Client struct {
	addr    *Address
	hc      *http.Client
	user    string
	pass    string
	timeout time.Duration
	log     *slog.Logger
	delay   time.Duration
	// token and session are the Redfish session's (login); basic is set
	// when the BMC has no session service.
	token, session  string
	basic, loggedIn bool
	root            serviceRoot
}

// New returns a client for the BMC at addr.
func New(addr *Address, o Options) *Client {
	tr := o.Transport
	if tr == nil {
		tr = &http.Transport{
			Proxy:                 nil, // BMCs sit on a management network, never behind the user's proxy
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 30 * time.Second,
			MaxIdleConnsPerHost:   2,
			IdleConnTimeout:       30 * time.Second,
			// BMC firmware often speaks only TLS 1.2 and older cipher suites.
			TLSClientConfig: &tls.Config{InsecureSkipVerify: o.Insecure, MinVersion: tls.VersionTLS12}, //nolint:gosec // the user's explicit choice
		}
	}
	t := o.CallTimeout
	if t <= 0 {
		t = DefaultCallTimeout
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := o.RetryDelay
	if d <= 0 {
		d = DefaultRetryDelay
	}
	return &Client{
		addr: addr, user: o.Username, pass: o.Password, timeout: t, log: log, delay: d,
		hc: &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("too many redirects")
			}
			if req.URL.Host != addr.Endpoint.Host {
				return fmt.Errorf("redirected to another host (%s): refused, the credentials are for %s", req.URL.Host, addr.Endpoint.Host)
			}
			return nil
		}},
	}
}

// CallError is a failed Redfish call: the BMC, the call, the HTTP status
// and the BMC's own message.
type CallError struct {
	BMC    string
	Call   string // "POST /redfish/v1/..."
	Status int    // 0 when there was no HTTP answer
	// Message is the BMC's own message (Redfish error's
	// @Message.ExtendedInfo, else its message), or the transport error.
	Message string
	// Attempts is how many times the call was made when the BMC kept
	// refusing it for a transient reason (0 or 1: once).
	Attempts int
	// Hint says what to do, when more is known than the status says.
	Hint string
	Err  error
}

func (e *CallError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "BMC %s: %s: ", e.BMC, e.Call)
	if e.Status != 0 {
		fmt.Fprintf(&b, "HTTP %d %s", e.Status, http.StatusText(e.Status))
		if e.Message != "" {
			b.WriteString(": " + e.Message)
		}
	} else {
		b.WriteString(e.Message)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (still refused after %d attempts: wait until the BMC is ready and run agentiso boot again)", e.Attempts)
	}
	switch {
	case e.Hint != "":
		b.WriteString(" (" + e.Hint + ")")
	case e.Status == http.StatusUnauthorized:
		b.WriteString(" (check bmc.username and bmc.password)")
	case e.Status == http.StatusForbidden:
		b.WriteString(" (the BMC user lacks the privilege: virtual media and power need an operator or administrator account)")
	case e.Attempts > 1:
	case e.Status >= 400 && e.Status < 500 && strings.HasSuffix(e.Call, ".InsertMedia"):
		b.WriteString(" (the BMC could not mount the image: check that the BMC reaches the ISO URL and that the server answers range requests)")
	case e.Status == http.StatusNotFound || e.Status == http.StatusMethodNotAllowed || e.Status == http.StatusNotImplemented:
		b.WriteString(" (the BMC does not offer this: its firmware may be too old for Redfish virtual media; update it, or boot the ISO from its web console)")
	case e.Status >= 500:
		b.WriteString(" (the BMC failed: run agentiso boot again; if it persists, reset the BMC)")
	}
	return b.String()
}

// retryable says whether a refused call is one the BMC documents as
// transient, why, and how many calls to make at most.
func retryable(method, path string, ce *CallError) (string, int) {
	m := ce.Message
	switch {
	case ce.Status == http.StatusServiceUnavailable:
		return "the BMC is busy (503)", maxAttempts
	case strings.Contains(m, "UnableToModifyDuringSystemPOST"), strings.Contains(m, "InvalidOperationForSystemState"):
		// ironic 2d253a04f (redfish/management.py _is_during_post_error)
		// and sushy connector.py check_retry_on_exception: iLO refuses
		// changes while the host is in POST.
		return "the host is in POST", maxAttempts
	case strings.Contains(m, "SYS446"), strings.Contains(m, "SYS518"), strings.Contains(m, "RAC0679"):
		// Dell: an operation in progress (the last eject; the iDRAC not
		// ready, sushy connector.py; a configuration job running, sushy
		// oem/dell manager.py IDRAC_JOB_RUNNING).
		return "the iDRAC is busy with an earlier operation", maxAttempts
	case ce.Status >= 500 && strings.HasSuffix(path, "InsertMedia") && method == http.MethodPost:
		// ironic 1a0f1cd5 (story 2008504): an insert right after an
		// eject fails while the eject is still in progress; ironic makes
		// 3 attempts.
		return "the eject may still be in progress", 3
	case ce.Status >= 500 && method == http.MethodGet:
		// sushy connector.py retries server-side errors on GET.
		return "server-side error on a read", 3
	}
	return "", 0
}

func (e *CallError) Unwrap() error { return e.Err }

// call does a Redfish call: logged in first, tried again with backoff
// (each retry logged) while the BMC refuses it for a documented transient
// reason, at most maxAttempts times.
func (c *Client) call(ctx context.Context, method, path string, body any, hdr map[string]string) ([]byte, http.Header, int, error) {
	if err := c.login(ctx); err != nil {
		return nil, nil, 0, err
	}
	return c.retrying(ctx, method, path, body, hdr, true)
}

func (c *Client) retrying(ctx context.Context, method, path string, body any, hdr map[string]string, auth bool) ([]byte, http.Header, int, error) {
	wait := c.delay
	for attempt := 1; ; attempt++ {
		b, h, status, err := c.once(ctx, method, path, body, hdr, auth)
		var ce *CallError
		if err == nil || !errors.As(err, &ce) || ce.Status == 0 {
			return b, h, status, err
		}
		why, most := retryable(method, path, ce)
		if most == 0 {
			return b, h, status, err
		}
		if attempt >= most {
			ce.Attempts = attempt
			return b, h, status, ce
		}
		d := wait
		if ra, e := strconv.Atoi(h.Get("Retry-After")); e == nil && ra > 0 && time.Duration(ra)*time.Second < 6*c.delay {
			d = max(d, time.Duration(ra)*time.Second)
		}
		c.log.Warn(fmt.Sprintf("BMC %s refused %s %s, %s: trying again in %s (attempt %d of %d); HTTP %d: %s", c.addr, method, path, why, d, attempt+1, most, ce.Status, ce.Message))
		select {
		case <-ctx.Done():
			return nil, nil, 0, ctx.Err()
		case <-time.After(d):
		}
		wait = min(wait*2, 6*c.delay)
	}
}

// once does one Redfish call with the client's time bound and returns
// the body (at most MaxBody) and the response headers. A status >= 400
// is a *CallError with the BMC's message (and the headers).
func (c *Client) once(ctx context.Context, method, path string, body any, hdr map[string]string, auth bool) ([]byte, http.Header, int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	call := method + " " + path
	cerr := func(status int, msg string, err error) error {
		return &CallError{BMC: c.addr.String(), Call: call, Status: status, Message: msg, Err: err}
	}
	if err := c.checkPath(path); err != nil {
		return nil, nil, 0, err
	}
	u := *c.addr.Endpoint
	p, q, _ := strings.Cut(path, "?")
	u.Path, u.RawQuery = p, q
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, nil, 0, cerr(0, err.Error(), err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, nil, 0, cerr(0, err.Error(), err)
	}
	switch {
	case !auth:
	case c.token != "":
		req.Header.Set("X-Auth-Token", c.token)
	default:
		req.SetBasicAuth(c.user, c.pass)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("OData-Version", "4.0")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, nil, 0, cerr(0, fmt.Sprintf("no answer within %s (the BMC is unreachable or hung)", c.timeout), err)
		}
		return nil, nil, 0, cerr(0, transportMessage(err), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, nil, resp.StatusCode, cerr(0, fmt.Sprintf("the answer did not complete within %s (the BMC is hung)", c.timeout), err)
		}
		return nil, nil, resp.StatusCode, cerr(0, "reading the answer: "+transportMessage(err), err)
	}
	if len(b) > MaxBody {
		return nil, nil, resp.StatusCode, cerr(resp.StatusCode, fmt.Sprintf("answer larger than %d bytes: refused", MaxBody), nil)
	}
	if resp.StatusCode >= 400 {
		return nil, resp.Header, resp.StatusCode, cerr(resp.StatusCode, bmcMessage(b), nil)
	}
	return b, resp.Header, resp.StatusCode, nil
}

// maxPath bounds a resource path a BMC names.
const maxPath = 512

// checkPath refuses a resource path a BMC named (an @odata.id, an action
// target) that is not a plain absolute path: one with control characters,
// white space or invisible formatting would otherwise reach the messages
// and the result as it is, forging lines.
func (c *Client) checkPath(p string) error {
	ok := strings.HasPrefix(p, "/") && len(p) <= maxPath && termsafe.String(p) == p && !strings.ContainsFunc(p, unicode.IsSpace)
	if ok {
		return nil
	}
	return &CallError{BMC: c.addr.String(), Call: "resolving the BMC's resources", Message: "the BMC named a resource path that is not a plain Redfish path (control characters, spaces, too long or relative): " + termsafe.String(trim(p, 100))}
}

// transportMessage is a transport error without the URL Go puts in it
// (the path is already in the call).
func transportMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return termsafe.String(err.Error())
}

// bmcMessage extracts the BMC's own words from a Redfish error body:
// every @Message.ExtendedInfo Message, else error.message, else the
// start of the body.
func bmcMessage(b []byte) string {
	var e struct {
		Error struct {
			Code     string `json:"code"`
			Message  string `json:"message"`
			Extended []struct {
				MessageID string `json:"MessageId"`
				Message   string `json:"Message"`
			} `json:"@Message.ExtendedInfo"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil {
		var msgs []string
		for _, x := range e.Error.Extended {
			if x.Message != "" {
				m := x.Message
				if x.MessageID != "" {
					m += " (" + x.MessageID + ")"
				}
				msgs = append(msgs, m)
			}
		}
		if len(msgs) == 0 && e.Error.Message != "" {
			msgs = append(msgs, e.Error.Message)
		}
		if len(msgs) > 0 {
			return termsafe.String(trim(strings.Join(msgs, "; "), 500))
		}
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	return termsafe.String(trim(strings.Join(strings.Fields(s), " "), 200))
}

func trim(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// get reads a Redfish resource into v and returns its ETag.
func (c *Client) get(ctx context.Context, path string, v any) (string, error) {
	h, err := c.getH(ctx, path, v)
	if err != nil {
		return "", err
	}
	return h.Get("ETag"), nil
}

// getH reads a Redfish resource into v and returns the answer's headers.
func (c *Client) getH(ctx context.Context, path string, v any) (http.Header, error) {
	b, h, _, err := c.call(ctx, http.MethodGet, path, nil, nil)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return nil, &CallError{BMC: c.addr.String(), Call: "GET " + path, Status: http.StatusOK, Message: "the answer is not the expected Redfish JSON: " + termsafe.String(err.Error()), Err: err}
	}
	return h, nil
}

// serviceRoot is what agentiso reads of the Redfish service root.
type serviceRoot struct {
	RedfishVersion string    `json:"RedfishVersion"`
	Vendor         string    `json:"Vendor"`
	Systems        *odataRef `json:"Systems"`
	SessionService *odataRef `json:"SessionService"`
	Links          struct {
		Sessions *odataRef `json:"Sessions"`
	} `json:"Links"`
}

// login reads the service root (unauthenticated, as the standard has it)
// and opens a Redfish session (POST to the SessionService's Sessions,
// X-Auth-Token on every later call), as sushy does; a BMC without a
// session service is spoken to with HTTP Basic authentication. Wrong
// credentials are reported at once, never tried a second way.
func (c *Client) login(ctx context.Context) error {
	if c.loggedIn {
		return nil
	}
	b, _, _, err := c.retrying(ctx, http.MethodGet, "/redfish/v1/", nil, nil, false)
	if err != nil {
		var ce *CallError
		if errors.As(err, &ce) && ce.Status == http.StatusNotFound {
			// no service root: Basic, and the address must name the system
			c.basic, c.loggedIn = true, true
			return nil
		}
		if !errors.As(err, &ce) || (ce.Status != http.StatusUnauthorized && ce.Status != http.StatusForbidden) {
			return err
		}
		// a root behind authentication: Basic it is
		if b, _, _, err = c.retrying(ctx, http.MethodGet, "/redfish/v1/", nil, nil, true); err != nil {
			return err
		}
		c.basic = true
	}
	if err := json.Unmarshal(b, &c.root); err != nil {
		return &CallError{BMC: c.addr.String(), Call: "GET /redfish/v1/", Status: http.StatusOK, Message: "the service root is not Redfish JSON: " + termsafe.String(err.Error()), Err: err}
	}
	sessions := "/redfish/v1/SessionService/Sessions"
	if c.root.Links.Sessions != nil && c.root.Links.Sessions.ID != "" {
		sessions = c.root.Links.Sessions.ID
	} else if c.root.SessionService == nil {
		c.basic = true
	}
	if !c.basic {
		_, h, _, err := c.retrying(ctx, http.MethodPost, sessions, map[string]string{"UserName": c.user, "Password": c.pass}, nil, false)
		var ce *CallError
		switch {
		case err == nil && h.Get("X-Auth-Token") != "":
			c.token, c.session = h.Get("X-Auth-Token"), h.Get("Location")
		case err == nil:
			return &CallError{BMC: c.addr.String(), Call: "POST " + sessions, Status: http.StatusCreated, Message: "the BMC created a session without an X-Auth-Token"}
		case errors.As(err, &ce) && (ce.Status == http.StatusNotFound || ce.Status == http.StatusMethodNotAllowed || ce.Status == http.StatusNotImplemented):
			// no session service after all: Basic
			c.basic = true
		default:
			return err
		}
	}
	c.loggedIn = true
	return nil
}

// Close logs out of the Redfish session, if one was opened (the BMC's
// sessions are few: an abandoned one holds a slot until it times out).
func (c *Client) Close(ctx context.Context) error {
	if c.session == "" {
		return nil
	}
	u, err := url.Parse(c.session)
	if err != nil || (u.Host != "" && u.Host != c.addr.Endpoint.Host) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(c.timeout, 10*time.Second))
	defer cancel()
	_, _, _, err = c.once(ctx, http.MethodDelete, u.RequestURI(), nil, nil, true)
	c.session, c.token, c.loggedIn = "", "", false
	var ce *CallError
	if errors.As(err, &ce) && ce.Status == http.StatusNotFound {
		return nil // the session had timed out
	}
	return err
}

// post runs an action; a 202 answer with a task monitor is followed
// until the task ends.
func (c *Client) post(ctx context.Context, path string, body any) error {
	_, h, status, err := c.call(ctx, http.MethodPost, path, body, nil)
	if err != nil || status != http.StatusAccepted || h.Get("Location") == "" {
		return err
	}
	return c.waitTask(ctx, "POST "+path, h.Get("Location"))
}

// waitTask polls a task monitor until it stops answering 202.
func (c *Client) waitTask(ctx context.Context, call, loc string) error {
	u, err := url.Parse(loc)
	if err != nil || (u.Host != "" && u.Host != c.addr.Endpoint.Host) {
		return &CallError{BMC: c.addr.String(), Call: call, Message: "the BMC's task monitor is not a path on the BMC: " + termsafe.String(trim(loc, 100))}
	}
	deadline := time.Now().Add(maxTaskWait)
	for {
		b, _, status, err := c.call(ctx, http.MethodGet, u.RequestURI(), nil, nil)
		if err != nil {
			return err
		}
		if status != http.StatusAccepted {
			var t struct {
				TaskState string
				Messages  []struct{ Message string }
			}
			if json.Unmarshal(b, &t) == nil && (t.TaskState == "Exception" || t.TaskState == "Killed" || t.TaskState == "Cancelled") {
				var msgs []string
				for _, m := range t.Messages {
					msgs = append(msgs, m.Message)
				}
				return &CallError{BMC: c.addr.String(), Call: call, Message: "the BMC's task ended " + t.TaskState + ": " + termsafe.String(trim(strings.Join(msgs, "; "), 500))}
			}
			return nil
		}
		if time.Now().After(deadline) {
			return &CallError{BMC: c.addr.String(), Call: call, Message: fmt.Sprintf("the BMC's task did not finish within %s", maxTaskWait)}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// patch changes a resource, with If-Match when the BMC gave an ETag
// (some BMCs require it).
func (c *Client) patch(ctx context.Context, path, etag string, body any) error {
	var hdr map[string]string
	if etag != "" {
		hdr = map[string]string{"If-Match": etag}
	}
	_, h, status, err := c.call(ctx, http.MethodPatch, path, body, hdr)
	if err == nil && status == http.StatusAccepted && h.Get("Location") != "" {
		return c.waitTask(ctx, "PATCH "+path, h.Get("Location"))
	}
	return err
}
