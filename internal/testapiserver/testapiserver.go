// Package testapiserver runs the REAL Kubernetes API server for tests: the
// kube-apiserver of k8s.io/kubernetes and etcd, built and cached by
// hack/build-testapiserver.sh, started on loopback with a CA, serving and
// client certificates and a static admin token generated for the run, RBAC
// on, and the real CRDs (openshift/api's, the hub's) loaded from the build's
// crds/ directory. Objects are created through the real API, so the real
// schemas validate them.
//
// Only tests import this package; a test of cmd/agentiso checks that the
// shipped binary does not link it.
package testapiserver

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// EnvDir names the directory of a build (hack/build-testapiserver.sh's last
// line); without it the build script is asked with --path.
const EnvDir = "AGENTISO_TESTAPISERVER_DIR"

// Server is one running kube-apiserver with its etcd.
type Server struct {
	// URL is the API server's https://127.0.0.1:PORT.
	URL string
	// CAPEM is the CA that signed the serving and client certificates.
	CAPEM []byte
	// AdminToken authenticates as "admin" in group system:masters.
	AdminToken string
	// Dir holds the certificates, etcd's data and both logs.
	Dir string
	// CRDDir is the build's crds/ directory (openshift/, hub/).
	CRDDir string
	// StartTime is how long the server took to become ready.
	StartTime time.Duration

	ca      *x509.Certificate
	caKey   *ecdsa.PrivateKey
	etcd    *proc
	apiserv *proc
	admin   *rest.Config
}

// Find returns the build directory: $AGENTISO_TESTAPISERVER_DIR, or the
// one hack/build-testapiserver.sh --path names. The error says how to build.
func Find() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return d, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	out, err := exec.Command("bash", filepath.Join(root, "hack", "build-testapiserver.sh"), "--path").Output()
	if err != nil {
		return "", fmt.Errorf("the test API server is not built: run hack/build-testapiserver.sh (make testapiserver)")
	}
	return strings.TrimSpace(string(out)), nil
}

// Required reports whether a test must fail, not skip, when the server is
// not built: in CI, and with AGENTISO_TESTAPISERVER=1.
func Required() bool { return os.Getenv("CI") != "" || os.Getenv("AGENTISO_TESTAPISERVER") == "1" }

func repoRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "hack", "build-testapiserver.sh")); err == nil {
			return d, nil
		}
		p := filepath.Dir(d)
		if p == d {
			return "", errors.New("hack/build-testapiserver.sh not found above the working directory")
		}
		d = p
	}
}

// Start runs etcd and kube-apiserver from the build in bin (Find) with
// their files in dir, and waits until the API server is ready.
func Start(bin, dir string) (*Server, error) {
	s := &Server{Dir: dir, CRDDir: filepath.Join(bin, "crds")}
	if err := s.start(bin, dir); err != nil {
		// What did start (etcd, before a kube-apiserver that never became
		// ready) is stopped here: the error paths return no Server to Stop.
		s.Stop()
		return nil, err
	}
	return s, nil
}

// start starts etcd and kube-apiserver into s and waits for the API.
func (s *Server) start(bin, dir string) error {
	t0 := time.Now()
	if err := s.writeCerts(); err != nil {
		return err
	}
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	s.etcd, err = run(filepath.Join(bin, "etcd"), filepath.Join(dir, "etcd.log"),
		"--name=default", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL, "--unsafe-no-fsync", "--log-level=warn")
	if err != nil {
		return err
	}
	f := func(n string) string { return filepath.Join(dir, n) }
	s.URL = fmt.Sprintf("https://127.0.0.1:%d", ports[2])
	s.apiserv, err = run(filepath.Join(bin, "kube-apiserver"), f("kube-apiserver.log"),
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", ports[2]),
		"--cert-dir="+f("certs"), "--tls-cert-file="+f("serving.crt"), "--tls-private-key-file="+f("serving.key"),
		"--client-ca-file="+f("ca.crt"), "--token-auth-file="+f("tokens.csv"),
		"--authorization-mode=RBAC", "--anonymous-auth=false",
		"--service-account-issuer=https://kubernetes.default.svc", "--service-account-key-file="+f("sa.pub"),
		"--service-account-signing-key-file="+f("sa.key"),
		// Addresses the API server hands out, never reached.
		"--service-cluster-ip-range=10.96.0.0/24", "--endpoint-reconciler-type=none",
		"--profiling=false", "--v=1")
	if err != nil {
		return err
	}
	s.admin = &rest.Config{Host: s.URL, BearerToken: s.AdminToken, TLSClientConfig: rest.TLSClientConfig{CAData: s.CAPEM},
		Timeout: 30 * time.Second, QPS: 200, Burst: 400, WarningHandler: rest.NoWarnings{}}
	if err := s.waitReady(90 * time.Second); err != nil {
		return err
	}
	s.StartTime = time.Since(t0)
	return nil
}

// proc is a started process; done is closed when it has exited.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func run(bin, logFile string, args ...string) (*proc, error) {
	lf, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	// Its own process group: Stop ends it and nothing else.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); lf.Close(); close(p.done) }()
	return p, nil
}

