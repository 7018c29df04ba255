package nodejoin

import (
	"errors"
	"fmt"
	"slices"

	"github.com/seed-a052040e/agentiso/pkg/releasepolicy"
)

// roleWhy says why a release before releasepolicy.Day2Since(role) does
// not take a day-2 host with that role (the facts are releasepolicy.Day2's).
var roleWhy = map[string]string{
	"master": "agentiso adds nodes to OpenShift 4.18 and later",
	"arbiter": "the assisted-service of 4.19 and 4.20 refuses the arbiter role for a host of an imported cluster, " +
		"which has no OpenShift version (openshift/assisted-service internal/bminventory/inventory.go updateHostRole); " +
		"4.21 skips that check for a cluster that is adding hosts",
}

// CheckRoles refuses a host whose role (hosts[].role) the cluster's
// release does not take for a host added at day 2 (releasepolicy.Day2:
// master from 4.18, arbiter from 4.21), naming the file and line, the host,
// the field, the cluster's release and the first release that takes it.
// Every refusal is reported. The notes say what the user should check:
// an arbiter for a cluster that has no arbiter node.
func CheckRoles(nc *NodesConfig, ci *ClusterInfo) ([]string, error) {
	var errs []error
	var notes []string
	var day2 *releasepolicy.Day2
	for i, h := range nc.Hosts {
		if h.Role == "" || h.Role == "worker" {
			continue
		}
		who := fmt.Sprintf("hosts[%d]", i)
		if h.Hostname != "" {
			who += " (" + h.Hostname + ")"
		}
		if day2 == nil {
			s, err := releasepolicy.For(ci.Version)
			var old *releasepolicy.UnsupportedError
			switch {
			case errors.As(err, &old):
				day2 = &releasepolicy.Day2{}
			case err != nil:
				return nil, fmt.Errorf("%s: cannot tell whether OpenShift %q (the cluster's ClusterVersion) takes %s with role %s: %w", NodesConfigFile, ci.Version, who, h.Role, err)
			default:
				day2 = &s.Day2
			}
		}
		if !day2.Allows(h.Role) {
			since, _ := releasepolicy.Day2Since(h.Role)
			errs = append(errs, fmt.Errorf("%s%s.role: %q: the cluster runs OpenShift %s, and a host added to a cluster may have role %s from OpenShift %s on (%s): upgrade the cluster to %s or later, or remove the role to add the host as a worker",
				nc.where(i, "role"), who, h.Role, ci.Version, h.Role, since, roleWhy[h.Role], since))
			continue
		}
		if h.Role == "arbiter" && !ci.hasRole("arbiter") {
			notes = append(notes, fmt.Sprintf("%s has role arbiter, but no node of the cluster is labelled node-role.kubernetes.io/arbiter: the host fetches its Ignition config from the machine-config server's arbiter pool, which a cluster installed with an arbiter has", who))
		}
	}
	return notes, errors.Join(errs...)
}

// where is "nodes-config.yaml:<line>: " for hosts[i].field, without the
// line when it is not known (the single-host flags).
func (nc *NodesConfig) where(i int, field string) string {
	if nc.lines == nil {
		return NodesConfigFile + ": "
	}
	return fmt.Sprintf("%s:%d: ", NodesConfigFile, nc.lines.Line(fmt.Sprintf("hosts[%d].%s", i, field)))
}

// hasRole is true when a node of the cluster has role (its
// node-role.kubernetes.io/<role> label).
func (ci *ClusterInfo) hasRole(role string) bool {
	for _, e := range ci.Existing {
		if slices.Contains(e.Roles, role) {
			return true
		}
	}
	return false
}
