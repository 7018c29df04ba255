// Package rendezvoussim is an in-process simulator of an agent-based install: a fake assisted-service REST API and a fake Kubernetes API over TLS, driven by a scenario timeline.
package rendezvoussim

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

//go:embed scenarios/*.yaml
var builtin embed.FS

// Duration is a time.Duration written as "90s", "5m" or a number of seconds.
type Duration time.Duration

// UnmarshalJSON accepts a Go duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var n float64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("duration: want a string like \"90s\" or a number of seconds, got %s", b)
	}
	*d = Duration(n * float64(time.Second))
	return nil
}

// MarshalJSON writes the Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Scenario is a timeline of states of the simulated install.
type Scenario struct {
	Name        string  `json:"name"`
	Description string  `json:"description,omitempty"`
	Expect      *Expect `json:"expect,omitempty"`
	Steps       []Step  `json:"steps"`
}

// Expect documents how wait-for should end on this scenario; tests check it.
type Expect struct {
	// Command is bootstrap-complete or install-complete.
	Command  string `json:"command"`
	ExitCode int    `json:"exitCode"`
	// Timeout, when set, is passed as wait-for --timeout.
	Timeout  Duration `json:"timeout,omitempty"`
	Contains []string `json:"contains,omitempty"`
}

// Step changes the state at scenario time At. Unset fields keep their value.
type Step struct {
	At Duration `json:"at"`
	// REST and Kube switch the listeners: "up" or "down" (connection refused).
	REST string `json:"rest,omitempty"`
	Kube string `json:"kube,omitempty"`
	// Cluster registers the cluster and infra-env on first use, then patches it.
	Cluster *ClusterPatch `json:"cluster,omitempty"`
	// Hosts are matched by name; new names register new hosts.
	Hosts  []HostPatch `json:"hosts,omitempty"`
	Events []EventSpec `json:"events,omitempty"`
	// Bootstrap sets data.status of kube-system/bootstrap ("complete").
	Bootstrap      string               `json:"bootstrap,omitempty"`
	ClusterVersion *ClusterVersionPatch `json:"clusterVersion,omitempty"`
	// ConsoleAdmitted creates the admitted console route.
	ConsoleAdmitted *bool          `json:"consoleAdmitted,omitempty"`
	Operators       []OperatorSpec `json:"operators,omitempty"`
}

// ValidationSpec is one validation; merged by ID.
type ValidationSpec struct {
	Category string `json:"category"`
	ID       string `json:"id"`
	Status   string `json:"status"`
	Message  string `json:"message"`
}

// ClusterPatch changes the cluster.
type ClusterPatch struct {
	Status      string           `json:"status,omitempty"`
	StatusInfo  string           `json:"statusInfo,omitempty"`
	Validations []ValidationSpec `json:"validations,omitempty"`
}

// HostPatch changes one host.
type HostPatch struct {
	Name         string           `json:"name"`
	Role         string           `json:"role,omitempty"`
	Bootstrap    *bool            `json:"bootstrap,omitempty"`
	Status       string           `json:"status,omitempty"`
	StatusInfo   string           `json:"statusInfo,omitempty"`
	Stage        string           `json:"stage,omitempty"`
	ProgressInfo string           `json:"progressInfo,omitempty"`
	Percent      *int64           `json:"percent,omitempty"`
	Validations  []ValidationSpec `json:"validations,omitempty"`
}

// EventSpec adds an event. ClusterLevel events have no infra_env_id, so a
// query by infra_env_id does not return them (as in assisted-service).
type EventSpec struct {
	Severity     string `json:"severity,omitempty"`
	Message      string `json:"message"`
	ClusterLevel bool   `json:"clusterLevel,omitempty"`
}

// ClusterVersionPatch sets the ClusterVersion conditions.
type ClusterVersionPatch struct {
	Available   bool   `json:"available"`
	Progressing bool   `json:"progressing"`
	Failing     bool   `json:"failing"`
	Message     string `json:"message,omitempty"`
}

