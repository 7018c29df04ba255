package kubeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

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

// Client talks to one API server with one set of credentials, through
// client-go's REST client (the one its dynamic client wraps), at the real
// group/version/resource paths.
type Client struct {
	cfg     *Config
	rest    *rest.RESTClient
	timeout time.Duration
	err     error
}

// New builds a client; timeout bounds each request (0: DefaultTimeout).
func New(cfg *Config, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	rc := dynamic.ConfigFor(rest.CopyConfig(cfg.rest))
	rc.Timeout = timeout
	// node-image reads a few objects once and monitor polls every few
	// seconds: no client-side throttle (a negative QPS), whose wait would
	// also fail a request near its deadline with its own error.
	rc.QPS, rc.RateLimiter = -1, nil
	rc.WrapTransport = transport.Wrappers(rc.WrapTransport, boundBodies)
	// The API server's warnings would reach the terminal through klog,
	// around agentiso's own messages.
	rc.WarningHandler = rest.NoWarnings{}
	c := &Client{cfg: cfg, timeout: timeout}
	c.rest, c.err = rest.UnversionedRESTClientFor(rc)
	return c
}

// Server is the API server's URL.
func (c *Client) Server() string { return c.cfg.Server }

// Get reads one object (r.Name set) or a list into out.
func (c *Client) Get(ctx context.Context, r Resource, out any) error {
	verb := "get"
	if r.Name == "" {
		verb = "list"
	}
	return c.do(ctx, http.MethodGet, verb, r, "", nil, out)
}

// Update replaces the object r (sub, when not empty, is a subresource such
// as "approval") with body and decodes the answer into out (may be nil).
func (c *Client) Update(ctx context.Context, r Resource, sub string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPut, "update", r, sub, b, out)
}

// Create creates the object body in the collection r (r.Name empty) and
// decodes the answer into out (may be nil).
func (c *Client) Create(ctx context.Context, r Resource, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, "create", r, "", b, out)
}

func (c *Client) do(ctx context.Context, method, verb string, r Resource, sub string, body []byte, out any) error {
	if c.err != nil {
		return fmt.Errorf("%s %s: %w", verb, r, c.err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	prefix := "/api/" + r.Version
	if r.Group != "" {
		prefix = "/apis/" + r.Group + "/" + r.Version
	}
	// client-go's builder escapes each part and refuses a name that is no
	// single path segment (a name read from the cluster cannot reach
	// another resource).
	req := c.rest.Verb(method).AbsPath(prefix).Resource(r.Resource).SetHeader("Accept", "application/json").MaxRetries(0)
	if r.Namespace != "" {
		req = req.Namespace(r.Namespace)
	}
	if r.Name != "" {
		req = req.Name(r.Name)
	}
	if sub != "" {
		req = req.SubResource(sub)
	}
	if body != nil {
		req = req.SetHeader("Content-Type", "application/json").Body(body)
	}
	raw, err := req.DoRaw(ctx)
	if err != nil {
		return c.failure(ctx, verb, r, raw, err)
	}
	if out == nil {
		return nil
	}
	if jsonbound.Containers(raw, MaxAnswerObjects) > MaxAnswerObjects {
		return fmt.Errorf("%s %s: the answer holds more than %d JSON objects and arrays: refusing it", verb, r, MaxAnswerObjects)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: decode the answer: %w", verb, r, err)
	}
	return nil
}

// failure turns client-go's error into this package's: a StatusError for
// an answer of the API server, a timeout said as one, the size bound.
func (c *Client) failure(ctx context.Context, verb string, r Resource, raw []byte, err error) error {
	if errors.Is(err, errTooLarge) || strings.Contains(err.Error(), errTooLarge.Error()) {
		return fmt.Errorf("%s %s: the answer is larger than %d MiB, which no real answer reaches: refusing it", verb, r, MaxAnswerBytes>>20)
	}
	var as apierrors.APIStatus
	if errors.As(err, &as) && as.Status().Code != 0 {
		st := as.Status()
		// The API server's own Status, when it sent one, says who was
		// refused what; client-go's raw-body error only paraphrases it.
		var body struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &body) == nil && body.Kind == "Status" {
			return newStatusError(int(st.Code), verb, r, body.Message)
		}
		return newStatusError(int(st.Code), verb, r, st.Message)
	}
	var ne net.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%s %s: the API server %s did not answer within %s", verb, r, c.cfg.Server, c.timeout)
	}
	return fmt.Errorf("%s %s: %s", verb, r, termsafe.String(err.Error()))
}

var errTooLarge = fmt.Errorf("answer larger than %d bytes", MaxAnswerBytes)

// boundBodies limits every answer's body to MaxAnswerBytes.
func boundBodies(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		resp.Body = &boundedBody{rc: resp.Body, left: MaxAnswerBytes}
		return resp, nil
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type boundedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, errTooLarge
	}
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }

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

func newStatusError(code int, verb string, r Resource, message string) *StatusError {
	e := &StatusError{Code: code, Verb: verb, Resource: r, Message: termsafe.String(message)}
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
