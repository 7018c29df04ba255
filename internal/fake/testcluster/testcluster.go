// Package testcluster serves the Kubernetes API of an installed OpenShift
// cluster over TLS, for tests and the day-2 demo (agentiso-dev cluster): the
// objects that node-image reads (ClusterVersion, cluster-config-v1, the pull
// secret, proxy, trust bundle, mirror sets, infrastructure, machine
// configs, the CoreOS boot images, nodes, bare-metal hosts, CSRs), a bearer
// token, and a mode that denies chosen permissions as RBAC would.
package testcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"path"
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
	// Role is "master", "arbiter" or "worker".
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
	// MCSListen, when set (host:port), serves the machine-config server
	// there too: /config/worker (and the master pool, and the arbiter pool
	// of a cluster with an arbiter node) answers the Ignition config over
	// TLS, with a certificate for api-int.<name>.<domain> signed by a CA of
	// the cluster's, and worker-user-data-managed points new workers at it
	// (the live lab's hosts download it, as the real agent's day-2 check
	// does). Unset, that secret names port 22623 and a CA that is no CA.
	MCSListen string
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
	// mcs serves Options.MCSListen (nil without it); mcsCA is its CA (PEM).
	mcs     *http.Server
	mcsCA   string
	mcsPort string

	mu       sync.Mutex
	objects  map[string][]byte // by REST path
	deny     map[string]bool   // "verb path"
	requests []string
}

// Start serves the cluster described by o on a loopback port.
func Start(o Options) (*Cluster, error) {
	now := time.Now()
	caPEM, cert, err := servingCert(now)
	if err != nil {
		return nil, err
	}
	tok := make([]byte, 24)
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	c := &Cluster{opts: o, token: "sha256~" + hex.EncodeToString(tok), caPEM: string(caPEM), objects: map[string][]byte{}, deny: map[string]bool{}}
	var mcsLn net.Listener
	if o.MCSListen != "" {
		if mcsLn, err = c.listenMCS(now); err != nil {
			return nil, err
		}
	}
	if err := c.populate(); err != nil {
		if mcsLn != nil {
			_ = mcsLn.Close()
		}
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		if mcsLn != nil {
			_ = mcsLn.Close()
		}
		return nil, err
	}
	c.ln = ln
	c.srv = &http.Server{Handler: http.HandlerFunc(c.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		_ = c.srv.Serve(tls.NewListener(ln, &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}))
	}()
	return c, nil
}

