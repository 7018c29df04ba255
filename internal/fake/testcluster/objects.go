package testcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"

	"github.com/seed-a052040e/agentiso/pkg/kubeapi"
)

// The objects of an installed cluster, as its API server holds them.
var (
	ClusterVersion = kubeapi.Resource{Group: "config.openshift.io", Version: "v1", Resource: "clusterversions", Name: "version"}
	Proxy          = kubeapi.Resource{Group: "config.openshift.io", Version: "v1", Resource: "proxies", Name: "cluster"}
	Infrastructure = kubeapi.Resource{Group: "config.openshift.io", Version: "v1", Resource: "infrastructures", Name: "cluster"}
	PullSecret     = kubeapi.Resource{Version: "v1", Resource: "secrets", Namespace: "openshift-config", Name: "pull-secret"}
	UserCABundle   = kubeapi.Resource{Version: "v1", Resource: "configmaps", Namespace: "openshift-config", Name: "user-ca-bundle"}
	ClusterConfig  = kubeapi.Resource{Version: "v1", Resource: "configmaps", Namespace: "kube-system", Name: "cluster-config-v1"}
	BootImages     = kubeapi.Resource{Version: "v1", Resource: "configmaps", Namespace: "openshift-machine-config-operator", Name: "coreos-bootimages"}
	WorkerUserData = kubeapi.Resource{Version: "v1", Resource: "secrets", Namespace: "openshift-machine-api", Name: "worker-user-data-managed"}
	Nodes          = kubeapi.Resource{Version: "v1", Resource: "nodes"}
	DigestMirrors  = kubeapi.Resource{Group: "config.openshift.io", Version: "v1", Resource: "imagedigestmirrorsets"}
	LegacyMirrors  = kubeapi.Resource{Group: "config.openshift.io", Version: "v1", Resource: "imagecontentpolicies"}
	MachineConfigs = kubeapi.Resource{Group: "machineconfiguration.openshift.io", Version: "v1", Resource: "machineconfigs"}
	BareMetalHosts = kubeapi.Resource{Group: "metal3.io", Version: "v1alpha1", Resource: "baremetalhosts", Namespace: "openshift-machine-api"}
	CSRs           = kubeapi.Resource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}
)

// Named returns r naming one object.
func Named(r kubeapi.Resource, name string) kubeapi.Resource { r.Name = name; return r }

type obj = map[string]any

func dataURL(s string) string {
	return "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString([]byte(s))
}

