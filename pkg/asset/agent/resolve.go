package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

// Resolve fetches targets from s as every create command does, logging on
// log what the user must see on the way:
//   - the user's input files do not depend on each other, so they are all
//     checked first and every problem in every file (and across them) is
//     reported in one run;
//   - an asset directory with no input at all gets a first step instead;
//   - once the targets resolved, one line names the OpenShift release they
//     install and where it was given;
//   - the warnings collected on the way are logged, failure or not.
//
// Interrupted (ctx done), it returns the interruption rather than whatever
// the checks found.
func Resolve(ctx context.Context, s *asset.Store, log *slog.Logger, targets ...asset.Asset) (err error) {
	defer func() {
		if cerr := ctx.Err(); cerr != nil {
			err = cerr
		}
	}()
	var inputErrs []error
	for _, in := range []asset.Asset{&InstallConfig{}, &AgentConfig{}} {
		if _, err := s.Fetch(ctx, in); err != nil {
			inputErrs = append(inputErrs, err)
		}
	}
	if len(inputErrs) > 0 {
		if err := CrossFileProblems(s, errors.Join(inputErrs...)); err != nil {
			inputErrs = append(inputErrs, err)
		}
		logWarnings(s, log)
		return errors.Join(inputErrs...)
	}
	if err := requireSomeInput(s, targets); err != nil {
		return err
	}
	var firstErr error
	for _, a := range targets {
		if _, err := s.Fetch(ctx, a); err != nil {
			firstErr = err
			break
		}
	}
	if firstErr == nil {
		if r := DescribeRelease(ctx, s); r != nil {
			log.Info(r.String())
		}
	}
	logWarnings(s, log)
	return firstErr
}

func logWarnings(s *asset.Store, log *slog.Logger) {
	for _, w := range s.Warnings() {
		log.Warn(w)
	}
}

// requireSomeInput gives a clear first step when the directory holds no
// input the targets can be built from: for the generic ISO (which takes no
// install-config.yaml), its ZTP manifests; for the others, install-config.yaml
// when only agent-config.yaml is there (else the first missing thing would be
// named as a generated manifest, cluster-manifests/pull-secret.yaml).
func requireSomeInput(s *asset.Store, targets []asset.Asset) error {
	has := func(f string) bool {
		_, err := s.ReadFile(f)
		return err == nil
	}
	ztp, _ := s.Glob(assetdir.ClusterManifestsDir + "/*.yaml")
	for _, t := range targets {
		switch t.(type) {
		case *UnconfiguredIgnition, *UnconfiguredISO:
			if len(ztp) > 0 || has(assetdir.InstallConfig) || has(assetdir.AgentConfig) {
				return nil
			}
			return fmt.Errorf("no inputs in %s: the generic ISO is built from %s/infraenv.yaml and %s/pull-secret.yaml (with %s/cluster-image-set.yaml or --release-image); "+
				"it takes no install-config.yaml: the cluster comes later, on the config image (docs/unconfigured.md)",
				s.Dir(), assetdir.ClusterManifestsDir, assetdir.ClusterManifestsDir, assetdir.ClusterManifestsDir)
		}
	}
	switch {
	case has(assetdir.InstallConfig), len(ztp) > 0:
		return nil
	case has(assetdir.AgentConfig):
		return fmt.Errorf("install-config.yaml is missing in %s: agent-config.yaml says how the hosts boot, install-config.yaml which cluster they install; "+
			"add it (the README's worked example has one), or give the cluster as ZTP manifests under %s/", s.Dir(), assetdir.ClusterManifestsDir)
	}
	return fmt.Errorf("no inputs in %s: add install-config.yaml and agent-config.yaml "+
		"(start from 'agentiso create agent-config-template'), or ZTP manifests under %s/", s.Dir(), assetdir.ClusterManifestsDir)
}
