package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/pkg/manifests"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
	"github.com/seed-a052040e/agentiso/test/live/assisted"
)

// clientConfig is the stand-in agent-installer-client's view of its
// container: the mounted directories and the environment.
type clientConfig struct {
	ManifestsDir, ExtraManifestsDir, HostConfigDir, RunDir string
	BaseURL, UserToken, InfraEnvID, ImageType              string
	HTTP                                                   *http.Client
	// Retry is the first wait of configure's back-off (1 s), doubled while below 30 s.
	Retry time.Duration
	Out   io.Writer
}

func clientConfigFromEnv(getenv func(string) string, out io.Writer) (*clientConfig, error) {
	c := &clientConfig{
		ManifestsDir: "/manifests", ExtraManifestsDir: "/extra-manifests",
		HostConfigDir: "/etc/assisted/hostconfig", RunDir: "/var/run/agent-installer",
		BaseURL: getenv("SERVICE_BASE_URL"), UserToken: getenv("USER_AUTH_TOKEN"),
		InfraEnvID: getenv("INFRA_ENV_ID"), ImageType: getenv("IMAGE_TYPE_ISO"),
		HTTP: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}}, Retry: time.Second, Out: out,
	}
	if c.BaseURL == "" {
		return nil, errors.New("SERVICE_BASE_URL is not set")
	}
	if c.UserToken == "" {
		return nil, errors.New("USER_AUTH_TOKEN is not set")
	}
	return c, nil
}

func runClient(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("usage: agent-installer-client registerCluster|registerInfraEnv|configure")
	}
	c, err := clientConfigFromEnv(getenv, stdout)
	if err != nil {
		return err
	}
	switch args[0] {
	case "registerCluster":
		_, err = c.registerCluster(ctx)
	case "registerInfraEnv":
		_, err = c.registerInfraEnv(ctx)
	case "configure":
		err = c.configure(ctx)
	default:
		err = fmt.Errorf("unknown command %q (the stand-in knows registerCluster, registerInfraEnv, configure)", args[0])
	}
	return err
}

// call sends one request with the user token and decodes a 2xx answer into out.
func (c *clientConfig) call(ctx context.Context, method, path string, body, out any, want ...int) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	u := strings.TrimSuffix(c.BaseURL, "/") + rendezvous.APIPath + path
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", c.UserToken)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if !slices.Contains(want, resp.StatusCode) {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, strings.TrimSpace(string(data)))
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
	}
	return nil
}

// decodeManifest strictly decodes one ZTP manifest file of dir.
func decodeManifest(dir, file string, out any) error {
	p := filepath.Join(dir, file)
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if _, err := manifests.DecodeStrict(p, data, out); err != nil {
		return err
	}
	return nil
}

func readPullSecret(dir string) (string, error) {
	var s manifests.Secret
	if err := decodeManifest(dir, "pull-secret.yaml", &s); err != nil {
		return "", err
	}
	manifests.NormalizeSecret(&s)
	ps := s.PullSecretJSON()
	if ps == "" {
		return "", fmt.Errorf("%s: stringData has no .dockerconfigjson", filepath.Join(dir, "pull-secret.yaml"))
	}
	return ps, nil
}

var versionRE = regexp.MustCompile(`^\d+\.\d+(\.\d+)?([-+.][0-9A-Za-z.-]+)?$`)

// releaseVersion takes the version from the ClusterImageSet name
// (openshift-<version>). The real client asks the release image itself
// (oc adm release info); the stand-in has no oc.
func releaseVersion(cis *manifests.ClusterImageSet) (string, error) {
	v := strings.TrimPrefix(cis.Metadata.Name, "openshift-")
	if !versionRE.MatchString(v) {
		return "", fmt.Errorf("cluster-image-set.yaml: metadata.name %q is not openshift-<version>; the stand-in client takes the version from it", cis.Metadata.Name)
	}
	return v, nil
}

func goArchToRelease(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return goarch
}

