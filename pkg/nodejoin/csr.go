package nodejoin

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"slices"
	"strings"
)

// The approval rules of node-image monitor --approve-csrs. They approve no
// more than the cluster-machine-approver would for a machine it knows
// (openshift/cluster-machine-approver, pkg/controller/csr_check.go and
// node_client.go at a9edd69: authorizeNodeClientCSR, isNodeClientCert,
// isReqFromNodeBootstrapper, validateCSRContents,
// authorizeServingCertWithMachine), with agentiso's stand-in for the
// Machine: the hosts the administrator named (--ip-addresses, and their
// names from nodes-config.yaml or reverse DNS). docs/add-nodes.md lists
// them rule by rule beside the approver's.

// The requesters, groups, signers and usages of a joining node's two CSRs:
// the client certificate is asked for by the machine-config operator's
// node-bootstrapper (the bootstrap kubeconfig of the node's Ignition), the
// serving certificate by the node itself once it is a node.
const (
	bootstrapperUser = "system:serviceaccount:openshift-machine-config-operator:node-bootstrapper"
	nodeUserPrefix   = "system:node:"
	nodesGroup       = "system:nodes"
	authenticated    = "system:authenticated"
	clientSigner     = "kubernetes.io/kube-apiserver-client-kubelet"
	servingSigner    = "kubernetes.io/kubelet-serving"
)

// bootstrapperGroups are exactly the node-bootstrapper's groups
// (isReqFromNodeBootstrapper compares the set).
func bootstrapperGroups() []string {
	return []string{"system:serviceaccounts:openshift-machine-config-operator", "system:serviceaccounts", authenticated}
}

// clientUsages and servingUsages are the usage sets the approver takes
// (node_client.go kubeletClientUsages[Legacy]; validateCSRContents), each
// with and without key encipherment (RSA keys ask for it, ECDSA keys not).
func clientUsages() [][]string {
	return [][]string{{"digital signature", "client auth"}, {"digital signature", "key encipherment", "client auth"}}
}

func servingUsages() [][]string {
	return [][]string{{"digital signature", "server auth"}, {"digital signature", "key encipherment", "server auth"}}
}

// CSR is what the approval rules read of a CertificateSigningRequest.
type CSR struct {
	Name     string
	Username string
	Groups   []string
	Usages   []string
	Signer   string
	// From the x509 request itself.
	CommonName   string
	Organization []string
	DNSNames     []string
	Emails       []string
	URIs         []string
	IPs          []string
	// Pending is true while neither approved, denied nor failed.
	Pending bool
}

// csrObject is the subset of a certificates.k8s.io/v1 CSR decoded.
type csrObject struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Request    []byte   `json:"request"`
		SignerName string   `json:"signerName"`
		Username   string   `json:"username"`
		Groups     []string `json:"groups"`
		Usages     []string `json:"usages"`
	} `json:"spec"`
	Status struct {
		Conditions []struct {
			Type string `json:"type"`
		} `json:"conditions"`
	} `json:"status"`
}

// ParseCSR reads a certificates.k8s.io/v1 CertificateSigningRequest as the
// API server returns it.
func ParseCSR(raw []byte) (CSR, error) {
	var o csrObject
	if err := json.Unmarshal(raw, &o); err != nil {
		return CSR{}, fmt.Errorf("a certificate signing request from the cluster: %w", err)
	}
	return parseCSR(o)
}

// parseCSR reads the request PEM of o.
func parseCSR(o csrObject) (CSR, error) {
	c := CSR{Name: o.Metadata.Name, Username: o.Spec.Username, Groups: o.Spec.Groups, Usages: o.Spec.Usages,
		Signer: o.Spec.SignerName, Pending: len(o.Status.Conditions) == 0}
	blk, _ := pem.Decode(o.Spec.Request)
	if blk == nil || blk.Type != "CERTIFICATE REQUEST" {
		return c, fmt.Errorf("csr %s: spec.request holds no CERTIFICATE REQUEST PEM block", c.Name)
	}
	req, err := x509.ParseCertificateRequest(blk.Bytes)
	if err != nil {
		return c, fmt.Errorf("csr %s: %w", c.Name, err)
	}
	c.CommonName, c.Organization, c.DNSNames, c.Emails = req.Subject.CommonName, req.Subject.Organization, req.DNSNames, req.EmailAddresses
	for _, u := range req.URIs {
		c.URIs = append(c.URIs, u.String())
	}
	for _, ip := range req.IPAddresses {
		c.IPs = append(c.IPs, ip.String())
	}
	return c, nil
}

