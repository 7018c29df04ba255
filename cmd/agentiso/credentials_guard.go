package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
)

// regenerateCredentialsFlag is the flag that asks for new credentials.
const regenerateCredentialsFlag = "regenerate-credentials"

// generatedCredentials are the assets whose secrets exist only in the state
// (and in an ISO built from it): regenerating any of them makes auth/ and a
// cluster installed from an earlier ISO disagree.
func generatedCredentials() []asset.Asset {
	return []asset.Asset{&agent.AuthConfig{}, &agent.SignerCAs{}, &agent.KubeadminPassword{}}
}

// guardCredentials never lets a run replace the credentials in auth/ behind
// the user's back. With regenerate, the credentials are dropped from the
// state and generated afresh. Otherwise, when auth/ holds credentials but
// the state that holds their keys is missing, unreadable or lacks them, it
// stops with what to do instead of generating new ones.
func guardCredentials(s *asset.Store, regenerate bool) error {
	if regenerate {
		var names []string
		for _, a := range generatedCredentials() {
			names = append(names, a.Name())
		}
		s.Forget(names...)
		return nil
	}
	var onDisk []string
	for _, f := range []string{assetdir.Kubeconfig, assetdir.KubeadminPassword} {
		if _, err := os.Lstat(filepath.Join(s.Dir(), filepath.FromSlash(f))); err == nil {
			onDisk = append(onDisk, f)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("check %s: %w", f, err)
		}
	}
	if len(onDisk) == 0 {
		return nil
	}
	var lost []string
	for _, a := range generatedCredentials() {
		if !s.InState(a.Name()) {
			lost = append(lost, a.Name())
		}
	}
	if len(lost) == 0 {
		return nil
	}
	why := s.StateProblem()
	if why == "" {
		why = "does not hold them (" + strings.Join(lost, ", ") + ")"
	} else {
		why = "is " + why
	}
	return fmt.Errorf(`auth/ holds the credentials of an earlier run (%s), but %s %s.
The keys, tokens and CAs an ISO is built with are kept only in that file; going on would
generate new ones, and a cluster installed from the earlier ISO could no longer be reached
with the new auth/ or watched with wait-for. Nothing was changed. Either:
  - restore %s from a backup and run again, or
  - start over with new credentials (boot every host from the new ISO): run again with
    --%s, or move auth/ out of %s`,
		strings.Join(onDisk, ", "), assetdir.State, why, filepath.Join(s.Dir(), assetdir.State),
		regenerateCredentialsFlag, s.Dir())
}
