package agent

import (
	"errors"
	"fmt"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
)

// CrossFileProblems runs the checks that need both install-config.yaml and
// agent-config.yaml (hosts against replicas, the rendezvousIP inside the
// machine network, VIPs that are host addresses) when at least one of them
// failed its own validation (reported), so that one run reports every
// problem (issue 22 item 9): the build graph runs them only on valid files.
// Both files must decode (their YAML and field names are right); nil when
// either is absent or does not, or when the checks find nothing new. A
// finding that rests on a field already reported invalid (a rendezvousIP
// "outside" a machine network that is itself wrong) is left out: it would
// be derived, not a second problem.
func CrossFileProblems(d asset.Dir, reported error) error {
	icRaw, err := d.ReadFile(assetdir.InstallConfig)
	if err != nil {
		return nil
	}
	acRaw, err := d.ReadFile(assetdir.AgentConfig)
	if err != nil {
		return nil
	}
	var ic manifests.InstallConfig
	icDec, err := manifests.DecodeStrict(assetdir.InstallConfig, icRaw, &ic)
	if err != nil {
		return nil
	}
	var ac manifests.AgentConfig
	acDec, err := manifests.DecodeStrict(assetdir.AgentConfig, acRaw, &ac)
	if err != nil {
		return nil
	}
	ic.SetDefaults()
	hosts, _ := manifests.ResolveHosts(&ic, &ac)
	lines := map[string]manifests.Lines{assetdir.InstallConfig: icDec.Lines, assetdir.AgentConfig: acDec.Lines}
	_, cerr := manifests.ValidateCluster(&ic, hosts, ac.RendezvousIP, lines)
	var found manifests.ErrorList
	if !errors.As(cerr, &found) {
		return nil
	}
	bad := reportedFields(reported)
	var out manifests.ErrorList
	for _, e := range found {
		if !rests(e, bad) {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return fmt.Errorf("invalid agent configuration (checked across both files): %w", out)
}

// reportedFields returns "file:path" of every field error in err.
func reportedFields(err error) map[string]bool {
	bad := map[string]bool{}
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if l, ok := err.(manifests.ErrorList); ok {
			for _, e := range l {
				bad[e.File+":"+e.Path] = true
			}
			return
		}
		if fe, ok := err.(*manifests.FieldError); ok {
			bad[fe.File+":"+fe.Path] = true
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		walk(errors.Unwrap(err))
	}
	walk(err)
	return bad
}

// crossInputs are the fields each cross-file finding rests on, by the
// finding's own field: a finding is dropped when one of them (or a field
// under it) was already reported invalid.
var crossInputs = map[string][]string{
	"rendezvousIP": {assetdir.AgentConfig + ":rendezvousIP", assetdir.InstallConfig + ":networking", assetdir.AgentConfig + ":hosts"},
}

// rests reports whether e is the same as, or rests on, a reported field.
func rests(e *manifests.FieldError, bad map[string]bool) bool {
	if bad[e.File+":"+e.Path] {
		return true
	}
	deps := crossInputs[e.Path]
	// Host and replica findings rest on the hosts and the pools.
	if strings.HasPrefix(e.Path, "hosts") || strings.HasPrefix(e.Path, "platform.baremetal.hosts") {
		deps = []string{assetdir.AgentConfig + ":hosts", assetdir.InstallConfig + ":platform.baremetal.hosts",
			assetdir.InstallConfig + ":controlPlane", assetdir.InstallConfig + ":compute", assetdir.InstallConfig + ":arbiter"}
	}
	for k := range bad {
		for _, d := range deps {
			if k == d || strings.HasPrefix(k, d+".") || strings.HasPrefix(k, d+"[") {
				return true
			}
		}
	}
	return false
}
