package live

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous/sim"
)

// ServiceClient asks the (stand-in) assisted-service on node zero, from the
// test machine, what the hosts and units did: the registered hosts and
// every request the service received.
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

// Hosts returns the hosts of the one registered infra-env.
func (c *ServiceClient) Hosts(ctx context.Context) ([]sim.LiveHost, error) {
	var ies []sim.LiveInfraEnv
	if err := c.get(ctx, "/infra-envs", &ies); err != nil {
		return nil, err
	}
	if len(ies) != 1 {
		return nil, fmt.Errorf("assisted-service has %d infra-envs, want 1 (agent-register-infraenv)", len(ies))
	}
	var hosts []sim.LiveHost
	err := c.get(ctx, "/infra-envs/"+ies[0].ID+"/hosts", &hosts)
	return hosts, err
}

// Requests returns every request the stand-in service received (its lab
// endpoint).
func (c *ServiceClient) Requests(ctx context.Context) ([]sim.Request, error) {
	var reqs []sim.Request
	err := c.get(ctx, strings.TrimPrefix(sim.LabRequestsPath, rendezvous.APIPath), &reqs)
	return reqs, err
}

var installPathRE = regexp.MustCompile(`^` + regexp.QuoteMeta(rendezvous.APIPath) + `/clusters/[0-9a-fA-F-]{36}/actions/install$`)

// InstallCalls returns the POST .../clusters/{id}/actions/install requests
// made with a user token (start-cluster-installation.sh's call).
func InstallCalls(reqs []sim.Request) []sim.Request {
	var out []sim.Request
	for _, r := range reqs {
		if r.Method == http.MethodPost && installPathRE.MatchString(r.Path) && slices.Contains(r.AuthHeaders, "Authorization") {
			out = append(out, r)
		}
	}
	return out
}

// CheckRegistered reports whether a host with one of macs in its inventory
// registered under hostname name, and what it found otherwise.
func CheckRegistered(hosts []sim.LiveHost, name string, macs []string) error {
	var seen []string
	for _, h := range hosts {
		var inv sim.Inventory
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
