package agent_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/internal/fake/testrelease"
	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/releasepolicy"
)

// TestReleaseBelowFloorIsRefused: a payload older than 4.18 (read from the
// registry, or given with --release-version) is refused before anything is
// built, naming the release, the floor and what to use instead.
func TestReleaseBelowFloorIsRefused(t *testing.T) {
	r := testrelease.StartRegistry(t, testrelease.RegistryOptions{})
	img, err := testrelease.Payload{Version: "4.17.12"}.Image()
	require.NoError(t, err)
	_, err = r.Push("ocp/release", "4.17.12-x86_64", img)
	require.NoError(t, err)
	files := disconnected(t, r)
	files[assetdir.InstallConfig] = regexp.MustCompile(`(?s)imageDigestSources:.*?additionalTrustBundle`).ReplaceAllString(files[assetdir.InstallConfig], "additionalTrustBundle")
	spec := r.Host + "/ocp/release:4.17.12-x86_64"
	rel, err := agent.NewReleaseImage(spec)
	require.NoError(t, err)
	// The manifests read no payload (issue 21 item 11): a tag's version is
	// known, and refused, where the payload is read.
	s := storeWith(t, files, rel)
	_, err = s.Fetch(context.Background(), &agent.AgentManifests{})
	require.NoError(t, err)
	_, err = storeWith(t, files, rel).Fetch(context.Background(), &agent.AgentIgnition{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "release "+spec+": OpenShift 4.17.12 is not supported: agentiso supports OpenShift 4.16 and 4.18 and later")
	assert.Contains(t, err.Error(), "AGENT_AUTH_TOKEN")
	assert.Contains(t, err.Error(), "use 4.16 or a 4.18 or later release")

	off, err := agent.OfflineRelease("quay.io/openshift-release-dev/ocp-release@sha256:"+strings.Repeat("1", 64), "4.15.3")
	require.NoError(t, err)
	_, err = storeWith(t, map[string]string{assetdir.InstallConfig: testfixture.SNOInstallConfig, assetdir.AgentConfig: testfixture.AgentConfig}, off).Fetch(context.Background(), &agent.AgentManifests{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "release "+off.PullSpec+" (--release-version 4.15.3): OpenShift 4.15.3 is not supported")
	assert.Contains(t, err.Error(), "older than 4.16")

	// 4.16 (EUS) is supported (issue 37 item 4).
	off, err = agent.OfflineRelease("quay.io/openshift-release-dev/ocp-release@sha256:"+strings.Repeat("1", 64), "4.16.3")
	require.NoError(t, err)
	_, err = storeWith(t, map[string]string{assetdir.InstallConfig: testfixture.SNOInstallConfig, assetdir.AgentConfig: testfixture.AgentConfig}, off).Fetch(context.Background(), &agent.AgentManifests{})
	require.NoError(t, err)
}

// TestReleaseSupportRules: a supported release gets its row of the table;
// one newer than the newest checked branch builds, with a warning.
func TestReleaseSupportRules(t *testing.T) {
	files := map[string]string{assetdir.InstallConfig: testfixture.SNOInstallConfig, assetdir.AgentConfig: testfixture.AgentConfig}
	for v, want := range map[string]releasepolicy.Match{"4.18.5": releasepolicy.MatchVersion, "4.21.0": releasepolicy.MatchVersion, "4.22.3": releasepolicy.MatchURL} {
		rel, err := agent.OfflineRelease("quay.io/openshift-release-dev/ocp-release@sha256:"+strings.Repeat("2", 64), v)
		require.NoError(t, err)
		s := storeWith(t, files, rel)
		sup := fetchT(t, s, &agent.ReleaseSupport{})
		assert.Equal(t, want, sup.Match, v)
		assert.Empty(t, sup.Warn, v)
		fetchT(t, s, &agent.AgentManifests{})
	}
	rel, err := agent.OfflineRelease("quay.io/openshift-release-dev/ocp-release@sha256:"+strings.Repeat("3", 64), "4.24.1")
	require.NoError(t, err)
	s := storeWith(t, files, rel)
	fetchT(t, s, &agent.AgentManifests{})
	// The policy is decided where the payload is read (the ignition, the
	// ISO); the manifests read none (issue 21 item 11).
	fetchT(t, s, &agent.ReleaseSupport{})
	assert.Contains(t, strings.Join(s.Warnings(), "\n"), "OpenShift 4.24.1 is newer than the newest release this agentiso was checked against (assisted-service release-4.23)")
}
