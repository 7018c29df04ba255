package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
)

// generatedCredentials are the assets whose secrets exist only in the state
// (and in an ISO built from it): regenerating any of them makes auth/ and a
// cluster installed from an earlier ISO disagree.
func generatedCredentials() []asset.Asset {
	return []asset.Asset{&AuthConfig{}, &SignerCAs{}, &KubeadminPassword{}}
}

// GuardCredentials never lets a run replace the credentials in auth/
// behind the user's back. With regenerate (--regenerate-credentials), the
// credentials are dropped from the state and generated afresh. Otherwise,
// when auth/ holds credentials but the state that holds their keys is
// missing, unreadable or lacks them, it stops with what to do instead of
// generating new ones.
func GuardCredentials(s *asset.Store, regenerate bool) error {
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
    --regenerate-credentials, or move auth/ out of %s`,
		strings.Join(onDisk, ", "), assetdir.State, why, filepath.Join(s.Dir(), assetdir.State), s.Dir())
}

// ReportIgnition logs the rendezvous IP and how much of the ISO's embed
// area the Ignition config takes.
func ReportIgnition(ctx context.Context, s *asset.Store, log *slog.Logger) error {
	rip, err := asset.Fetch[*RendezvousIP](ctx, s)
	if err != nil {
		return err
	}
	log.Info(rip.Line())
	ign, err := asset.Fetch[*AgentIgnition](ctx, s)
	if err != nil {
		return err
	}
	log.Info("Ignition: " + ign.Size.String())
	return nil
}

// holdBaseISO makes opts keep the cached base ISO locked (shared) until
// the returned function is called, once the outputs are written from it:
// no other run can swap it after it was verified.
func holdBaseISO(opts *ImageOptions) (release func()) {
	var held []func()
	opts.HoldBaseISO = func(release func()) { held = append(held, release) }
	return func() {
		for _, r := range held {
			r()
		}
	}
}

// PersistImageTargets resolves and writes the targets of a command that
// builds from the base ISO (create image, create pxe-files), with opts
// (the base ISO and how progress is shown) and the credentials guarded
// (GuardCredentials): every configuration error is reported before a base
// ISO is looked for, let alone downloaded; then the targets are written as
// one unit.
func PersistImageTargets(ctx context.Context, s *asset.Store, log *slog.Logger, opts *ImageOptions, regenerate bool, targets []asset.Asset) error {
	if err := GuardCredentials(s, regenerate); err != nil {
		return err
	}
	defer holdBaseISO(opts)()
	if err := s.Provide(opts); err != nil {
		return err
	}
	if err := Resolve(ctx, s, log, IgnitionTargets()...); err != nil {
		if manifests.IsConfigError(err) {
			return fmt.Errorf("cannot generate ISO image due to configuration errors: %w", err)
		}
		return err
	}
	// A base ISO that cannot be found without --base-iso is known now,
	// before the lines of a build that could not finish.
	rel, err := asset.Fetch[*ReleasePayload](ctx, s)
	if err != nil {
		return err
	}
	if err := baseISOKnown(rel, opts); err != nil {
		return fmt.Errorf("cannot get the base ISO: %w", err)
	}
	if err := ReportIgnition(ctx, s, log); err != nil {
		return err
	}
	for _, t := range targets {
		if _, err := s.Fetch(ctx, t); err != nil {
			return err
		}
	}
	return s.Persist(ctx, targets...)
}
