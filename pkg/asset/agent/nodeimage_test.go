package agent_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testcluster"
	"github.com/seed-a052040e/agentiso/internal/fake/testiso"
	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/baseiso"
	"github.com/seed-a052040e/agentiso/pkg/credentials"
	"github.com/seed-a052040e/agentiso/pkg/isoeditor"
	"github.com/seed-a052040e/agentiso/pkg/kubeapi"
	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
)

const nodesConfig = `hosts:
- hostname: worker-1
  interfaces:
  - name: eth0
    macAddress: 52:54:00:00:00:31
  networkConfig:
    interfaces:
    - name: eth0
      type: ethernet
      state: up
      mac-address: 52:54:00:00:00:31
      ipv4:
        enabled: true
        address: [{ip: 192.168.111.31, prefix-length: 24}]
`

// nodeImageEnv is an installed 4.20.3 cluster whose release is in a test
// registry.
func nodeImageEnv(t *testing.T, mutate func(*testcluster.Options)) (*testcluster.Cluster, *kubeapi.Client, string) {
	t.Helper()
	return nodeImageEnvAt(t, "4.20.3", mutate)
}

// nodeImageEnvAt is nodeImageEnv with the cluster on release version.
func nodeImageEnvAt(t *testing.T, version string, mutate func(*testcluster.Options)) (*testcluster.Cluster, *kubeapi.Client, string) {
	t.Helper()
	r := testrelease.StartRegistry(t, testrelease.RegistryOptions{})
	img, err := testrelease.Payload{Version: version}.Image()
	require.NoError(t, err)
	dg, err := r.Push("ocp/release", version+"-x86_64", img)
	require.NoError(t, err)
	o := testcluster.Default()
	o.Version = version
	o.ReleaseImage = r.Host + "/ocp/release@" + dg
	o.PullSecret = string(r.PullSecret())
	o.TrustBundle = string(r.CAPEM)
	if mutate != nil {
		mutate(&o)
	}
	c, err := testcluster.Start(o)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	cfg, err := kubeapi.ParseKubeconfig(c.Kubeconfig(), t.TempDir(), "")
	require.NoError(t, err)
	base := filepath.Join(t.TempDir(), "base.iso")
	_, err = testiso.WriteFile(base, testiso.Options{Size: 4 << 20})
	require.NoError(t, err)
	return c, kubeapi.New(cfg, 10*time.Second), base
}

func nodeStore(t *testing.T, api *kubeapi.Client, base string, files map[string]string, opts agent.NodeImageOptions) (*asset.Store, string) {
	t.Helper()
	dir := t.TempDir()
	for n, d := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(d), 0o644))
	}
	s, err := asset.NewStore(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	opts.Cluster = api
	require.NoError(t, s.Provide(&opts))
	require.NoError(t, s.Provide(&agent.ImageOptions{BaseISO: base}))
	return s, dir
}

