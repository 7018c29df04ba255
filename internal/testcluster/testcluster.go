// Package testcluster serves the Kubernetes API of an installed OpenShift
// cluster over TLS, for tests and the simulator (dev simulate): the
// objects that node-image reads (ClusterVersion, cluster-config-v1, the pull
// secret, proxy, trust bundle, mirror sets, infrastructure, machine
// configs, the CoreOS boot images, nodes, bare-metal hosts, CSRs), a bearer
// token, and a mode that denies chosen permissions as RBAC would.
package testcluster

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/pkg/credentials"
	"github.com/seed-a052040e/agentiso/pkg/kubeapi"
)

// Node is one node of the installed cluster.
type Node struct {
	Name string
	// Role is "master" or "worker".
	Role string
	// Arch is the Go spelling of the node's architecture ("amd64").
	Arch string
	IP   string
	// MAC is the node's primary MAC, as OVN-Kubernetes records it.
	MAC   string
	Ready bool
}

// Mirror is one mirror-set entry.
type Mirror struct {
	Source  string
	Mirrors []string
}

// Options describe the installed cluster.
type Options struct {
	ClusterID    string
	ClusterName  string
	BaseDomain   string
	Version      string
	ReleaseImage string
	// Platform is the Infrastructure's platform type ("BareMetal", "None", "AWS").
	Platform       string
	MachineNetwork string
	Nodes          []Node
	PullSecret     string
	HTTPProxy      string
	HTTPSProxy     string
	NoProxy        string
	// TrustBundle is the user-ca-bundle (PEM), "" for none.
	TrustBundle   string
	DigestMirrors []Mirror
	// LegacyMirrors are the ImageContentPolicy (ICSP-era) entries.
	LegacyMirrors []Mirror
	SSHKey        string
	FIPS          bool
	// Chrony, when not empty, is the workers' /etc/chrony.conf.
	Chrony string
	// BootISO and BootISOSHA256 are the stream's metal ISO for every node arch.
	BootISO       string
	BootISOSHA256 string
	// User is the name the API server reports in a 403.
	User string
}

// Default is a three-node bare-metal 4.20 cluster with two workers.
func Default() Options {
	return Options{
		ClusterID:      "0d6c8d5e-6c2e-4a61-9f39-2b5c1d7e1a10",
		ClusterName:    "ostest",
		BaseDomain:     "example.com",
		Version:        "4.20.3",
		ReleaseImage:   "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("ab", 32),
		Platform:       "BareMetal",
		MachineNetwork: "192.168.111.0/24",
		Nodes: []Node{
			{Name: "master-0", Role: "master", Arch: "amd64", IP: "192.168.111.20", MAC: "52:54:00:00:00:20", Ready: true},
			{Name: "master-1", Role: "master", Arch: "amd64", IP: "192.168.111.21", MAC: "52:54:00:00:00:21", Ready: true},
			{Name: "master-2", Role: "master", Arch: "amd64", IP: "192.168.111.22", MAC: "52:54:00:00:00:22", Ready: true},
			{Name: "worker-0", Role: "worker", Arch: "amd64", IP: "192.168.111.23", MAC: "52:54:00:00:00:23", Ready: true},
		},
		PullSecret:    `{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}`,
		SSHKey:        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGqSD39lBCzJKKW6OKTsxkQCW+GbT/f+OhO9xZLMB4i7 admin@laptop",
		BootISO:       "https://rhcos.mirror.openshift.com/art/storage/prod/streams/4.20-9.6/builds/9.6.20250925-0/x86_64/rhcos-9.6.20250925-0-live-iso.x86_64.iso",
		BootISOSHA256: strings.Repeat("cd", 32),
		User:          "system:admin",
	}
}

// Cluster is a running fake API server.
type Cluster struct {
	opts  Options
	token string
	caPEM string
	ln    net.Listener
	srv   *http.Server

	mu       sync.Mutex
	objects  map[string][]byte // by REST path
	deny     map[string]bool   // "verb path"
	requests []string
}

// Start serves the cluster described by o on a loopback port.
func Start(o Options) (*Cluster, error) {
	now := time.Now()
	ca, err := credentials.NewSelfSignedCA(rand.Reader, "testcluster-ca", now, 24*time.Hour)
	if err != nil {
		return nil, err
	}
	leaf, err := credentials.SignLeaf(rand.Reader, *ca, credentials.LeafRequest{CommonName: "api", DNSNames: []string{"localhost"},
		IPs: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: nil, Validity: 24 * time.Hour}, now)
	if err != nil {
		return nil, err
	}
	cert, err := leaf.TLSCertificate()
	if err != nil {
		return nil, err
	}
	tok := make([]byte, 24)
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	c := &Cluster{opts: o, token: "sha256~" + hex.EncodeToString(tok), caPEM: ca.CertPEM, objects: map[string][]byte{}, deny: map[string]bool{}}
	if err := c.populate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c.ln = ln
	c.srv = &http.Server{Handler: http.HandlerFunc(c.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		_ = c.srv.Serve(tls.NewListener(ln, &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}))
	}()
	return c, nil
}

// Close stops the server.
func (c *Cluster) Close() { _ = c.srv.Close() }

// URL is the API server's https:// URL.
func (c *Cluster) URL() string { return "https://" + c.ln.Addr().String() }

