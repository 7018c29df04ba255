package kubeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/internal/jsonbound"
	"github.com/seed-a052040e/agentiso/internal/termsafe"
)

// Limits of one answer. The largest object node-image reads is a node list
// or the coreos-bootimages stream (tens of KiB each on a real cluster);
// 32 MiB leaves room for thousands of nodes.
const (
	MaxAnswerBytes   = 32 << 20
	MaxAnswerObjects = 1 << 20
	// DefaultTimeout bounds each request, connection to last byte.
	DefaultTimeout = 30 * time.Second
)

// Resource names one object (Name set) or one collection (Name empty) of
// the API, as RBAC names it.
type Resource struct {
	// Group is the API group, "" for the core group.
	Group string
	// Version is the API version ("v1").
	Version string
	// Resource is the plural resource name ("secrets").
	Resource string
	// Namespace is empty for cluster-scoped resources.
	Namespace string
	// Name is the object's name; empty for a list.
	Name string
}

// Path is the resource's REST path.
func (r Resource) Path() string {
	var b strings.Builder
	if r.Group == "" {
		b.WriteString("/api/" + r.Version)
	} else {
		b.WriteString("/apis/" + r.Group + "/" + r.Version)
	}
	if r.Namespace != "" {
		b.WriteString("/namespaces/" + url.PathEscape(r.Namespace))
	}
	b.WriteString("/" + r.Resource)
	if r.Name != "" {
		b.WriteString("/" + url.PathEscape(r.Name))
	}
	return b.String()
}

// String is "secrets openshift-config/pull-secret" or
// "imagedigestmirrorsets.config.openshift.io".
func (r Resource) String() string {
	s := r.Resource
	if r.Group != "" {
		s += "." + r.Group
	}
	switch {
	case r.Namespace != "" && r.Name != "":
		s += " " + r.Namespace + "/" + r.Name
	case r.Name != "":
		s += " " + r.Name
	case r.Namespace != "":
		s += " in namespace " + r.Namespace
	}
	return s
}

// Client talks to one API server with one set of credentials.
type Client struct {
	cfg     *Config
	http    *http.Client
	timeout time.Duration
}

// New builds a client; timeout bounds each request (0: DefaultTimeout).
func New(cfg *Config, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tr := &http.Transport{TLSClientConfig: cfg.TLS, Proxy: http.ProxyFromEnvironment, MaxIdleConns: 4,
		TLSHandshakeTimeout: timeout, ResponseHeaderTimeout: timeout}
	return &Client{cfg: cfg, timeout: timeout, http: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		// A redirect would carry the token elsewhere; the API server
		// never sends one for these paths.
		return http.ErrUseLastResponse
	}}}
}

// Server is the API server's URL.
func (c *Client) Server() string { return c.cfg.Server }

// Get reads one object (r.Name set) or a list into out.
func (c *Client) Get(ctx context.Context, r Resource, out any) error {
	verb := "get"
	if r.Name == "" {
		verb = "list"
	}
	return c.do(ctx, http.MethodGet, verb, r.Path(), r, nil, out)
}

// Update replaces the object r (sub, when not empty, is a subresource such
// as "approval") with body and decodes the answer into out (may be nil).
func (c *Client) Update(ctx context.Context, r Resource, sub string, body, out any) error {
	p := r.Path()
	if sub != "" {
		p += "/" + sub
	}
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPut, "update", p, r, b, out)
}

func (c *Client) do(ctx context.Context, method, verb, path string, r Resource, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var rd *bytes.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	var req *http.Request
	var err error
	if rd != nil {
		req, err = http.NewRequestWithContext(ctx, method, c.cfg.Server+path, rd)
	} else {
		req, err = http.NewRequestWithContext(ctx, method, c.cfg.Server+path, nil)
	}
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// The request's deadline and the transport's header timeout are
		// the same length: on a loaded machine either may fire first.
		var ne net.Error
		if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
			return fmt.Errorf("%s %s: the API server %s did not answer within %s", verb, r, c.cfg.Server, c.timeout)
		}
		return fmt.Errorf("%s %s: %w", verb, r, err)
	}
	defer resp.Body.Close()
	buf := &bytes.Buffer{}
	n, err := buf.ReadFrom(http.MaxBytesReader(nil, resp.Body, MaxAnswerBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return fmt.Errorf("%s %s: the answer is larger than %d MiB, which no real answer reaches: refusing it", verb, r, MaxAnswerBytes>>20)
		}
		return fmt.Errorf("%s %s: read the answer (%d bytes): %w", verb, r, n, err)
	}
	if resp.StatusCode/100 != 2 {
		return statusError(resp.StatusCode, verb, r, buf.Bytes())
	}
	if out == nil {
		return nil
	}
	if jsonbound.Containers(buf.Bytes(), MaxAnswerObjects) > MaxAnswerObjects {
		return fmt.Errorf("%s %s: the answer holds more than %d JSON objects and arrays: refusing it", verb, r, MaxAnswerObjects)
	}
	if err := json.Unmarshal(buf.Bytes(), out); err != nil {
		return fmt.Errorf("%s %s: decode the answer: %w", verb, r, err)
	}
	return nil
}

// StatusError is a non-2xx answer of the API server.
type StatusError struct {
	// Code is the HTTP status.
	Code int
	// Verb is the RBAC verb of the request (get, list, update).
	Verb string
	// Resource is what was asked for.
	Resource Resource
	// User is the user the server says it saw, when its message names one.
	User string
	// Message is the server's message, made safe to print.
	Message string
}

var userInMessage = regexp.MustCompile(`User "([^"]{1,256})"`)

func statusError(code int, verb string, r Resource, body []byte) *StatusError {
	var st struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(body, &st)
	e := &StatusError{Code: code, Verb: verb, Resource: r, Message: termsafe.String(st.Message)}
	if m := userInMessage.FindStringSubmatch(e.Message); m != nil {
		e.User = m[1]
	}
	return e
}

func (e *StatusError) Error() string {
	switch e.Code {
	case http.StatusUnauthorized:
		return fmt.Sprintf("%s %s: the API server refused the kubeconfig's credentials (401 Unauthorized: an expired token or certificate?); log in again", e.Verb, e.Resource)
	case http.StatusForbidden:
		return e.Permission()
	case http.StatusNotFound:
		return fmt.Sprintf("%s %s: not found", e.Verb, e.Resource)
	}
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Code)
	}
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Verb, e.Resource, e.Code, msg)
}

// Permission says which permission is missing, as RBAC spells it.
func (e *StatusError) Permission() string {
	who := "the kubeconfig's user"
	if e.User != "" {
		who += fmt.Sprintf(" %q", e.User)
	}
	where := "cluster-wide"
	if e.Resource.Namespace != "" {
		where = "in namespace " + e.Resource.Namespace
	}
	what := e.Resource.Resource
	if e.Resource.Name != "" {
		what += " " + e.Resource.Name
	}
	return fmt.Sprintf("%s may not %s %s (API group %q) %s: grant it %s on %s in API group %q %s, or use a cluster-admin kubeconfig",
		who, e.Verb, what, e.Resource.Group, where, e.Verb, e.Resource.Resource, e.Resource.Group, where)
}

// IsNotFound reports a 404 answer.
func IsNotFound(err error) bool { return hasCode(err, http.StatusNotFound) }

// IsForbidden reports a 403 answer.
func IsForbidden(err error) bool { return hasCode(err, http.StatusForbidden) }

func hasCode(err error, code int) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == code
}
