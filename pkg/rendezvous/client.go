package rendezvous

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/internal/jsonbound"
)

// Port is the assisted-service REST port on the rendezvous host.
const Port = 8090

// APIPath is the v2 REST base path.
const APIPath = "/api/assisted-install/v2"

// Bounds on one answer from either API (docs/wait-for.md, "Limits"). A real
// answer stays far below both: assisted-service returns at most 5000 events
// per list (defaultEventLimit, release-4.16 ... release-4.23
// internal/events/event.go), a host is a dozen objects (its inventory is a
// JSON string), and the cluster API answers wait-for reads are a few hundred
// KiB. A hostile server could otherwise make a small answer decode into
// gigabytes: each `{}` of an event list becomes a ~150-byte struct.
const (
	// MaxAnswerBytes is the largest answer body read.
	MaxAnswerBytes = 32 << 20
	// MaxAnswerObjects is the most JSON objects and arrays one answer may hold.
	MaxAnswerObjects = 100_000
)

// WatcherHeader carries the watcher token; no other credential is ever sent.
const WatcherHeader = "Watcher-Authorization"

// BaseURL returns http://<ip>:8090/api/assisted-install/v2, bracketing IPv6.
func BaseURL(rendezvousIP string) string {
	return "http://" + net.JoinHostPort(rendezvousIP, fmt.Sprint(Port)) + APIPath
}

// RESTAPI is what the wait logic needs from assisted-service.
type RESTAPI interface {
	ListInfraEnvs(ctx context.Context) ([]InfraEnv, error)
	ListClusters(ctx context.Context) ([]Cluster, error)
	GetCluster(ctx context.Context, id string) (*Cluster, error)
	ListEvents(ctx context.Context, infraEnvID string) ([]Event, error)
}

// StatusError is a non-2xx answer from the REST API.
type StatusError struct {
	Method, URL string
	StatusCode  int
	Message     string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.URL, e.StatusCode, e.Message)
}

// Client is a small assisted-service v2 client that authenticates with the
// watcher token only.
type Client struct {
	base    *url.URL
	token   string
	http    *http.Client
	timeout time.Duration
}

// NewClient returns a client for baseURL (e.g. BaseURL(ip)). requestTimeout
// bounds each request (0 means 10 s). httpClient may be nil.
func NewClient(baseURL, watcherToken string, requestTimeout time.Duration, httpClient *http.Client) (*Client, error) {
	u, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("rendezvous API URL %q: want http(s)://host:port/path", baseURL)
	}
	if watcherToken == "" {
		return nil, errors.New("rendezvous client: the watcher token is empty")
	}
	if requestTimeout <= 0 {
		requestTimeout = 10 * time.Second
	}
	if httpClient == nil {
		httpClient = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: false, MaxIdleConns: 4}}
	}
	hc := *httpClient
	hc.CheckRedirect = sameOriginRedirects
	httpClient = &hc
	return &Client{base: u, token: watcherToken, http: httpClient, timeout: requestTimeout}, nil
}

// URL is the client's base URL.
func (c *Client) URL() string { return c.base.String() }

func (c *Client) get(ctx context.Context, path string, q url.Values, out any) error {
	_, err := c.getDated(ctx, path, q, out)
	return err
}

// getDated is get that also returns the Date of the answer (zero when
// the server sent none or an unreadable one).
func (c *Client) getDated(ctx context.Context, path string, q url.Values, out any) (time.Time, error) {
	u := *c.base
	u.Path += path
	if q != nil {
		u.RawQuery = q.Encode()
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return time.Time{}, err
	}
	req.Header.Set(WatcherHeader, c.token)
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return time.Time{}, err
	}
	defer resp.Body.Close()
	body, err := readAnswer(resp.Body)
	if err != nil {
		return time.Time{}, fmt.Errorf("GET %s: read body: %w", u.String(), err)
	}
	if resp.StatusCode/100 != 2 {
		return time.Time{}, &StatusError{Method: "GET", URL: u.String(), StatusCode: resp.StatusCode, Message: Sanitize(errorMessage(body))}
	}
	if err := checkObjects(body); err != nil {
		return time.Time{}, fmt.Errorf("GET %s: %w", u.String(), err)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return time.Time{}, fmt.Errorf("GET %s: decode answer: %w", u.String(), err)
	}
	sanitizeDecoded(out)
	date, _ := http.ParseTime(resp.Header.Get("Date"))
	return date, nil
}

// readAnswer reads a whole answer body of at most MaxAnswerBytes; a larger
// one is an error rather than a silently cut document.
func readAnswer(r io.Reader) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxAnswerBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > MaxAnswerBytes {
		return nil, fmt.Errorf("the answer is larger than %d MiB, which no real answer reaches: refusing it", MaxAnswerBytes>>20)
	}
	return body, nil
}

// checkObjects refuses, before it is decoded, an answer holding more than
// MaxAnswerObjects JSON objects and arrays.
func checkObjects(body []byte) error {
	if jsonbound.Containers(body, MaxAnswerObjects) > MaxAnswerObjects {
		return fmt.Errorf("the answer holds more than %d JSON objects and arrays, which no real answer reaches: refusing it", MaxAnswerObjects)
	}
	return nil
}

// sameOriginRedirects is the CheckRedirect of every client that carries a
// credential (the watcher token header, a TLS client certificate): a redirect
// to another scheme, host or port is refused, so a credential is never sent
// anywhere but where the user pointed agentiso.
func sameOriginRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || !strings.EqualFold(req.URL.Host, first.Host) {
		return fmt.Errorf("refusing redirect from %s to another host (%s): credentials are never sent to a different host",
			first.Redacted(), Sanitize(req.URL.Redacted()))
	}
	return nil
}

func errorMessage(body []byte) string {
	var ie InfraError
	if json.Unmarshal(body, &ie) == nil && ie.Message != "" {
		return ie.Message
	}
	var ae APIError
	if json.Unmarshal(body, &ae) == nil && ae.Reason != "" {
		return ae.Reason
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// ListInfraEnvs is GET /v2/infra-envs.
func (c *Client) ListInfraEnvs(ctx context.Context) ([]InfraEnv, error) {
	var out []InfraEnv
	return out, c.get(ctx, "/infra-envs", nil, &out)
}

// ListClusters is GET /v2/clusters (no query parameters).
func (c *Client) ListClusters(ctx context.Context) ([]Cluster, error) {
	var out []Cluster
	return out, c.get(ctx, "/clusters", nil, &out)
}

// GetCluster is GET /v2/clusters/{id}, which includes hosts.
func (c *Client) GetCluster(ctx context.Context, id string) (*Cluster, error) {
	out := &Cluster{}
	date, err := c.getDated(ctx, "/clusters/"+url.PathEscape(id), nil, out)
	if err != nil {
		return nil, err
	}
	out.ServerTime = date
	return out, nil
}

// ListEvents is GET /v2/events?infra_env_id=<id> (ascending event_time).
func (c *Client) ListEvents(ctx context.Context, infraEnvID string) ([]Event, error) {
	var out []Event
	return out, c.get(ctx, "/events", url.Values{"infra_env_id": {infraEnvID}}, &out)
}
