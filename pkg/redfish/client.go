package redfish

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
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
}

// Client talks to one BMC.
type Client struct {
	addr    *Address
	hc      *http.Client
	user    string
	pass    string
	timeout time.Duration
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
	return &Client{
		addr: addr, user: o.Username, pass: o.Password, timeout: t,
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
	Err     error
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
	switch e.Status {
	case http.StatusUnauthorized:
		b.WriteString(" (check bmc.username and bmc.password)")
	case http.StatusForbidden:
		b.WriteString(" (the BMC user lacks the privilege: virtual media and power need an operator or administrator account)")
	}
	return b.String()
}

func (e *CallError) Unwrap() error { return e.Err }

// call does one Redfish call with the client's time bound and returns
// the body (at most MaxBody) and the response headers. A status >= 400
// is a *CallError with the BMC's message.
func (c *Client) call(ctx context.Context, method, path string, body any, hdr map[string]string) ([]byte, http.Header, int, error) {
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
	req.SetBasicAuth(c.user, c.pass)
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
		return nil, nil, resp.StatusCode, cerr(resp.StatusCode, bmcMessage(b), nil)
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
	b, h, _, err := c.call(ctx, http.MethodGet, path, nil, nil)
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return "", &CallError{BMC: c.addr.String(), Call: "GET " + path, Status: http.StatusOK, Message: "the answer is not the expected Redfish JSON: " + termsafe.String(err.Error()), Err: err}
	}
	return h.Get("ETag"), nil
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
