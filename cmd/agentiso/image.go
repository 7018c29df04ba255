package main

import (
	"context"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
)

type imageOptions struct {
	release    releaseFlags
	strict     bool
	baseISO    string
	baseISOSHA string
	mirror     string
	cacheDir   string
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
  2. the cache (--cache-dir, else $XDG_CACHE_HOME/agentiso/image_cache,
     ~/.cache/... or ~/Library/Caches/... on macOS), verified by sha256
  3. a download of the ISO named by the RHCOS stream of the release's
     payload, from its URL or from --os-image-mirror URL
  4. the release payload's machine-os-images image in the (mirror)
     registry, streamed into the cache and verified; tried before 3 when the
     release was read through a mirror
With --offline the payload is not read, so the release's RHCOS is unknown:
--base-iso is needed ('agentiso release info' where the registry is
reachable names the file and its sha256).

The release (--release-image, a tag or a digest) is read from its registry
through the install-config mirrors, with the pull secret and
additionalTrustBundle; the ISO pins it by digest and carries its exact
version and architecture. See 'agentiso release info'.

The ISO is written by streaming the base once with the few changed byte
ranges overlaid (no extraction): it costs about what copying the base costs.
The output is written to a temporary name and renamed at the end; an error
or Ctrl-C leaves no partial ISO.

Minimal ISO: when agent-config.yaml sets minimalISO: true, or the platform
is external (OCI included), the ISO is the minimal one (about a tenth of the
size: no root file system; IMAGE_TYPE_ISO=minimal-iso). It is streamed from
the base ISO's coreos/miniso.dat (as coreos-installer iso extract
minimal-iso builds it) with the config and kernel arguments in its own
embed areas, coreos.liveiso= dropped and coreos.live.rootfs_url= added.
With bootArtifactsBaseURL the root file system is written to
boot-artifacts/agent.<arch>-rootfs.img and the hosts download it from
<bootArtifactsBaseURL>/agent.<arch>-rootfs.img: serve that directory
there. Without it, hosts download the release stream's root file system,
which only matches the stream's own ISO; any other --base-iso needs
bootArtifactsBaseURL.

Writes into --dir:
  agent.<arch>.iso          the agent ISO (0600: it carries the pull secret)
  agent.<arch>.iso.sha256   its checksum (sha256sum format)
  boot-artifacts/agent.<arch>-rootfs.img(.sha256)
                            a minimal ISO's root file system, with
                            bootArtifactsBaseURL
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
      --release-image quay.io/openshift-release-dev/ocp-release@sha256:<digest> \
      --release-version 4.19.3

  # Fetch the release's RHCOS ISO from a local web server
  agentiso create image --dir mycluster --os-image-mirror http://10.0.0.1:8080/rhcos

  # Minimal ISO: agent-config.yaml has minimalISO: true and
  # bootArtifactsBaseURL: http://10.0.0.1:8080/boot
  agentiso create image --dir mycluster --base-iso rhcos-live.x86_64.iso
  # then serve mycluster/boot-artifacts/ as http://10.0.0.1:8080/boot/

  # Then boot every host from mycluster/agent.x86_64.iso and watch:
  agentiso wait-for install-complete --dir mycluster`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCreateImage(cmd.Context(), g, o)
		},
	}
	o.addFlags(c.Flags())
	return c
}

func runCreateImage(ctx context.Context, g *globals, o *imageOptions) error {
	s, err := persistImageTargets(ctx, g, o, agent.ImageTargets())
	if err != nil {
		return err
	}
	iso, err := asset.Fetch[*agent.AgentISO](ctx, s)
	if err != nil {
		return err
	}
	res := iso.Result()
	if iso.Minimal {
		g.log.Info("Generated minimal ISO at "+res.Path, "bytes", res.Size, "sha256", res.SHA256, "rootfs", iso.RootfsURL)
		if r := iso.RootfsResult(); r != nil {
			g.log.Info("RootFS file created in "+filepath.Dir(r.Path)+". Upload it at "+iso.RootfsURL, "file", r.Path, "bytes", r.Size, "sha256", r.SHA256, "method", r.Method, "sha256-from", r.HashSource())
		}
	} else {
		g.log.Info("Generated ISO at "+res.Path, "bytes", res.Size, "sha256", res.SHA256, "method", res.Method, "sha256-from", res.HashSource())
	}
	g.log.Warn("The ISO carries the pull secret and install credentials; it is readable only by you (0600). Keep it private.")
	return reportCreated(ctx, g, s, "create image")
}

// persistImageTargets resolves and writes the targets of a command that
// builds from the base ISO (agent.PersistImageTargets).
func persistImageTargets(ctx context.Context, g *globals, o *imageOptions, targets []asset.Asset) (*asset.Store, error) {
	s, err := openStore(g, o.release)
	if err != nil {
		return nil, err
	}
	return s, agent.PersistImageTargets(ctx, s, g.log, o.assetOptions(g), o.regenerate, targets)
}
