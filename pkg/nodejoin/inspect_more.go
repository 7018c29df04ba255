package nodejoin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coreos/stream-metadata-go/stream"

	"github.com/seed-a052040e/agentiso/pkg/kubeapi"
)

// mirrorList reads a mirror-set list; field is the spec field holding the
// entries. When the list is forbidden it falls back to the install-config,
// as upstream's node-joiner does for an older oc's role.
func (in *inspector) mirrorList(ctx context.Context, r kubeapi.Resource, field string, fallback func(*installConfig) []Mirror) ([]Mirror, error) {
	var l struct {
		Items []struct {
			Spec map[string][]Mirror `json:"spec"`
		} `json:"items"`
	}
	err := in.api.Get(ctx, r, &l)
	switch {
	case kubeapi.IsForbidden(err):
		ic, icErr := in.installConfig(ctx)
		if icErr != nil {
			return nil, fmt.Errorf("cannot read %s (the mirrors), nor the install-config it falls back to: %w", r, icErr)
		}
		in.ci.Notes = append(in.ci.Notes, fmt.Sprintf("listing %s is forbidden: the mirrors are the install-config's", r.Resource))
		return fallback(ic), nil
	case kubeapi.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("cannot read %s (the mirrors): %w", r, err)
	}
	var out []Mirror
	for _, it := range l.Items {
		out = append(out, it.Spec[field]...)
	}
	return out, nil
}

func (in *inspector) digestMirrors(ctx context.Context) (err error) {
	in.ci.DigestMirrors, err = in.mirrorList(ctx, rDigestMirrors, "imageDigestMirrors", func(ic *installConfig) []Mirror { return ic.ImageDigestSources })
	return err
}

// legacyMirrors reads the mirrors of the older kinds: ImageContentPolicy
// (config.openshift.io, which upstream's node-joiner lists:
// openshift/installer pkg/asset/agent/joiner/clusterinfo.go
// retrieveImageContentPolicies, commit c1436495) and
// ImageContentSourcePolicy (operator.openshift.io/v1alpha1, what clusters
// upgraded from 4.12 and older hold, and what `oc adm node-image` reads
// beside the ImageDigestMirrorSets: openshift/oc
// pkg/cli/admin/nodeimage/basenodeimagecommand.go getIdmsFile, commit
// 0235cd5b). An entry whose source an ImageDigestMirrorSet already has is
// left out, with a note, as oc merges the two kinds
// (pkg/cli/admin/nodeimage/mirrorbuilder.go getIdmsContents, commit
// 3ad9afe5); identical entries are kept once.
func (in *inspector) legacyMirrors(ctx context.Context) error {
	fallback := func(ic *installConfig) []Mirror { return ic.ImageContentSources }
	icp, err := in.mirrorList(ctx, rLegacyMirrors, "repositoryDigestMirrors", fallback)
	if err != nil {
		return err
	}
	forbiddenBefore := len(in.ci.Notes)
	icsp, err := in.mirrorList(ctx, rICSP, "repositoryDigestMirrors", fallback)
	if err != nil {
		return err
	}
	if len(in.ci.Notes) > forbiddenBefore && kubeapiForbiddenBoth(in.ci.Notes) {
		icsp = nil // the same install-config fallback, already taken
	}
	digest := map[string]bool{}
	for _, m := range in.ci.DigestMirrors {
		digest[m.Source] = true
	}
	seen := map[string]bool{}
	in.ci.LegacyMirrors = nil
	for _, m := range append(icp, icsp...) {
		key := m.Source + "\x00" + strings.Join(m.Mirrors, "\x00")
		if seen[key] {
			continue
		}
		seen[key] = true
		if digest[m.Source] {
			in.ci.Notes = append(in.ci.Notes, fmt.Sprintf("the ImageContentSourcePolicy (or ImageContentPolicy) mirrors of %s (%s) are not used: an ImageDigestMirrorSet has that source, and its mirrors are used (as oc adm node-image merges them)",
				m.Source, strings.Join(m.Mirrors, ", ")))
			continue
		}
		in.ci.LegacyMirrors = append(in.ci.LegacyMirrors, m)
	}
	return nil
}

// kubeapiForbiddenBoth: both legacy lists were forbidden (two fallback
// notes), so both hold the install-config's imageContentSources.
func kubeapiForbiddenBoth(notes []string) bool {
	n := 0
	for _, s := range notes {
		if strings.HasPrefix(s, "listing imagecontentpolicies is forbidden") || strings.HasPrefix(s, "listing imagecontentsourcepolicies is forbidden") {
			n++
		}
	}
	return n == 2
}

