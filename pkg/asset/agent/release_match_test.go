package agent_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
	"github.com/seed-a052040e/agentiso/pkg/releasepolicy"
)

// TestISOReleaseMatchesBothRules: the agent-installer client registers the
// cluster from the ClusterImageSet the ISO carries, and the service finds
// it in RELEASE_IMAGES by url (release-4.22+: the ClusterImageSet's
// spec.releaseImage must be an entry's url, byte for byte) or by version
// (release-4.18 ... 4.21: the payload's x.y.z must be an entry's version,
// exactly). Both hold for the ISO agentiso writes, also when the user's
// ClusterImageSet names the release by tag: a tag would match no url by
// digest (4.22+), and is not served by the digest-only mirrors the client
// reads the version through (4.18-4.21), so the ISO carries the digest.
func TestISOReleaseMatchesBothRules(t *testing.T) {
	for _, version := range []string{"4.16.3", "4.21.4", "4.22.1"} {
		t.Run(version, func(t *testing.T) {
			r := testrelease.StartRegistry(t, testrelease.RegistryOptions{})
			img, err := testrelease.Payload{Version: version}.Image()
			require.NoError(t, err)
			tag := version + "-x86_64"
			dg, err := r.Push("ocp/release", tag, img)
			require.NoError(t, err)
			files := disconnected(t, r)
			files[assetdir.InstallConfig] = regexp.MustCompile(`(?s)imageDigestSources:.*?additionalTrustBundle`).ReplaceAllString(files[assetdir.InstallConfig], "additionalTrustBundle")
			spec := r.Host + "/ocp/release:" + tag
			// The user's ClusterImageSet names the release by its tag.
			files[assetdir.ClusterImageSet] = "apiVersion: hive.openshift.io/v1\nkind: ClusterImageSet\nmetadata:\n  name: openshift-" + version + "\nspec:\n  releaseImage: " + spec + "\n"
			rel, err := agent.NewReleaseImage(spec)
			require.NoError(t, err)
			s, _ := storeWithoutOn(t, seeded(t), files, rel)

			sup := fetchT(t, s, &agent.ReleaseSupport{})
			relImgs, _ := releaseEnv(t, s)
			require.Len(t, relImgs, 1)
			ign := fetchT(t, s, &agent.AgentIgnition{})
			var cfg types.Config
			require.NoError(t, json.Unmarshal(ign.Config, &cfg))
			var cis manifests.ClusterImageSet
			require.NoError(t, yaml.Unmarshal(ignitionFile(t, cfg, "/etc/assisted/manifests/cluster-image-set.yaml"), &cis))

			pinned := r.Host + "/ocp/release@" + dg
			// By url (4.22+): exactly the RELEASE_IMAGES url, by digest.
			assert.Equal(t, relImgs[0]["url"], cis.Spec.ReleaseImage, "ClusterImageSet spec.releaseImage == RELEASE_IMAGES url")
			assert.Equal(t, pinned, cis.Spec.ReleaseImage)
			// By version (4.18-4.21): the payload's exact x.y.z.
			assert.Equal(t, version, relImgs[0]["version"], "RELEASE_IMAGES version is the payload's, exactly")
			assert.Equal(t, "openshift-"+version, cis.Metadata.Name)
			want := releasepolicy.MatchVersion
			if version == "4.22.1" {
				want = releasepolicy.MatchURL
			}
			assert.Equal(t, want, sup.Match)
			// The authentication of the release (issue 37 item 4): 4.16's
			// installer wrote AUTH_TYPE=none.
			auth := "agent-installer-local"
			if version == "4.16.3" {
				auth = "none"
			}
			assert.Contains(t, string(ignitionFile(t, cfg, "/usr/local/share/assisted-service/assisted-service.env")), "AUTH_TYPE="+auth+"\n")
		})
	}
}
