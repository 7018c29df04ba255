package testapiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// EnsureNamespace creates namespace ns unless it exists.
func EnsureNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	return nil
}

// Create creates the object (JSON or a map) as the admin, in its
// namespace (created when missing), and then writes its status through
// the status subresource when it has one, as the cluster's controllers
// would. apiVersion and kind may be left out of obj: gvr and kind give
// them.
func (s *Server) Create(ctx context.Context, gvr schema.GroupVersionResource, kind string, obj any) (*unstructured.Unstructured, error) {
	var m map[string]any
	switch o := obj.(type) {
	case []byte:
		if err := json.Unmarshal(o, &m); err != nil {
			return nil, err
		}
	case map[string]any:
		b, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("Create: %T is neither JSON nor a map", obj)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(gvr.GroupVersion().String())
	u.SetKind(kind)
	u.SetResourceVersion("")
	dc, err := s.Dynamic()
	if err != nil {
		return nil, err
	}
	status, hasStatus := m["status"]
	if ns := u.GetNamespace(); ns != "" {
		cs, err := s.Clientset()
		if err != nil {
			return nil, err
		}
		if err := EnsureNamespace(ctx, cs, ns); err != nil {
			return nil, err
		}
	}
	ri := dc.Resource(gvr).Namespace(u.GetNamespace())
	out, err := ri.Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create %s %s: %w", gvr.Resource, u.GetName(), err)
	}
	if hasStatus && status != nil {
		out.Object["status"] = status
		if st, err := ri.UpdateStatus(ctx, out, metav1.UpdateOptions{}); err == nil {
			out = st
		} else if !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
			return nil, fmt.Errorf("status of %s %s: %w", gvr.Resource, u.GetName(), err)
		}
	}
	return out, nil
}

// User is how a kubeconfig authenticates: a token, a client certificate,
// or an exec plugin.
type User struct {
	Token             string
	CertPEM, KeyPEM   []byte
	Exec              *clientcmdapi.ExecConfig
	ProxyURL          string
	TLSServerName     string
	Server            string // default the server's URL
	CAPEM             []byte // default the server's CA
	ClusterName       string // default "test"
	UserName, Context string // default "user", "test"
}

// Kubeconfig writes a kubeconfig for u at dir/name (0600) and returns its
// path.
func (s *Server) Kubeconfig(dir, name string, u User) (string, error) {
	def := func(v, d string) string {
		if v == "" {
			return d
		}
		return v
	}
	cl := def(u.ClusterName, "test")
	un := def(u.UserName, "user")
	cx := def(u.Context, "test")
	ca := u.CAPEM
	if ca == nil {
		ca = s.CAPEM
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[cl] = &clientcmdapi.Cluster{Server: def(u.Server, s.URL), CertificateAuthorityData: ca,
		ProxyURL: u.ProxyURL, TLSServerName: u.TLSServerName}
	cfg.AuthInfos[un] = &clientcmdapi.AuthInfo{Token: u.Token, ClientCertificateData: u.CertPEM, ClientKeyData: u.KeyPEM, Exec: u.Exec}
	cfg.Contexts[cx] = &clientcmdapi.Context{Cluster: cl, AuthInfo: un}
	cfg.CurrentContext = cx
	p := filepath.Join(dir, name)
	if err := clientcmd.WriteToFile(*cfg, p); err != nil {
		return "", err
	}
	return p, os.Chmod(p, 0o600)
}