// bootImage reads the cluster's own RHCOS stream, as upstream's
// node-joiner does (openshift/installer
// pkg/asset/agent/joiner/clusterinfo.go retrieveOsImage, commit c1436495):
// OS_IMAGES and the live ISO the new hosts boot are the ones it names for
// the new hosts' architecture. A denied read is an error naming the
// permission, as upstream's is fatal. A cluster without the configmap is a
// note, and the release payload's stream is used: upstream's node-joiner
// goes on with no stream there and fails when it writes OS_IMAGES
// (pkg/asset/agent/image/ignition.go getOSImagesInfo, commit ecc6a712).
func (in *inspector) bootImage(ctx context.Context) error {
	const cmName = "configmap openshift-machine-config-operator/coreos-bootimages"
	var cm struct {
		Data map[string]string `json:"data"`
	}
	err := in.get(ctx, rBootImages, "the cluster's RHCOS boot images", &cm)
	if kubeapi.IsNotFound(err) {
		in.ci.Notes = append(in.ci.Notes, "the cluster has no "+cmName+" (its RHCOS boot images): OS_IMAGES and the base ISO are taken from the release payload's RHCOS stream instead")
		return nil
	}
	if err != nil {
		return err
	}
	raw, ok := cm.Data["stream"]
	if !ok || strings.TrimSpace(raw) == "" {
		return fmt.Errorf("%s (the cluster's RHCOS boot images) has no data.stream: the cluster's machine-config operator writes it from the release; check that the operator is available (oc get clusteroperator machine-config)", cmName)
	}
	var st stream.Stream
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return fmt.Errorf("%s: data.stream is not CoreOS stream metadata: %w", cmName, err)
	}
	a, ok := st.Architectures[in.ci.Arch]
	if !ok {
		return fmt.Errorf("the cluster's RHCOS stream (coreos-bootimages) has no %s images: the new hosts must have the cluster's architecture", in.ci.Arch)
	}
	metal, ok := a.Artifacts["metal"]
	iso, ok2 := metal.Formats["iso"]
	if !ok || !ok2 || iso.Disk == nil || iso.Disk.Location == "" {
		return fmt.Errorf("the cluster's RHCOS stream (coreos-bootimages) has no metal ISO for %s", in.ci.Arch)
	}
	in.ci.BootStream = []byte(raw)
	in.ci.BootRelease, in.ci.BootISO, in.ci.BootISOSHA256 = metal.Release, iso.Disk.Location, iso.Disk.Sha256
	return nil
}

// ignitionConfig is the subset of an Ignition config read from the cluster.
type ignitionConfig struct {
	Ignition struct {
		Config struct {
			Merge []struct {
				Source string `json:"source"`
			} `json:"merge"`
		} `json:"config"`
		Security struct {
			TLS struct {
				CertificateAuthorities []struct {
					Source string `json:"source"`
				} `json:"certificateAuthorities"`
			} `json:"tls"`
		} `json:"security"`
	} `json:"ignition"`
	Passwd struct {
		Users []struct {
			Name              string   `json:"name"`
			SSHAuthorizedKeys []string `json:"sshAuthorizedKeys"`
		} `json:"users"`
	} `json:"passwd"`
	Storage struct {
		Files []struct {
			Path     string `json:"path"`
			Contents struct {
				Source string `json:"source"`
			} `json:"contents"`
		} `json:"files"`
	} `json:"storage"`
}

func (in *inspector) ignitionEndpoint(ctx context.Context) error {
	var s struct {
		Data map[string][]byte `json:"data"`
	}
	err := in.get(ctx, rWorkerUserData, "the secure machine-config server endpoint", &s)
	if kubeapi.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var ign ignitionConfig
	if err := json.Unmarshal(s.Data["userData"], &ign); err != nil {
		return fmt.Errorf("secret openshift-machine-api/worker-user-data-managed: userData: %w", err)
	}
	cas := ign.Ignition.Security.TLS.CertificateAuthorities
	if len(cas) == 0 || len(ign.Ignition.Config.Merge) == 0 {
		return nil
	}
	ca, err := decodeDataURL(cas[0].Source)
	if err != nil {
		return fmt.Errorf("secret openshift-machine-api/worker-user-data-managed: the CA: %w", err)
	}
	in.ci.IgnitionEndpoint, in.ci.IgnitionCA = ign.Ignition.Config.Merge[0].Source, string(ca)
	return nil
}

// machineConfig reads one machine config; found is false when it does not
// exist, forbidden true when the user may not read it.
func (in *inspector) machineConfig(ctx context.Context, name string, out any) (found, forbidden bool, err error) {
	err = in.api.Get(ctx, named(rMachineConfig, name), out)
	switch {
	case kubeapi.IsForbidden(err):
		return false, true, nil
	case kubeapi.IsNotFound(err):
		return false, false, nil
	case err != nil:
		return false, false, fmt.Errorf("cannot read machineconfig %s: %w", name, err)
	}
	return true, false, nil
}

