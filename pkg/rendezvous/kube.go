package rendezvous

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/credentials"
)

// KubeAPI is what the wait logic needs from the new cluster's API server.
type KubeAPI interface {
	Version(ctx context.Context) (*VersionInfo, error)
	ConfigMap(ctx context.Context, namespace, name string) (*ConfigMap, error)
	ClusterVersion(ctx context.Context) (*ClusterVersion, error)
	ConsoleRoute(ctx context.Context) (*Route, error)
	ClusterOperators(ctx context.Context) ([]ClusterOperator, error)
}

// ObjectMeta is the metadata subset used.
type ObjectMeta struct {
	Name            string `json:"name,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// VersionInfo is the answer of GET /version.
type VersionInfo struct {
	Major      string `json:"major"`
	Minor      string `json:"minor"`
	GitVersion string `json:"gitVersion"`
}

// ConfigMap is a core/v1 ConfigMap.
type ConfigMap struct {
	APIVersion string            `json:"apiVersion,omitempty"`
	Kind       string            `json:"kind,omitempty"`
	Metadata   ObjectMeta        `json:"metadata"`
	Data       map[string]string `json:"data,omitempty"`
}

// Condition is a status condition as used by ClusterVersion and ClusterOperator.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// ClusterVersion is config.openshift.io/v1 ClusterVersion.
type ClusterVersion struct {
	APIVersion string     `json:"apiVersion,omitempty"`
	Kind       string     `json:"kind,omitempty"`
	Metadata   ObjectMeta `json:"metadata"`
	Status     struct {
		Conditions []Condition `json:"conditions,omitempty"`
	} `json:"status"`
}

// Condition returns the condition of type t, or nil.
func (cv *ClusterVersion) Condition(t string) *Condition {
	return findCondition(cv.Status.Conditions, t)
}

func findCondition(cs []Condition, t string) *Condition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

// Initialized reports Available=True, Failing=False and Progressing=False.
func (cv *ClusterVersion) Initialized() bool {
	is := func(t, s string) bool { c := cv.Condition(t); return c != nil && c.Status == s }
	return is("Available", "True") && is("Failing", "False") && is("Progressing", "False")
}

// Route is route.openshift.io/v1 Route.
type Route struct {
	Metadata ObjectMeta `json:"metadata"`
	Spec     struct {
		Host string `json:"host"`
	} `json:"spec"`
	Status struct {
		Ingress []struct {
			Host       string      `json:"host"`
			Conditions []Condition `json:"conditions,omitempty"`
		} `json:"ingress,omitempty"`
	} `json:"status"`
}

// AdmittedURL returns https://<host> of the first ingress whose Admitted
// condition is True, or "" when none is admitted.
func (r *Route) AdmittedURL() string {
	for _, in := range r.Status.Ingress {
		c := findCondition(in.Conditions, "Admitted")
		if c != nil && c.Status == "True" && in.Host != "" {
			return "https://" + in.Host
		}
	}
	return ""
}

// ClusterOperator is config.openshift.io/v1 ClusterOperator.
type ClusterOperator struct {
	Metadata ObjectMeta `json:"metadata"`
	Status   struct {
		Conditions []Condition `json:"conditions,omitempty"`
	} `json:"status"`
}

// KubeClient is a minimal read-only Kubernetes client over client-cert TLS.
// client-go is deliberately not used: wait-for needs five GETs, and client-go
// would add dozens of modules and megabytes to a binary that must stay small.
type KubeClient struct {
	server  string
	http    *http.Client
	timeout time.Duration
}

// NewKubeClient builds a client from the current context of kc. server, when
// not empty, replaces the kubeconfig's server URL.
func NewKubeClient(kc *credentials.Kubeconfig, server string, requestTimeout time.Duration) (*KubeClient, error) {
	tlsCfg, s, err := kc.TLSConfig()
	if err != nil {
		return nil, err
	}
	if server == "" {
		server = s
	}
	if !strings.HasPrefix(server, "https://") {
		return nil, fmt.Errorf("kubeconfig: server %q must be an https:// URL", server)
	}
	if requestTimeout <= 0 {
		requestTimeout = 10 * time.Second
	}
	tr := &http.Transport{TLSClientConfig: tlsCfg, Proxy: http.ProxyFromEnvironment, MaxIdleConns: 4, TLSHandshakeTimeout: requestTimeout}
	return &KubeClient{server: strings.TrimSuffix(server, "/"), http: &http.Client{Transport: tr, CheckRedirect: sameOriginRedirects}, timeout: requestTimeout}, nil
}

// Server is the API server URL in use.
func (k *KubeClient) Server() string { return k.server }

func (k *KubeClient) get(ctx context.Context, path string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.server+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := readAnswer(resp.Body)
	if err != nil {
		return fmt.Errorf("GET %s: read body: %w", path, err)
	}
	if resp.StatusCode/100 != 2 {
		var st struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(body, &st)
		return &StatusError{Method: "GET", URL: k.server + path, StatusCode: resp.StatusCode, Message: Sanitize(st.Message)}
	}
	if err := checkObjects(body); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("GET %s: decode answer: %w", path, err)
	}
	sanitizeDecoded(out)
	return nil
}

// Version is GET /version.
func (k *KubeClient) Version(ctx context.Context) (*VersionInfo, error) {
	v := &VersionInfo{}
	return v, k.get(ctx, "/version", v)
}

// ConfigMap is GET /api/v1/namespaces/<ns>/configmaps/<name>.
func (k *KubeClient) ConfigMap(ctx context.Context, ns, name string) (*ConfigMap, error) {
	cm := &ConfigMap{}
	return cm, k.get(ctx, "/api/v1/namespaces/"+ns+"/configmaps/"+name, cm)
}

// ClusterVersion is GET clusterversions/version.
func (k *KubeClient) ClusterVersion(ctx context.Context) (*ClusterVersion, error) {
	cv := &ClusterVersion{}
	return cv, k.get(ctx, "/apis/config.openshift.io/v1/clusterversions/version", cv)
}

// ConsoleRoute is GET openshift-console/routes/console.
func (k *KubeClient) ConsoleRoute(ctx context.Context) (*Route, error) {
	r := &Route{}
	return r, k.get(ctx, "/apis/route.openshift.io/v1/namespaces/openshift-console/routes/console", r)
}

// ClusterOperators lists clusteroperators.
func (k *KubeClient) ClusterOperators(ctx context.Context) ([]ClusterOperator, error) {
	var l struct {
		Items []ClusterOperator `json:"items"`
	}
	err := k.get(ctx, "/apis/config.openshift.io/v1/clusteroperators", &l)
	return l.Items, err
}
