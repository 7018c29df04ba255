package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/ignition"
)

// PullSecretAuth checks, before an ISO or ignition is built, that the
// assisted-service of the target release will accept the pull secret when
// the cluster is registered: every registry it requires auth for (the
// release image mirror, the agent, installer and controller images and
// the release image, less PUBLIC_CONTAINER_REGISTRIES and the mirrored
// sources) has an auths entry it can parse. Otherwise agent-register-cluster
// gets HTTP 400 "pull secret for new cluster is invalid" and retries
// forever. The rule per branch is in pkg/ignition/pullsecretauth.go
// (openshift/assisted-service internal/cluster/validations/
// pull_secret_validation.go) and docs/inputs.md.
type PullSecretAuth struct{}

// Name implements asset.Asset.
func (*PullSecretAuth) Name() string { return "Pull Secret Registry Auth" }

// Doing says what a failure was doing, in the user's terms.
func (*PullSecretAuth) Doing() string {
	return "accept the pull secret (assisted-service would refuse it)"
}

// Dependencies implements asset.Asset.
func (*PullSecretAuth) Dependencies() []asset.Asset {
	return []asset.Asset{&AgentManifests{}, &InstallConfig{}, &PullSecret{}, &ReleasePayload{}, &RegistriesConf{}}
}

// Volatile implements asset.Volatile: a check, decided again every run.
func (*PullSecretAuth) Volatile() {}

// Generate implements asset.Asset.
func (*PullSecretAuth) Generate(_ context.Context, p asset.Parents) error {
	m := asset.Get[*AgentManifests](p)
	rel := asset.Get[*ReleasePayload](p)
	in := &ignition.Input{
		ReleaseImage:   rel.Pinned,
		ReleaseVersion: rel.Version,
		RegistriesConf: []byte(asset.Get[*RegistriesConf](p).Conf),
		PullSecret:     m.PullSecret.PullSecretJSON(),
	}
	at := func(file string, line int, field string) string {
		if line > 0 {
			return fmt.Sprintf("%s:%d: %s", file, line, field)
		}
		return file + ": " + field
	}
	where := at(assetdir.InstallConfig, asset.Get[*InstallConfig](p).lines.Line("pullSecret"), "pullSecret")
	if ps := asset.Get[*PullSecret](p); ps.lines != nil {
		where = at(assetdir.PullSecret, ps.lines.Line("stringData"), "stringData[.dockerconfigjson]")
	}
	service := "assisted-service"
	if rel.Version != "" {
		service = "the assisted-service of OpenShift " + rel.Version
	}
	missing, err := ignition.CheckPullSecretAuth(in, rel.ServiceImages)
	if err != nil {
		return fmt.Errorf("%s: %w: %s refuses this pull secret when the cluster is registered (HTTP 400, retried forever); give the entry an \"auth\" that is base64 of user:password, or \"\" for a registry that needs no login", where, err, service)
	}
	if len(missing) == 0 {
		return nil
	}
	var b strings.Builder
	for _, ms := range missing {
		fmt.Fprintf(&b, "%s: no auths entry for registry %q, needed for %s %s: %s requires one and refuses the cluster otherwise (HTTP 400: pull secret must contain auth for %q; agent-register-cluster retries it forever).\n",
			where, ms.Registry, ms.For, ms.Image, service, ms.Registry)
	}
	host, _, _ := strings.Cut(missing[0].Registry, "/")
	fmt.Fprintf(&b, "Fix: add an entry to the pull secret's \"auths\", e.g. %q: {\"auth\": \"<base64 of user:password>\"}. A mirror that needs no login still needs the entry: {\"auth\": \"\"} (empty) is accepted; an \"auth\" that is set must be base64 of user:password. See docs/inputs.md \"Pull secret and mirrors\".",
		host)
	return fmt.Errorf("%s", b.String())
}