// servingCert is the API's CA (PEM) and its serving certificate for
// 127.0.0.1 and localhost. P-256 keys, not the RSA of the install's own
// CAs: only the API client checks them, and a 2048-bit RSA key pair per
// Start was most of the CPU time of the tests that start a cluster.
func servingCert(now time.Time) ([]byte, tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "testcluster-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "api"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// Close stops the server (and the machine-config server).
func (c *Cluster) Close() {
	_ = c.srv.Close()
	if c.mcs != nil {
		_ = c.mcs.Close()
	}
}

// MCSURL is the machine-config server's worker Ignition URL, as
// worker-user-data-managed names it, and MCSCA its CA (PEM); "" without
// Options.MCSListen.
func (c *Cluster) MCSURL() string {
	if c.mcs == nil {
		return ""
	}
	return "https://" + net.JoinHostPort(c.APIIntName(), c.mcsPort) + "/config/worker"
}

// MCSCA is the machine-config server's CA (PEM), "" without Options.MCSListen.
func (c *Cluster) MCSCA() string { return c.mcsCA }

// APIIntName is the cluster's internal API name, which the machine-config
// server answers as: api-int.<name>.<domain>.
func (c *Cluster) APIIntName() string {
	return "api-int." + c.opts.ClusterName + "." + c.opts.BaseDomain
}

// listenMCS listens on Options.MCSListen with a certificate for
// APIIntName from a CA of its own, and serves WorkerIgnition.
func (c *Cluster) listenMCS(now time.Time) (net.Listener, error) {
	ca, err := credentials.NewSelfSignedCA(rand.Reader, "machine-config-server-ca", now, 24*time.Hour)
	if err != nil {
		return nil, err
	}
	leaf, err := credentials.SignLeaf(rand.Reader, *ca, credentials.LeafRequest{CommonName: c.APIIntName(), DNSNames: []string{c.APIIntName()},
		Validity: 24 * time.Hour}, now)
	if err != nil {
		return nil, err
	}
	cert, err := leaf.TLSCertificate()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", c.opts.MCSListen)
	if err != nil {
		return nil, fmt.Errorf("machine-config server: %w", err)
	}
	c.mcsCA = ca.CertPEM
	_, c.mcsPort, _ = net.SplitHostPort(ln.Addr().String())
	ign := c.WorkerIgnition()
	pools := map[string]bool{"worker": true, "master": true}
	for _, n := range c.opts.Nodes {
		if n.Role == "arbiter" {
			pools["arbiter"] = true
		}
	}
	mux := http.NewServeMux()
	// The pool is the last element of the path, as the real server's
	// (machine-config-operator pkg/server/api.go): assisted-service asks
	// for <endpoint>/<pool>, /config/worker/worker with the endpoint of
	// worker-user-data-managed (/config/worker/master for a day-2
	// control-plane host). It serves the pools the cluster has: worker,
	// master, and arbiter when a node is one; the answer is the same
	// config for each.
	mux.HandleFunc("GET /config/", func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.requests = append(c.requests, "MCS "+r.Method+" "+r.URL.Path)
		c.mu.Unlock()
		if !pools[path.Base(r.URL.Path)] {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(ign)
	})
	c.mcs = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		_ = c.mcs.Serve(tls.NewListener(ln, &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}))
	}()
	return ln, nil
}

// WorkerIgnition is what the machine-config server answers for
// /config/worker: an Ignition 3.2 config whose kubelet kubeconfig names
// the internal API by name (no coredns or keepalived static pod: the
// cluster manages no networking of its own, as a platform None cluster).
func (c *Cluster) WorkerIgnition() []byte {
	kc := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster:\n    server: https://%s:6443\n", c.APIIntName())
	b, _ := json.Marshal(obj{"ignition": obj{"version": "3.2.0"}, "storage": obj{"files": []obj{{"path": "/etc/kubernetes/kubeconfig", "mode": 384,
		"contents": obj{"source": dataURL(kc)}}}}})
	return b
}

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
	// Objects are kept under their escaped path (kubeapi.Resource.Path:
	// each segment url.PathEscape'd); a client may escape differently (a
	// ';' is legal in a path), so the path is decoded, as the real API
	// server does, and escaped the same way.
	segs := strings.Split(r.URL.Path, "/")
	for i := range segs {
		segs[i] = url.PathEscape(segs[i])
	}
	p := strings.Join(segs, "/")
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
	case http.MethodPost:
		c.post(w, r, p)
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

// post creates the object of the body in collection p, under its
// metadata.name: 409 when it exists, as the real API server answers.
func (c *Cluster) post(w http.ResponseWriter, r *http.Request, p string) {
	if c.deny["create "+p] {
		c.forbidden(w, "create", p)
		return
	}
	b, err := readBody(r)
	if err != nil {
		status(w, http.StatusBadRequest, err.Error())
		return
	}
	var o struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(b, &o); err != nil || o.Metadata.Name == "" || strings.Contains(o.Metadata.Name, "/") {
		status(w, http.StatusUnprocessableEntity, "metadata.name: Required value")
		return
	}
	key := p + "/" + url.PathEscape(o.Metadata.Name)
	if _, ok := c.objects[key]; ok {
		status(w, http.StatusConflict, fmt.Sprintf("%q already exists", o.Metadata.Name))
		return
	}
	c.objects[key] = b
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
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