func TestNodeImageFromTheCluster(t *testing.T) {
	_, api, base := nodeImageEnv(t, nil)
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	s, dir := nodeStore(t, api, base, map[string]string{"nodes-config.yaml": nodesConfig}, agent.NodeImageOptions{Now: func() time.Time { return now }})
	require.NoError(t, buildNodeImage(s))

	out := filepath.Join(dir, "node.x86_64.iso")
	fi, err := os.Stat(out)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the ISO holds the pull secret")
	nodeISO, err := asset.Fetch[*agent.NodeISO](context.Background(), s)
	require.NoError(t, err)
	var logged bytes.Buffer
	(&agent.NodeImageResult{ISO: nodeISO}).Log(slog.New(slog.NewTextHandler(&logged, nil)), dir)
	assert.Contains(t, logged.String(), "Generated node ISO at "+out)
	assert.Contains(t, logged.String(), "Its tokens expire in 48 hours.")
	ign, err := asset.Fetch[*agent.NodeIgnition](context.Background(), s)
	require.NoError(t, err)
	edited, f, err := isoeditor.OpenFile(out)
	require.NoError(t, err)
	got, err := edited.EmbeddedIgnition()
	f.Close()
	require.NoError(t, err)
	assert.Equal(t, ign.Config, got)

	var cfg types.Config
	require.NoError(t, json.Unmarshal(ign.Config, &cfg))
	env := string(ignitionFile(t, cfg, "/etc/assisted/rendezvous-host.env"))
	assert.Contains(t, env, "NODE_ZERO_IP=127.0.0.1\n")
	assert.Contains(t, env, "WORKFLOW_TYPE=addnodes\n")
	// AUTH_TOKEN_EXPIRY: when the tokens expire, for the console warning
	// (agent-auth-token-status), as upstream's add-nodes.env.
	assert.Equal(t, "CLUSTER_ID=0d6c8d5e-6c2e-4a61-9f39-2b5c1d7e1a10\nCLUSTER_NAME=ostest\nCLUSTER_API_VIP_DNS_NAME=api.ostest.example.com\nAUTH_TOKEN_EXPIRY=2026-11-27T12:00:00Z\n",
		string(ignitionFile(t, cfg, "/etc/assisted/add-nodes.env")))
	assert.Contains(t, string(ignitionFile(t, cfg, "/usr/local/share/assisted-service/assisted-service.env")), `"version":"4.20.3"`)
	assert.Contains(t, string(ignitionFile(t, cfg, "/etc/assisted/manifests/infraenv.yaml")), "name: ostest")
	assert.Contains(t, string(ignitionFile(t, cfg, "/etc/assisted/manifests/nmstateconfig.yaml")), "192.168.111.31")
	assert.Equal(t, "worker", string(ignitionFile(t, cfg, "/etc/assisted/hostconfig/worker-1/role")))
	_, err = os.Stat(filepath.Join(dir, "auth"))
	assert.True(t, os.IsNotExist(err), "no credentials are generated for an installed cluster")

	// The tokens expire in 48 hours, as upstream's add-nodes tokens.
	ua := ignitionEnvValue(t, env, "USER_AUTH_TOKEN")
	parts := strings.Split(ua, ".")
	require.Len(t, parts, 3)
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	var claims credentials.Claims
	require.NoError(t, json.Unmarshal(raw, &claims))
	exp, ok := claims.Expiry()
	require.True(t, ok)
	assert.Equal(t, now.Add(48*time.Hour), exp.UTC())

	// The watcher token stays in the directory for node-image monitor,
	// private: it is the token the ISO's assisted-service takes.
	tokPath := filepath.Join(dir, ".agentiso", "node-watcher-token")
	fi, err = os.Stat(tokPath)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	tok, err := os.ReadFile(tokPath)
	require.NoError(t, err)
	auth, err := asset.Fetch[*agent.NodeAuthConfig](context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, auth.WatcherAuthToken+"\n", string(tok))
	assert.Contains(t, string(ignitionFile(t, cfg, "/usr/local/share/assisted-service/assisted-service.env")), auth.WatcherAuthToken,
		"the ISO's service accepts it")
}

func ignitionEnvValue(t *testing.T, env, key string) string {
	t.Helper()
	for _, l := range strings.Split(env, "\n") {
		if v, ok := strings.CutPrefix(l, key+"="); ok {
			return v
		}
	}
	t.Fatalf("%s not in %q", key, env)
	return ""
}

func TestNodeImageRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(*testcluster.Options)
		deny   func(*testcluster.Cluster)
		hosts  string
		want   string
	}{
		"missing permission": {deny: func(c *testcluster.Cluster) { c.Deny("list", testcluster.Nodes) },
			want: `may not list nodes (API group "") cluster-wide: grant it list on nodes in API group "" cluster-wide`},
		"cloud platform": {mutate: func(o *testcluster.Options) { o.Platform = "AWS" }, want: `the cluster's platform is "AWS"`},
		"name taken":     {hosts: strings.Replace(nodesConfig, "worker-1", "worker-0", 1), want: `hostname "worker-0" is already the name of a node`},
		"MAC taken":      {hosts: strings.ReplaceAll(nodesConfig, "00:31", "00:20"), want: "MAC address 52:54:00:00:00:20 already belongs to node master-0"},
		"IP taken":       {hosts: strings.Replace(nodesConfig, "192.168.111.31", "192.168.111.22", 1), want: "IP address 192.168.111.22 is already the address of node master-2"},
		"arbiter on 4.20": {hosts: strings.Replace(nodesConfig, "- hostname: worker-1\n", "- hostname: worker-1\n  role: arbiter\n", 1),
			want: `nodes-config.yaml:3: hosts[0] (worker-1).role: "arbiter": the cluster runs OpenShift 4.20.3, and a host added to a cluster may have role arbiter from OpenShift 4.21 on`},
		"no hosts": {hosts: "-", want: "no hosts to add: write nodes-config.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			c, api, base := nodeImageEnv(t, tc.mutate)
			if tc.deny != nil {
				tc.deny(c)
			}
			files := map[string]string{"nodes-config.yaml": nodesConfig}
			switch tc.hosts {
			case "-":
				files = nil
			case "":
			default:
				files["nodes-config.yaml"] = tc.hosts
			}
			s, dir := nodeStore(t, api, base, files, agent.NodeImageOptions{})
			err := buildNodeImage(s)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			_, serr := os.Stat(filepath.Join(dir, "node.x86_64.iso"))
			assert.True(t, os.IsNotExist(serr), "nothing written on failure")
			_, serr = os.Stat(filepath.Join(dir, ".agentiso", "node-watcher-token"))
			assert.True(t, os.IsNotExist(serr), "no token without its ISO")
		})
	}
}

