package main

import (
	"fmt"
	"os"

	"github.com/seed-a052040e/agentiso/pkg/baseiso"
	"github.com/seed-a052040e/agentiso/pkg/nodejoin"
	"github.com/seed-a052040e/agentiso/pkg/rendezvous"
)

// defaultMeanings says, for each setting whose default is empty or zero,
// what that default does, resolved: config view shows it instead of "" or
// 0s (a test keeps every such setting in this table). A key is a flag's
// name, or "COMMAND/flag" (COMMAND without the program's name, e.g.
// "node-image monitor/timeout") where one flag name means something else
// for that command; see meaningOf.
func defaultMeanings() map[string]string {
	cache := "none: no user cache directory ($XDG_CACHE_HOME and $HOME unset); give --cache-dir"
	if d, err := baseiso.DefaultCacheDir(os.Getenv); err == nil {
		cache = d
	}
	return map[string]string{
		"release-image":       "none: agentiso pins no release; the ClusterImageSet in cluster-manifests/, else an error",
		"release-version":     "read from the release payload",
		"base-iso":            "the release's RHCOS live ISO: from the cache, else downloaded (or from the mirror's machine-os-images)",
		"base-iso-sha256":     "none: a URL's <URL>.sha256, else the release stream's; a local file is used as is",
		"embed-image":         "none: only the release payload (with --embed-payload)",
		"mirror-from":         "none: images from the registry (through install-config's mirrors)",
		"os-image-mirror":     "none: the release stream's own URL",
		"cache-dir":           cache,
		"timeout":             fmt.Sprintf("%s to bootstrap, then %s to install (install-complete)", minutes(rendezvous.DefaultBootstrapTimeout), minutes(rendezvous.DefaultInstallTimeout)),
		"rendezvous-url":      rendezvous.BaseURL("<rendezvousIP in --dir>"),
		"output-dir":          "none: print the keyfiles as YAML",
		"output-file":         "none: standard output",
		"url":                 "none: required unless --eject",
		"iso":                 "the agent ISO of --dir (agent.<arch>.iso); without one, its only ISO",
		"media-user":          "none: the BMCs fetch the ISO without authentication",
		"media-password-file": "none: the BMCs fetch the ISO without authentication",
		"tls-host":            "none: the --listen host only",
		"tls-cert":            "none: plain HTTP unless --tls",
		"tls-key":             "none: plain HTTP unless --tls",
		"user":                "none: no authentication",
		"password-file":       "none: no authentication",
		// node-image create and monitor
		"kubeconfig":                  "$KUBECONFIG",
		"context":                     "the kubeconfig's current-context",
		"output-name":                 "node.<arch>.iso",
		"mac-address":                 "none: the hosts of nodes-config.yaml in --dir",
		"cpu-architecture":            "the control plane nodes' architecture",
		"ssh-key-path":                "the cluster's worker SSH key (its 99-worker-ssh MachineConfig)",
		"hostname":                    "none: from DHCP or reverse DNS",
		"root-device-hint":            "none: the installer's choice of disk",
		"network-config-path":         "none: DHCP",
		"ip-addresses":                "none: required",
		"node-image monitor/timeout":  minutes(nodejoin.DefaultMonitorTimeout) + " for every host to become a Ready node",
		"node-image monitor/interval": nodejoin.DefaultMonitorInterval.String(),
	}
}

// meaningOf is what the empty default of flag means for command (its path
// without the program's name): the command's own entry, else the flag's.
func meaningOf(means map[string]string, command, flag string) string {
	if m, ok := means[command+"/"+flag]; ok {
		return m
	}
	return means[flag]
}

func minutes(d interface{ Minutes() float64 }) string { return fmt.Sprintf("%gm", d.Minutes()) }
