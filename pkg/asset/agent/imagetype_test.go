package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed-a052040e/agentiso/pkg/asset/agent"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
)

// TestImageTypeFullISO checks that the ISO tells assisted-service it is a
// full ISO (IMAGE_TYPE_ISO), which is the only kind agentiso builds.
func TestImageTypeFullISO(t *testing.T) {
	cfg := ignitionFor(t, goldenRelease, map[string]string{manifests.InstallConfigFile: icSNO, manifests.AgentConfigFile: acSimple})
	for _, u := range cfg.Systemd.Units {
		if u.Name == "agent-register-infraenv.service" {
			require.NotNil(t, u.Contents)
			assert.Contains(t, *u.Contents, "Environment=IMAGE_TYPE_ISO=full-iso\n")
			return
		}
	}
	t.Fatal("agent-register-infraenv.service missing")
}

// TestMinimalISOInputsRefused checks that inputs that ask for a minimal
// ISO, which agentiso cannot build yet, stop the ISO with an error naming
// the file, line and field and what to do, instead of being ignored;
// cluster manifests are still produced.
func TestMinimalISOInputsRefused(t *testing.T) {
	icExternal := strings.Replace(icSNO, "  none: {}\n", "  external:\n    platformName: oci\n    cloudControllerManager: External\n", 1)
	for _, tc := range []struct {
		name, ic, ac, want string
	}{
		{"minimalISO", icSNO, acSimple + "minimalISO: true\n",
			"agent-config.yaml:4: minimalISO: Forbidden: agentiso builds only the full agent ISO; remove minimalISO or set it to false"},
		{"bootArtifactsBaseURL", icSNO, acSimple + "bootArtifactsBaseURL: http://10.0.0.1:8080/boot\n",
			"agent-config.yaml:4: bootArtifactsBaseURL: Forbidden: agentiso builds no PXE artifacts and no minimal ISO that would download them; remove bootArtifactsBaseURL"},
		{"external platform", icExternal, acSimple,
			"install-config.yaml:17: platform.external: Forbidden: upstream builds a minimal ISO for platform external (OCI included), which agentiso cannot build yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{manifests.InstallConfigFile: tc.ic, manifests.AgentConfigFile: tc.ac}
			s, _ := store(t, files)
			_, err := s.Fetch(context.Background(), &agent.AgentIgnition{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)

			s, _ = store(t, files)
			for _, a := range agent.ClusterManifestsTargets() {
				_, err := s.Fetch(context.Background(), a)
				require.NoError(t, err, "cluster manifests do not depend on the ISO type (%s)", a.Name())
			}
		})
	}
}