func (c *Cluster) populate() error {
	o := c.opts
	api := fmt.Sprintf("api.%s.%s", o.ClusterName, o.BaseDomain)
	mcsPort, mcsCA := "22623", "-----BEGIN CERTIFICATE-----\nMCS\n-----END CERTIFICATE-----\n"
	if o.MCSListen != "" {
		mcsPort, mcsCA = c.mcsPort, c.mcsCA
	}
	put := func(r kubeapi.Resource, v any) error { return c.putLocked(r, v) }
	steps := []struct {
		r kubeapi.Resource
		v any
	}{
		{ClusterVersion, obj{"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion", "metadata": obj{"name": "version"},
			"spec": obj{"clusterID": o.ClusterID},
			// The fields openshift/api's schema requires of a cluster's status.
			"status": obj{"history": []obj{{"state": "Completed", "version": o.Version, "image": o.ReleaseImage, "verified": false,
				"startedTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T01:00:00Z"}},
				"desired": obj{"version": o.Version, "image": o.ReleaseImage}, "availableUpdates": nil, "observedGeneration": 1, "versionHash": "cVbU3rYCt9c="}}},
		{Proxy, obj{"metadata": obj{"name": "cluster"}, "spec": obj{"httpProxy": o.HTTPProxy, "httpsProxy": o.HTTPSProxy, "noProxy": o.NoProxy}}},
		{Infrastructure, obj{"metadata": obj{"name": "cluster"}, "spec": obj{"platformSpec": obj{"type": o.Platform}},
			"status": obj{"apiServerURL": "https://" + api + ":6443", "apiServerInternalURI": "https://api-int." + o.ClusterName + "." + o.BaseDomain + ":6443",
				"platform": o.Platform, "platformStatus": obj{"type": o.Platform}}}},
		{PullSecret, obj{"metadata": obj{"name": "pull-secret", "namespace": "openshift-config"}, "type": "kubernetes.io/dockerconfigjson",
			"data": obj{".dockerconfigjson": []byte(o.PullSecret)}}},
		{ClusterConfig, obj{"metadata": obj{"name": "cluster-config-v1", "namespace": "kube-system"}, "data": obj{"install-config": toYAML(c.installConfig())}}},
		{BootImages, obj{"metadata": obj{"name": "coreos-bootimages", "namespace": "openshift-machine-config-operator"}, "data": obj{"stream": c.stream()}}},
		{WorkerUserData, obj{"metadata": obj{"name": "worker-user-data-managed", "namespace": "openshift-machine-api"},
			"data": obj{"userData": []byte(fmt.Sprintf(`{"ignition":{"config":{"merge":[{"source":"https://%s:%s/config/worker"}]},"security":{"tls":{"certificateAuthorities":[{"source":%q}]}},"version":"3.2.0"}}`,
				c.APIIntName(), mcsPort, dataURL(mcsCA)))}}},
		{Named(MachineConfigs, "99-worker-ssh"), obj{"metadata": obj{"name": "99-worker-ssh"}, "spec": obj{"config": obj{"ignition": obj{"version": "3.2.0"},
			"passwd": obj{"users": []obj{{"name": "core", "sshAuthorizedKeys": []string{o.SSHKey}}}}}}}},
	}
	if o.TrustBundle != "" {
		steps = append(steps, struct {
			r kubeapi.Resource
			v any
		}{UserCABundle, obj{"metadata": obj{"name": "user-ca-bundle", "namespace": "openshift-config"}, "data": obj{"ca-bundle.crt": o.TrustBundle}}})
	}
	for _, s := range steps {
		if err := put(s.r, s.v); err != nil {
			return err
		}
	}
	if o.FIPS {
		if err := put(Named(MachineConfigs, "99-worker-fips"), obj{"metadata": obj{"name": "99-worker-fips"}, "spec": obj{"fips": true}}); err != nil {
			return err
		}
	}
	if o.Chrony != "" {
		if err := put(Named(MachineConfigs, "50-workers-chrony-configuration"), obj{"metadata": obj{"name": "50-workers-chrony-configuration"},
			"spec": obj{"config": obj{"ignition": obj{"version": "3.2.0"}, "storage": obj{"files": []obj{{"path": "/etc/chrony.conf", "mode": 420,
				"contents": obj{"source": dataURL(o.Chrony)}}}}}}}); err != nil {
			return err
		}
	}
	if len(o.DigestMirrors) > 0 {
		if err := put(Named(DigestMirrors, "image-digest-mirror"), obj{"metadata": obj{"name": "image-digest-mirror"}, "spec": obj{"imageDigestMirrors": mirrors(o.DigestMirrors)}}); err != nil {
			return err
		}
	}
	if len(o.LegacyMirrors) > 0 {
		if err := put(Named(LegacyMirrors, "legacy"), obj{"metadata": obj{"name": "legacy"}, "spec": obj{"repositoryDigestMirrors": mirrors(o.LegacyMirrors)}}); err != nil {
			return err
		}
	}
	for _, n := range o.Nodes {
		if err := put(Named(Nodes, n.Name), node(n)); err != nil {
			return err
		}
		if o.Platform == "BareMetal" {
			if err := put(Named(BareMetalHosts, n.Name), obj{"metadata": obj{"name": n.Name, "namespace": "openshift-machine-api"},
				"spec": obj{"bootMACAddress": n.MAC, "online": true}}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Cluster) putLocked(r kubeapi.Resource, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.objects[r.Path()] = b
	return nil
}

func mirrors(ms []Mirror) []obj {
	var out []obj
	for _, m := range ms {
		out = append(out, obj{"source": m.Source, "mirrors": m.Mirrors})
	}
	return out
}

// AddNode adds (or replaces) a node, as the cluster does when a new host
// joins.
func (c *Cluster) AddNode(n Node) error { return c.Put(Named(Nodes, n.Name), node(n)) }

func node(n Node) obj {
	ready := "False"
	if n.Ready {
		ready = "True"
	}
	gw, _ := json.Marshal(obj{"default": obj{"mode": "shared", "mac-address": n.MAC, "ip-addresses": []string{n.IP + "/24"}}})
	return obj{"metadata": obj{"name": n.Name, "labels": obj{"node-role.kubernetes.io/" + n.Role: "", "kubernetes.io/arch": n.Arch},
		"annotations": obj{"k8s.ovn.org/l3-gateway-config": string(gw)}},
		"status": obj{"addresses": []obj{{"type": "InternalIP", "address": n.IP}, {"type": "Hostname", "address": n.Name}},
			"nodeInfo":   obj{"architecture": n.Arch},
			"conditions": []obj{{"type": "Ready", "status": ready}}}}
}

func (c *Cluster) installConfig() obj {
	o := c.opts
	platform := map[string]string{"BareMetal": "baremetal", "None": "none", "VSphere": "vsphere", "External": "external", "Nutanix": "nutanix", "AWS": "aws"}[o.Platform]
	ic := obj{"apiVersion": "v1", "metadata": obj{"name": o.ClusterName}, "baseDomain": o.BaseDomain,
		"networking": obj{"machineNetwork": []obj{{"cidr": o.MachineNetwork}}},
		"platform":   obj{platform: obj{}}, "sshKey": o.SSHKey, "fips": o.FIPS}
	if len(o.DigestMirrors) > 0 {
		ic["imageDigestSources"] = mirrors(o.DigestMirrors)
	}
	if len(o.LegacyMirrors) > 0 {
		ic["imageContentSources"] = mirrors(o.LegacyMirrors)
	}
	return ic
}

func (c *Cluster) stream() string {
	o := c.opts
	archs := obj{}
	for _, n := range o.Nodes {
		a := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[n.Arch]
		if a == "" {
			a = n.Arch
		}
		archs[a] = obj{"artifacts": obj{"metal": obj{"release": "9.6.20250925-0", "formats": obj{"iso": obj{"disk": obj{"location": o.BootISO, "sha256": o.BootISOSHA256}}}}}}
	}
	b, _ := json.Marshal(obj{"stream": "rhcos-" + o.Version, "architectures": archs})
	return string(b)
}

// CSR is a CertificateSigningRequest as its requester creates it, with
// the user and groups the API server records for that requester.
type CSR struct {
	Name, Username, Signer string
	Groups, Usages         []string
	// Request is the PEM of the x509 certificate request.
	Request []byte
}

// AddCSR stores r as a pending CertificateSigningRequest.
func (c *Cluster) AddCSR(r CSR) error { return c.Put(Named(CSRs, r.Name), r.object()) }

// JSON is r as the API server returns it, pending.
func (r CSR) JSON() []byte {
	b, _ := json.Marshal(r.object())
	return b
}

func (r CSR) object() obj {
	spec := obj{"request": r.Request, "signerName": r.Signer, "username": r.Username}
	if len(r.Groups) > 0 {
		spec["groups"] = r.Groups
	}
	if len(r.Usages) > 0 {
		spec["usages"] = r.Usages
	}
	return obj{"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
		"metadata": obj{"name": r.Name}, "spec": spec, "status": obj{}}
}

// BootstrapperGroups are the groups the API server gives the machine-config
// operator's node-bootstrapper service account, whose bootstrap kubeconfig a
// joining node's kubelet uses for its client CSR.
func BootstrapperGroups() []string {
	return []string{"system:serviceaccounts:openshift-machine-config-operator", "system:serviceaccounts", "system:authenticated"}
}

// NodeGroups are the groups of a node's own credentials (system:node:<name>).
func NodeGroups() []string { return []string{"system:nodes", "system:authenticated"} }

// KubeletClientCSR is the client CSR a joining node's kubelet creates (ECDSA
// key, so no key encipherment): from the node-bootstrapper, for
// CN=system:node:<node>, O=system:nodes, no SANs.
func KubeletClientCSR(name, node string) (CSR, error) {
	req, err := NewCSRRequest(&x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}})
	return CSR{Name: name, Username: bootstrapperUser, Groups: BootstrapperGroups(), Signer: clientSigner,
		Usages: []string{"digital signature", "client auth"}, Request: req}, err
}

// KubeletServingCSR is the serving CSR of node's kubelet once it is a
// node: from system:node:<node>, for its host name and addresses.
func KubeletServingCSR(name, node string, dns []string, ips []string) (CSR, error) {
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}, DNSNames: dns}
	for _, ip := range ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	req, err := NewCSRRequest(tmpl)
	return CSR{Name: name, Username: "system:node:" + node, Groups: NodeGroups(), Signer: servingSigner,
		Usages: []string{"digital signature", "server auth"}, Request: req}, err
}

// NewCSRRequest signs tmpl with a new ECDSA P-256 key and returns its PEM.
func NewCSRRequest(tmpl *x509.CertificateRequest) ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), nil
}