// Kubeconfig is a kubeconfig for the cluster with a bearer token.
func (c *Cluster) Kubeconfig() []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: %[2]s
    certificate-authority-data: %[3]s
users:
- name: admin
  user:
    token: %[4]s
contexts:
- name: admin
  context: {cluster: %[1]s, user: admin}
current-context: admin
`, c.opts.ClusterName, c.URL(), base64.StdEncoding.EncodeToString([]byte(c.caPEM)), c.token)
}

// Deny makes the server answer 403 to verb on r (a list when r.Name is
// empty), as RBAC does for a user without that permission.
func (c *Cluster) Deny(verb string, r kubeapi.Resource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deny[verb+" "+r.Path()] = true
}

// Put stores obj (encoded as JSON) as the object r.
func (c *Cluster) Put(r kubeapi.Resource, obj any) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.objects[r.Path()] = b
	return nil
}

// Remove deletes the object r.
func (c *Cluster) Remove(r kubeapi.Resource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.objects, r.Path())
}

// Object returns the stored JSON of r, nil when absent.
func (c *Cluster) Object(r kubeapi.Resource) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.objects[r.Path()]
}

// Requests lists "METHOD path" of every request served, in order.
func (c *Cluster) Requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.requests...)
}

func (c *Cluster) serve(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests = append(c.requests, r.Method+" "+r.URL.Path)
	if r.Header.Get("Authorization") != "Bearer "+c.token {
		status(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	p := r.URL.Path
	switch r.Method {
	case http.MethodGet:
		if b, ok := c.objects[p]; ok {
			if c.deny["get "+p] {
				c.forbidden(w, "get", p)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(b)
			return
		}
		if items, ok := c.list(p); ok {
			if c.deny["list "+p] {
				c.forbidden(w, "list", p)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"kind":"List","apiVersion":"v1","items":[%s]}`, strings.Join(items, ","))
			return
		}
		if c.deny["get "+p] {
			c.forbidden(w, "get", p)
			return
		}
		status(w, http.StatusNotFound, "the server could not find the requested resource")
	case http.MethodPut:
		c.put(w, r, p)
	default:
		status(w, http.StatusMethodNotAllowed, "method not allowed")
	}
}

func (c *Cluster) put(w http.ResponseWriter, r *http.Request, p string) {
	base := strings.TrimSuffix(p, "/approval")
	if c.deny["update "+base] {
		c.forbidden(w, "update", base)
		return
	}
	if _, ok := c.objects[base]; !ok {
		status(w, http.StatusNotFound, "not found")
		return
	}
	b, err := readBody(r)
	if err != nil {
		status(w, http.StatusBadRequest, err.Error())
		return
	}
	c.objects[base] = b
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func readBody(r *http.Request) ([]byte, error) {
	var v json.RawMessage
	if err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20)).Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// list returns the objects directly under collection path p; ok is false
// when p is no known collection.
func (c *Cluster) list(p string) (items []string, ok bool) {
	known := map[string]bool{}
	for k := range c.objects {
		if i := strings.LastIndex(k, "/"); i > 0 {
			known[k[:i]] = true
		}
	}
	for _, col := range collections {
		known[col] = true
	}
	if !known[p] {
		return nil, false
	}
	var keys []string
	for k := range c.objects {
		if i := strings.LastIndex(k, "/"); i > 0 && k[:i] == p {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		items = append(items, string(c.objects[k]))
	}
	return items, true
}

// collections exist even when empty (a list answers 200 with no items).
var collections = []string{
	"/api/v1/nodes",
	"/apis/config.openshift.io/v1/imagedigestmirrorsets",
	"/apis/config.openshift.io/v1/imagetagmirrorsets",
	"/apis/config.openshift.io/v1/imagecontentpolicies",
	"/apis/operator.openshift.io/v1alpha1/imagecontentsourcepolicies",
	"/apis/certificates.k8s.io/v1/certificatesigningrequests",
	"/apis/metal3.io/v1alpha1/namespaces/openshift-machine-api/baremetalhosts",
}

func (c *Cluster) forbidden(w http.ResponseWriter, verb, p string) {
	res, ns, name, group := splitPath(p)
	msg := fmt.Sprintf("%s is forbidden: User %q cannot %s resource %q in API group %q", res, c.opts.User, verb, res, group)
	if name != "" {
		msg = fmt.Sprintf("%s %q is forbidden: User %q cannot %s resource %q in API group %q", res, name, c.opts.User, verb, res, group)
	}
	if ns != "" {
		msg += fmt.Sprintf(" in the namespace %q", ns)
	} else {
		msg += " at the cluster scope"
	}
	status(w, http.StatusForbidden, msg)
}

// splitPath parses a REST path into its resource, namespace, name and group.
func splitPath(p string) (res, ns, name, group string) {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if len(parts) > 0 && parts[0] == "apis" && len(parts) > 2 {
		group, parts = parts[1], parts[3:]
	} else if len(parts) > 1 {
		parts = parts[2:]
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		ns, parts = parts[1], parts[2:]
	}
	if len(parts) > 0 {
		res = parts[0]
	}
	if len(parts) > 1 {
		name = parts[1]
	}
	return
}

func status(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b, _ := json.Marshal(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": msg, "code": code})
	_, _ = w.Write(b)
}

// toYAML is used for the install-config in cluster-config-v1.
func toYAML(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		panic(err) // maps of strings only
	}
	return string(b)
}