// clusterParams builds cluster-create-params from the ZTP manifests.
func clusterParams(cd *manifests.ClusterDeployment, aci *manifests.AgentClusterInstall, cis *manifests.ClusterImageSet, pullSecret, arch string) (*assisted.ClusterCreateParams, error) {
	version, err := releaseVersion(cis)
	if err != nil {
		return nil, err
	}
	cp := int64(aci.Spec.ProvisionRequirements.ControlPlaneAgents)
	p := &assisted.ClusterCreateParams{
		Name: cd.Spec.ClusterName, BaseDNSDomain: cd.Spec.BaseDomain, OpenshiftVersion: version,
		OCPReleaseImage: cis.Spec.ReleaseImage, CPUArchitecture: arch, PullSecret: pullSecret,
		SSHPublicKey: strings.TrimSpace(aci.Spec.SSHPublicKey), ControlPlaneCount: cp, HighAvailabilityMode: "Full",
		NetworkType: aci.Spec.Networking.NetworkType, UserManagedNetworking: aci.Spec.Networking.UserManagedNetworking,
	}
	if cp == 1 && aci.Spec.ProvisionRequirements.WorkerAgents == 0 {
		p.HighAvailabilityMode = "None"
	}
	if t := aci.Spec.PlatformType; t != "" {
		p.Platform = &assisted.Platform{Type: strings.ToLower(t)}
	}
	apiVIPs := aci.Spec.APIVIPs
	if len(apiVIPs) == 0 && aci.Spec.APIVIP != "" {
		apiVIPs = []string{aci.Spec.APIVIP}
	}
	for _, v := range apiVIPs {
		p.APIVIPs = append(p.APIVIPs, assisted.VIP{IP: v})
	}
	ingressVIPs := aci.Spec.IngressVIPs
	if len(ingressVIPs) == 0 && aci.Spec.IngressVIP != "" {
		ingressVIPs = []string{aci.Spec.IngressVIP}
	}
	for _, v := range ingressVIPs {
		p.IngressVIPs = append(p.IngressVIPs, assisted.VIP{IP: v})
	}
	for _, n := range aci.Spec.Networking.MachineNetwork {
		p.MachineNetworks = append(p.MachineNetworks, assisted.Network{CIDR: n.CIDR})
	}
	for _, n := range aci.Spec.Networking.ClusterNetwork {
		p.ClusterNetworks = append(p.ClusterNetworks, assisted.ClusterNetwork{CIDR: n.CIDR, HostPrefix: int64(n.HostPrefix)})
	}
	for _, n := range aci.Spec.Networking.ServiceNetwork {
		p.ServiceNetworks = append(p.ServiceNetworks, assisted.Network{CIDR: n})
	}
	if px := aci.Spec.Proxy; px != nil {
		p.HTTPProxy, p.HTTPSProxy, p.NoProxy = px.HTTPProxy, px.HTTPSProxy, px.NoProxy
	}
	return p, nil
}

// registerCluster registers the cluster of the ZTP manifests unless one is
// registered already, applies the install-config overrides and uploads the
// extra manifests. It returns the cluster id.
func (c *clientConfig) registerCluster(ctx context.Context) (string, error) {
	var existing []assisted.LiveCluster
	if err := c.call(ctx, http.MethodGet, "/clusters", nil, &existing, 200); err != nil {
		return "", err
	}
	var id string
	switch len(existing) {
	case 0:
		var cd manifests.ClusterDeployment
		var aci manifests.AgentClusterInstall
		var cis manifests.ClusterImageSet
		for _, f := range []struct {
			name string
			out  any
		}{{"cluster-deployment.yaml", &cd}, {"agent-cluster-install.yaml", &aci}, {"cluster-image-set.yaml", &cis}} {
			if err := decodeManifest(c.ManifestsDir, f.name, f.out); err != nil {
				return "", err
			}
		}
		ps, err := readPullSecret(c.ManifestsDir)
		if err != nil {
			return "", err
		}
		p, err := clusterParams(&cd, &aci, &cis, ps, goArchToRelease(runtime.GOARCH))
		if err != nil {
			return "", err
		}
		var created assisted.LiveCluster
		if err := c.call(ctx, http.MethodPost, "/clusters", p, &created, 201); err != nil {
			return "", err
		}
		id = created.ID
		fmt.Fprintf(c.Out, "Registered cluster %s with id %s\n", created.Name, id)
		if ov := aci.Metadata.Annotations["agent-install.openshift.io/install-config-overrides"]; ov != "" {
			if err := c.call(ctx, http.MethodPatch, "/clusters/"+id+"/install-config", ov, nil, 201); err != nil {
				return "", err
			}
			fmt.Fprintln(c.Out, "Applied the install-config overrides")
		}
	case 1:
		id = existing[0].ID
		fmt.Fprintf(c.Out, "Cluster %s is already registered\n", id)
	default:
		return "", fmt.Errorf("%d clusters are registered; expected at most one", len(existing))
	}
	return id, c.uploadExtraManifests(ctx, id)
}

