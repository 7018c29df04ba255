package agent

import (
	"context"
	"fmt"

	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
)

// The ISO types (IMAGE_TYPE_ISO for agent-register-infraenv).
const (
	// fullISO is the live ISO with its root file system inside.
	fullISO = "full-iso"
	// minimalISO has no root file system: the live system downloads it
	// from the coreos.live.rootfs_url= kernel argument.
	minimalISO = "minimal-iso"
)

// ISOType is the kind of agent ISO the inputs ask for, as upstream decides
// it: minimal when agent-config.yaml sets minimalISO: true or the platform
// is External (OCI included), full otherwise; and where the hosts download
// boot artifacts from (agent-config.yaml bootArtifactsBaseURL).
type ISOType struct {
	// Type is "full-iso" or "minimal-iso".
	Type string `json:"type"`
	// Why says which input asked for a minimal ISO, as file:line: field.
	Why string `json:"why,omitempty"`
	// BootArtifactsBaseURL is agent-config.yaml's, without a trailing /.
	BootArtifactsBaseURL string `json:"bootArtifactsBaseURL,omitempty"`
	// Where locates bootArtifactsBaseURL (or where it would go) for
	// errors: a file and line.
	Where     string `json:"where,omitempty"`
	WhereLine int    `json:"whereLine,omitempty"`
}

// Name implements asset.Asset.
func (*ISOType) Name() string { return "Agent ISO Type" }

// Doing implements asset.Described.
func (*ISOType) Doing() string { return "choose the ISO type (full or minimal)" }

// Dependencies implements asset.Asset.
func (*ISOType) Dependencies() []asset.Asset {
	return []asset.Asset{&InstallConfig{}, &AgentConfig{}, &AgentManifests{}}
}

// Generate implements asset.Asset.
func (t *ISOType) Generate(_ context.Context, p asset.Parents) error {
	t.Type = fullISO
	t.Where = assetdir.AgentConfig
	if ac := asset.Get[*AgentConfig](p); ac.Config != nil {
		t.BootArtifactsBaseURL = ac.Config.BootArtifactsBaseURL
		t.WhereLine = ac.lines.Line("bootArtifactsBaseURL")
		if ac.Config.MinimalISO {
			t.Type, t.Why = minimalISO, fmt.Sprintf("%s:%d: minimalISO: true", assetdir.AgentConfig, ac.lines.Line("minimalISO"))
			if t.WhereLine == 0 {
				t.WhereLine = ac.lines.Line("minimalISO")
			}
			return nil
		}
	}
	if ic := asset.Get[*InstallConfig](p); ic.Config != nil && ic.Config.Platform.External != nil {
		t.Type, t.Why = minimalISO, fmt.Sprintf("%s:%d: platform.external", assetdir.InstallConfig, ic.lines.Line("platform.external"))
	} else if m := asset.Get[*AgentManifests](p); m.ACI != nil && m.ACI.Spec.PlatformType == "External" {
		t.Type, t.Why = minimalISO, assetdir.AgentClusterInstall+": spec.platformType: External"
	}
	return nil
}

// Minimal reports whether the agent ISO is the minimal one.
func (t *ISOType) Minimal() bool { return t.Type == minimalISO }

// baseURLRequired is the error for a minimal ISO whose root file system
// has nowhere to come from.
func (t *ISOType) baseURLRequired(detail string) error {
	return &manifests.FieldError{File: t.Where, Line: t.WhereLine, Path: "bootArtifactsBaseURL", Type: manifests.TypeRequired, Detail: detail}
}
