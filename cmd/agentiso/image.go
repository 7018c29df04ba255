package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/baseiso"
	"github.com/seed-a052040e/agentiso/pkg/fsutil"
	"github.com/seed-a052040e/agentiso/pkg/ignition"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
)

type imageOptions struct {
	release    releaseFlags
	strict     bool
	baseISO    string
	baseISOSHA string
	mirror     string
	regenerate bool
	resetBase  bool
}

func newCreateImageCmd(g *globals) *cobra.Command {
	o := &imageOptions{}
	c := &cobra.Command{
		Use:   "image",
		Short: "Build the bootable agent ISO",
		Long: `Validate the inputs in --dir and build the agent ISO: the RHCOS live ISO with
the agent Ignition config embedded and the agent kernel arguments appended.
Boot every host from it.

The base RHCOS live ISO is found, in order:
  1. --base-iso PATH|URL (or AGENTISO_BASE_ISO): a local file is used in
     place; a URL is downloaded into the cache
  2. the cache ($XDG_CACHE_HOME/agentiso/image_cache, ~/.cache/... or
     ~/Library/Caches/... on macOS), verified by sha256
  3. a download of the ISO named by the release's RHCOS stream (the
     payload's own; the stream pinned in this build for the pinned default
     release or --offline), from its URL or from --os-image-mirror URL
  4. the release payload's machine-os-images image in the (mirror)
     registry, streamed into the cache and verified; tried before 3 when the
     release was read through a mirror
With --offline and no cached ISO, the error names the exact file to fetch,
its sha256 and where to put it.

The release (--release-image, a tag or a digest) is read from its registry
through the install-config mirrors, with the pull secret and
additionalTrustBundle; the ISO pins it by digest and carries its exact
version and architecture. See 'agentiso release info'.

The ISO is written by streaming the base once with the few changed byte
ranges overlaid (no extraction): it costs about what copying the base costs.
The output is written to a temporary name and renamed at the end; an error
or Ctrl-C leaves no partial ISO.

Writes into --dir:
  agent.<arch>.iso          the agent ISO (0600: it carries the pull secret)
  agent.<arch>.iso.sha256   its checksum (sha256sum format)
  rendezvousIP              the node-zero address
  auth/kubeconfig           admin kubeconfig of the new cluster (0600)
  auth/kubeadmin-password   console password (0600)

Keys, tokens, CAs and the password are generated once and kept in
.agentiso/state.json; re-runs reuse them. If that file is lost while auth/
still exists, the command stops rather than replace them: restore it, or
pass --regenerate-credentials. A failed run leaves the previous ISO, its
checksum, auth/ and the state as they were.`,
		Example: `  # Air-gapped: point at an RHCOS live ISO you copied in
  agentiso create image --dir mycluster --base-iso ~/isos/rhcos-live.x86_64.iso

  # Air-gapped with a mirror registry: the mirrored release by digest; the
  # base ISO comes from the payload's machine-os-images in the mirror
  agentiso create image --dir mycluster \
      --release-image quay.io/openshift-release-dev/ocp-release@sha256:<digest>

  # No registry at all: a release by digest with its version, and an ISO
  agentiso create image --dir mycluster --offline --base-iso rhcos-live.x86_64.iso \
      --release-image quay.io/openshift-release-dev/ocp-release@sha256:<digest> --release-version 4.19.3

  # Fetch the release's RHCOS ISO from a local web server
  agentiso create image --dir mycluster --os-image-mirror http://10.0.0.1:8080/rhcos

  # Then boot every host from mycluster/agent.x86_64.iso and watch:
  agentiso wait-for install-complete --dir mycluster`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.release.fromEnv()
			if o.baseISO == "" {
				o.baseISO = os.Getenv(baseiso.EnvBaseISO)
			}
			return runCreateImage(cmd.Context(), g, o)
		},
	}
	f := c.Flags()
	addReleaseFlags(f, &o.release, false)
	f.StringVar(&o.baseISO, "base-iso", "", "RHCOS live ISO to build from: a local path or an http(s) URL (env "+baseiso.EnvBaseISO+")")
	f.StringVar(&o.baseISOSHA, "base-iso-sha256", "", "expected sha256 of --base-iso (verified when given)")
	f.StringVar(&o.mirror, "os-image-mirror", "", "base URL of a local web server serving the release's RHCOS live ISO by its file name")
	f.BoolVar(&o.regenerate, regenerateCredentialsFlag, false, "generate new keys, tokens, CAs and password, replacing those in auth/ and the state (hosts must then boot the new ISO)")
	f.BoolVar(&o.release.offline, "offline", false, "never download the base ISO nor contact a registry: fail with instructions when the ISO is not in the cache; the release must be the pinned default, or by digest with --release-version")
	f.BoolVar(&o.strict, "strict", false, "fail (instead of warning) when the base ISO's RHCOS version differs from the release's RHCOS stream")
	f.BoolVar(&o.resetBase, "reset-base-iso", false, "accept a --base-iso that was already customised (e.g. an agent ISO): drop its embedded Ignition config and appended kernel arguments first")
	return c
}

