package manifests

import (
	"testing"

	"github.com/seed-a052040e/agentiso/internal/testfixture"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"

	"github.com/stretchr/testify/assert"
)

// TestBareMetalAdditionalNTPServers checks platform.baremetal's
// additionalNTPServers: accepted, validated, and used for the InfraEnv
// when agent-config.yaml has no additionalNTPSources (those win, as
// upstream).
func TestBareMetalAdditionalNTPServers(t *testing.T) {
	y := edit(t, testfixture.InstallConfig, "    ingressVIPs: [192.168.111.4]\n", "    ingressVIPs: [192.168.111.4]\n    additionalNTPServers: [ntp.example.com, 192.168.111.1]\n")
	ic, lines := decodeT[InstallConfig](t, assetdir.InstallConfig, y)
	ic.SetDefaults()
	assertErrs(t, ValidateInstallConfig(ic, lines))

	ac, _ := decodeT[AgentConfig](t, assetdir.AgentConfig, baseAgentConfig)
	assert.Equal(t, []string{"ntp.example.com", "192.168.111.1"}, GenerateInfraEnv(ic, ac, "192.168.111.20").Spec.AdditionalNTPSources)
	assert.Equal(t, []string{"ntp.example.com", "192.168.111.1"}, GenerateInfraEnv(ic, nil, "192.168.111.20").Spec.AdditionalNTPSources)

	ac.AdditionalNTPSources = []string{"pool.ntp.org"}
	assert.Equal(t, []string{"pool.ntp.org"}, GenerateInfraEnv(ic, ac, "192.168.111.20").Spec.AdditionalNTPSources, "agent-config's sources win")

	bad := edit(t, y, "ntp.example.com", "bad_name.example.com")
	ic, lines = decodeT[InstallConfig](t, assetdir.InstallConfig, bad)
	ic.SetDefaults()
	assertErrs(t, ValidateInstallConfig(ic, lines), `install-config.yaml:19: platform.baremetal.additionalNTPServers[0]: Invalid value: "bad_name.example.com": NTP server is not a valid domain name nor a valid IP`)
}
