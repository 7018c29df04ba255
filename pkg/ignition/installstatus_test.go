package ignition

import (
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const installStatusScript = "/usr/local/bin/install-status.sh"

// installStatusPending runs install-status.sh once on the rendezvous host of
// cfg with the services in active active (systemctl is-active answers for
// them) and returns the services its console line says it waits for, nil
// when there is no such line.
func installStatusPending(t *testing.T, cfg types.Config, active ...string) []string {
	t.Helper()
	h := newScriptHost(t, cfg)
	require.NoError(t, os.WriteFile(h.path("active"), []byte(strings.Join(active, "\n")+"\n"), 0o644))
	h.fake("systemctl", `[ "$1" = is-active ] || exit 3
unit=${*: -1}
grep -qxF "${unit%.service}" `+shellQuoted(h.path("active")))
	h.fake("agetty", "")
	// The script loops forever: the first sleep ends it.
	h.fake("sleep", `kill -TERM "${PPID}"`)
	_, _ = h.run(installStatusScript)
	issue := h.read("/etc/issue.d/70_agent-services.issue")
	if issue == "" {
		return nil
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(issue), "Waiting for services: ")
	require.True(t, ok, "the console line: %q", issue)
	return strings.Fields(rest)
}

// startedUnits returns the units systemd starts at boot on the rendezvous
// host of cfg, as systemd decides it: from multi-user.target, what each
// started unit wants or requires, and the enabled units installed
// (WantedBy=) into a started one; less those whose ConditionPathExists=
// fails on the ISO's files (with /etc/assisted/node0, which set-node-zero
// writes on that host). A unit whose condition fails still pulls in its
// dependencies.
func startedUnits(t *testing.T, cfg types.Config) map[string]bool {
	t.Helper()
	files := map[string]bool{"/etc/assisted/node0": true}
	for _, f := range cfg.Storage.Files {
		files[f.Path] = true
	}
	deps := map[string][]string{}
	conds := map[string][]string{}
	for _, u := range cfg.Systemd.Units {
		if u.Contents == nil {
			continue
		}
		enabled := u.Enabled != nil && *u.Enabled
		for _, l := range strings.Split(*u.Contents, "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
			if !ok {
				continue
			}
			switch k {
			case "Wants", "Requires":
				deps[u.Name] = append(deps[u.Name], strings.Fields(v)...)
			case "WantedBy", "RequiredBy":
				if enabled {
					for _, by := range strings.Fields(v) {
						deps[by] = append(deps[by], u.Name)
					}
				}
			case "ConditionPathExists":
				conds[u.Name] = append(conds[u.Name], v)
			}
		}
	}
	queued := map[string]bool{}
	todo := []string{"multi-user.target"}
	for len(todo) > 0 {
		u := todo[0]
		todo = todo[1:]
		if queued[u] {
			continue
		}
		queued[u] = true
		todo = append(todo, deps[u]...)
	}
	started := map[string]bool{}
	for u := range queued {
		ok := true
		for _, c := range conds[u] {
			p, neg := strings.CutPrefix(c, "!")
			if files[path.Clean(p)] == neg {
				ok = false
			}
		}
		started[u] = ok
	}
	return started
}

// install-status.sh waits on the console for the services of the ISO's
// workflow, and each of them runs there: an add-nodes ISO runs
// agent-import-cluster and agent-add-node, never the install's
// agent-register-cluster, agent-apply-host-overrides and
// start-cluster-installation, which it listed as pending for ever (the
// console said "Waiting for services: ..." after the node had joined).
// Upstream's list (openshift/installer data/data/agent/files/usr/local/bin/
// install-status.sh) is the same per workflow, plus agentiso's
// agent-apply-host-overrides in the install.
func TestInstallStatusWaitsForTheServicesOfTheWorkflow(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Input
		want []string
	}{
		{"install", snoInput(), []string{"assisted-service", "agent-register-cluster", "agent-register-infraenv", "apply-host-config", "agent-apply-host-overrides", "start-cluster-installation"}},
		{"add-nodes", addNodesInput(), []string{"assisted-service", "agent-import-cluster", "agent-register-infraenv", "apply-host-config", "agent-add-node"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := mustBuild(t, tc.in)
			pending := installStatusPending(t, cfg)
			assert.Equal(t, tc.want, pending, "nothing active yet: every service of the workflow is pending")
			started := startedUnits(t, cfg)
			for _, s := range pending {
				assert.True(t, started[s+".service"], "%s.service is waited for but never runs on this ISO's rendezvous host", s)
			}
			assert.Nil(t, installStatusPending(t, cfg, tc.want...), "every service active: nothing is pending")
			last := tc.want[len(tc.want)-1]
			assert.Equal(t, []string{last}, installStatusPending(t, cfg, slices.DeleteFunc(slices.Clone(tc.want), func(s string) bool { return s == last })...))
		})
	}
}
