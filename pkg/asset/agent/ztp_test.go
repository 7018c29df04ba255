package agent

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
)

// The ZTP manifest assets keep the state encoding they had when each was
// its own type ({"warnings": [...], "<key>": {...}}, byte for byte), so a
// state written by an earlier agentiso is read back whole instead of as an
// empty manifest reused because its inputs did not change.
func TestZTPManifestStateEncodingUnchanged(t *testing.T) {
	cd := &manifests.ClusterDeployment{}
	cd.Metadata.Name = "ostest"
	cd.Spec.Platform = json.RawMessage(`{"agentBareMetal":{"agentSelector":{}}}`)
	cd.Spec.ControlPlaneConfig.ServingCertificates = json.RawMessage(`{}`)
	secret := &manifests.Secret{}
	secret.Metadata.Name = "ostest-pull-secret"
	for _, tc := range []struct {
		name string
		a    any
		old  any
	}{
		{"with warnings", &ClusterDeployment{Warnings: Warnings{Warn: []string{"w <1>"}}, Manifest: cd},
			struct {
				Warn []string                     `json:"warnings,omitempty"`
				CD   *manifests.ClusterDeployment `json:"cd,omitempty"`
			}{[]string{"w <1>"}, cd}},
		{"no warnings", &PullSecret{Manifest: secret},
			struct {
				Warn   []string          `json:"warnings,omitempty"`
				Secret *manifests.Secret `json:"secret,omitempty"`
			}{nil, secret}},
		{"empty", &InfraEnv{},
			struct {
				Warn     []string            `json:"warnings,omitempty"`
				InfraEnv *manifests.InfraEnv `json:"infraEnv,omitempty"`
			}{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.a)
			require.NoError(t, err)
			want, err := json.Marshal(tc.old)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}

	var back ClusterDeployment
	b, err := json.Marshal(&ClusterDeployment{Warnings: Warnings{Warn: []string{"w"}}, Manifest: cd})
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, []string{"w"}, back.Warn)
	assert.Equal(t, cd, back.Manifest)
	// The other manifests' keys are not this one's.
	var other PullSecret
	require.NoError(t, json.Unmarshal(b, &other))
	assert.Nil(t, other.Manifest)
}

// A manifest that cannot be encoded is an error naming the file, never an
// empty list of files (which would make Persist remove the earlier copy as
// stale).
func TestZTPManifestFilesReportsEncodingErrors(t *testing.T) {
	cd := &manifests.ClusterDeployment{}
	cd.Spec.Platform = json.RawMessage(`{not json`)
	files, err := (&ClusterDeployment{Manifest: cd}).Files()
	require.Error(t, err)
	assert.Nil(t, files)
	assert.Contains(t, err.Error(), assetdir.ClusterDeployment+": encode YAML: ")

	nm := manifests.NMStateConfig{}
	nm.Spec.Config = json.RawMessage(`{not json`)
	files, err = (&NMStateConfigs{Configs: []manifests.NMStateConfig{{}, nm}}).Files()
	require.Error(t, err)
	assert.Nil(t, files)
	assert.Contains(t, err.Error(), assetdir.NMStateConfig+": document 2: encode YAML: ")

	files, err = (&ClusterDeployment{}).Files()
	require.NoError(t, err)
	assert.Empty(t, files, "no manifest, no file")
	files, err = (&ClusterDeployment{Manifest: &manifests.ClusterDeployment{}}).Files()
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.Equal(t, assetdir.ClusterDeployment, files[0].Path)
	assert.Equal(t, assetdir.Public, files[0].Mode)
	files, err = (&AgentClusterInstall{Manifest: &manifests.AgentClusterInstall{}}).Files()
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.Equal(t, assetdir.Private, files[0].Mode)
}

// TestCrossReferenceImageSetRef: a user AgentClusterInstall must name the
// ClusterImageSet that is there (a generated one always does: it takes the
// set's name).
func TestCrossReferenceImageSetRef(t *testing.T) {
	a := &AgentManifests{
		PullSecret:        &manifests.Secret{},
		InfraEnv:          &manifests.InfraEnv{},
		ACI:               &manifests.AgentClusterInstall{},
		ClusterDeployment: &manifests.ClusterDeployment{},
		ClusterImageSet:   manifests.GenerateClusterImageSet("cluster0", "quay.io/x/y:4.20.3-x86_64", manifests.ClusterImageSetNameFor("quay.io/x/y:4.20.3-x86_64", "")),
	}
	a.ClusterDeployment.Metadata.Name = "ostest"
	a.ACI.Metadata.Name = "ostest"
	a.ACI.Spec.ClusterDeploymentRef.Name = "ostest"
	a.ACI.Spec.ImageSetRef = &manifests.LocalObjectRef{Name: "openshift-4.16.3"}
	err := a.crossReferences()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `spec.imageSetRef.name: Invalid value: "openshift-4.16.3": no ClusterImageSet of that name; cluster-manifests/cluster-image-set.yaml is named "openshift-4.20.3-x86-64"`)
	a.ACI.Spec.ImageSetRef.Name = a.ClusterImageSet.Metadata.Name
	assert.NoError(t, a.crossReferences())
}
