package agent

import (
	"github.com/seed-a052040e/agentiso/pkg/asset"
	"github.com/seed-a052040e/agentiso/pkg/assetdir"
	"github.com/seed-a052040e/agentiso/pkg/manifests"
)

// fullISO is the only ISO type agentiso builds: the live ISO with its
// root file system inside (IMAGE_TYPE_ISO for agent-register-infraenv).
const fullISO = "full-iso"

// isoType returns the ISO type the inputs ask for, "full-iso", or an error
// for every input that asks for a minimal ISO (or its PXE artifacts),
// which agentiso cannot build yet: such inputs are refused rather than
// silently ignored.
func isoType(p asset.Parents) (string, error) {
	var list manifests.ErrorList
	add := func(file string, lines manifests.Lines, path, detail string) {
		list = append(list, &manifests.FieldError{File: file, Line: lines.Line(path), Path: path, Type: manifests.TypeForbidden, Detail: detail})
	}
	if ac := asset.Get[*AgentConfig](p); ac.Config != nil {
		if ac.Config.MinimalISO {
			add(assetdir.AgentConfig, ac.lines, "minimalISO",
				"agentiso builds only the full agent ISO; remove minimalISO or set it to false (hosts then boot the full ISO, no root file system download)")
		}
		if ac.Config.BootArtifactsBaseURL != "" {
			add(assetdir.AgentConfig, ac.lines, "bootArtifactsBaseURL",
				"agentiso builds no PXE artifacts and no minimal ISO that would download them; remove bootArtifactsBaseURL and boot the full ISO")
		}
	}
	const detail = "upstream builds a minimal ISO for platform external (OCI included), which agentiso cannot build yet; " +
		"use openshift-install agent create image for this platform, or another platform"
	if ic := asset.Get[*InstallConfig](p); ic.Config != nil && ic.Config.Platform.External != nil {
		add(assetdir.InstallConfig, ic.lines, "platform.external", detail)
	} else if m := asset.Get[*AgentManifests](p); m.ACI != nil && m.ACI.Spec.PlatformType == "External" {
		list = append(list, &manifests.FieldError{File: assetdir.AgentClusterInstall, Path: "spec.platformType", Type: manifests.TypeForbidden, Value: "External", Detail: detail})
	}
	if len(list) > 0 {
		return "", list
	}
	return fullISO, nil
}