func runCreateImage(ctx context.Context, g *globals, o *imageOptions) error {
	s, err := openStore(g, o.release)
	if err != nil {
		return err
	}
	if err := guardCredentials(s, o.regenerate); err != nil {
		return err
	}
	creds := []asset.Writable{&agent.RendezvousIP{}, &agent.AdminKubeconfig{}, &agent.KubeadminPassword{}}
	all := []asset.Asset{&agent.AgentIgnition{}, &agent.KernelArgs{}}
	for _, t := range creds {
		all = append(all, t)
	}
	if err := fetchAll(ctx, g, s, all...); err != nil {
		return fmt.Errorf("cannot generate ISO image due to configuration errors: %w", err)
	}
	ign, err := asset.Fetch[*agent.AgentIgnition](ctx, s)
	if err != nil {
		return err
	}
	ka, err := asset.Fetch[*agent.KernelArgs](ctx, s)
	if err != nil {
		return err
	}
	kargs := strings.Fields(ka.Args)
	rip, err := asset.Fetch[*agent.RendezvousIP](ctx, s)
	if err != nil {
		return err
	}
	g.log.Info("The rendezvous host IP (node0 IP) is " + rip.IP)
	g.log.Info("Ignition: " + ign.Size.String())

	arch := ign.Input.Arch
	tty := isTerminal(g.errOut)
	base, err := resolveBaseISO(ctx, g, s, o, arch, tty)
	if err != nil {
		return err
	}

	out := filepath.Join(g.dir, "agent."+arch+".iso")
	// A run killed while writing (SIGKILL, power loss) leaves its temporary
	// ISO behind: remove those of dead runs, never a live run's (locked).
	removed, err := fsutil.RemoveStaleTemps(g.dir, filepath.Base(out))
	for _, p := range removed {
		g.log.Info("removed the temporary file of an earlier run that did not finish", "file", p)
	}
	if err != nil {
		g.log.Warn(err.Error())
	}
	staged, err := writeAgentISO(ctx, g, base.Path, out, arch, ign, kargs, tty, o.resetBase)
	if err != nil {
		return err
	}
	defer staged.Discard()
	// The new ISO is complete but not yet in place. The credentials and the
	// state that match it are saved first and the ISO renamed over the
	// previous one last; a failure at any step puts back what was saved,
	// so the previous ISO, its checksum, auth/ and the state stay together.
	commit := func() error {
		if err := staged.Commit(); err != nil {
			return fmt.Errorf("write %s: %w", out, err)
		}
		return nil
	}
	if err := s.PersistThen(commit, creds...); err != nil {
		return err
	}
	res := staged.Result
	g.log.Info("Generated ISO at "+res.Path, "bytes", res.Size, "sha256", res.SHA256, "method", res.Method)
	g.log.Warn("The ISO carries the pull secret and install credentials; it is readable only by you (0600). Keep it private.")
	return nil
}

// writeAgentISO embeds ignition and kargs into the base ISO and stages the
// result next to out (see isoeditor.WriteStaged).
func writeAgentISO(ctx context.Context, g *globals, basePath, out, arch string, ign *agent.AgentIgnition, kargs []string, tty, resetBase bool) (*isoeditor.Staged, error) {
	iso, f, err := isoeditor.OpenFile(basePath)
	if err != nil {
		return nil, fmt.Errorf("base ISO: %w", err)
	}
	defer f.Close()
	if err := iso.CheckArch(arch); err != nil {
		return nil, fmt.Errorf("base ISO %s: %w; the cluster's architecture comes from controlPlane.architecture (InfraEnv spec.cpuArchitecture)", basePath, err)
	}
	// An ISO that already carries a config and kernel arguments (an agent
	// ISO built earlier) would get the agent arguments twice.
	custom, err := iso.Customized()
	if err != nil {
		return nil, fmt.Errorf("base ISO %s: %w", basePath, err)
	}
	if len(custom) > 0 {
		if !resetBase {
			return nil, fmt.Errorf("base ISO %s is already customised (%s): it looks like an agent ISO built earlier. "+
				"Use the plain RHCOS live ISO, or pass --reset-base-iso to drop its customisation first", basePath, strings.Join(custom, "; "))
		}
		g.log.Info("Resetting the customised base ISO: its embedded Ignition config and appended kernel arguments are dropped", "base", basePath)
	}
	img, err := iso.Edit(isoeditor.Edit{Ignition: ign.Config, AppendKargs: kargs, ResetKargs: resetBase})
	if err != nil {
		var tooLarge *isoeditor.IgnitionTooLargeError
		if errors.As(err, &tooLarge) {
			return nil, ignitionTooLarge(tooLarge, ign.Size)
		}
		return nil, fmt.Errorf("base ISO %s: %w", basePath, err)
	}
	prog := newWriteProgress(g.errOut, tty, filepath.Base(out))
	st, err := isoeditor.WriteStaged(ctx, out, img, isoeditor.WriteOptions{Perm: 0o600, Progress: prog.update})
	prog.done(err == nil)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", out, err)
	}
	return st, nil
}

// ignitionTooLarge explains an oversize config with its biggest parts.
func ignitionTooLarge(e *isoeditor.IgnitionTooLargeError, size ignition.Size) error {
	var b strings.Builder
	fmt.Fprintf(&b, "the compressed Ignition config is %d bytes but the ISO's embed area (%s) holds only %d bytes.\nLargest parts of the config (encoded bytes):",
		e.Size, e.File, e.Limit)
	for _, p := range size.Top {
		fmt.Fprintf(&b, "\n  %8d  %s", p.Bytes, p.Path)
	}
	b.WriteString("\nShrink or remove the largest extra manifests (openshift/*.yaml) or CA bundles, and run again.")
	return errors.New(b.String())
}