// The new hosts' architecture comes from the cluster's control-plane nodes
// (or cpuArchitecture), as upstream's node-joiner takes it
// (clusterinfo.go retrieveArchitecture): a release for another one is
// blamed on that, not on an install-config.yaml the admin never wrote.
func TestNodeImageArchitectureMismatchNamesItsOrigin(t *testing.T) {
	_, api, base := nodeImageEnv(t, func(o *testcluster.Options) {
		for i := range o.Nodes {
			o.Nodes[i].Arch = "arm64"
		}
	})
	s, _ := nodeStore(t, api, base, map[string]string{"nodes-config.yaml": nodesConfig}, agent.NodeImageOptions{})
	err := buildNodeImage(s)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is for x86_64, but the new hosts are aarch64 (the architecture of the cluster's control-plane nodes, status.nodeInfo.architecture; set cpuArchitecture in nodes-config.yaml for others)")
	assert.NotContains(t, err.Error(), "install-config.yaml")
}

// The ISO's tokens are kept in the cluster's
// openshift-config/agent-auth-token secret, as upstream's node-joiner keeps
// them (where oc adm node-image monitor reads them); a second ISO built
// while they have more than 24 hours left reuses them, as upstream; a user
// who may not create the secret is told the exact permission, and nothing
// is written.
func TestNodeImageKeepsItsTokensInTheCluster(t *testing.T) {
	c, api, base := nodeImageEnv(t, nil)
	now := time.Now().UTC().Truncate(time.Second)
	s, _ := nodeStore(t, api, base, map[string]string{"nodes-config.yaml": nodesConfig}, agent.NodeImageOptions{Now: func() time.Time { return now }})
	require.NoError(t, buildNodeImage(s))
	auth, err := asset.Fetch[*agent.NodeAuthConfig](context.Background(), s)
	require.NoError(t, err)
	var sec struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Data map[string][]byte `json:"data"`
	}
	require.NoError(t, json.Unmarshal(c.Object(nodejoin.AuthTokenSecret), &sec))
	assert.Equal(t, auth.WatcherAuthToken, string(sec.Data["watcherAuthToken"]))
	assert.Equal(t, auth.AgentAuthToken, string(sec.Data["agentAuthToken"]))
	assert.Equal(t, auth.UserAuthToken, string(sec.Data["userAuthToken"]))
	assert.Equal(t, auth.PublicKey, string(sec.Data["authTokenPublicKey"]))
	assert.Equal(t, now.Add(48*time.Hour).Format(time.RFC3339), sec.Metadata.Annotations["expiresAt"])

	// An hour later, another ISO: the same tokens, said so.
	later := now.Add(time.Hour)
	s2, dir2 := nodeStore(t, api, base, map[string]string{"nodes-config.yaml": nodesConfig}, agent.NodeImageOptions{Now: func() time.Time { return later }})
	require.NoError(t, buildNodeImage(s2))
	auth2, err := asset.Fetch[*agent.NodeAuthConfig](context.Background(), s2)
	require.NoError(t, err)
	assert.Equal(t, auth.AuthConfig.WatcherAuthToken, auth2.WatcherAuthToken)
	assert.Equal(t, auth.PublicKey, auth2.PublicKey)
	assert.Equal(t, auth.AuthTokenExpiry, auth2.AuthTokenExpiry)
	assert.Contains(t, strings.Join(auth2.Warn, "\n"), "the tokens of secret openshift-config/agent-auth-token are used, as oc adm node-image create reuses them")
	tok, err := os.ReadFile(filepath.Join(dir2, ".agentiso", "node-watcher-token"))
	require.NoError(t, err)
	assert.Equal(t, auth.WatcherAuthToken+"\n", string(tok))

	// May not create it: the permission, and nothing written.
	c.Remove(nodejoin.AuthTokenSecret)
	coll := nodejoin.AuthTokenSecret
	coll.Name = ""
	c.Deny("create", coll)
	s3, dir3 := nodeStore(t, api, base, map[string]string{"nodes-config.yaml": nodesConfig}, agent.NodeImageOptions{})
	err = buildNodeImage(s3)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `cannot keep the node ISO's tokens in the cluster: secret openshift-config/agent-auth-token (where oc adm node-image monitor reads the node ISO's tokens, as oc adm node-image create keeps them there): `)
	assert.Contains(t, err.Error(), `may not create secrets (API group "") in namespace openshift-config: grant it create on secrets in API group "" in namespace openshift-config`)
	_, err = os.Stat(filepath.Join(dir3, "node.x86_64.iso"))
	assert.True(t, os.IsNotExist(err))
	_, err = os.Stat(filepath.Join(dir3, ".agentiso", "node-watcher-token"))
	assert.True(t, os.IsNotExist(err))
}

// A --base-iso of another architecture than the new hosts' is blamed on
// what node-image read the hosts' architecture from (the cluster's
// control-plane nodes, or cpuArchitecture in nodes-config.yaml), with the
// fix, never on an install-config.yaml's controlPlane.architecture that a
// day-2 admin never wrote; for the ISO and the PXE files alike.
func TestNodeImageBaseISOOfAnotherArchitectureNamesWhatWasRead(t *testing.T) {
	for _, pxe := range []bool{false, true} {
		for name, tc := range map[string]struct{ config, from string }{
			"control plane":   {nodesConfig, "the architecture of the cluster's control-plane nodes, status.nodeInfo.architecture; set cpuArchitecture in nodes-config.yaml for others"},
			"cpuArchitecture": {nodesConfig + "cpuArchitecture: x86_64\n", "cpuArchitecture in nodes-config.yaml, or --cpu-architecture"},
		} {
			t.Run(fmt.Sprintf("%s/pxe=%v", name, pxe), func(t *testing.T) {
				_, api, _ := nodeImageEnv(t, nil)
				arm := filepath.Join(t.TempDir(), "arm.iso")
				_, err := testiso.WriteFile(arm, testiso.Options{Size: 4 << 20, Arch: "aarch64"})
				require.NoError(t, err)
				s, _ := nodeStore(t, api, arm, map[string]string{"nodes-config.yaml": tc.config}, agent.NodeImageOptions{PXE: pxe})
				for _, a := range agent.NodeImageTargets(pxe) {
					if _, err = s.Fetch(context.Background(), a); err != nil {
						break
					}
				}
				require.Error(t, err)
				assert.Contains(t, err.Error(), "base ISO "+arm+" is for aarch64, but the new hosts are x86_64")
				assert.Contains(t, err.Error(), "the new hosts are x86_64 ("+tc.from+"): give --base-iso an RHCOS live ISO for x86_64, or leave it out for the release's own")
				assert.NotContains(t, err.Error(), "controlPlane.architecture")
				assert.NotContains(t, err.Error(), "install-config")
			})
		}
	}
}

