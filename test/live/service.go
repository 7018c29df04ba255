package live

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// ServiceClient asks the real assisted-service on node zero, from the test
// machine, what the hosts and units did: the registered hosts, the cluster
// and its events. It reads the API through pkg/rendezvous's model, the one
// wait-for uses.
type ServiceClient struct {
	// BaseURL is http://<rendezvous IP>:8090.
	BaseURL string
	// UserToken is the userAuth JWT of the ISO (agentiso's state).
	UserToken string
	HTTP      *http.Client
}

func (c *ServiceClient) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.BaseURL, "/")+rendezvous.APIPath+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", c.UserToken)
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("assisted-service: GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("assisted-service: GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("assisted-service: GET %s: HTTP %d: %s", path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("assisted-service: GET %s: %w", path, err)
	}
	return nil
}

// RegisteredHost is a host as the service lists it, with its inventory
// (a JSON document in a string, as the API has it).
type RegisteredHost struct {
	rendezvous.Host
	Inventory string `json:"inventory,omitempty"`
}

// inventory is the part of the agent's inventory the lab checks.
type inventory struct {
	Interfaces []struct {
		Name       string `json:"name"`
		MacAddress string `json:"mac_address"`
	} `json:"interfaces"`
}

// Hosts returns the hosts of the one registered infra-env.
func (c *ServiceClient) Hosts(ctx context.Context) ([]RegisteredHost, error) {
	var ies []rendezvous.InfraEnv
	if err := c.get(ctx, "/infra-envs", &ies); err != nil {
		return nil, err
	}
	if len(ies) != 1 {
		return nil, fmt.Errorf("assisted-service has %d infra-envs, want 1 (agent-register-infraenv)", len(ies))
	}
	var hosts []RegisteredHost
	err := c.get(ctx, "/infra-envs/"+ies[0].ID+"/hosts", &hosts)
	return hosts, err
}

// CheckRegistered reports whether a host with one of macs in its inventory
// registered under hostname name, and what it found otherwise.
func CheckRegistered(hosts []RegisteredHost, name string, macs []string) error {
	var seen []string
	for _, h := range hosts {
		var inv inventory
		if h.Inventory != "" {
			if err := json.Unmarshal([]byte(h.Inventory), &inv); err != nil {
				return fmt.Errorf("host %s: inventory: %w", h.ID, err)
			}
		}
		var hostMACs []string
		for _, itf := range inv.Interfaces {
			hostMACs = append(hostMACs, strings.ToLower(itf.MacAddress))
		}
		seen = append(seen, fmt.Sprintf("%s(%s, %s, MACs %v)", h.ID, h.RequestedHostname, h.Status, hostMACs))
		if !slices.ContainsFunc(macs, func(m string) bool { return slices.Contains(hostMACs, strings.ToLower(m)) }) {
			continue
		}
		if h.RequestedHostname != name {
			return fmt.Errorf("the host with MAC %v registered as %q, want %q", macs, h.RequestedHostname, name)
		}
		return nil
	}
	return fmt.Errorf("no registered host has one of the MACs %v; registered: %v", macs, seen)
}

// Clusters lists the clusters (GET /v2/clusters).
func (c *ServiceClient) Clusters(ctx context.Context) ([]rendezvous.Cluster, error) {
	var out []rendezvous.Cluster
	err := c.get(ctx, "/clusters", &out)
	return out, err
}

// Events lists a cluster's events, hosts' included (GET /v2/events).
func (c *ServiceClient) Events(ctx context.Context, clusterID string) ([]rendezvous.Event, error) {
	var out []rendezvous.Event
	err := c.get(ctx, "/events?cluster_id="+clusterID, &out)
	return out, err
}

// InstallStatuses are the cluster statuses that follow an accepted install
// call (assisted-service's cluster state machine: install moves a ready
// cluster to preparing-for-installation).
var InstallStatuses = []string{"preparing-for-installation", "installing", "installing-pending-user-action", "finalizing", "installed"}

// InstallEvent returns the first event saying the cluster moved to a status
// of InstallStatuses.
func InstallEvent(events []rendezvous.Event) (rendezvous.Event, bool) {
	for _, e := range events {
		for _, s := range InstallStatuses {
			if strings.Contains(e.Message, "to "+s) && e.HostID == "" {
				return e, true
			}
		}
	}
	return rendezvous.Event{}, false
}

// FailedValidations summarises a host's validations_info: every validation
// whose status is failure or error, with its message.
func FailedValidations(validationsInfo string) ([]string, error) {
	if validationsInfo == "" {
		return nil, nil
	}
	var groups map[string][]struct {
		ID      string `json:"id"`
		Status  string `json:"status"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(validationsInfo), &groups); err != nil {
		return nil, fmt.Errorf("validations_info: %w", err)
	}
	var out []string
	for _, g := range groups {
		for _, v := range g {
			if v.Status == "failure" || v.Status == "error" {
				out = append(out, fmt.Sprintf("%s (%s): %s", v.ID, v.Status, v.Message))
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// Describe says what the service thinks of the cluster and each host:
// statuses and failed validations (for failure messages).
func (c *ServiceClient) Describe(ctx context.Context) string {
	var b strings.Builder
	cls, err := c.Clusters(ctx)
	if err != nil {
		return fmt.Sprintf("(the service did not answer: %v)", err)
	}
	for _, cl := range cls {
		fmt.Fprintf(&b, "cluster %s: %s (%s)\n", cl.ID, cl.Status, cl.StatusInfo)
	}
	hosts, err := c.Hosts(ctx)
	if err != nil {
		fmt.Fprintf(&b, "hosts: %v\n", err)
		return b.String()
	}
	for _, h := range hosts {
		fmt.Fprintf(&b, "host %s %q: %s (%s)\n", h.ID, h.RequestedHostname, h.Status, h.StatusInfo)
		failed, err := FailedValidations(h.ValidationsInfo)
		if err != nil {
			fmt.Fprintf(&b, "  %v\n", err)
		}
		for _, f := range failed {
			fmt.Fprintf(&b, "  failed validation %s\n", f)
		}
	}
	return b.String()
}
