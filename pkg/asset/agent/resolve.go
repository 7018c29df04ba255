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
	if err := requireSomeInput(s); err != nil {
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
// input at all.
func requireSomeInput(s *asset.Store) error {
	for _, f := range []string{assetdir.InstallConfig, assetdir.AgentConfig} {
		if _, err := s.ReadFile(f); err == nil {
			return nil
		}
	}
	if m, _ := s.Glob(assetdir.ClusterManifestsDir + "/*.yaml"); len(m) > 0 {
		return nil
	}
	return fmt.Errorf("no inputs in %s: add install-config.yaml and agent-config.yaml "+
		"(start from 'agentiso create agent-config-template'), or ZTP manifests under %s/", s.Dir(), assetdir.ClusterManifestsDir)
}