func (s *Server) waitReady(limit time.Duration) error {
	hc, err := rest.HTTPClientFor(s.admin)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(limit)
	var last string
	for time.Now().Before(deadline) {
		if s.apiserv.exited() {
			return fmt.Errorf("kube-apiserver exited (%v); its log: %s; etcd's: %s", s.apiserv.err, s.tail("kube-apiserver.log"), s.tail("etcd.log"))
		}
		resp, err := hc.Get(s.URL + "/readyz")
		if err == nil {
			b := new(bytes.Buffer)
			_, _ = b.ReadFrom(http.MaxBytesReader(nil, resp.Body, 1<<16))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, b.String())
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("kube-apiserver not ready within %s (last: %s); its log: %s; etcd's: %s", limit, last, s.tail("kube-apiserver.log"), s.tail("etcd.log"))
}

func (s *Server) tail(name string) string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, name))
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// Stop ends both processes (each in its own process group).
func (s *Server) Stop() {
	for _, p := range []*proc{s.apiserv, s.etcd} {
		if p == nil {
			continue
		}
		pid := p.cmd.Process.Pid
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			<-p.done
		}
	}
}

// Admin is a client configuration of the admin (system:masters).
func (s *Server) Admin() *rest.Config { return rest.CopyConfig(s.admin) }

// Clientset is the admin's typed client.
func (s *Server) Clientset() (*kubernetes.Clientset, error) {
	return kubernetes.NewForConfig(s.Admin())
}

// Dynamic is the admin's dynamic client.
func (s *Server) Dynamic() (dynamic.Interface, error) { return dynamic.NewForConfig(s.Admin()) }

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// LoadCRDs creates the CRDs of the YAML files (paths relative to CRDDir)
// and waits until each is established and served.
func (s *Server) LoadCRDs(ctx context.Context, files ...string) error {
	dc, err := s.Dynamic()
	if err != nil {
		return err
	}
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(s.CRDDir, f))
		if err != nil {
			return fmt.Errorf("CRD %s: %w", f, err)
		}
		var o map[string]any
		if err := yaml.Unmarshal(b, &o); err != nil {
			return fmt.Errorf("CRD %s: %w", f, err)
		}
		u := &unstructured.Unstructured{Object: o}
		if _, err := dc.Resource(crdGVR).Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create CRD %s: %w", f, err)
		}
		names = append(names, u.GetName())
	}
	for _, n := range names {
		if err := waitEstablished(ctx, dc, n); err != nil {
			return err
		}
	}
	return nil
}

func waitEstablished(ctx context.Context, dc dynamic.Interface, name string) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		u, err := dc.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return waitServed(ctx, dc, u)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("CRD %s not established within 60s", name)
}

// waitServed lists the CRD's storage version until the API answers.
func waitServed(ctx context.Context, dc dynamic.Interface, crd *unstructured.Unstructured) error {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	vers, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var version string
	for _, v := range vers {
		m, _ := v.(map[string]any)
		if served, _ := m["served"].(bool); served {
			version, _ = m["name"].(string)
		}
	}
	gvr := schema.GroupVersionResource{Group: group, Version: version, Resource: plural}
	var err error
	for i := 0; i < 300; i++ {
		if _, err = dc.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1}); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not served: %w", gvr, err)
}

// ServiceAccountToken creates the namespace and service account (when
// missing) and returns a token of the account (the TokenRequest API), whose
// user is system:serviceaccount:NS:NAME.
func (s *Server) ServiceAccountToken(ctx context.Context, ns, name string) (string, error) {
	cs, err := s.Clientset()
	if err != nil {
		return "", err
	}
	if err := EnsureNamespace(ctx, cs, ns); err != nil {
		return "", err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	secs := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return tr.Status.Token, nil
}

// ClientCert returns a client certificate and key (PEM) for user in
// groups, signed by the server's CA.
func (s *Server) ClientCert(user string, groups ...string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: user, Organization: groups},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, s.ca, &key.PublicKey, s.caKey)
	if err != nil {
		return nil, nil, err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

// writeCerts writes the CA, the serving certificate (127.0.0.1 and
// localhost), the service-account key pair and the static token file.
func (s *Server) writeCerts() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "agentiso-testapiserver-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	if s.ca, err = x509.ParseCertificate(caDER); err != nil {
		return err
	}
	s.caKey = caKey
	s.CAPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	srvTmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost", "kubernetes.default.svc"}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, s.ca, &srvKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	srvKB, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		return err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	saKB, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	tok := make([]byte, 24)
	if _, err := rand.Read(tok); err != nil {
		return err
	}
	s.AdminToken = fmt.Sprintf("%x", tok)
	files := map[string][]byte{
		"ca.crt":      s.CAPEM,
		"serving.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}),
		"serving.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: srvKB}),
		"sa.key":      pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: saKB}),
		"sa.pub":      pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub}),
		"tokens.csv":  []byte(s.AdminToken + `,admin,admin-uid,"system:masters"` + "\n"),
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(s.Dir, n), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