// A control-plane host (role master, 4.18 and later) and an arbiter (4.21
// and later) are added as upstream's node-joiner adds them: the role is
// in the host's configuration, which the host's own assisted-service
// applies; the rest of the ISO is a worker's.
func TestNodeImageControlPlaneHosts(t *testing.T) {
	for _, tc := range []struct{ version, role, warn string }{
		{"4.20.3", "master", ""},
		{"4.21.0", "arbiter", "no node of the cluster is labelled node-role.kubernetes.io/arbiter"},
	} {
		t.Run(tc.role, func(t *testing.T) {
			_, api, base := nodeImageEnvAt(t, tc.version, nil)
			hosts := strings.Replace(nodesConfig, "- hostname: worker-1\n", "- hostname: cp-1\n  role: "+tc.role+"\n", 1)
			s, dir := nodeStore(t, api, base, map[string]string{"nodes-config.yaml": hosts}, agent.NodeImageOptions{})
			require.NoError(t, buildNodeImage(s))
			assert.FileExists(t, filepath.Join(dir, "node.x86_64.iso"))
			ign, err := asset.Fetch[*agent.NodeIgnition](context.Background(), s)
			require.NoError(t, err)
			var cfg types.Config
			require.NoError(t, json.Unmarshal(ign.Config, &cfg))
			assert.Equal(t, tc.role, string(ignitionFile(t, cfg, "/etc/assisted/hostconfig/cp-1/role")))
			assert.Equal(t, "52:54:00:00:00:31", strings.TrimSpace(string(ignitionFile(t, cfg, "/etc/assisted/hostconfig/cp-1/mac_addresses"))))
			assert.Contains(t, string(ignitionFile(t, cfg, "/etc/assisted/rendezvous-host.env")), "WORKFLOW_TYPE=addnodes\n")
			ci, err := asset.Fetch[*agent.ClusterInfo](context.Background(), s)
			require.NoError(t, err)
			if tc.warn == "" {
				assert.Empty(t, ci.Warn)
			} else {
				assert.Contains(t, strings.Join(ci.Warn, "\n"), tc.warn)
			}
		})
	}
}

func buildNodeImage(s *asset.Store) error {
	for _, a := range agent.NodeImageTargets(false) {
		if _, err := s.Fetch(context.Background(), a); err != nil {
			return err
		}
	}
	return s.Persist(context.Background(), agent.NodeImageTargets(false)...)
}