func (in *inspector) sshKey(ctx context.Context) error {
	if in.o.SSHKey != "" {
		in.ci.SSHKey = in.o.SSHKey
		return nil
	}
	var mc struct {
		Spec struct {
			Config ignitionConfig `json:"config"`
		} `json:"spec"`
	}
	found, forbidden, err := in.machineConfig(ctx, "99-worker-ssh", &mc)
	if err != nil {
		return err
	}
	if forbidden {
		ic, err := in.installConfig(ctx)
		if err != nil {
			return fmt.Errorf("cannot read machineconfig 99-worker-ssh (the SSH key), nor the install-config it falls back to: %w", err)
		}
		in.ci.SSHKey = ic.SSHKey
		return nil
	}
	if !found {
		return nil
	}
	users := mc.Spec.Config.Passwd.Users
	if len(users) == 0 || len(users[0].SSHAuthorizedKeys) == 0 {
		return fmt.Errorf("machineconfig 99-worker-ssh holds no SSH key: give one with sshKey in nodes-config.yaml (or --ssh-key-path)")
	}
	in.ci.SSHKey = users[0].SSHAuthorizedKeys[0]
	return nil
}

func (in *inspector) fips(ctx context.Context) error {
	var mc struct {
		Spec struct {
			FIPS bool `json:"fips"`
		} `json:"spec"`
	}
	found, forbidden, err := in.machineConfig(ctx, "99-worker-fips", &mc)
	if err != nil {
		return err
	}
	if forbidden {
		ic, err := in.installConfig(ctx)
		if err != nil {
			return fmt.Errorf("cannot read machineconfig 99-worker-fips (FIPS mode), nor the install-config it falls back to: %w", err)
		}
		in.ci.FIPS = ic.FIPS
		return nil
	}
	in.ci.FIPS = found && mc.Spec.FIPS
	return nil
}

func (in *inspector) chrony(ctx context.Context) error {
	var mc struct {
		Spec struct {
			Config ignitionConfig `json:"config"`
		} `json:"spec"`
	}
	found, _, err := in.machineConfig(ctx, "50-workers-chrony-configuration", &mc)
	if err != nil || !found {
		return err
	}
	for _, f := range mc.Spec.Config.Storage.Files {
		if f.Path != "/etc/chrony.conf" {
			continue
		}
		b, err := decodeDataURL(f.Contents.Source)
		if err != nil {
			return fmt.Errorf("machineconfig 50-workers-chrony-configuration: /etc/chrony.conf: %w", err)
		}
		in.ci.Chrony = b
	}
	return nil
}

// machineNetworks takes the machine networks from the install-config when
// it can be read (agentiso's own check of the new hosts' addresses).
func (in *inspector) machineNetworks(ctx context.Context) error {
	ic, err := in.installConfig(ctx)
	if err != nil {
		in.ci.Notes = append(in.ci.Notes, "the install-config (kube-system/cluster-config-v1) cannot be read: the new hosts' addresses are not checked against the machine networks")
		return nil
	}
	for _, n := range ic.Networking.MachineNetwork {
		in.ci.MachineNetworks = append(in.ci.MachineNetworks, n.CIDR)
	}
	return nil
}

// bareMetalHosts adds the MACs of a bare-metal cluster's hosts to the
// conflict check; forbidden or absent, the check uses the nodes only.
func (in *inspector) bareMetalHosts(ctx context.Context) error {
	if in.ci.Platform != "BareMetal" {
		return nil
	}
	var l struct {
		Items []struct {
			Metadata meta `json:"metadata"`
			Spec     struct {
				BootMACAddress string `json:"bootMACAddress"`
			} `json:"spec"`
		} `json:"items"`
	}
	err := in.api.Get(ctx, rBareMetalHosts, &l)
	switch {
	case kubeapi.IsForbidden(err), kubeapi.IsNotFound(err):
		in.ci.Notes = append(in.ci.Notes, "the bare-metal hosts (metal3.io) cannot be listed: MAC conflicts are checked against the nodes only")
		return nil
	case err != nil:
		return fmt.Errorf("cannot list %s (MACs of the existing hosts): %w", rBareMetalHosts, err)
	}
	for _, h := range l.Items {
		if h.Spec.BootMACAddress != "" {
			in.ci.Existing = append(in.ci.Existing, ExistingNode{Name: h.Metadata.Name, Kind: "bare-metal host", MACs: []string{strings.ToLower(h.Spec.BootMACAddress)}})
		}
	}
	return nil
}
