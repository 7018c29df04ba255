// Package rendezvous watches an agent-based install: it polls the assisted-service REST API on the rendezvous host, then the new cluster's Kubernetes API, and reports progress.
package rendezvous

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// Cluster statuses (assisted-service cluster.status enum).
const (
	ClusterInsufficient          = "insufficient"
	ClusterReady                 = "ready"
	ClusterError                 = "error"
	ClusterPreparing             = "preparing-for-installation"
	ClusterPendingForInput       = "pending-for-input"
	ClusterInstalling            = "installing"
	ClusterFinalizing            = "finalizing"
	ClusterInstalled             = "installed"
	ClusterAddingHosts           = "adding-hosts"
	ClusterCancelled             = "cancelled"
	ClusterInstallingPendingUser = "installing-pending-user-action"
	ClusterUnmonitored           = "unmonitored"
)

// HostInstallingPendingUser is the host status that needs user action.
const HostInstallingPendingUser = "installing-pending-user-action"

// HostInstalled is a host's status once the cluster is installed.
const HostInstalled = "installed"

// InfraEnv is the subset of the infra-env model wait-for uses.
type InfraEnv struct {
	Kind      string    `json:"kind"`
	ID        string    `json:"id"`
	Href      string    `json:"href"`
	Name      string    `json:"name"`
	Type      string    `json:"type"`
	ClusterID string    `json:"cluster_id,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	CreatedAt time.Time `json:"created_at"`
}

// Cluster is the subset of the cluster model wait-for uses.
type Cluster struct {
	Kind            string     `json:"kind"`
	ID              string     `json:"id"`
	Href            string     `json:"href"`
	Name            string     `json:"name,omitempty"`
	BaseDNSDomain   string     `json:"base_dns_domain,omitempty"`
	Status          string     `json:"status"`
	StatusInfo      string     `json:"status_info"`
	StatusUpdatedAt *time.Time `json:"status_updated_at,omitempty"`
	ValidationsInfo string     `json:"validations_info,omitempty"`
	Progress        *Progress  `json:"progress,omitempty"`
	Hosts           []Host     `json:"hosts,omitempty"`
	TotalHostCount  int64      `json:"total_host_count,omitempty"`
	ReadyHostCount  int64      `json:"ready_host_count,omitempty"`
	// ServerTime is the Date of the answer: the server's clock when it
	// answered (zero when it sent none). Not part of the JSON model.
	ServerTime time.Time `json:"-"`
}

// Progress is the cluster progress object.
type Progress struct {
	TotalPercentage int64  `json:"total_percentage"`
	FinalizingStage string `json:"finalizing_stage,omitempty"`
}

// Host is the subset of the host model wait-for uses.
type Host struct {
	Kind              string        `json:"kind"`
	ID                string        `json:"id"`
	Href              string        `json:"href"`
	InfraEnvID        string        `json:"infra_env_id,omitempty"`
	ClusterID         string        `json:"cluster_id,omitempty"`
	RequestedHostname string        `json:"requested_hostname,omitempty"`
	Role              string        `json:"role,omitempty"`
	SuggestedRole     string        `json:"suggested_role,omitempty"`
	Bootstrap         bool          `json:"bootstrap,omitempty"`
	Status            string        `json:"status"`
	StatusInfo        string        `json:"status_info"`
	StatusUpdatedAt   *time.Time    `json:"status_updated_at,omitempty"`
	ValidationsInfo   string        `json:"validations_info,omitempty"`
	Progress          *HostProgress `json:"progress,omitempty"`
}

// HostProgress is host.progress.
type HostProgress struct {
	InstallationPercentage int64      `json:"installation_percentage"`
	CurrentStage           string     `json:"current_stage,omitempty"`
	ProgressInfo           string     `json:"progress_info,omitempty"`
	StageStartedAt         *time.Time `json:"stage_started_at,omitempty"`
	StageUpdatedAt         *time.Time `json:"stage_updated_at,omitempty"`
}

// Name is the host's requested_hostname, or its id when unset.
func (h *Host) Name() string {
	if h.RequestedHostname != "" {
		return h.RequestedHostname
	}
	return h.ID
}

// Event is the event model.
type Event struct {
	Name       string    `json:"name,omitempty"`
	ClusterID  string    `json:"cluster_id,omitempty"`
	HostID     string    `json:"host_id,omitempty"`
	InfraEnvID string    `json:"infra_env_id,omitempty"`
	Severity   string    `json:"severity"`
	Category   string    `json:"category,omitempty"`
	Message    string    `json:"message"`
	EventTime  time.Time `json:"event_time"`
	Props      string    `json:"props,omitempty"`
}

// InfraError is the 401/403 error body.
type InfraError struct {
	Code    int32  `json:"code"`
	Message string `json:"message"`
}

// APIError is the error body of other failures.
type APIError struct {
	Kind   string `json:"kind"`
	ID     int32  `json:"id"`
	Href   string `json:"href"`
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

// Validation statuses.
const (
	ValidationSuccess         = "success"
	ValidationSuccessSuppress = "success-suppress-output"
	ValidationFailure         = "failure"
	ValidationPending         = "pending"
	ValidationError           = "error"
	ValidationDisabled        = "disabled"
)

// Validation is one entry of validations_info.
type Validation struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Message  string `json:"message"`
	Category string `json:"-"`
}

// ParseValidations decodes a validations_info string (JSON of
// map[category][]validation) into a list sorted by category then id.
// An empty string gives an empty list.
func ParseValidations(info string) ([]Validation, error) {
	if info == "" {
		return nil, nil
	}
	// It is JSON inside a JSON string: the answer's own bound on objects
	// did not count it.
	if err := checkObjects([]byte(info)); err != nil {
		return nil, fmt.Errorf("unable to verify validations: %w", err)
	}
	var m map[string][]Validation
	if err := json.Unmarshal([]byte(info), &m); err != nil {
		return nil, fmt.Errorf("unable to verify validations: %w", err)
	}
	// validations_info is JSON inside a JSON string: its texts were not
	// covered when the answer itself was sanitised.
	sanitizeDecoded(&m)
	var out []Validation
	for cat, vs := range m {
		for _, v := range vs {
			v.Category = cat
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Category != out[j].Category {
			return out[i].Category < out[j].Category
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// EncodeValidations is the inverse of ParseValidations.
func EncodeValidations(vs []Validation) (string, error) {
	if len(vs) == 0 {
		return "", nil
	}
	m := map[string][]Validation{}
	for _, v := range vs {
		m[v.Category] = append(m[v.Category], v)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encode validations: %w", err)
	}
	return string(b), nil
}
