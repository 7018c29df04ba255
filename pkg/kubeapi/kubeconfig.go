// Package kubeapi is a small, bounded Kubernetes REST client configured from
// a user's kubeconfig (bearer token or client certificate, CA data or file):
// typed GETs, lists and the one update node-image needs, every answer
// limited in size and time, and a 401 or 403 turned into an error that names
// the exact permission that is missing. It exists so that agentiso reads an
// installed cluster without client-go.
package kubeapi

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/pkg/fsutil"
)

// maxKubeconfigBytes bounds the kubeconfig and the files it names; real
// ones are a few KiB (a kubeconfig with many contexts, tens of KiB).
const maxKubeconfigBytes = 4 << 20

// kubeconfig is the subset of a kubeconfig file that is read. Fields that
// would need a program to run (exec, auth-provider) are read only to be
// refused with a clear error.
type kubeconfig struct {
	Clusters []struct {
		Name    string `json:"name"`
		Cluster struct {
			Server                   string `json:"server"`
			CertificateAuthority     string `json:"certificate-authority,omitempty"`
			CertificateAuthorityData []byte `json:"certificate-authority-data,omitempty"`
			InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify,omitempty"`
			TLSServerName            string `json:"tls-server-name,omitempty"`
			ProxyURL                 string `json:"proxy-url,omitempty"`
		} `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		Name string `json:"name"`
		User struct {
			ClientCertificate     string          `json:"client-certificate,omitempty"`
			ClientCertificateData []byte          `json:"client-certificate-data,omitempty"`
			ClientKey             string          `json:"client-key,omitempty"`
			ClientKeyData         []byte          `json:"client-key-data,omitempty"`
			Token                 string          `json:"token,omitempty"`
			TokenFile             string          `json:"tokenFile,omitempty"`
			Username              string          `json:"username,omitempty"`
			Exec                  *map[string]any `json:"exec,omitempty"`
			AuthProvider          *map[string]any `json:"auth-provider,omitempty"`
		} `json:"user"`
	} `json:"users"`
	Contexts []struct {
		Name    string `json:"name"`
		Context struct {
			Cluster string `json:"cluster"`
			User    string `json:"user"`
		} `json:"context"`
	} `json:"contexts"`
	CurrentContext string `json:"current-context"`
}

// Config is what a Client is built from: the API server, the TLS settings
// (CA, client certificate) and a bearer token, if any.
type Config struct {
	// Server is the API server's https:// URL.
	Server string
	// TLS holds the CA pool and the client certificate.
	TLS *tls.Config
	// Token is the bearer token; secret, never printed.
	Token string
	// Source names where the configuration came from, for messages
	// ("kubeconfig /home/me/kc, context admin").
	Source string
}

// LoadKubeconfig reads the kubeconfig at path and resolves its current
// context (or context, when not empty). Files it names (CA, client
// certificate and key, token file) are read relative to its directory, as
// kubectl does.
func LoadKubeconfig(path, context string) (*Config, error) {
	data, err := fsutil.ReadRegular(path, maxKubeconfigBytes)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg, err := ParseKubeconfig(data, filepath.Dir(path), context)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg.Source = "kubeconfig " + path + ", context " + cfg.Source
	return cfg, nil
}

// ParseKubeconfig resolves a kubeconfig's context (its current-context
// when context is empty); relative file names are taken from dir.
func ParseKubeconfig(data []byte, dir, context string) (*Config, error) {
	var kc kubeconfig
	if err := yaml.Unmarshal(data, &kc); err != nil {
		return nil, fmt.Errorf("not a kubeconfig: %w", err)
	}
	if context == "" {
		context = kc.CurrentContext
	}
	if context == "" {
		return nil, errors.New("current-context is empty: set it, or pass --context")
	}
	ci := -1
	for i := range kc.Contexts {
		if kc.Contexts[i].Name == context {
			ci = i
		}
	}
	if ci < 0 {
		return nil, fmt.Errorf("context %q is not in contexts[]", context)
	}
	cname, uname := kc.Contexts[ci].Context.Cluster, kc.Contexts[ci].Context.User
	cl, u := -1, -1
	for i := range kc.Clusters {
		if kc.Clusters[i].Name == cname {
			cl = i
		}
	}
	for i := range kc.Users {
		if kc.Users[i].Name == uname {
			u = i
		}
	}
	if cl < 0 {
		return nil, fmt.Errorf("context %q names cluster %q, which is not in clusters[]", context, cname)
	}
	c := kc.Clusters[cl].Cluster
	if !strings.HasPrefix(c.Server, "https://") {
		return nil, fmt.Errorf("cluster %q: server %q must be an https:// URL", cname, c.Server)
	}
	if c.ProxyURL != "" {
		return nil, fmt.Errorf("cluster %q: proxy-url is not supported: use HTTPS_PROXY", cname)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.TLSServerName}
	ca := c.CertificateAuthorityData
	if len(ca) == 0 && c.CertificateAuthority != "" {
		b, err := readRelative(dir, c.CertificateAuthority)
		if err != nil {
			return nil, fmt.Errorf("cluster %q: certificate-authority: %w", cname, err)
		}
		ca = b
	}
	switch {
	case c.InsecureSkipTLSVerify:
		return nil, fmt.Errorf("cluster %q: insecure-skip-tls-verify is refused: the pull secret is read over this connection; set certificate-authority-data to the API server's CA", cname)
	case len(ca) > 0:
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("cluster %q: the certificate authority holds no PEM certificate", cname)
		}
		tc.RootCAs = pool
	}
	cfg := &Config{Server: strings.TrimSuffix(c.Server, "/"), TLS: tc, Source: context}
	if u < 0 {
		return nil, fmt.Errorf("context %q names user %q, which is not in users[]", context, uname)
	}
	if err := cfg.setUser(kc, u, dir); err != nil {
		return nil, fmt.Errorf("user %q: %w", uname, err)
	}
	return cfg, nil
}

func (cfg *Config) setUser(kc kubeconfig, i int, dir string) error {
	usr := kc.Users[i].User
	if usr.Exec != nil || usr.AuthProvider != nil {
		return errors.New("exec and auth-provider credentials are not supported (agentiso runs no credential plugin): use a kubeconfig with a token (oc login writes one) or a client certificate")
	}
	cert, key := usr.ClientCertificateData, usr.ClientKeyData
	var err error
	if len(cert) == 0 && usr.ClientCertificate != "" {
		if cert, err = readRelative(dir, usr.ClientCertificate); err != nil {
			return fmt.Errorf("client-certificate: %w", err)
		}
	}
	if len(key) == 0 && usr.ClientKey != "" {
		if key, err = readRelative(dir, usr.ClientKey); err != nil {
			return fmt.Errorf("client-key: %w", err)
		}
	}
	if len(cert) > 0 || len(key) > 0 {
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return fmt.Errorf("client certificate and key: %w", err)
		}
		cfg.TLS.Certificates = []tls.Certificate{pair}
	}
	cfg.Token = usr.Token
	if cfg.Token == "" && usr.TokenFile != "" {
		b, err := readRelative(dir, usr.TokenFile)
		if err != nil {
			return fmt.Errorf("tokenFile: %w", err)
		}
		cfg.Token = strings.TrimSpace(string(b))
	}
	if cfg.Token == "" && len(cfg.TLS.Certificates) == 0 {
		return errors.New("no credentials: neither a token nor a client certificate")
	}
	return nil
}

func readRelative(dir, name string) ([]byte, error) {
	if strings.HasPrefix(name, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			name = filepath.Join(home, name[2:])
		}
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	return fsutil.ReadRegular(name, maxKubeconfigBytes)
}
