package nodejoin

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// NewHost is what the conflict checks know of a host to be added.
type NewHost struct {
	// Name is the host name from nodes-config.yaml, "" when the host gets
	// one from DHCP or reverse DNS.
	Name string
	MACs []string
	// IPs are the static addresses of its network config.
	IPs []string
	// Role is its role, "" for a worker.
	Role string
}

// CheckHosts refuses new hosts whose name, MAC or IP already belongs to a
// node (or to a bare-metal host) of the cluster, or whose static address
// lies outside every machine network the cluster has. Every problem is
// reported, one per line.
func CheckHosts(ci *ClusterInfo, hosts []NewHost) error {
	var errs []error
	label := func(i int, h NewHost) string {
		if h.Name != "" {
			return fmt.Sprintf("hosts[%d] (%s)", i, h.Name)
		}
		return fmt.Sprintf("hosts[%d]", i)
	}
	for i, h := range hosts {
		for _, e := range ci.Existing {
			if h.Name != "" && e.Kind == "node" && strings.EqualFold(h.Name, e.Name) {
				errs = append(errs, fmt.Errorf("%s: hostname %q is already the name of a node of the cluster: choose another name, or delete the node first (oc delete node %s)", label(i, h), h.Name, e.Name))
			}
			for _, m := range h.MACs {
				for _, em := range e.MACs {
					if strings.EqualFold(m, em) {
						errs = append(errs, fmt.Errorf("%s: MAC address %s already belongs to %s %s of the cluster", label(i, h), m, e.Kind, e.Name))
					}
				}
			}
			for _, ip := range h.IPs {
				for _, eip := range e.IPs {
					if sameIP(ip, eip) {
						errs = append(errs, fmt.Errorf("%s: IP address %s is already the address of %s %s of the cluster", label(i, h), ip, e.Kind, e.Name))
					}
				}
			}
		}
		for _, ip := range h.IPs {
			if !inAny(ip, ci.MachineNetworks) {
				errs = append(errs, fmt.Errorf("%s: IP address %s is outside the cluster's machine networks (%s)", label(i, h), ip, strings.Join(ci.MachineNetworks, ", ")))
			}
		}
	}
	return errors.Join(errs...)
}

func sameIP(a, b string) bool {
	x, y := net.ParseIP(a), net.ParseIP(b)
	return x != nil && y != nil && x.Equal(y)
}

// inAny is true when ip is in one of cidrs, or when there are none to check.
func inAny(ip string, cidrs []string) bool {
	if len(cidrs) == 0 {
		return true
	}
	x := net.ParseIP(ip)
	for _, c := range cidrs {
		if _, n, err := net.ParseCIDR(c); err == nil && x != nil && n.Contains(x) {
			return true
		}
	}
	return false
}
