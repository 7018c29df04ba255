package manifests

import (
	"net/netip"

	"github.com/seed-a052040e/agentiso/pkg/arch"
)

// SetDefaults fills what upstream defaults when the user leaves it out.
func (ic *InstallConfig) SetDefaults() {
	if ic.ControlPlane == nil {
		ic.ControlPlane = &MachinePool{Name: "master"}
	}
	if ic.ControlPlane.Replicas == nil {
		ic.ControlPlane.Replicas = ptr(int64(3))
	}
	if ic.ControlPlane.Architecture == "" {
		ic.ControlPlane.Architecture, _ = arch.Go(arch.Default)
	}
	if ic.ControlPlane.Hyperthreading == "" {
		ic.ControlPlane.Hyperthreading = "Enabled"
	}
	if ic.Compute == nil {
		ic.Compute = []MachinePool{{Name: "worker"}}
	}
	for i := range ic.Compute {
		c := &ic.Compute[i]
		if c.Replicas == nil {
			c.Replicas = ptr(int64(3))
		}
		if c.Architecture == "" {
			c.Architecture = ic.ControlPlane.Architecture
		}
		if c.Hyperthreading == "" {
			c.Hyperthreading = "Enabled"
		}
	}
	if ic.Networking == nil {
		ic.Networking = &Networking{}
	}
	n := ic.Networking
	if n.NetworkType == "" {
		n.NetworkType = "OVNKubernetes"
	}
	if len(n.MachineNetwork) == 0 {
		n.MachineNetwork = []MachineNetwork{{CIDR: "10.0.0.0/16"}}
	}
	if len(n.ClusterNetwork) == 0 {
		n.ClusterNetwork = []ClusterNetwork{{CIDR: "10.128.0.0/14", HostPrefix: 23}}
	}
	if len(n.ServiceNetwork) == 0 {
		n.ServiceNetwork = []string{"172.30.0.0/16"}
	}
	if ic.AdditionalTrustBundlePolicy == "" {
		ic.AdditionalTrustBundlePolicy = "Proxyonly"
	}
	if bm := ic.Platform.BareMetal; bm != nil {
		if len(bm.APIVIPs) == 0 && bm.APIVIP != "" {
			bm.APIVIPs = []string{bm.APIVIP}
		}
		if len(bm.IngressVIPs) == 0 && bm.IngressVIP != "" {
			bm.IngressVIPs = []string{bm.IngressVIP}
		}
		bm.APIVIP, bm.IngressVIP = "", ""
		setProvisioningDefaults(bm, n.MachineNetwork)
	}
	if vs := ic.Platform.VSphere; vs != nil {
		if len(vs.APIVIPs) == 0 && vs.APIVIP != "" {
			vs.APIVIPs = []string{vs.APIVIP}
		}
		if len(vs.IngressVIPs) == 0 && vs.IngressVIP != "" {
			vs.IngressVIPs = []string{vs.IngressVIP}
		}
		vs.APIVIP, vs.IngressVIP = "", ""
		setVSphereDefaults(vs)
	}
}

func ptr[T any](v T) *T { return &v }

// setProvisioningDefaults fills the bare-metal provisioning network
// settings the user left out, as upstream does: the network is Managed;
// unless it is Disabled the CIDR defaults to 172.22.0.0/24 and the cluster
// provisioning IP to its third address; a Managed network gets the DHCP
// range from the tenth address to the last but one. With a Disabled
// network the CIDR is the machine network holding clusterProvisioningIP.
func setProvisioningDefaults(bm *BareMetalPlatform, machine []MachineNetwork) {
	if bm.ProvisioningNetwork == "" {
		bm.ProvisioningNetwork = defaultProvisioningNetwork
	}
	if bm.ProvisioningNetwork == "Disabled" {
		if ip, err := netip.ParseAddr(bm.ClusterProvisioningIP); err == nil && bm.ProvisioningNetworkCIDR == "" {
			for _, m := range machine {
				if pfx, err := netip.ParsePrefix(m.CIDR); err == nil && pfx.Contains(ip) {
					bm.ProvisioningNetworkCIDR = pfx.Masked().String()
				}
			}
		}
		return
	}
	if bm.ProvisioningNetworkCIDR == "" {
		bm.ProvisioningNetworkCIDR = defaultProvisioningCIDR
	}
	pfx, err := netip.ParsePrefix(bm.ProvisioningNetworkCIDR)
	if err != nil {
		return // validation reports it
	}
	pfx = pfx.Masked()
	if bm.ClusterProvisioningIP == "" {
		if ip, ok := nthAddr(pfx, clusterProvisioningHost); ok {
			bm.ClusterProvisioningIP = ip.String()
		}
	}
	if bm.ProvisioningNetwork == "Managed" && bm.ProvisioningDHCPRange == "" {
		first, ok1 := nthAddr(pfx, dhcpFirstHost)
		last := lastAddr(pfx).Prev()
		if ok1 && last.IsValid() && first.Compare(last) <= 0 {
			bm.ProvisioningDHCPRange = first.String() + "," + last.String()
		}
	}
}

// nthAddr is the n-th address of pfx (0 is the network address).
func nthAddr(pfx netip.Prefix, n int) (netip.Addr, bool) {
	a := pfx.Addr()
	for range n {
		a = a.Next()
		if !a.IsValid() || !pfx.Contains(a) {
			return netip.Addr{}, false
		}
	}
	return a, true
}

// lastAddr is the last address of pfx (the IPv4 broadcast address).
func lastAddr(pfx netip.Prefix) netip.Addr {
	b := pfx.Addr().AsSlice()
	for i := range b {
		bit := i * 8
		switch {
		case bit >= pfx.Bits():
			b[i] = 0xff
		case bit+8 > pfx.Bits():
			b[i] |= 0xff >> (pfx.Bits() - bit)
		}
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// setVSphereDefaults converts the deprecated single-vCenter fields into a
// vCenter and one generated failure domain, as upstream does, and gives
// every failure domain without a resource pool its cluster's root pool,
// <computeCluster>/Resources, as upstream.
func setVSphereDefaults(vs *VSpherePlatform) {
	if vs.VCenter != "" && len(vs.VCenters) == 0 {
		dc := vs.Datacenter
		vs.VCenters = []VCenter{{Server: vs.VCenter, Port: 443, User: vs.Username, Password: vs.Password, Datacenters: []string{dc}}}
		if len(vs.FailureDomains) == 0 {
			vs.FailureDomains = []VSphereFailureDomain{{
				Name: "generated-failure-domain", Region: "generated-region", Zone: "generated-zone", Server: vs.VCenter,
				Topology: VSphereTopology{
					Datacenter:     dc,
					ComputeCluster: inventoryPath(vs.Cluster, dc, "host"),
					Datastore:      inventoryPath(vs.DefaultDatastore, dc, "datastore"),
					Folder:         inventoryPath(vs.Folder, dc, "vm"),
					ResourcePool:   vs.ResourcePool,
					Networks:       []string{vs.Network},
				},
			}}
		}
	}
	for i := range vs.FailureDomains {
		t := &vs.FailureDomains[i].Topology
		if t.ResourcePool == "" && t.ComputeCluster != "" {
			t.ResourcePool = t.ComputeCluster + "/Resources"
		}
	}
}
