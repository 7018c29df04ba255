package credentials

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Kubeconfig is the subset of a kubeconfig file that agentiso writes and reads:
// clusters with server and CA data, users with client certificate data, contexts.
// []byte fields are base64 in the file, as kubectl expects.
type Kubeconfig struct {
	APIVersion     string         `json:"apiVersion"`
	Kind           string         `json:"kind"`
	Clusters       []NamedCluster `json:"clusters"`
	Users          []NamedUser    `json:"users"`
	Contexts       []NamedContext `json:"contexts"`
	CurrentContext string         `json:"current-context"`
	Preferences    struct{}       `json:"preferences"`
}

// NamedCluster is one clusters[] entry.
type NamedCluster struct {
	Name    string      `json:"name"`
	Cluster KubeCluster `json:"cluster"`
}

// KubeCluster holds the API server address and the CA bundle it is checked against.
type KubeCluster struct {
	Server                   string `json:"server"`
	CertificateAuthorityData []byte `json:"certificate-authority-data,omitempty"`
}

// NamedUser is one users[] entry.
type NamedUser struct {
	Name string   `json:"name"`
	User AuthInfo `json:"user"`
}

// AuthInfo holds client certificate credentials.
type AuthInfo struct {
	ClientCertificateData []byte `json:"client-certificate-data,omitempty"`
	ClientKeyData         []byte `json:"client-key-data,omitempty"`
}

// NamedContext is one contexts[] entry.
type NamedContext struct {
	Name    string      `json:"name"`
	Context KubeContext `json:"context"`
}

// KubeContext ties a cluster to a user.
type KubeContext struct {
	Cluster string `json:"cluster"`
	User    string `json:"user"`
}

// APIServerURL is https://api.<cluster>.<baseDomain>:6443 (trailing dot of the domain dropped).
func APIServerURL(clusterName, baseDomain string) string {
	return fmt.Sprintf("https://api.%s.%s:6443", clusterName, strings.TrimSuffix(baseDomain, "."))
}

// AdminKubeconfigParams are the inputs of NewAdminKubeconfig.
type AdminKubeconfigParams struct {
	ClusterName string
	// Server defaults to APIServerURL(ClusterName, BaseDomain).
	Server     string
	BaseDomain string
	// CAData defaults to signers.ServerCABundle().
	CAData []byte
	Client CertKey
}

// NewAdminKubeconfig builds the admin kubeconfig: cluster <ClusterName>,
// user admin with the client certificate, context admin (current).
func NewAdminKubeconfig(p AdminKubeconfigParams) *Kubeconfig {
	server := p.Server
	if server == "" {
		server = APIServerURL(p.ClusterName, p.BaseDomain)
	}
	return &Kubeconfig{
		APIVersion:     "v1",
		Kind:           "Config",
		Clusters:       []NamedCluster{{Name: p.ClusterName, Cluster: KubeCluster{Server: server, CertificateAuthorityData: p.CAData}}},
		Users:          []NamedUser{{Name: "admin", User: AuthInfo{ClientCertificateData: []byte(p.Client.CertPEM), ClientKeyData: []byte(p.Client.KeyPEM)}}},
		Contexts:       []NamedContext{{Name: "admin", Context: KubeContext{Cluster: p.ClusterName, User: "admin"}}},
		CurrentContext: "admin",
	}
}

// GenerateAdminKubeconfig signs a fresh system:admin client certificate with
// the admin-kubeconfig signer and wraps it in a kubeconfig trusting the
// complete server CA bundle.
func GenerateAdminKubeconfig(random io.Reader, signers *SignerCAs, clusterName, baseDomain string, now time.Time) (*Kubeconfig, error) {
	if clusterName == "" || baseDomain == "" {
		return nil, errors.New("admin kubeconfig: cluster name and base domain are required")
	}
	client, err := AdminClientCert(random, signers, now)
	if err != nil {
		return nil, fmt.Errorf("admin kubeconfig: %w", err)
	}
	return NewAdminKubeconfig(AdminKubeconfigParams{
		ClusterName: clusterName, BaseDomain: baseDomain,
		CAData: signers.ServerCABundle(), Client: *client,
	}), nil
}

// Marshal renders the kubeconfig as YAML.
func (k *Kubeconfig) Marshal() ([]byte, error) {
	b, err := yaml.Marshal(k)
	if err != nil {
		return nil, fmt.Errorf("encode kubeconfig: %w", err)
	}
	return b, nil
}

// ParseKubeconfig reads a kubeconfig (YAML or JSON). Unknown fields are ignored.
func ParseKubeconfig(data []byte) (*Kubeconfig, error) {
	k := &Kubeconfig{}
	if err := yaml.Unmarshal(data, k); err != nil {
		return nil, fmt.Errorf("parse kubeconfig: %w", err)
	}
	return k, nil
}

// Current resolves current-context to its cluster and user.
func (k *Kubeconfig) Current() (*KubeCluster, *AuthInfo, error) {
	if k.CurrentContext == "" {
		return nil, nil, errors.New("kubeconfig: current-context is empty; set it to one of contexts[].name")
	}
	var ctx *KubeContext
	for i := range k.Contexts {
		if k.Contexts[i].Name == k.CurrentContext {
			ctx = &k.Contexts[i].Context
		}
	}
	if ctx == nil {
		return nil, nil, fmt.Errorf("kubeconfig: current-context %q is not in contexts[]", k.CurrentContext)
	}
	var cl *KubeCluster
	for i := range k.Clusters {
		if k.Clusters[i].Name == ctx.Cluster {
			cl = &k.Clusters[i].Cluster
		}
	}
	if cl == nil {
		return nil, nil, fmt.Errorf("kubeconfig: context %q names cluster %q, which is not in clusters[]", k.CurrentContext, ctx.Cluster)
	}
	var u *AuthInfo
	for i := range k.Users {
		if k.Users[i].Name == ctx.User {
			u = &k.Users[i].User
		}
	}
	if u == nil {
		return nil, nil, fmt.Errorf("kubeconfig: context %q names user %q, which is not in users[]", k.CurrentContext, ctx.User)
	}
	if cl.Server == "" {
		return nil, nil, fmt.Errorf("kubeconfig: cluster %q has no server", ctx.Cluster)
	}
	return cl, u, nil
}

// TLSConfig builds the client TLS configuration of the current context:
// the CA data as roots and the client certificate.
func (k *Kubeconfig) TLSConfig() (*tls.Config, string, error) {
	cl, u, err := k.Current()
	if err != nil {
		return nil, "", err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(cl.CertificateAuthorityData) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cl.CertificateAuthorityData) {
			return nil, "", errors.New("kubeconfig: certificate-authority-data holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	if len(u.ClientCertificateData) > 0 {
		c, err := tls.X509KeyPair(u.ClientCertificateData, u.ClientKeyData)
		if err != nil {
			return nil, "", fmt.Errorf("kubeconfig: client-certificate-data/client-key-data: %w", err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return cfg, cl.Server, nil
}