// --pxe: the node image's PXE files under upstream's node-joiner names,
// the initrd private with the node Ignition config appended, an iPXE
// script with bootArtifactsBaseURL; the watcher token with them; no ISO.
func TestNodeImagePXE(t *testing.T) {
	_, api, base := nodeImageEnv(t, nil)
	cfg := nodesConfig + "bootArtifactsBaseURL: http://10.0.0.1:8080/day2/\n"
	s, dir := nodeStore(t, api, base, map[string]string{"nodes-config.yaml": cfg}, agent.NodeImageOptions{PXE: true})
	for _, a := range agent.NodeImageTargets(true) {
		_, err := s.Fetch(context.Background(), a)
		require.NoError(t, err, a.Name())
	}
	require.NoError(t, s.Persist(context.Background(), agent.NodeImageTargets(true)...))
	px, err := asset.Fetch[*agent.NodePXEFiles](context.Background(), s)
	require.NoError(t, err)
	for _, f := range []string{"node.x86_64-vmlinuz", "node.x86_64-rootfs.img", "node.x86_64.ipxe"} {
		fi, err := os.Stat(filepath.Join(dir, "boot-artifacts", f))
		require.NoError(t, err, f)
		assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), f)
	}
	p := filepath.Join(dir, "boot-artifacts", "node.x86_64-initrd.img")
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the initrd holds the pull secret")
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	ign, err := asset.Fetch[*agent.NodeIgnition](context.Background(), s)
	require.NoError(t, err)
	iso, f, err := isoeditor.OpenFile(base)
	require.NoError(t, err)
	_, size, err := iso.FileExtent("images/pxeboot/initrd.img")
	f.Close()
	require.NoError(t, err)
	files, err := isoeditor.ParseInitrd(got[size+(4-size%4)%4:])
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.Equal(t, ign.Config, files[0].Data, "the node Ignition config is appended to the initrd")
	script, err := os.ReadFile(filepath.Join(dir, "boot-artifacts", "node.x86_64.ipxe"))
	require.NoError(t, err)
	assert.Contains(t, string(script), "http://10.0.0.1:8080/day2/node.x86_64-vmlinuz")
	assert.Contains(t, string(script), "coreos.live.rootfs_url=http://10.0.0.1:8080/day2/node.x86_64-rootfs.img")
	assert.Equal(t, "boot-artifacts/node.x86_64.ipxe", px.IPXE)
	assert.NoFileExists(t, filepath.Join(dir, "node.x86_64.iso"))
	assert.FileExists(t, filepath.Join(dir, ".agentiso", "node-watcher-token"))
	var logged bytes.Buffer
	(&agent.NodeImageResult{PXE: px}).Log(slog.New(slog.NewTextHandler(&logged, nil)), dir)
	assert.Contains(t, logged.String(), "Generated the node PXE files in "+filepath.Join(dir, "boot-artifacts"))
	assert.Contains(t, logged.String(), "Created iPXE script boot-artifacts/node.x86_64.ipxe")
	assert.Contains(t, logged.String(), "The initrd "+p+" carries the cluster's pull secret")

	// An ISO is refused with bootArtifactsBaseURL, which is for --pxe.
	s, _ = nodeStore(t, api, base, map[string]string{"nodes-config.yaml": cfg}, agent.NodeImageOptions{})
	err = buildNodeImage(s)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bootArtifactsBaseURL is where the PXE files are served from")
}