// NameSource says where the monitor learnt a joining host's name.
type NameSource string

// The sources of a joining host's name. Only the administrator's
// (nodes-config.yaml), the site's DNS and the cluster's own Node are
// trusted to name a host for a client CSR; the host's own assisted-service
// answers anyone on the network over plain HTTP.
const (
	NameFromNodesConfig NameSource = "nodes-config.yaml"
	NameFromDNS         NameSource = "reverse DNS"
	NameFromNode        NameSource = "node"
	NameFromHost        NameSource = "the host itself"
)

// trusted reports whether a name from s may name a host for a client CSR.
func (s NameSource) trusted() bool {
	return s == NameFromNodesConfig || s == NameFromDNS || s == NameFromNode
}

// JoiningHost is a host being added, as the rules know it: its address
// (the administrator's), and its name once known and where it came from.
type JoiningHost struct {
	Name string
	IP   string
	From NameSource
}

// ClusterNode is an existing Node: its name and status.addresses.
type ClusterNode struct {
	Name      string
	Addresses []NodeAddress
}

// NodeAddress is one of a Node's status.addresses.
type NodeAddress struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

// Verdict is the rules' answer for one pending CSR.
type Verdict struct {
	// Host is the joining host the CSR asks for; zero when it names none
	// (another node's or another signer's CSR: none of the monitor's
	// business, and not reported).
	Host JoiningHost
	// Kind is "client" or "serving".
	Kind string
	// Approve is true when every rule passed; else Rule names the first
	// rule failed (docs/add-nodes.md) and Reason says how.
	Approve      bool
	Rule, Reason string
}

// JudgeCSR applies the approval rules to the pending CSR c, for the hosts
// being added and the cluster's existing nodes.
func JudgeCSR(c CSR, hosts []JoiningHost, nodes []ClusterNode) Verdict {
	switch c.Signer {
	case clientSigner:
		return judgeClient(c, hosts, nodes)
	case servingSigner:
		return judgeServing(c, hosts, nodes)
	}
	for _, n := range []string{strings.TrimPrefix(c.CommonName, nodeUserPrefix), strings.TrimPrefix(c.Username, nodeUserPrefix)} {
		if h, ok := hostNamed(hosts, n, strings.EqualFold); ok {
			return refuse(h, "", "signer", fmt.Sprintf("its signer %s is neither a kubelet's client (%s) nor serving (%s) signer", c.Signer, clientSigner, servingSigner))
		}
	}
	return Verdict{}
}

func refuse(h JoiningHost, kind, rule, why string) Verdict {
	if kind != "" {
		rule = kind + "/" + rule
	}
	return Verdict{Host: h, Kind: kind, Rule: rule, Reason: why}
}

// hostNamed is the joining host whose name equals name by eq.
func hostNamed(hosts []JoiningHost, name string, eq func(a, b string) bool) (JoiningHost, bool) {
	if name == "" {
		return JoiningHost{}, false
	}
	for _, h := range hosts {
		if h.Name != "" && eq(h.Name, name) {
			return h, true
		}
	}
	return JoiningHost{}, false
}