func (c *clientConfig) uploadExtraManifests(ctx context.Context, id string) error {
	var files []string
	for _, pat := range []string{"*.yaml", "*.yml"} {
		m, err := filepath.Glob(filepath.Join(c.ExtraManifestsDir, pat))
		if err != nil {
			return err
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		return nil
	}
	sort.Strings(files)
	var have []assisted.Manifest
	if err := c.call(ctx, http.MethodGet, "/clusters/"+id+"/manifests", nil, &have, 200); err != nil {
		return err
	}
	for _, f := range files {
		name := filepath.Base(f)
		if slices.ContainsFunc(have, func(m assisted.Manifest) bool { return m.Folder == "openshift" && m.FileName == name }) {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		m := assisted.Manifest{FileName: name, Folder: "openshift", Content: base64.StdEncoding.EncodeToString(data)}
		if err := c.call(ctx, http.MethodPost, "/clusters/"+id+"/manifests", m, nil, 201); err != nil {
			return err
		}
		fmt.Fprintf(c.Out, "Uploaded extra manifest %s\n", name)
	}
	return nil
}

// nmstateParams selects the NMStateConfigs whose labels match the
// infra-env's selector and turns them into static_network_config entries.
func nmstateParams(dir string, ie *manifests.InfraEnv) ([]assisted.HostStaticNetworkConfig, error) {
	p := filepath.Join(dir, "nmstateconfig.yaml")
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	docs, _, err := manifests.DecodeStrictAll(p, data, func() any { return &manifests.NMStateConfig{} })
	if err != nil {
		return nil, err
	}
	var out []assisted.HostStaticNetworkConfig
	for i, d := range docs {
		n := d.(*manifests.NMStateConfig)
		match := len(ie.Spec.NMStateConfigLabelSelector.MatchLabels) > 0
		for k, v := range ie.Spec.NMStateConfigLabelSelector.MatchLabels {
			if n.Metadata.Labels[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		y, err := yaml.JSONToYAML(n.Spec.Config)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: spec.config: %w", p, i+1, err)
		}
		e := assisted.HostStaticNetworkConfig{NetworkYAML: string(y)}
		for _, itf := range n.Spec.Interfaces {
			e.MacInterfaceMap = append(e.MacInterfaceMap, assisted.MacInterfaceMapEntry{MacAddress: strings.ToLower(itf.MACAddress), LogicalNicName: itf.Name})
		}
		out = append(out, e)
	}
	return out, nil
}

// registerInfraEnv registers the infra-env of infraenv.yaml unless one is
// registered already, and returns its id.
func (c *clientConfig) registerInfraEnv(ctx context.Context) (string, error) {
	var existing []assisted.LiveInfraEnv
	if err := c.call(ctx, http.MethodGet, "/infra-envs", nil, &existing, 200); err != nil {
		return "", err
	}
	if len(existing) == 1 {
		fmt.Fprintf(c.Out, "Infra-env %s is already registered\n", existing[0].ID)
		return existing[0].ID, nil
	}
	if len(existing) > 1 {
		return "", fmt.Errorf("%d infra-envs are registered; expected at most one", len(existing))
	}
	var clusters []assisted.LiveCluster
	if err := c.call(ctx, http.MethodGet, "/clusters", nil, &clusters, 200); err != nil {
		return "", err
	}
	if len(clusters) != 1 {
		return "", fmt.Errorf("%d clusters are registered; register the cluster first", len(clusters))
	}
	var ie manifests.InfraEnv
	if err := decodeManifest(c.ManifestsDir, "infraenv.yaml", &ie); err != nil {
		return "", err
	}
	var cis manifests.ClusterImageSet
	if err := decodeManifest(c.ManifestsDir, "cluster-image-set.yaml", &cis); err != nil {
		return "", err
	}
	version, err := releaseVersion(&cis)
	if err != nil {
		return "", err
	}
	ps, err := readPullSecret(c.ManifestsDir)
	if err != nil {
		return "", err
	}
	snc, err := nmstateParams(c.ManifestsDir, &ie)
	if err != nil {
		return "", err
	}
	arch := ie.Spec.CPUArchitecture
	if arch == "" {
		arch = goArchToRelease(runtime.GOARCH)
	}
	p := assisted.InfraEnvCreateParams{
		Name: ie.Metadata.Name, ClusterID: clusters[0].ID, PullSecret: ps, SSHAuthorizedKey: strings.TrimSpace(ie.Spec.SSHAuthorizedKey),
		ImageType: c.ImageType, OpenshiftVersion: version, CPUArchitecture: arch, StaticNetworkConfig: snc,
		AdditionalNTPSources: strings.Join(ie.Spec.AdditionalNTPSources, ","), AdditionalTrustBundle: ie.Spec.AdditionalTrustBundle,
		IgnitionConfigOverride: ie.Spec.IgnitionConfigOverride,
	}
	if px := ie.Spec.Proxy; px != nil {
		p.Proxy = &assisted.Proxy{HTTPProxy: px.HTTPProxy, HTTPSProxy: px.HTTPSProxy, NoProxy: px.NoProxy}
	}
	var created assisted.LiveInfraEnv
	if err := c.call(ctx, http.MethodPost, "/infra-envs", p, &created, 201); err != nil {
		return "", err
	}
	fmt.Fprintf(c.Out, "Registered infra-env %s with id %s (%d static network config(s))\n", created.Name, created.ID, len(snc))
	return created.ID, nil
}

// hostConfig is one /etc/assisted/hostconfig/<name> directory. Without a
// mac_addresses file the host is found by its hostname, the directory name.
type hostConfig struct {
	Name  string
	MACs  []string
	Role  string
	Hints *manifests.RootDeviceHints
}

func readHostConfigs(dir string) ([]hostConfig, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []hostConfig
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		d := filepath.Join(dir, e.Name())
		hc := hostConfig{Name: e.Name()}
		macs, err := os.ReadFile(filepath.Join(d, "mac_addresses"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("host config %s: %w", e.Name(), err)
		}
		for _, m := range strings.Fields(string(macs)) {
			hc.MACs = append(hc.MACs, strings.ToLower(m))
		}
		if role, err := os.ReadFile(filepath.Join(d, "role")); err == nil {
			hc.Role = strings.TrimSpace(string(role))
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		hp := filepath.Join(d, "root-device-hints.yaml")
		if data, err := os.ReadFile(hp); err == nil {
			var h manifests.RootDeviceHints
			if err := yaml.UnmarshalStrict(data, &h); err != nil {
				return nil, fmt.Errorf("%s: %w", hp, err)
			}
			hc.Hints = &h
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		out = append(out, hc)
	}
	return out, nil
}

// NotFoundByHints is the disk id sent when no disk matches the hints, as the real client does.
const NotFoundByHints = "/dev/not-found-by-hints"

// matchHints returns the id of the first eligible disk matching every hint.
func matchHints(h *manifests.RootDeviceHints, disks []assisted.Disk) string {
	for _, d := range disks {
		if !d.InstallationEligibility.Eligible {
			continue
		}
		switch {
		case h.DeviceName != "" && h.DeviceName != d.Path && h.DeviceName != d.ByPath && h.DeviceName != d.ByID:
		case h.HCTL != "" && h.HCTL != d.Hctl:
		case h.Model != "" && !strings.Contains(d.Model, h.Model):
		case h.Vendor != "" && !strings.Contains(d.Vendor, h.Vendor):
		case h.SerialNumber != "" && h.SerialNumber != d.Serial:
		case h.MinSizeGigabytes > 0 && d.SizeBytes < int64(h.MinSizeGigabytes)<<30:
		case h.WWN != "" && h.WWN != d.Wwn:
		case h.Rotational != nil && *h.Rotational != (d.DriveType == "HDD"):
		default:
			return d.ID
		}
	}
	return NotFoundByHints
}

// hostForMACs finds the registered host whose inventory holds one of macs.
func hostForMACs(hosts []assisted.LiveHost, macs []string) (*assisted.LiveHost, *assisted.Inventory, error) {
	for i := range hosts {
		if hosts[i].Inventory == "" {
			continue
		}
		var inv assisted.Inventory
		if err := json.Unmarshal([]byte(hosts[i].Inventory), &inv); err != nil {
			return nil, nil, fmt.Errorf("host %s: inventory: %w", hosts[i].ID, err)
		}
		for _, itf := range inv.Interfaces {
			if slices.Contains(macs, strings.ToLower(itf.MacAddress)) {
				return &hosts[i], &inv, nil
			}
		}
	}
	return nil, nil, nil
}

// hostForName finds the registered host (with an inventory) named name.
func hostForName(hosts []assisted.LiveHost, name string) (*assisted.LiveHost, *assisted.Inventory, error) {
	for i := range hosts {
		if hosts[i].Inventory == "" || hosts[i].RequestedHostname != name {
			continue
		}
		var inv assisted.Inventory
		if err := json.Unmarshal([]byte(hosts[i].Inventory), &inv); err != nil {
			return nil, nil, fmt.Errorf("host %s: inventory: %w", hosts[i].ID, err)
		}
		return &hosts[i], &inv, nil
	}
	return nil, nil, nil
}

// configure applies role and installation disk of every host config to the
// registered host with one of its MAC addresses, retrying with back-off
// until all are applied; what is still missing is written to
// RunDir/host-config-failures for the console.
func (c *clientConfig) configure(ctx context.Context) error {
	if c.InfraEnvID == "" {
		return errors.New("INFRA_ENV_ID is not set")
	}
	pending, err := readHostConfigs(c.HostConfigDir)
	if err != nil {
		return err
	}
	failuresFile := filepath.Join(c.RunDir, "host-config-failures")
	sleep := c.Retry
	for {
		var failures []string
		var hosts []assisted.LiveHost
		if err := c.call(ctx, http.MethodGet, "/infra-envs/"+c.InfraEnvID+"/hosts", nil, &hosts, 200); err != nil {
			failures = append(failures, err.Error())
		} else {
			var left []hostConfig
			for _, hc := range pending {
				if err := c.applyHostConfig(ctx, hosts, hc); err != nil {
					failures = append(failures, fmt.Sprintf("%s: %v", hc.Name, err))
					left = append(left, hc)
				}
			}
			pending = left
		}
		if ctx.Err() != nil {
			// Stopped mid-round: keep the last complete round's report.
			return ctx.Err()
		}
		if err := writeFailures(failuresFile, failures); err != nil {
			return err
		}
		if len(failures) == 0 {
			fmt.Fprintln(c.Out, "All host configurations applied")
			return nil
		}
		fmt.Fprintf(c.Out, "Retrying in %s: %s\n", sleep, strings.Join(failures, "; "))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(sleep):
		}
		if sleep < 30*time.Second {
			sleep *= 2
		}
	}
}

func (c *clientConfig) applyHostConfig(ctx context.Context, hosts []assisted.LiveHost, hc hostConfig) error {
	var h *assisted.LiveHost
	var inv *assisted.Inventory
	var err error
	if len(hc.MACs) > 0 {
		h, inv, err = hostForMACs(hosts, hc.MACs)
	} else {
		h, inv, err = hostForName(hosts, hc.Name)
	}
	if err != nil {
		return err
	}
	if h == nil && len(hc.MACs) > 0 {
		return fmt.Errorf("no registered host has one of the MAC addresses %s yet", strings.Join(hc.MACs, ", "))
	}
	if h == nil {
		return fmt.Errorf("no registered host has the hostname %s yet", hc.Name)
	}
	p := assisted.HostUpdateParams{HostRole: hc.Role}
	if hc.Hints != nil {
		p.DisksSelectedConfig = []assisted.DiskSelected{{ID: matchHints(hc.Hints, inv.Disks), Role: "install"}}
	}
	if p.HostRole == "" && len(p.DisksSelectedConfig) == 0 {
		fmt.Fprintf(c.Out, "%s: host %s found, nothing to set\n", hc.Name, h.ID)
		return nil
	}
	if err := c.call(ctx, http.MethodPatch, "/infra-envs/"+c.InfraEnvID+"/hosts/"+h.ID, p, nil, 201); err != nil {
		return err
	}
	fmt.Fprintf(c.Out, "%s: host %s configured (role %q)\n", hc.Name, h.ID, hc.Role)
	return nil
}

func writeFailures(path string, failures []string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	content := ""
	if len(failures) > 0 {
		content = strings.Join(failures, "\n") + "\n"
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