// The node ISO names and boots the RHCOS of the cluster's own stream
// (configmap openshift-machine-config-operator/coreos-bootimages), as
// upstream's node-joiner takes OS_IMAGES from it (openshift/installer
// pkg/asset/agent/image/ignition.go, the addnodes case, commit ecc6a712),
// not the release payload's stream when the two differ: OS_IMAGES has
// the cluster stream's metal release and ISO URL, and with no --base-iso
// the ISO downloaded is the one the cluster's stream names (checked by its
// sha256). The difference is said.
func TestNodeImageRHCOSFromTheClusterStream(t *testing.T) {
	iso := filepath.Join(t.TempDir(), "cluster.iso")
	_, err := testiso.WriteFile(iso, testiso.Options{Size: 4 << 20, VolumeID: "rhcos-9.6.20250925-0"})
	require.NoError(t, err)
	b, err := os.ReadFile(iso)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	var mu sync.Mutex
	var served []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served = append(served, r.URL.Path)
		mu.Unlock()
		http.ServeContent(w, r, "iso", time.Time{}, bytes.NewReader(b))
	}))
	t.Cleanup(srv.Close)
	// The payload's stream (testrelease) names 9.6.20260101-0 at
	// rhcos.example.com; the cluster's names 9.6.20250925-0 here.
	clusterISO := srv.URL + "/9.6.20250925-0/rhcos-9.6.20250925-0-live-iso.x86_64.iso"
	_, api, _ := nodeImageEnv(t, func(o *testcluster.Options) {
		o.BootISO, o.BootISOSHA256 = clusterISO, hex.EncodeToString(sum[:])
	})
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nodes-config.yaml"), []byte(nodesConfig), 0o644))
	s, err := asset.NewStore(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	require.NoError(t, s.Provide(&agent.NodeImageOptions{Cluster: api}))
	require.NoError(t, s.Provide(&agent.ImageOptions{CacheDir: t.TempDir()}))
	require.NoError(t, buildNodeImage(s))

	ign, err := asset.Fetch[*agent.NodeIgnition](context.Background(), s)
	require.NoError(t, err)
	var cfg types.Config
	require.NoError(t, json.Unmarshal(ign.Config, &cfg))
	var osImages []map[string]string
	require.NoError(t, json.Unmarshal([]byte(ignitionEnvValue(t, string(ignitionFile(t, cfg, "/usr/local/share/assisted-service/images.env")), "OS_IMAGES")), &osImages))
	assert.Equal(t, []map[string]string{{"openshift_version": "4.20.3", "cpu_architecture": "x86_64", "url": clusterISO, "version": "9.6.20250925-0"}}, osImages)

	base, err := asset.Fetch[*agent.NodeBaseISO](context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, baseiso.SourceDownload, base.Source)
	mu.Lock()
	assert.Contains(t, served, "/9.6.20250925-0/rhcos-9.6.20250925-0-live-iso.x86_64.iso")
	mu.Unlock()
	assert.Contains(t, ign.Warn, "the cluster's RHCOS stream (configmap openshift-machine-config-operator/coreos-bootimages) names RHCOS 9.6.20250925-0 for x86_64, its release payload's stream 9.6.20260101-0: the node ISO boots and names the cluster's, as upstream's node-joiner names it")
}

// A cluster without the coreos-bootimages configmap: the release
// payload's stream names the RHCOS instead, and a note says so (upstream's
// node-joiner reads no stream then and fails writing OS_IMAGES).
func TestNodeImageWithoutClusterStreamUsesThePayloads(t *testing.T) {
	c, api, base := nodeImageEnv(t, nil)
	c.Remove(testcluster.BootImages)
	s, _ := nodeStore(t, api, base, map[string]string{"nodes-config.yaml": nodesConfig}, agent.NodeImageOptions{})
	require.NoError(t, buildNodeImage(s))
	ign, err := asset.Fetch[*agent.NodeIgnition](context.Background(), s)
	require.NoError(t, err)
	var cfg types.Config
	require.NoError(t, json.Unmarshal(ign.Config, &cfg))
	var osImages []map[string]string
	require.NoError(t, json.Unmarshal([]byte(ignitionEnvValue(t, string(ignitionFile(t, cfg, "/usr/local/share/assisted-service/images.env")), "OS_IMAGES")), &osImages))
	assert.Equal(t, []map[string]string{{"openshift_version": "4.20.3", "cpu_architecture": "x86_64",
		"url": "https://rhcos.example.com/9.6.20260101-0/rhcos-9.6.20260101-0-live-iso.x86_64.iso", "version": "9.6.20260101-0"}}, osImages)
	assert.Empty(t, ign.Warn)
	ci, err := asset.Fetch[*agent.ClusterInfo](context.Background(), s)
	require.NoError(t, err)
	assert.Contains(t, ci.Warn, "the cluster has no configmap openshift-machine-config-operator/coreos-bootimages (its RHCOS boot images): OS_IMAGES and the base ISO are taken from the release payload's RHCOS stream instead")
}