// judgeClient: the approver's authorizeNodeClientCSR with isNodeClientCert
// and isReqFromNodeBootstrapper; the Machine it finds by the node name is
// here a host the administrator named, and its "node already exists"
// refusal is kept.
func judgeClient(c CSR, hosts []JoiningHost, nodes []ClusterNode) Verdict {
	const kind = "client"
	name, isNode := strings.CutPrefix(c.CommonName, nodeUserPrefix)
	h, ok := hostNamed(hosts, name, strings.EqualFold)
	if !isNode || !ok {
		// Not for a host being added: another node's business.
		return Verdict{}
	}
	switch {
	case c.Username != bootstrapperUser:
		return refuse(h, kind, "requester", fmt.Sprintf("requested by %s, not by the node-bootstrapper (%s)", c.Username, bootstrapperUser))
	case !sameSet(c.Groups, bootstrapperGroups()):
		return refuse(h, kind, "groups", fmt.Sprintf("its requester's groups are [%s], not exactly the node-bootstrapper's [%s]", strings.Join(c.Groups, ", "), strings.Join(bootstrapperGroups(), ", ")))
	case !oneOfSets(c.Usages, clientUsages()):
		return refuse(h, kind, "usages", fmt.Sprintf("it asks for the usages [%s], not exactly a kubelet client's (digital signature, client auth; key encipherment allowed)", strings.Join(c.Usages, ", ")))
	case !slices.Equal(c.Organization, []string{nodesGroup}):
		return refuse(h, kind, "organization", fmt.Sprintf("its subject's organizations are [%s], not exactly [%s]", strings.Join(c.Organization, ", "), nodesGroup))
	case name != h.Name:
		return refuse(h, kind, "common-name", fmt.Sprintf("its subject %s is not %s%s: node names are compared exactly", c.CommonName, nodeUserPrefix, h.Name))
	case len(c.DNSNames)+len(c.IPs)+len(c.Emails)+len(c.URIs) > 0:
		return refuse(h, kind, "no-sans", fmt.Sprintf("a client certificate names no host, yet it asks for %s", strings.Join(sans(c), ", ")))
	}
	for _, n := range nodes {
		if n.Name == name {
			return refuse(h, kind, "new-node", fmt.Sprintf("node %s already exists: a client CSR for an existing node is a leftover request or another machine asking for that node's identity (the approver refuses it too); if that machine was reinstalled, delete its Node first", name))
		}
	}
	if !h.From.trusted() {
		return refuse(h, kind, "trusted-name", fmt.Sprintf("the name %s comes only from the host at %s itself (its assisted-service, over plain HTTP): give it as the host's hostname in nodes-config.yaml (node-image monitor --dir reads it)", name, h.IP))
	}
	for _, o := range hosts {
		if o.Name == name && o.IP != h.IP {
			return refuse(h, kind, "unique-name", fmt.Sprintf("hosts %s and %s both go by %s: give each its own hostname in nodes-config.yaml", h.IP, o.IP, name))
		}
	}
	return Verdict{Host: h, Kind: kind, Approve: true}
}

// judgeServing: the approver's validateCSRContents and
// authorizeServingCertWithMachine, with the Node's own status.addresses
// for the Machine's (a host added by an ISO has no Machine), kube's
// kubelet-serving signer's subject and SAN rules, and no name or address
// of another node.
func judgeServing(c CSR, hosts []JoiningHost, nodes []ClusterNode) Verdict {
	const kind = "serving"
	asking, _ := strings.CutPrefix(c.Username, nodeUserPrefix)
	named, _ := strings.CutPrefix(c.CommonName, nodeUserPrefix)
	var node *ClusterNode
	for i := range nodes {
		if nodes[i].Name == asking {
			node = &nodes[i]
		}
	}
	// The host: the one at an InternalIP of the asking node, else one
	// whose name the request uses (to say why it is refused).
	var h JoiningHost
	found := false
	if node != nil {
		for _, a := range node.Addresses {
			for _, jh := range hosts {
				if a.Type == "InternalIP" && sameIP(a.Address, jh.IP) && !found {
					h, found = jh, true
				}
			}
		}
	}
	if !found {
		for _, n := range []string{asking, named} {
			if jh, ok := hostNamed(hosts, n, strings.EqualFold); ok && !found {
				h, found = jh, true
			}
		}
	}
	if !found {
		return Verdict{}
	}
	switch {
	case !strings.HasPrefix(c.Username, nodeUserPrefix) || asking == "":
		return refuse(h, kind, "requester", fmt.Sprintf("requested by %s, not by a node (%s<name>)", c.Username, nodeUserPrefix))
	case !slices.Contains(c.Groups, nodesGroup) || !slices.Contains(c.Groups, authenticated):
		return refuse(h, kind, "groups", fmt.Sprintf("its requester's groups [%s] lack %s or %s", strings.Join(c.Groups, ", "), nodesGroup, authenticated))
	case !oneOfSets(c.Usages, servingUsages()):
		return refuse(h, kind, "usages", fmt.Sprintf("it asks for the usages [%s], not exactly a kubelet server's (digital signature, server auth; key encipherment allowed)", strings.Join(c.Usages, ", ")))
	case c.CommonName != c.Username:
		return refuse(h, kind, "common-name", fmt.Sprintf("its subject %s is not its requester %s", c.CommonName, c.Username))
	case !slices.Equal(c.Organization, []string{nodesGroup}):
		return refuse(h, kind, "organization", fmt.Sprintf("its subject's organizations are [%s], not exactly [%s]", strings.Join(c.Organization, ", "), nodesGroup))
	case len(c.Emails)+len(c.URIs) > 0:
		return refuse(h, kind, "sans", fmt.Sprintf("it asks for e-mail or URI names (%s), which a kubelet's serving certificate never holds", strings.Join(append(append([]string{}, c.Emails...), c.URIs...), ", ")))
	case len(c.DNSNames)+len(c.IPs) == 0:
		return refuse(h, kind, "sans", "it names no host name and no address")
	case node == nil:
		return refuse(h, kind, "node", fmt.Sprintf("node %s does not exist: a serving certificate is for a registered node", asking))
	case !nodeAt(node, h.IP):
		return refuse(h, kind, "node", fmt.Sprintf("node %s is not at %s, an address being added", asking, h.IP))
	}
	for _, d := range c.DNSNames {
		if !hasAddress(node, d, "Hostname", "InternalDNS", "ExternalDNS") {
			return refuse(h, kind, "dns-names", fmt.Sprintf("it asks for the name %s, which node %s does not have (its names: %s)", d, asking, strings.Join(addresses(node, "Hostname", "InternalDNS", "ExternalDNS"), ", ")))
		}
		if o := otherNodeWith(nodes, node.Name, d); o != "" {
			return refuse(h, kind, "dns-names", fmt.Sprintf("it asks for the name %s, which node %s also has", d, o))
		}
	}
	for _, ip := range c.IPs {
		if !hasAddress(node, ip, "InternalIP", "ExternalIP") {
			return refuse(h, kind, "ip-addresses", fmt.Sprintf("it asks for the address %s, which node %s does not have (its addresses: %s)", ip, asking, strings.Join(addresses(node, "InternalIP", "ExternalIP"), ", ")))
		}
		if o := otherNodeWith(nodes, node.Name, ip); o != "" {
			return refuse(h, kind, "ip-addresses", fmt.Sprintf("it asks for the address %s, which node %s also has", ip, o))
		}
	}
	return Verdict{Host: h, Kind: kind, Approve: true}
}

