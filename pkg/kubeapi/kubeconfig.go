// Package kubeapi is agentiso's Kubernetes client for node-image: a
// kubeconfig resolved by client-go's clientcmd exactly as kubectl and oc
// resolve it (KUBECONFIG lists merged, --context, exec credential plugins,
// proxy-url, client certificates, tls-server-name), and client-go's REST
// client at the real group/version/resource paths: typed GETs, lists, the
// update and create node-image needs, every answer limited in size and
// time, and a 401 or 403 turned into an error that names the exact
// permission that is missing.
package kubeapi

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// maxKubeconfigBytes bounds each kubeconfig file; real ones are a few KiB
// (a kubeconfig with many contexts, tens of KiB).
const maxKubeconfigBytes = 4 << 20

// Config is what a Client is built from: client-go's configuration of the
// API server, the TLS settings and the credentials.
type Config struct {
	// Server is the API server's https:// URL.
	Server string
	// Source names where the configuration came from, for messages
	// ("kubeconfig /home/me/kc, context admin").
	Source string

	rest *rest.Config
}

// Rest is a copy of client-go's configuration.
func (c *Config) Rest() *rest.Config { return rest.CopyConfig(c.rest) }

// LoadKubeconfig resolves the kubeconfig at path, or the files of a list
// (path as KUBECONFIG spells one: "a:b", merged with clientcmd's rules, the
// first file that sets a value winning), at its current context (or
// context, when not empty). Files it names (CA, client certificate and
// key, token file, exec command) are taken relative to the file that names
// them, as kubectl does.
func LoadKubeconfig(path, context string) (*Config, error) {
	files := filepath.SplitList(path)
	rules := &clientcmd.ClientConfigLoadingRules{}
	if len(files) == 1 {
		rules.ExplicitPath = files[0]
	} else {
		rules.Precedence = files
	}
	found := 0
	for _, f := range files {
		fi, err := os.Stat(f)
		switch {
		case errors.Is(err, fs.ErrNotExist) && len(files) > 1:
			continue // clientcmd skips a missing file of a list
		case err != nil:
			return nil, fmt.Errorf("kubeconfig: %w", err)
		case !fi.Mode().IsRegular():
			return nil, fmt.Errorf("kubeconfig %s: not a regular file", f)
		case fi.Size() > maxKubeconfigBytes:
			return nil, fmt.Errorf("kubeconfig %s: %d bytes, more than the %d MiB any kubeconfig needs: refusing it", f, fi.Size(), maxKubeconfigBytes>>20)
		}
		found++
	}
	if found == 0 {
		return nil, fmt.Errorf("kubeconfig: none of %s exists", strings.Join(files, ", "))
	}
	raw, err := rules.Load()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg, err := resolve(raw, context)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg.Source = "kubeconfig " + path + ", context " + cfg.Source
	return cfg, nil
}

// ParseKubeconfig resolves a kubeconfig's context (its current-context
// when context is empty); relative file names are taken from dir.
func ParseKubeconfig(data []byte, dir, context string) (*Config, error) {
	if len(data) > maxKubeconfigBytes {
		return nil, fmt.Errorf("%d bytes, more than the %d MiB any kubeconfig needs: refusing it", len(data), maxKubeconfigBytes>>20)
	}
	raw, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("not a kubeconfig: %w", err)
	}
	origin := filepath.Join(dir, "kubeconfig")
	for _, c := range raw.Clusters {
		c.LocationOfOrigin = origin
	}
	for _, a := range raw.AuthInfos {
		a.LocationOfOrigin = origin
	}
	if err := clientcmd.ResolveLocalPaths(raw); err != nil {
		return nil, err
	}
	return resolve(raw, context)
}

// resolve picks the context and builds client-go's configuration, refusing
// what node-image will not use: a cluster without TLS or without
// verification (the pull secret is read over this connection).
func resolve(raw *clientcmdapi.Config, context string) (*Config, error) {
	if context == "" {
		context = raw.CurrentContext
	}
	if context == "" {
		return nil, errors.New("current-context is empty: set it, or pass --context")
	}
	cx, ok := raw.Contexts[context]
	if !ok {
		return nil, fmt.Errorf("context %q is not in contexts[]", context)
	}
	cl, ok := raw.Clusters[cx.Cluster]
	if !ok {
		return nil, fmt.Errorf("context %q names cluster %q, which is not in clusters[]", context, cx.Cluster)
	}
	if _, ok := raw.AuthInfos[cx.AuthInfo]; !ok {
		return nil, fmt.Errorf("context %q names user %q, which is not in users[]", context, cx.AuthInfo)
	}
	if !strings.HasPrefix(cl.Server, "https://") {
		return nil, fmt.Errorf("cluster %q: server %q must be an https:// URL", cx.Cluster, cl.Server)
	}
	if cl.InsecureSkipTLSVerify {
		return nil, fmt.Errorf("cluster %q: insecure-skip-tls-verify is refused: the pull secret is read over this connection; set certificate-authority-data to the API server's CA", cx.Cluster)
	}
	u := raw.AuthInfos[cx.AuthInfo]
	if u.Token == "" && u.TokenFile == "" && len(u.ClientCertificateData) == 0 && u.ClientCertificate == "" &&
		u.Exec == nil && u.AuthProvider == nil {
		return nil, fmt.Errorf("user %q: no credentials: neither a token, a client certificate nor an exec plugin", cx.AuthInfo)
	}
	rc, err := clientcmd.NewNonInteractiveClientConfig(*raw, context, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("context %q: %w", context, err)
	}
	// The certificate material is read now, so that a bad file is named
	// before anything is asked of the cluster.
	if _, err := rest.TLSConfigFor(rc); err != nil {
		return nil, fmt.Errorf("user %q: client certificate and key, or the certificate authority: %w", cx.AuthInfo, err)
	}
	return &Config{Server: strings.TrimSuffix(rc.Host, "/"), Source: context, rest: rc}, nil
}

// NewConfig is a Config of an already resolved client-go configuration
// (tests, and callers that resolved one themselves).
func NewConfig(rc *rest.Config, source string) *Config {
	return &Config{Server: strings.TrimSuffix(rc.Host, "/"), Source: source, rest: rest.CopyConfig(rc)}
}
