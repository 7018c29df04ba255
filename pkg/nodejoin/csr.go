package nodejoin

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"strings"
)

// The requesters of a joining node's two CSRs: the client certificate is
// asked for by the machine-config operator's node-bootstrapper with the
// bootstrap kubeconfig, the serving certificate by the node itself.
const (
	bootstrapperUser = "system:serviceaccount:openshift-machine-config-operator:node-bootstrapper"
	nodeUserPrefix   = "system:node:"
	clientSigner     = "kubernetes.io/kube-apiserver-client-kubelet"
	servingSigner    = "kubernetes.io/kubelet-serving"
)

// CSR is what the monitor needs of a CertificateSigningRequest.
type CSR struct {
	Name     string
	Username string
	Signer   string
	// CommonName, DNSNames and IPs are from the request itself.
	CommonName string
	DNSNames   []string
	IPs        []string
	// Pending is true while neither approved nor denied.
	Pending bool
}

// csrObject is the subset of a certificates.k8s.io/v1 CSR decoded.
type csrObject struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Request    []byte `json:"request"`
		SignerName string `json:"signerName"`
		Username   string `json:"username"`
	} `json:"spec"`
	Status struct {
		Conditions []struct {
			Type string `json:"type"`
		} `json:"conditions"`
	} `json:"status"`
}

// parseCSR reads the request PEM of o.
func parseCSR(o csrObject) (CSR, error) {
	c := CSR{Name: o.Metadata.Name, Username: o.Spec.Username, Signer: o.Spec.SignerName, Pending: len(o.Status.Conditions) == 0}
	blk, _ := pem.Decode(o.Spec.Request)
	if blk == nil {
		return c, fmt.Errorf("csr %s: spec.request holds no PEM block", c.Name)
	}
	req, err := x509.ParseCertificateRequest(blk.Bytes)
	if err != nil {
		return c, fmt.Errorf("csr %s: %w", c.Name, err)
	}
	c.CommonName, c.DNSNames = req.Subject.CommonName, req.DNSNames
	for _, ip := range req.IPAddresses {
		c.IPs = append(c.IPs, ip.String())
	}
	return c, nil
}

// JoiningHost is a host the monitor follows: its name once known (from
// its own assisted-service, or the node name of its first CSR) and its IP.
type JoiningHost struct {
	Name string
	IP   string
}

// MatchCSR says whether c is one of the two CSRs of a joining host, and
// which; why explains a refusal. Only a pending request whose requester
// and subject are exactly those of a host being added matches: a client
// CSR from the node-bootstrapper for system:node:<name>, or a serving CSR
// from system:node:<name> whose IP addresses are all that host's.
func MatchCSR(c CSR, hosts []JoiningHost) (host JoiningHost, ok bool, why string) {
	if !c.Pending {
		return JoiningHost{}, false, "not pending"
	}
	node, isNode := strings.CutPrefix(c.CommonName, nodeUserPrefix)
	if !isNode || node == "" {
		return JoiningHost{}, false, fmt.Sprintf("its subject %q names no node", c.CommonName)
	}
	var h *JoiningHost
	for i := range hosts {
		if hosts[i].Name != "" && strings.EqualFold(hosts[i].Name, node) {
			h = &hosts[i]
		}
	}
	if h == nil {
		return JoiningHost{}, false, fmt.Sprintf("node %s is not one of the hosts being added", node)
	}
	switch {
	case c.Signer == clientSigner && c.Username == bootstrapperUser:
		return *h, true, ""
	case c.Signer == servingSigner && c.Username == nodeUserPrefix+node:
		for _, ip := range c.IPs {
			if !sameIP(ip, h.IP) {
				return JoiningHost{}, false, fmt.Sprintf("it asks for IP %s, which is not %s's (%s)", ip, node, h.IP)
			}
		}
		for _, d := range c.DNSNames {
			if !strings.EqualFold(d, node) {
				return JoiningHost{}, false, fmt.Sprintf("it asks for the name %s, which is not %s", d, node)
			}
		}
		return *h, true, ""
	}
	return JoiningHost{}, false, fmt.Sprintf("requested by %s with signer %s, not as a joining node's", c.Username, c.Signer)
}

// ValidIP reports whether s is an IP address.
func ValidIP(s string) bool { return net.ParseIP(s) != nil }