func sans(c CSR) []string {
	var s []string
	for _, d := range c.DNSNames {
		s = append(s, "DNS:"+d)
	}
	for _, ip := range c.IPs {
		s = append(s, "IP:"+ip)
	}
	for _, e := range c.Emails {
		s = append(s, "email:"+e)
	}
	for _, u := range c.URIs {
		s = append(s, "URI:"+u)
	}
	return s
}

// sameSet reports whether a and b hold the same strings, each once.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]bool{}
	for _, x := range a {
		if seen[x] || !slices.Contains(b, x) {
			return false
		}
		seen[x] = true
	}
	return true
}

func oneOfSets(a []string, sets [][]string) bool {
	return slices.ContainsFunc(sets, func(s []string) bool { return sameSet(a, s) })
}

func nodeAt(n *ClusterNode, ip string) bool {
	return slices.ContainsFunc(n.Addresses, func(a NodeAddress) bool { return a.Type == "InternalIP" && sameIP(a.Address, ip) })
}

// sameAddress compares a SAN with a node address: IPs by value, names
// case-insensitively without a trailing dot (as the approver does).
func sameAddress(san, addr string) bool {
	if a, b := net.ParseIP(san), net.ParseIP(addr); a != nil || b != nil {
		return a != nil && b != nil && a.Equal(b)
	}
	return strings.EqualFold(strings.TrimSuffix(san, "."), strings.TrimSuffix(addr, "."))
}

func hasAddress(n *ClusterNode, san string, types ...string) bool {
	return slices.ContainsFunc(n.Addresses, func(a NodeAddress) bool { return slices.Contains(types, a.Type) && sameAddress(san, a.Address) })
}

func addresses(n *ClusterNode, types ...string) []string {
	var s []string
	for _, a := range n.Addresses {
		if slices.Contains(types, a.Type) {
			s = append(s, a.Address)
		}
	}
	if len(s) == 0 {
		return []string{"none"}
	}
	return s
}

// otherNodeWith is the name of a node other than self that has san as its
// name or one of its addresses; "" when none.
func otherNodeWith(nodes []ClusterNode, self, san string) string {
	for i := range nodes {
		n := &nodes[i]
		if n.Name == self {
			continue
		}
		if sameAddress(san, n.Name) || slices.ContainsFunc(n.Addresses, func(a NodeAddress) bool { return sameAddress(san, a.Address) }) {
			return n.Name
		}
	}
	return ""
}

// ValidIP reports whether s is an IP address.
func ValidIP(s string) bool { return net.ParseIP(s) != nil }