// OperatorSpec sets one ClusterOperator's conditions.
type OperatorSpec struct {
	Name        string `json:"name"`
	Available   bool   `json:"available"`
	Progressing bool   `json:"progressing"`
	Degraded    bool   `json:"degraded"`
	Reason      string `json:"reason,omitempty"`
	Message     string `json:"message,omitempty"`
}

func validUpDown(s string) bool { return s == "" || s == "up" || s == "down" }

func validSeverity(s string) bool {
	return slices.Contains([]string{"", "info", "warning", "error", "critical"}, s)
}

func validValidationStatus(s string) bool {
	return slices.Contains([]string{"success", "success-suppress-output", "failure", "pending", "error", "disabled"}, s)
}

// ParseScenario reads and checks a scenario (YAML or JSON). name is used in errors.
func ParseScenario(name string, data []byte) (*Scenario, error) {
	sc := &Scenario{}
	if err := yaml.UnmarshalStrict(data, sc); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	if len(sc.Steps) == 0 {
		return nil, fmt.Errorf("scenario %s: steps: at least one step is required", name)
	}
	var last Duration
	for i, st := range sc.Steps {
		where := fmt.Sprintf("scenario %s: steps[%d]", name, i)
		if st.At < last {
			return nil, fmt.Errorf("%s: at %s is before the previous step (%s); keep steps in time order", where, time.Duration(st.At), time.Duration(last))
		}
		last = st.At
		if !validUpDown(st.REST) || !validUpDown(st.Kube) {
			return nil, fmt.Errorf("%s: rest/kube must be \"up\" or \"down\"", where)
		}
		for _, h := range st.Hosts {
			if h.Name == "" {
				return nil, fmt.Errorf("%s: hosts[].name is required", where)
			}
			if err := checkValidations(h.Validations); err != nil {
				return nil, fmt.Errorf("%s: host %s: %w", where, h.Name, err)
			}
		}
		if st.Cluster != nil {
			if err := checkValidations(st.Cluster.Validations); err != nil {
				return nil, fmt.Errorf("%s: cluster: %w", where, err)
			}
		}
		for _, e := range st.Events {
			if !validSeverity(e.Severity) {
				return nil, fmt.Errorf("%s: event severity %q: use info, warning, error or critical", where, e.Severity)
			}
		}
	}
	if sc.Expect != nil && sc.Expect.Command != "bootstrap-complete" && sc.Expect.Command != "install-complete" {
		return nil, fmt.Errorf("scenario %s: expect.command must be bootstrap-complete or install-complete", name)
	}
	return sc, nil
}

func checkValidations(vs []ValidationSpec) error {
	for _, v := range vs {
		if v.ID == "" || v.Category == "" {
			return errors.New("validations[]: id and category are required")
		}
		if !validValidationStatus(v.Status) {
			return fmt.Errorf("validation %s: status %q is not one of success, success-suppress-output, failure, pending, error, disabled", v.ID, v.Status)
		}
	}
	return nil
}

// Builtin returns a shipped scenario by name (e.g. "sno-happy").
func Builtin(name string) (*Scenario, error) {
	data, err := builtin.ReadFile("scenarios/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no built-in scenario %q (have: %s)", name, strings.Join(BuiltinNames(), ", "))
	}
	return ParseScenario(name, data)
}

// BuiltinNames lists the shipped scenarios.
func BuiltinNames() []string {
	ents, _ := fs.ReadDir(builtin, "scenarios")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), path.Ext(e.Name())))
	}
	sort.Strings(out)
	return out
}

// Load reads a scenario file, or a built-in scenario when arg names one and no such file exists.
func Load(arg string) (*Scenario, error) {
	data, err := os.ReadFile(arg)
	if err == nil {
		return ParseScenario(arg, data)
	}
	if errors.Is(err, fs.ErrNotExist) && !strings.ContainsAny(arg, "/.") {
		return Builtin(arg)
	}
	return nil, fmt.Errorf("scenario file: %w", err)
}
